// What a render measured and produced (frame layer): stage, loop and bounce times, rays, the
// strategies that ran, and the film's per-pixel sums. Both integrators fill these; the job, the app
// and the benchmarks read them.
#pragma once

#include "../core/math.hpp"
#include "../exec/loop_clock.hpp"

#include <sieve/compaction.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sieve::render {

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
  // Inside the render, work that does not grow with the samples: the scene and the buffers copied to
  // the device, the wave's CUDA graph captured and instantiated (0 on the CPU). Part of it (the
  // capture) lies inside `seconds`.
  double setup_seconds = 0;
  // Inside `seconds`, outside the stage times: how much longer the first wave took than the mean of
  // the others (allocating the queues, the GPU's code loaded and its graph captured, memory touched
  // the first time): the render's one-time costs (note_first_wave). 0 with one wave.
  double first_wave_extra_seconds = 0;
  // Of setup_seconds: the device's buffers made and the scene and the film copied to them (a process
  // that made no CUDA context before: its making too); 0 on the CPU.
  double upload_seconds = 0;
  // The first wave's one-time steps on the GPU (the first frame's parts), seconds; -1 where a step
  // did not run: the driver's queues and workspaces allocated (queues), the wave captured as a CUDA
  // graph (capture: each kernel's code loaded on its first use included) and instantiated
  // (instantiate), and the first wave run until the host has its counts (run).
  struct first_wave_steps {
    double queues = -1, capture = -1, instantiate = -1, run = -1;
  } first_wave;
  std::uint64_t waves = 0;          // waves rendered (for_each_wave)
  // Waves whose stages and loops were timed (profile_stages): all of them, or on the GPU's graph path
  // one in settings.profile_every, whose times scale_measured() then scales to all the waves.
  std::uint64_t measured_waves = 0;
  bool sampled_waves = false;       // one wave in profile_every timed (the GPU's graph path)
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
  // Adds ms to stage `name` (stages kept in the order they first ran) and, for bounce >= 0, to that
  // bounce's compaction: the one place stage times are booked, whichever clock measured them.
  void add_stage(std::string_view name, int bounce, double ms);
  // The row of loop `name` (null when it never ran, or without profile_stages).
  const exec::loop_time* loop(std::string_view name) const;
  // The strategy `asked` runs as for a queue compaction (sieve::strategy::resolve's arguments),
  // recorded in strategies_ran.
  sieve::strategy note_strategy(const sieve::strategy& asked, sieve::backend b, bool in_place, const sieve::record& queue,
                                std::size_t removed);
  // Stage, bounce-compaction and loop figures measured on measured_waves of the waves, scaled to all
  // of them (times waves / measured_waves; nothing when none or all were measured).
  void scale_measured();
  // With `first` the statistics as they stood after the first wave (its wall time `first_seconds`,
  // the integrator's set-up included) and this render's `seconds` set, before scale_measured:
  // first_wave_extra_seconds, the first wave's time outside the stage times over the other waves'
  // mean of it. Stage, loop and bounce figures are left as they are.
  void note_first_wave(const render_stats& first, double first_seconds);
  // Queue compaction plus the BFS frontier's.
  double compaction_ms() const { return stage_ms("compact") + bfs_compact_ms; }
  // The render's time outside the named stages and the first wave's one-time costs (0 when they
  // cover it): launches, host synchronisations, the host's work between the stages. The stages, the
  // one-time costs and it add up to the frame time.
  double other_ms() const;
};

// A tile a render rendered (render_controls::next_tile): pixels [first_pixel, first_pixel + pixels)
// with `samples` samples each, and pixels [first_pixel, ahead) one more (a cut pass).
struct tile_done {
  std::uint32_t first_pixel = 0, pixels = 0, samples = 0, ahead = 0;
};

struct render_result {
  std::uint32_t width = 0, height = 0;
  std::uint32_t spp = 0;      // asked for (the film's spp, or the sample range's count)
  std::uint32_t samples = 0;  // completed for every pixel (< spp when cancelled)
  std::uint32_t ahead = 0;    // pixels [0, ahead) completed one sample more (a pass of several chunks, cancelled)
  std::vector<vec3> sum;      // per pixel, row 0 at the top: the sum of its samples
  std::vector<tile_done> tiles;  // a render by tiles: the tiles it rendered, in order (their pixels alone in sum)
  render_stats stats;

  bool partial() const { return samples < spp; }
  // Per pixel: sum / its samples (zero when no sample completed).
  std::vector<vec3> mean() const;
};

}  // namespace sieve::render
