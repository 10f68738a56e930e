// The frame layer's functions (settings.hpp, stats.hpp, waves.hpp).
#include "settings.hpp"
#include "stats.hpp"
#include "waves.hpp"
#include "queue_strategy.hpp"
#include "prepared_scene.hpp"

#include "../core/marks.hpp"
#include "../core/memory.hpp"

#include <algorithm>
#include <cmath>

namespace sieve::render {

render_settings render_settings::from(const scene& s) {
  render_settings r;
  r.strategy = s.compaction.strategy;
  r.reorder = s.compaction.reorder;
  r.sort = s.compaction.sort;
  r.routing = s.compaction.routing;
  return r;
}

double render_stats::stage_ms(std::string_view name) const {
  for (const auto& s : stages)
    if (s.name == name) return s.ms;
  return 0;
}

const exec::loop_time* render_stats::loop(std::string_view name) const {
  for (const auto& l : loops)
    if (l.name == name) return &l;
  return nullptr;
}

sieve::strategy render_stats::note_strategy(const sieve::strategy& asked, sieve::backend b, bool in_place,
                                            const sieve::record& queue, std::size_t removed) {
  const queue_strategy pick = pick_queue_strategy(asked, b, form, in_place, queue, removed);
  const sieve::strategy& ran = pick.strategy;
  if (strategy_reason.empty()) strategy_reason = pick.reason;
  if (std::find(strategies_ran.begin(), strategies_ran.end(), ran.name()) == strategies_ran.end())
    strategies_ran.emplace_back(ran.name());
  return ran;
}

std::vector<vec3> render_result::mean() const {
  std::vector<vec3> out(sum.size());
  const float scale = samples ? 1.0f / static_cast<float>(samples) : 0.0f;
  const float scale_ahead = 1.0f / static_cast<float>(samples + 1);
  for (std::size_t i = 0; i < sum.size(); ++i) out[i] = sum[i] * (i < ahead ? scale_ahead : scale);
  return out;
}

double render_stats::other_ms() const {
  double named = 0;
  for (const auto& s : stages) named += s.ms;
  return std::max(0.0, (seconds - first_wave_extra_seconds) * 1e3 - named);
}

void render_stats::note_first_wave(const render_stats& first, double first_seconds) {
  if (waves < 2) return;  // no other wave to compare it with
  const double others = (seconds - first_seconds) / static_cast<double>(waves - 1);
  // Not timed (the GPU's sampled waves never time the first): all of its excess lies outside the
  // stage times, which come from the other waves.
  double extra = first_seconds - others;
  if (first.measured_waves > 0 && measured_waves == waves) {
    // Every wave timed: the first's time outside its stages over the others' mean of it (what it
    // spent inside its stages stays in the stage times).
    const auto staged = [](const render_stats& st) {
      double ms = 0;
      for (const auto& s : st.stages) ms += s.ms;
      return ms * 1e-3;
    };
    const double first_staged = staged(first), all_staged = staged(*this);
    extra = (first_seconds - first_staged) -
            (seconds - first_seconds - (all_staged - first_staged)) / static_cast<double>(waves - 1);
  }
  first_wave_extra_seconds = std::max(0.0, extra);
}

void render_stats::scale_measured() {
  if (measured_waves == 0 || measured_waves >= waves) return;
  const double f = static_cast<double>(waves) / static_cast<double>(measured_waves);
  const auto scaled = [f](std::uint64_t v) { return static_cast<std::uint64_t>(std::llround(static_cast<double>(v) * f)); };
  for (auto& s : stages) s.ms *= f;
  for (auto& b : bounces) b.compact_ms *= f;
  for (auto& l : loops) {
    l.ms *= f;
    l.launches = scaled(l.launches);
    l.items = scaled(l.items);
  }
  bfs_compact_ms *= f;
}

void render_stats::add_stage(std::string_view name, int bounce, double ms) {
  auto it = std::find_if(stages.begin(), stages.end(), [&](const stage_time& s) { return s.name == name; });
  if (it == stages.end()) it = stages.insert(stages.end(), {std::string(name), 0});
  it->ms += ms;
  if (bounce >= 0) bounces[static_cast<std::size_t>(bounce)].compact_ms += ms;
}

render_result begin_render(const scene& sc, const render_settings& settings, sieve::backend backend) {
  const bool gpu = backend == sieve::backend::cuda;
  if (settings.max_queue == 0) throw sieve::error("render: max_queue must be at least 1");
  const film_desc& film = sc.film;
  render_result result;
  result.width = film.width;
  result.height = film.height;
  result.spp = film.spp;
  result.sum.assign(std::size_t{film.width} * film.height, vec3{0, 0, 0});
  result.stats.form = marks_form_for(settings.strategy, backend, gpu ? "renderer (cuda)" : "renderer");
  result.stats.bounces.resize(film.max_bounces + 1);
  return result;
}

std::uint32_t default_wave_paths(bool gpu, std::optional<std::uint64_t> gpu_free, std::optional<std::uint64_t> host_available) {
  constexpr std::uint32_t least = 1U << 20, most = 1U << 24;
  if (!gpu || !gpu_free || !host_available) return least;
  const std::uint64_t fits = std::min(*gpu_free / 4 / memory::gpu_per_path, *host_available / 4 / memory::host_per_path);
  std::uint32_t n = most;
  while (n > least && n > fits) n >>= 1;
  return n;
}

void check_render_memory(const scene& s, const render_settings& settings, bool gpu,
                         std::optional<std::uint64_t> available, std::optional<std::uint64_t> gpu_free) {
  memory::counts c;
  c.triangles = s.triangles.size();
  c.pixels = std::uint64_t{s.film.width} * s.film.height;
  c.paths = wave_capacity(s.film.width * s.film.height, s.film.spp, std::max(settings.max_queue, 1U));
  c.bfs = settings.traversal == traversal_kind::bfs;
  c.attribute_bytes = s.normals.size() * sizeof(triangle_normals) + s.uvs.size() * sizeof(triangle_uvs);
  for (const texture& t : s.textures) c.attribute_bytes += t.bytes();
  if (builds_on_device(settings.build, gpu, s.triangles.size())) c.gpu_triangle_bytes = ploc_device_bytes_per_triangle;
  if (gpu && !gpu_free) gpu_free = cuda_free_memory();
  memory::check(c, available, gpu ? gpu_free : std::nullopt, "render");
}

}  // namespace sieve::render
