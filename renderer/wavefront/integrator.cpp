// The CPU driver of the wavefront path tracer (see integrator.hpp).
#include "integrator.hpp"

#include "../bvh/bfs.hpp"
#include "../core/marks.hpp"
#include "../core/memory.hpp"
#include "../megakernel/megakernel.hpp"
#include "accumulate.hpp"
#include "connect.hpp"
#include "extend.hpp"
#include "generate.hpp"
#include "shade.hpp"

#include <sieve/compaction/radix_sort.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>

namespace sieve::render {

prepared_scene::prepared_scene(const scene& s) : scene_(&s), bvh_(build_bvh(s.triangles)) {
  surfaces_.reserve(s.materials.size());
  for (const material& m : s.materials) {
    const auto kind = m.kind == material_kind::mirror       ? surface_kind::mirror
                      : m.kind == material_kind::dielectric ? surface_kind::dielectric
                                                            : surface_kind::diffuse;
    surfaces_.push_back({kind, m.albedo, m.emission, m.ior});
  }
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
  v.lights = {light_triangles_.data(), light_cdf_.data(), static_cast<std::uint32_t>(light_triangles_.size()),
              light_area_};
  v.environment = s.environment;
  v.cam = camera::look_at(s.camera.position, s.camera.look_at, s.camera.up, s.camera.vfov_degrees,
                          static_cast<float>(width) / static_cast<float>(height));
  v.bounds = bounds_;
  v.width = width;
  v.height = height;
  v.max_bounces = s.film.max_bounces;
  v.seed = s.film.seed;
  return v;
}

reorder_key reorder_key_from_string(std::string_view name) {
  for (const auto k : {reorder_key::none, reorder_key::morton, reorder_key::octant, reorder_key::termination})
    if (to_string(k) == name) return k;
  throw sieve::error("unknown reorder key '" + std::string(name) + "'; keys: none, morton, octant, termination");
}

std::string_view to_string(reorder_key k) {
  switch (k) {
    case reorder_key::none: return "none";
    case reorder_key::morton: return "morton";
    case reorder_key::octant: return "octant";
    case reorder_key::termination: return "termination";
  }
  return "?";
}

render_settings render_settings::from(const scene& s) {
  render_settings r;
  r.strategy = s.compaction.strategy;
  r.reorder = reorder_key_from_string(s.compaction.reorder);
  r.sort = s.compaction.sort;
  return r;
}

double render_stats::stage_ms(std::string_view name) const {
  for (const auto& s : stages)
    if (s.name == name) return s.ms;
  return 0;
}

void render_stats::note_strategy(std::string_view named, sieve::backend b, bool in_place, const sieve::record& queue,
                                 std::size_t removed) {
  const std::string_view ran = sieve::resolve_strategy(named, b, form, in_place, queue.size(), removed, queue.item_bytes());
  if (std::find(strategies_ran.begin(), strategies_ran.end(), ran) == strategies_ran.end())
    strategies_ran.emplace_back(ran);
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

// The path columns, owned.
struct path_store {
  std::vector<std::uint32_t> slot;
  std::vector<ray> rays;
  std::vector<vec3> throughput;
  std::vector<float> bsdf_pdf;

  explicit path_store(std::size_t n) : slot(n), rays(n), throughput(n), bsdf_pdf(n) {}
  path_columns columns() { return {slot.data(), rays.data(), throughput.data(), bsdf_pdf.data()}; }
};

// Accumulates wall time per stage, in the order stages first ran.
class stage_clock {
 public:
  explicit stage_clock(render_stats& stats) : stats_(stats) {}
  template <class F>
  double time(std::string_view name, F&& f) {
    const auto t0 = clock_type::now();
    f();
    const double ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
    auto it = std::find_if(stats_.stages.begin(), stats_.stages.end(), [&](const stage_time& s) { return s.name == name; });
    if (it == stats_.stages.end()) it = stats_.stages.insert(stats_.stages.end(), {std::string(name), 0});
    it->ms += ms;
    return ms;
  }

 private:
  render_stats& stats_;
};

}  // namespace

render_result begin_render(const scene& sc, const render_settings& settings, sieve::backend backend) {
  const bool gpu = backend == sieve::backend::cuda;
  if (settings.integrator != "wavefront" && settings.integrator != "megakernel")
    throw sieve::error("unknown integrator '" + settings.integrator + "'; integrators: wavefront, megakernel");
  if (settings.traversal != "dfs" && settings.traversal != "bfs")
    throw sieve::error("unknown traversal '" + settings.traversal + "'; traversals: dfs, bfs");
  if (settings.sort != "onesweep" && settings.sort != "cub")
    throw sieve::error("unknown radix sort '" + settings.sort + "'; sorts: onesweep, cub");
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
  c.bfs = settings.traversal == "bfs";
  if (gpu && !gpu_free) gpu_free = cuda_free_memory();
  memory::check(c, available, gpu ? gpu_free : std::nullopt, "render");
}

render_result render_cpu(const prepared_scene& ps, const render_settings& settings) {
  const scene& sc = ps.source();
  const film_desc& film = sc.film;
  render_result result = begin_render(sc, settings, sieve::backend::cpu);
  render_stats& stats = result.stats;
  const sieve::form form = stats.form;
  const bool in_place = !sieve::compaction_strategy(settings.strategy).out_of_place;  // copy where offered
  std::unique_ptr<bfs_tracer> bfs;
  if (settings.traversal == "bfs") bfs = std::make_unique<bfs_tracer>(settings.strategy);
  const std::uint32_t pixels = film.width * film.height;
  stage_clock clock(stats);

  const scene_view view = ps.view(film.width, film.height);
  const bool queues = settings.integrator == "wavefront";
  const std::uint32_t capacity = wave_capacity(pixels, film.spp, settings.max_queue);
  const std::uint32_t queue_capacity = queues ? capacity : 0;
  path_store store[2] = {path_store(queue_capacity), path_store(queue_capacity)};
  std::vector<hit> hits(queue_capacity);
  std::vector<ray> shadow_rays(queue_capacity);
  std::vector<vec3> shadow_light(queue_capacity);
  std::uint32_t shadow_count = 0;
  const bounce_columns scratch{hits.data(), shadow_rays.data(), shadow_light.data(), &shadow_count};
  std::vector<std::uint8_t> flags(form == sieve::form::byte_flags ? queue_capacity : 0);
  std::vector<std::uint32_t> mask(form == sieve::form::bit_mask ? (queue_capacity + 31) / 32 : 0);
  std::vector<std::uint32_t> removals(form == sieve::form::removal_list ? queue_capacity : 0);
  const bool reorder = settings.reorder != reorder_key::none;
  std::vector<std::uint32_t> keys(reorder ? queue_capacity : 0), order(reorder ? queue_capacity : 0);
  std::vector<vec3> wave_film(capacity);  // one entry per path of a wave
  vec3* const wfilm = wave_film.data();
  const sieve::options unchecked{.checked = false};
  const exec::cpu cpu;

  const auto start = clock_type::now();
  for_each_wave(pixels, film.spp, settings, result, [&](const wave& w) {
    if (!queues) {
      std::uint32_t rays[2] = {0, 0};
      constexpr std::uint32_t slice = 1U << 16;  // a cancel is seen within a slice of paths, not a whole wave
      for (std::uint32_t first = 0; first < w.size(); first += slice) {
        if (first > 0 && cancelled(settings)) return false;
        clock.time("megakernel", [&] { megakernel(cpu, view, w, wfilm, rays, first, slice); });
      }
      stats.extension_rays += rays[0];
      stats.shadow_rays += rays[1];
      clock.time("accumulate", [&] { accumulate(cpu, w, wfilm, result.sum.data()); });
      return true;
    }
    std::uint32_t live = w.size();
    int cur = 0;  // which store holds the live paths
    clock.time("generate", [&] { generate(cpu, view, w, store[cur].columns()); });
    for (std::uint32_t vertex = 0; vertex <= film.max_bounces && live > 0; ++vertex) {
      if (cancelled(settings)) return false;  // Ctrl-C within a bounce, whatever the frame's size
      const path_columns paths = store[cur].columns();
      stats.bounces[vertex].live += live;
      stats.extension_rays += live;
      clock.time("extend", [&] {
        if (!bfs) return extend_dfs(cpu, live, &live, view, paths, scratch);
        bfs_stats bs;
        bfs->closest(view.bvh, std::span<const ray>(paths.rays, live), std::span(hits.data(), live), &bs);
        stats.bfs_compact_ms += bs.compact_ms;
      });
      if (cancelled(settings)) return false;  // extend is the longest stage: look again after it

      keep_marks marks;
      std::uint32_t removed = 0;
      if (form == sieve::form::byte_flags) marks.flags = flags.data();
      if (form == sieve::form::bit_mask) {
        std::fill_n(mask.begin(), (live + 31) / 32, 0U);
        marks.mask = mask.data();
      }
      if (form == sieve::form::removal_list) {
        marks.removals = removals.data();
        marks.removal_count = &removed;
      }
      const shade_args args{view, paths, scratch, wfilm, marks, w, vertex};
      clock.time("shade", [&] { shade(cpu, live, &live, args); });
      clock.time("connect", [&] { connect(cpu, live, &live, view, paths, scratch, wfilm); });
      stats.shadow_rays += std::exchange(shadow_count, 0U);
      if (vertex == film.max_bounces) break;  // every path ended at this vertex

      const double ms = clock.time("compact", [&] {
        sieve::selection keep = sieve::byte_flags{std::span<const std::uint8_t>(flags.data(), live)};
        if (form == sieve::form::bit_mask) keep = sieve::bit_mask{std::span<const std::uint32_t>(mask.data(), (live + 31) / 32)};
        if (form == sieve::form::removal_list) keep = sieve::removal_list{std::span(removals.data(), removed)};
        stats.note_strategy(settings.strategy, sieve::backend::cpu, in_place, paths.record(live), removed);
        if (in_place) {
          live = static_cast<std::uint32_t>(sieve::compact(settings.strategy, paths.record(live), keep, unchecked));
        } else {
          live = static_cast<std::uint32_t>(sieve::compact_copy(settings.strategy, paths.record(live),
                                                                store[1 - cur].columns().record(live), keep, unchecked));
          cur = 1 - cur;
        }
      });
      stats.bounces[vertex].compact_ms += ms;

      if (reorder && live > 1) {
        clock.time("reorder", [&] {
          const path_columns from = store[cur].columns(), to = store[1 - cur].columns();
          reorder_keys(cpu, live, &live, settings.reorder, view, from, keys.data(), order.data());
          sieve::radix_sort_pairs(std::span(keys.data(), live), std::span(order.data(), live), 0,
                                  reorder_key_bits(settings.reorder));
          gather_paths(cpu, live, &live, order.data(), from, to);
          cur = 1 - cur;
        });
      }
    }
    clock.time("accumulate", [&] { accumulate(cpu, w, wfilm, result.sum.data()); });
    return true;
  });
  stats.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  return result;
}

}  // namespace sieve::render
