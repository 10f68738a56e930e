// The wavefront path tracer's CPU driver. Per wave (as many whole samples of the film as max_queue
// paths hold, or one sample of max_queue pixels for larger films):
//
//   generate -> for each bounce: extend (DFS or BFS) -> shade -> connect -> compact -> [reorder]
//   -> accumulate
//
// Every stage is per-path code (../path/generate.hpp, shade.hpp, connect.hpp; extend.hpp,
// reorder.hpp here) looping through exec::parallel_for, the code the CUDA driver runs as kernels;
// the megakernel (../megakernel) calls the same per-path functions. The queue of live
// paths is compacted by the sieve strategy the scene names ([compaction] strategy), fed the form it
// takes (bit mask, byte flags or removal list) straight from the shade stage.
#pragma once

#include "../bvh/bvh.hpp"
#include "../exec/loop_clock.hpp"
#include "../scene/scene.hpp"
#include "../path/paths.hpp"
#include "reorder.hpp"

#include <sieve/compaction.hpp>

#include <algorithm>
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sieve::render {

// A scene made ready to render: its BVH, its materials as surfaces, its light table. Keeps a
// reference to `s`, which must outlive it.
class prepared_scene {
 public:
  explicit prepared_scene(const scene& s);

  const scene& source() const { return *scene_; }
  const bvh& tree() const { return bvh_; }
  // The view the stages read, for a film of width x height.
  scene_view view(std::uint32_t width, std::uint32_t height) const;

 private:
  const scene* scene_;
  bvh bvh_;
  std::vector<surface> surfaces_;
  std::vector<texture_view> textures_;  // of the scene's textures (host memory)
  std::vector<std::uint32_t> light_triangles_;
  std::vector<float> light_cdf_;
  float light_area_ = 0;
  aabb bounds_;
};

struct render_settings {
  // The modes (core/modes.hpp, parsed from names where they come in).
  integrator_kind integrator = integrator_kind::wavefront;  // megakernel: one thread per path, no queues
  std::string strategy = "auto";      // compaction of the path queue (and of the BFS frontier)
  traversal_kind traversal = traversal_kind::dfs;
  // How the path queue shrinks (driver.hpp): pass (the strategy compacts the path state), index (it
  // compacts 4-byte path indices; the state stays in place) or append (shade appends the survivors
  // to the next queue: no pass, no strategy).
  queue_mode queue = queue_mode::pass;
  reorder_key reorder = reorder_key::none;
  sort_kind sort = sort_kind::onesweep;  // the GPU radix sort for reordering (the CPU has one)
  std::uint32_t max_queue = 1U << 20;  // paths in flight at once (a wave): bounds the queues' memory
  // The film's samples to render: [first_sample, first_sample + sample_count), sample_count 0 for
  // all of them (from first_sample to spp). A rank of an MPI job renders its share of the samples
  // this way; the counter RNG gives sample s of pixel p the same numbers whoever renders it.
  std::uint32_t first_sample = 0, sample_count = 0;
  const std::atomic<bool>* cancel = nullptr;  // set: stop at the next bounce or chunk (the cut wave is dropped)
  std::function<void(std::uint32_t done, std::uint32_t total)> progress;  // samples done, after each wave
  // Per-stage, per-bounce and per-loop times (CPU clock; on the GPU CUDA events recorded inside the
  // wave's graph). Off (the default): the frame time only, nothing added between the stages.
  bool profile_stages = false;
  // GPU: capture each wave once as a CUDA graph (where the strategy and traversal allow); false: the
  // same loop on the stream, reading the live count back each bounce (for comparison).
  bool wave_graph = true;

  // The scene's [compaction] settings.
  static render_settings from(const scene& s);
};

struct stage_time {
  std::string name;
  double ms = 0;
};

struct bounce_stats {
  std::uint64_t live = 0;  // paths entering the bounce (summed over sample passes and chunks)
  double compact_ms = 0;   // compacting the queue after it
};

struct render_stats {
  std::vector<stage_time> stages;   // generate, extend, shade, connect, compact, reorder (profile_stages)
  // Each parallel_for loop by name, in the order they first ran (profile_stages): launches, items
  // launched over, ms. A stage is one or more loops (and library calls, which are not loops).
  std::vector<exec::loop_time> loops;
  std::vector<bounce_stats> bounces;
  std::uint64_t extension_rays = 0, shadow_rays = 0;
  double bfs_compact_ms = 0;        // BFS traversal: compacting the frontier (inside `extend`)
  double seconds = 0;               // the render, without scene preparation
  std::uint64_t waves = 0;          // waves rendered (for_each_wave)
  // GPU: times the host waited for the device (stream synchronisations, counts read back); the goal
  // is one per wave (progress and Ctrl-C). 0 on the CPU.
  std::uint64_t host_syncs = 0;
  std::uint64_t graphs = 0;         // GPU: CUDA graphs instantiated (a wave captured once, replayed)
  std::string wave_launch = "cpu";  // cpu | graph (one CUDA graph per wave) | stream (GPU, per-bounce syncs)
  sieve::form form = sieve::form::bit_mask;  // what shade writes for the strategy
  // The strategies that compacted the path queue, in order of first use: the one named, or what
  // `auto` picked for each queue's form and size ("auto" never appears here).
  std::vector<std::string> strategies_ran;
  std::string strategy_reason;  // why the first of them runs (queue_strategy.hpp); empty without a queue

  double stage_ms(std::string_view name) const;
  // The row of loop `name` (null when it never ran, or without profile_stages).
  const exec::loop_time* loop(std::string_view name) const;
  // The strategy `asked` runs as for a queue compaction (sieve::strategy::resolve's arguments),
  // recorded in strategies_ran.
  sieve::strategy note_strategy(const sieve::strategy& asked, sieve::backend b, bool in_place, const sieve::record& queue,
                                std::size_t removed);
  // Queue compaction plus the BFS frontier's.
  double compaction_ms() const { return stage_ms("compact") + bfs_compact_ms; }
};

struct render_result {
  std::uint32_t width = 0, height = 0;
  std::uint32_t spp = 0;      // asked for (the film's spp, or the sample range's count)
  std::uint32_t samples = 0;  // completed for every pixel (< spp when cancelled)
  std::uint32_t ahead = 0;    // pixels [0, ahead) completed one sample more (a pass of several chunks, cancelled)
  std::vector<vec3> sum;      // per pixel, row 0 at the top: the sum of its samples
  render_stats stats;

  bool partial() const { return samples < spp; }
  // Per pixel: sum / its samples (zero when no sample completed).
  std::vector<vec3> mean() const;
};

// What both drivers do first: check the settings for `backend` (integrator, traversal, reorder,
// strategy) and return an empty result for s's film with the form the shade stage will write.
// Throws sieve::error naming what is unknown or unavailable.
render_result begin_render(const scene& s, const render_settings& settings, sieve::backend backend);

inline bool cancelled(const render_settings& settings) { return settings.cancel && settings.cancel->load(); }

// The samples [first, first + count) of a film of `spp` samples that `settings` asks for; throws
// sieve::error when the range does not lie inside the film.
struct sample_range {
  std::uint32_t first = 0, count = 0;
};
inline sample_range samples_asked(const render_settings& settings, std::uint32_t spp) {
  const std::uint64_t first = settings.first_sample;
  const std::uint64_t count = settings.sample_count ? settings.sample_count : spp > first ? spp - first : 0;
  if (first >= spp || first + count > spp)
    throw sieve::error("render: samples [" + std::to_string(first) + ", " + std::to_string(first + count) +
                       ") do not lie inside the film's " + std::to_string(spp) + " samples per pixel");
  return {static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(count)};
}

// The waves of a film of `pixels` at `spp` samples (of them the range settings.first_sample,
// settings.sample_count names), in order: f(wave) for each, which returns false when it stopped on
// cancelled(settings) between bounces (the wave then counts nowhere: a driver adds a wave to the
// image only when it is complete). After each pass of whole samples it calls settings.progress; it
// stops when cancelled, also between the chunks of a pass. Sets result.spp (the samples asked for),
// result.samples (those completed, from the range's first) and result.ahead (a pass of several
// chunks is one sample, so the chunks done when it is cut hold one more). Both drivers (CPU, CUDA)
// render through it.
template <class F>
void for_each_wave(std::uint32_t pixels, std::uint32_t spp, const render_settings& settings, render_result& result, F&& f) {
  const sample_range range = samples_asked(settings, spp);
  const std::uint32_t chunk = std::min(pixels, settings.max_queue);
  const std::uint32_t per_wave = pixels <= settings.max_queue ? settings.max_queue / pixels : 1;
  result.spp = range.count;
  result.samples = result.ahead = 0;
  while (result.samples < range.count) {
    const std::uint32_t samples = std::min(per_wave, range.count - result.samples);
    for (std::uint32_t first = 0; first < pixels; first += chunk) {
      const wave w{first, std::min(chunk, pixels - first), range.first + result.samples, samples};
      if (cancelled(settings) || !f(w)) return;
      if (w.first_pixel + w.pixels < pixels) result.ahead = w.first_pixel + w.pixels;
    }
    result.samples += samples;
    result.ahead = 0;
    if (settings.progress) settings.progress(result.samples, range.count);
  }
}

// The most paths one wave of for_each_wave holds: what the queues are sized for.
inline std::uint32_t wave_capacity(std::uint32_t pixels, std::uint32_t spp, std::uint32_t max_queue) {
  if (pixels > max_queue) return max_queue;
  return pixels * std::min(spp, max_queue / pixels);
}

// Renders `s`'s film ([film] width, height, spp, max_bounces, seed) through the one bounce loop
// (driver.hpp). Throws sieve::error for an
// unknown or unfit strategy, traversal or integrator. The megakernel integrator ignores the
// strategy, traversal and reordering.
render_result render_cpu(const prepared_scene& s, const render_settings& settings);

// The same driver over device copies of the scene and queues (integrator_cuda.cu): each wave is
// captured once as a CUDA graph and replayed (one host synchronisation per wave), except with the
// `thrust` strategy, which reads counts back, or a BFS render with stage times (then per-bounce
// synchronisations).
// Throws sieve::error when the build or the machine has no CUDA
// device, or when a device buffer does not fit (naming the size asked for and the memory free).
render_result render_cuda(const prepared_scene& s, const render_settings& settings);

// The GPU's free memory (cudaMemGetInfo), or nothing without a CUDA device.
std::optional<std::uint64_t> cuda_free_memory();

// Before the BVH is built: throws sieve::error when rendering `s` with `settings` needs more host
// memory than MemAvailable (`available` in tests) or, for the GPU, more than the GPU has free
// (core/memory.hpp's model), naming the needs and what is free.
void check_render_memory(const scene& s, const render_settings& settings, bool gpu,
                         std::optional<std::uint64_t> available = std::nullopt,
                         std::optional<std::uint64_t> gpu_free = std::nullopt);

}  // namespace sieve::render
