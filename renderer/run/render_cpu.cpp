// The CPU driver of the wavefront path tracer (see integrator.hpp).
#include "render.hpp"

#include "../bvh/bfs.hpp"
#include "../core/marks.hpp"
#include "../megakernel/megakernel.hpp"
#include "../wavefront/driver.hpp"

#include <sieve/compaction/radix_sort.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <utility>

namespace sieve::render {

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
    stats_.add_stage(name, bounce, std::chrono::duration<double, std::milli>(clock_type::now() - t0).count());
  }

 private:
  render_stats& stats_;
  bool profile_;
  exec::loop_clock clock_;
  std::unique_ptr<bfs_tracer> bfs_;
};

}  // namespace

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
