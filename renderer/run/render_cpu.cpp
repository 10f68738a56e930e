// The CPU side of a render: the driver's backend policy over oneTBB and host memory, handed to the
// one wave loop (wave_loop.hpp).
#include "render.hpp"

#include "../trace/bfs.hpp"
#include "../core/marks.hpp"
#include "../megakernel/megakernel.hpp"
#include "../wavefront/driver.hpp"
#include "wave_loop.hpp"

#include <sieve/compaction/multisplit.hpp>
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

  // In place when out is null. Host counts: the driver sized the record and marks for the live
  // count already; the removal list holds *counts.removals.
  void compact(const sieve::strategy& strategy, const sieve::record& items, const sieve::record* out,
               sieve::selection keep, const sieve::cuda::device_counts& counts, std::uint64_t* kept) {
    std::size_t removed = 0;
    if (const auto* r = std::get_if<sieve::removal_list>(&keep)) {
      removed = static_cast<std::size_t>(*counts.removals);
      keep = sieve::removal_list{r->indices.first(removed)};
    }
    const sieve::options unchecked{.checked = false};  // the renderer's own removal lists: each index once
    const sieve::strategy ran = stats_.note_strategy(strategy, sieve::backend::cpu, out == nullptr, items, removed);
    *kept = out ? sieve::compact_copy(ran, items, *out, keep, unchecked) : sieve::compact(ran, items, keep, unchecked);
  }

  // In place: the sorted keys and values.
  std::pair<const std::uint32_t*, const std::uint32_t*> sort(std::uint32_t* keys, std::uint32_t* values, std::uint32_t n,
                                                             int bits) const {
    sieve::radix_sort_pairs(std::span(keys, n), std::span(values, n), 0, bits);
    return {keys, values};
  }

  // Host counts: the driver launches over the counts it reads, never over this.
  std::uint32_t resident_threads() const { return ~0U; }

  // Host counts: n is the live count. The renderer's own keys (each < buckets): unchecked.
  void multisplit(const std::uint8_t* keys, const std::uint32_t* in, std::uint32_t* out, std::uint32_t n,
                  const std::uint64_t*, unsigned buckets, std::uint64_t* bounds) const {
    sieve::multisplit(sieve::const_record(std::span(in, n)), sieve::record(std::span(out, n)),
                      sieve::bucket_ids{std::span(keys, n)}, buckets, std::span(bounds, buckets + 1), {.checked = false});
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

// The CPU's side of the wave loop (wave_loop.hpp): the scene, the wave and the film in host memory.
class cpu_run {
 public:
  using driver_backend = cpu_backend;

  cpu_run(const prepared_scene& ps, const render_settings& settings, const render_controls& controls, render_result& result)
      : controls_(controls), view_(ps.view(ps.source().film.width, ps.source().film.height)), family_(ps.family()),
        film_(result.sum.data()), backend_(result.stats, settings) {}

  cpu_backend& backend() { return backend_; }
  const scene_view& view() const { return view_; }
  material_family family() const { return family_; }
  wave* wave_slot() { return &current_; }
  vec3* film() const { return film_; }
  void wait() const {}
  void read_tile(render_result&, const tile_done&) const {}  // the waves add to result.sum itself

  class megakernel_waves {
   public:
    megakernel_waves(cpu_run& r, std::uint32_t capacity, std::uint32_t max_pixels)
        : r_(r), max_pixels_(max_pixels), wave_film_(capacity) {}
    bool run(const wave& w, std::uint32_t rays[2]) {
      r_.current_ = w;
      const exec::cpu cpu = r_.backend_.exec();
      constexpr std::uint32_t slice = 1U << 16;  // a cancel is seen within a slice of paths, not a whole wave
      for (std::uint32_t first = 0; first < w.size(); first += slice) {
        if (first > 0 && cancelled(r_.controls_)) return false;
        r_.backend_.time("megakernel", -1, [&] { megakernel(cpu, r_.view_, w, wave_film_.data(), rays, r_.family_, first, slice); });
      }
      r_.backend_.time("accumulate", -1,
                       [&] { accumulate(cpu, max_pixels_, &r_.current_, wave_film_.data(), r_.film_); });
      return true;
    }

   private:
    cpu_run& r_;
    std::uint32_t max_pixels_;
    std::vector<vec3> wave_film_;
  };

  class wavefront_waves {
   public:
    wavefront_waves(cpu_run& r, wavefront_driver<cpu_backend>& driver) : r_(r), driver_(driver) {}
    const std::uint64_t* run(const wave& w) {
      r_.current_ = w;
      return driver_.run(w, true) ? driver_.counts().words : nullptr;
    }

   private:
    cpu_run& r_;
    wavefront_driver<cpu_backend>& driver_;
  };

 private:
  const render_controls& controls_;
  scene_view view_;
  material_family family_;  // the shading kernels' (prepared_scene::family)
  vec3* film_;
  cpu_backend backend_;
  wave current_;  // the wave being rendered, where the stages read it
};

}  // namespace

render_result render_cpu(const prepared_scene& ps, const render_settings& settings, const render_controls& controls) {
  render_result result = begin_render(ps.source(), settings, sieve::backend::cpu);
  cpu_run run(ps, settings, controls, result);
  run_waves(run, ps.source().film, settings, controls, result);
  return result;
}

}  // namespace sieve::render
