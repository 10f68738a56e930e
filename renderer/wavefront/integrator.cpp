// The CPU driver of the wavefront path tracer (see integrator.hpp).
#include "integrator.hpp"

#include "../bvh/bfs.hpp"
#include "../core/marks.hpp"
#include "../core/memory.hpp"
#include "../megakernel/megakernel.hpp"
#include "driver.hpp"
#include "queue_strategy.hpp"

#include <sieve/compaction/radix_sort.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <utility>

namespace sieve::render {

prepared_scene::prepared_scene(const scene& s) : scene_(&s), bvh_(build_bvh(s.triangles)) {
  surfaces_.reserve(s.materials.size());
  for (const material& m : s.materials) {
    const auto kind = m.kind == material_kind::mirror       ? surface_kind::mirror
                      : m.kind == material_kind::dielectric ? surface_kind::dielectric
                                                            : surface_kind::diffuse;
    surfaces_.push_back({kind, m.albedo, m.emission, m.ior, m.albedo_texture});
  }
  for (const texture& t : s.textures) textures_.push_back(t.view());
  double area = 0;
  for (const std::uint32_t t : s.emissive) {
    const triangle& tri = s.triangles[t];
    const double a = 0.5 * length(cross(tri.v1 - tri.v0, tri.v2 - tri.v0));
    if (!(a > 0)) continue;  // a degenerate light can neither be hit nor sampled
    area += a;
    light_triangles_.push_back(t);
    light_cdf_.push_back(static_cast<float>(area));
  }
  for (float& c : light_cdf_) c = static_cast<float>(c / area);
  if (!light_cdf_.empty()) light_cdf_.back() = 1.0f;
  light_area_ = static_cast<float>(area);
  for (const triangle& t : s.triangles) {
    bounds_.grow(t.v0);
    bounds_.grow(t.v1);
    bounds_.grow(t.v2);
  }
}

scene_view prepared_scene::view(std::uint32_t width, std::uint32_t height) const {
  const scene& s = *scene_;
  scene_view v;
  v.bvh = view_of(bvh_, s.triangles);
  v.surfaces = surfaces_.data();
  v.material_of = s.material_of.data();
  v.normals = s.normals.empty() ? nullptr : s.normals.data();
  v.uvs = s.uvs.empty() ? nullptr : s.uvs.data();
  v.textures = textures_.empty() ? nullptr : textures_.data();
  v.lights = {light_triangles_.data(), light_cdf_.data(), static_cast<std::uint32_t>(light_triangles_.size()),
              light_area_};
  v.environment = s.environment;
  v.env_map = s.environment_map.view();
  v.cam = camera::look_at(s.camera.position, s.camera.look_at, s.camera.up, s.camera.vfov_degrees,
                          static_cast<float>(width) / static_cast<float>(height));
  v.bounds = bounds_;
  v.width = width;
  v.height = height;
  v.max_bounces = s.film.max_bounces;
  v.seed = s.film.seed;
  return v;
}

render_settings render_settings::from(const scene& s) {
  render_settings r;
  r.strategy = s.compaction.strategy;
  r.reorder = s.compaction.reorder;
  r.sort = s.compaction.sort;
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

namespace {

using clock_type = std::chrono::steady_clock;

// Host memory for the driver's columns (the CPU's array<T>).
template <class T>
class host_array {
 public:
  explicit host_array(std::size_t n = 0) : v_(n) {}
  T* get() const { return const_cast<T*>(v_.data()); }

 private:
  std::vector<T> v_;
};

// Adds ms to stage `name` (in the order stages first ran) and, for bounce >= 0, to its compaction.
void add_stage_time(render_stats& stats, std::string_view name, int bounce, double ms) {
  auto it = std::find_if(stats.stages.begin(), stats.stages.end(), [&](const stage_time& s) { return s.name == name; });
  if (it == stats.stages.end()) it = stats.stages.insert(stats.stages.end(), {std::string(name), 0});
  it->ms += ms;
  if (bounce >= 0) stats.bounces[static_cast<std::size_t>(bounce)].compact_ms += ms;
}

// The driver's backend policy on the CPU (driver.hpp): oneTBB stages, host counts, the library's CPU
// compaction and radix sort, the wall clock per stage when profiling.
class cpu_backend {
 public:
  template <class T>
  using array = host_array<T>;

  cpu_backend(render_stats& stats, const render_settings& settings)
      : stats_(stats), profile_(settings.profile_stages), clock_(stats.loops) {
    if (settings.traversal == traversal_kind::bfs) {
      bfs_ = std::make_unique<bfs_tracer>(settings.strategy);
      if (profile_) bfs_->time_loops(&clock_);
    }
  }

  // Profiling: every loop timed by the loop clock.
  exec::cpu exec() { return {profile_ ? &clock_ : nullptr}; }
  void zero(void* p, std::size_t bytes) const { std::memset(p, 0, bytes); }
  std::uint64_t read(const std::uint64_t* count) const { return *count; }

  void compact(const sieve::strategy& strategy, bool in_place, const sieve::record& items, const sieve::record& out,
               sieve::selection keep, const std::uint64_t* live, const std::uint64_t* removals, std::uint64_t* kept) {
    // Host counts: the driver sized the record and marks for *live already; the removal list holds *removals.
    std::size_t removed = 0;
    if (const auto* r = std::get_if<sieve::removal_list>(&keep)) {
      removed = static_cast<std::size_t>(*removals);
      keep = sieve::removal_list{r->indices.first(removed)};
    }
    const sieve::options unchecked{.checked = false};  // the renderer's own removal lists: each index once
    const sieve::strategy ran = stats_.note_strategy(strategy, sieve::backend::cpu, in_place, items, removed);
    (void)live;
    *kept = in_place ? sieve::compact(ran, items, keep, unchecked) : sieve::compact_copy(ran, items, out, keep, unchecked);
  }

  const std::uint32_t* sort(std::uint32_t* keys, std::uint32_t* values, std::uint32_t n, int bits) const {
    sieve::radix_sort_pairs(std::span(keys, n), std::span(values, n), 0, bits);
    return values;
  }

  // Host counts: n is the live count.
  void extend_bfs(const scene_view& view, const ray* rays, hit* hits, std::uint32_t n, const std::uint32_t*) {
    bfs_stats bs;
    bfs_->closest(view.bvh, std::span<const ray>(rays, n), std::span(hits, n), &bs);
    stats_.bfs_compact_ms += bs.compact_ms;
  }

  template <class F>
  void time(std::string_view name, int bounce, F&& f) {
    if (!profile_) return f();
    const auto t0 = clock_type::now();
    f();
    add_stage_time(stats_, name, bounce, std::chrono::duration<double, std::milli>(clock_type::now() - t0).count());
  }

 private:
  render_stats& stats_;
  bool profile_;
  exec::loop_clock clock_;
  std::unique_ptr<bfs_tracer> bfs_;
};

}  // namespace

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

void check_render_memory(const scene& s, const render_settings& settings, bool gpu,
                         std::optional<std::uint64_t> available, std::optional<std::uint64_t> gpu_free) {
  memory::counts c;
  c.triangles = s.triangles.size();
  c.pixels = std::uint64_t{s.film.width} * s.film.height;
  c.paths = wave_capacity(s.film.width * s.film.height, s.film.spp, std::max(settings.max_queue, 1U));
  c.bfs = settings.traversal == traversal_kind::bfs;
  c.attribute_bytes = s.normals.size() * sizeof(triangle_normals) + s.uvs.size() * sizeof(triangle_uvs);
  for (const texture& t : s.textures) c.attribute_bytes += t.texels.size() * sizeof(vec3);
  if (gpu && !gpu_free) gpu_free = cuda_free_memory();
  memory::check(c, available, gpu ? gpu_free : std::nullopt, "render");
}

render_result render_cpu(const prepared_scene& ps, const render_settings& settings) {
  const scene& sc = ps.source();
  const film_desc& film = sc.film;
  render_result result = begin_render(sc, settings, sieve::backend::cpu);
  render_stats& stats = result.stats;
  const std::uint32_t pixels = film.width * film.height;
  const scene_view view = ps.view(film.width, film.height);
  const std::uint32_t capacity = wave_capacity(pixels, film.spp, settings.max_queue);
  const std::uint32_t max_pixels = std::min(pixels, settings.max_queue);
  cpu_backend backend(stats, settings);
  const exec::cpu cpu = backend.exec();
  wave current;  // the wave being rendered, where the stages read it

  const auto start = clock_type::now();
  if (settings.integrator == integrator_kind::megakernel) {
    // The sibling loop: no queues, one task per path, through the same waves and film.
    std::vector<vec3> wave_film(capacity);
    for_each_wave(pixels, film.spp, settings, result, [&](const wave& w) {
      current = w;
      std::uint32_t rays[2] = {0, 0};
      constexpr std::uint32_t slice = 1U << 16;  // a cancel is seen within a slice of paths, not a whole wave
      for (std::uint32_t first = 0; first < w.size(); first += slice) {
        if (first > 0 && cancelled(settings)) return false;
        backend.time("megakernel", -1, [&] { megakernel(cpu, view, w, wave_film.data(), rays, first, slice); });
      }
      stats.extension_rays += rays[0];
      stats.shadow_rays += rays[1];
      backend.time("accumulate", -1, [&] { accumulate(cpu, max_pixels, &current, wave_film.data(), result.sum.data()); });
      ++stats.waves;
      return true;
    });
  } else {
    wavefront_driver<cpu_backend> driver(backend, view, settings, stats.form, capacity, max_pixels, &current,
                                         result.sum.data());
    for_each_wave(pixels, film.spp, settings, result, [&](const wave& w) {
      current = w;
      if (!driver.run(w, true)) return false;
      wavefront_driver<cpu_backend>::tally(driver.counts().words, film.max_bounces, stats);
      ++stats.waves;
      return true;
    });
  }
  stats.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  return result;
}

}  // namespace sieve::render
