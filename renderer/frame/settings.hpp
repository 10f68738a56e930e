// What a render is asked to do (frame layer): typed values, parsed once where they come in (the
// command line, the scene file, the benchmarks' options) and carried as they are.
#pragma once

#include "../core/modes.hpp"
#include "../scene/scene.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

namespace sieve::render {

struct render_settings {
  // The modes (core/modes.hpp, parsed from names where they come in).
  integrator_kind integrator = integrator_kind::wavefront;  // megakernel: one thread per path, no queues
  std::string strategy = "auto";      // compaction of the path queue (and of the BFS frontier)
  traversal_kind traversal = traversal_kind::dfs;
  bvh_layout bvh = bvh_layout::automatic;  // the GPU's depth-first trees (trace/tracers.hpp: gpu_traversals_for)
  bvh_builder build = bvh_builder::automatic;  // who builds the tree (prepared_scene)
  // How the path queue shrinks (driver.hpp): pass (the strategy compacts the path state), index (it
  // compacts 4-byte path indices; the state stays in place) or append (shade appends the survivors
  // to the next queue: no pass, no strategy).
  queue_mode queue = queue_mode::pass;
  reorder_key reorder = reorder_key::none;
  // How shade reaches the material families (wavefront/route.hpp); megakernel runs the megakernel
  // whatever `integrator` says (uses_megakernel()).
  routing_kind routing = routing_kind::branch;
  sort_kind sort = sort_kind::onesweep;  // the GPU radix sort for reordering (the CPU has one)
  texture_storage textures = texture_storage::hardware;  // how the GPU reads textures
  std::uint32_t max_queue = 1U << 20;  // paths in flight at once (a wave): bounds the queues' memory
  // The film's samples to render: [first_sample, first_sample + sample_count), sample_count 0 for
  // all of them (from first_sample to spp); the counter RNG gives sample s of pixel p the same
  // numbers whoever renders it.
  std::uint32_t first_sample = 0, sample_count = 0;
  // By tiles (render_controls::next_tile): no tile holds more than tile_pixels pixels (what the
  // queues are sized for).
  std::uint32_t tile_pixels = 0;
  // Per-stage, per-bounce and per-loop times (CPU clock; on the GPU CUDA events recorded inside the
  // wave's graph). Off (the default): the frame time only, nothing added between the stages.
  bool profile_stages = false;
  // GPU, waves replayed as CUDA graphs: one wave in every `profile_every` is replayed from a second
  // graph that holds the events (the second wave, then every profile_every-th: the first is cold);
  // the others from the bare graph, so measuring costs about 1/profile_every of what timing every
  // wave would. The times are scaled from the waves measured to all of them
  // (render_stats::scale_measured). 1: every wave timed. A render of one wave times that wave.
  std::uint32_t profile_every = 8;
  // GPU: capture each wave once as a CUDA graph (where the strategy and traversal allow); false: the
  // same loop on the stream, reading the live count back each bounce (for comparison).
  bool wave_graph = true;

  bool uses_megakernel() const { return integrator == integrator_kind::megakernel || routing == routing_kind::megakernel; }
  // Whether `strategy` runs at all: on the path queue (wavefront, pass or index) or on the BFS
  // frontier; not with the append queue's DFS (shade appends the survivors) nor in the megakernel
  // (no queue, depth-first).
  bool runs_strategy() const {
    return !uses_megakernel() && (queue != queue_mode::append || traversal == traversal_kind::bfs);
  }
  // Whether the wavefront's rays are reordered (and `sort` sorts them on the GPU).
  bool reorders() const { return !uses_megakernel() && reorder != reorder_key::none; }

  // The scene's [compaction] settings.
  static render_settings from(const scene& s);
};

// What travels beside a render's settings (which hold values only): the callbacks a render calls as
// it goes and the flag that stops it. Empty: a render of the whole film, to its end, telling no one.
struct render_controls {
  // Tiles (the ranks of an MPI job take them on demand): when set, the render renders the pixel
  // ranges next_tile hands out, one after the other, each over all the samples asked for, until it
  // returns false; none holds more than render_settings::tile_pixels pixels. Every pixel's samples
  // are still added in sample order, so the image is the one-process image.
  std::function<bool(std::uint32_t& first_pixel, std::uint32_t& pixels)> next_tile;
  // Tiles: when set, called as each tile ends (a cut one too) with its pixels' sums, already in host
  // memory where the render's result keeps them (they stay there unchanged): the ranks of an MPI job
  // send each tile on while they render the next.
  std::function<void(std::uint32_t first_pixel, std::span<const vec3> sums)> tile_rendered;
  const std::atomic<bool>* cancel = nullptr;  // set: stop at the next bounce or chunk (the cut wave is dropped)
  std::function<void(std::uint32_t done, std::uint32_t total)> progress;  // samples done, after each wave
  // GPU: called once the scene and the film are on the device, with the seconds the upload took
  // (render_stats::upload_seconds); the CPU renders from host memory and never calls it.
  std::function<void(double seconds)> uploaded;
};

}  // namespace sieve::render
