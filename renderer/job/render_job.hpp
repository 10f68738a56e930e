// A render job: the one owner of a render's steps. A scene file and typed settings in; in order:
//
//   check outputs -> load (once) -> settings checked -> prepare (BVH) -> render (split: the film's
//   tiles, taken on demand, each sent to rank 0 as it ends) -> reduce (split: the last tiles, the
//   film put together) -> report -> write
//
// and the film, its mean image and the JSON report out. `sieve render` (app/render.cpp) runs it with
// hooks for its progress lines, Ctrl-C, the MPI job's ranks and the console; `sieve bench all`
// renders its report's images through it; a binding calls it with no outputs and reads the image
// and the report.
#pragma once

#include <bvh/bvh.hpp>
#include <bvh/ploc.hpp>
#include <frame/settings.hpp>
#include <frame/stats.hpp>
#include <frame/waves.hpp>
#include <scene/scene.hpp>

#include <sieve/compaction/backend.hpp>

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sieve::render {

// What is asked of a render, as typed values (names parsed where they came in: the command line,
// the benchmarks' options). An unset optional keeps the scene's own value.
struct render_request {
  std::string scene;                      // a scene file (.toml) or a model (.obj, .gltf, .glb)
  std::string backend = "auto";           // auto (the GPU when there is one), cpu or cuda
  std::optional<std::string> strategy;    // compaction strategy; unset: the scene's [compaction] strategy
  integrator_kind integrator = integrator_kind::wavefront;
  traversal_kind traversal = traversal_kind::dfs;
  bvh_layout bvh = bvh_layout::automatic;  // render_settings::bvh
  bvh_builder build = bvh_builder::automatic;  // render_settings::build (auto: PLOC on the GPU when it renders, else SAH)
  queue_mode queue = queue_mode::pass;    // pass | index | append (render_settings::queue)
  std::optional<reorder_key> reorder;     // unset: the scene's [compaction] reorder
  std::optional<sort_kind> sort;          // unset: the scene's [compaction] sort
  std::optional<routing_kind> routing;    // unset: the scene's [compaction] routing
  texture_storage textures = texture_storage::hardware;  // render_settings::textures
  std::uint32_t spp = 0;                  // 0: the scene's film.spp
  std::uint32_t width = 0, height = 0;    // 0: the scene's film size (one alone: the other keeps the aspect)
  std::vector<std::string> set;           // key=value overrides of the scene file
  bool profile_stages = false;            // per-stage, per-loop and per-bounce times
  std::uint32_t tile_pixels = 0;          // a split render's tiles: pixels each (0: frame/tiles.hpp's plan_tiles)
  std::uint32_t tile_delay_ms = 0;        // tests: every tile this process takes lasts that much longer (a slow rank)
  // A split render's tiles as units of which a process takes up to this many at once, fewer as the
  // film runs out (frame/tiles.hpp's take_size); 0: 8 when the processes' backends differ, else 1.
  std::uint32_t tile_units = 0;
  // A split render: the BVH built by process 0 alone and sent to the others (MPI_Bcast of its
  // arrays), instead of each process building its own. Off by default: on a 64-core host a 2 GB tree
  // took longer to send than 4 concurrent builds took (docs/mpi.md). A tree the GPU builds is never
  // sent: each GPU rank builds its own in milliseconds.
  bool share_tree = false;
};

// Where a job writes; an empty name writes nothing there.
struct render_outputs {
  std::string image;  // PNG (8-bit sRGB) or EXR (32-bit float), by the extension
  std::string exr;    // a second image, EXR
  std::string json;   // the report
};

// Refuses (sieve::usage_error) an image name whose extension is neither .png nor .exr.
void check_image_name(const std::string& path);
// Refuses a compaction strategy the renderer cannot run on that backend, naming those it can and
// where the name came from (`from`: "--strategy", "compaction.strategy in FILE", ...): an unknown
// name from the command line is a sieve::usage_error, anything else a sieve::error.
void check_strategy(const std::string& name, bool gpu, const std::string& from);

// The other processes of a split render (the ranks of an MPI job, app/mpi.hpp). Every call is
// collective: each process makes it at the same step.
class job_peers {
 public:
  virtual ~job_peers() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Runs `step` here; when it threw on any process, the lowest such rethrows and the others end.
  virtual void on_every_rank(const std::function<void()>& step) = 0;
  virtual std::string broadcast(const std::string& text) = 0;              // rank 0's text everywhere
  virtual std::vector<std::string> gather(const std::string& text) = 0;    // every text at rank 0, in rank order
  virtual void broadcast_bytes(std::span<std::byte> data) = 0;            // rank 0's bytes everywhere (same size)
  virtual void barrier() = 0;                                             // returns when every process reached it
  // Runs the render with stops relayed between processes, a tile counter shared by them and the
  // tiles sent to process 0 as they end (`film`, on process 0: where they land, 3 floats a
  // pixel); a failure inside ends the whole job.
  virtual void render(const std::function<void()>& render, std::span<float> film) = 0;
  // Inside render(): the shared tile counter's value, then adds n to it (0: only reads it).
  virtual std::uint64_t count_tiles(std::uint64_t n) = 0;
  // Inside render(), on a process other than 0: a tile's sums sent on (without waiting).
  virtual void send_tile(std::uint32_t first_pixel, std::span<const float> sums) = 0;
  // After render(): process 0 returns once `pixels` pixels of the others' tiles are in its film;
  // the others once their tiles are sent.
  virtual void finish_tiles(std::uint64_t pixels) = 0;
  // What this process adds to its row of the report's ranks (host, GPU index).
  virtual nlohmann::json describe() const = 0;
};

// The scene as the request overrides it: --spp, --set, and the film size (both given, or one with
// the other following the scene's aspect). The job's load step, and `bench render`'s.
scene load_requested_scene(const render_request& rq);

enum class job_step { load, prepare, render, write };
class render_job;

// The setup's phases as the user waits for them, in order: the scene loaded, the BVH built, the
// scene uploaded (GPU only), the first pass of samples over the whole film done (not in a split
// render, whose ranks render tiles). render_outcome::setup holds their times as each ends.
enum class setup_phase { load, build, upload, first_frame };

// The setup's times beyond render_outcome's load_seconds and bvh_seconds.
struct setup_times {
  std::uint64_t load_bytes = 0;  // the scene's input files (input_bytes), the load's MB/s
  bvh_phases build_phases;       // the BVH build's phases, wall clock (bvh_stats::wall)
  // A build on the device: its steps and phases (prepared_scene::device_timing); zeros otherwise.
  ploc_timing device_build;
  double upload_s = 0;           // GPU: the scene and the film copied to the device (render_stats::upload_seconds)
  // From the render's start, the upload excluded, to the first pass of samples over the whole film
  // (first_frame_spp samples each pixel; the GPU's graph capture included); from the job's start
  // (process start, near enough) to the same moment. Negative: no such pass (a split render, or a
  // render stopped before it).
  double first_frame_s = -1, first_image_s = -1;
  std::uint32_t first_frame_spp = 0;
  render_stats::first_wave_steps first_frame_steps;  // the first frame's parts (GPU), once the render has ended
  // GPU: the render's kernels loaded beside the build (preload_render_kernels): how many, in how
  // long, and how long the render then still waited for it (-1: not done).
  std::size_t preloaded_kernels = 0;
  double preload_s = -1, preload_wait_s = -1;
};

// What the job calls back; each is optional.
struct job_hooks {
  // A step begins: load (the scene file), prepare (the BVH build), render, write.
  std::function<void(job_step, const render_job&)> step;
  // Once the scene is loaded and the settings checked, before any long work: the header.
  std::function<void(const render_job&)> ready;
  // A setup phase ended; its time is in outcome() (load_seconds, bvh_seconds, setup).
  std::function<void(setup_phase, const render_job&)> phase;
  std::function<void(std::uint32_t done, std::uint32_t total)> progress;  // samples, after each pass
  // Set: stop at the next bounce, the samples done kept; while the scene loads or the BVH builds
  // (one process), at their next safe point, with nothing written (render_outcome::stopped_early).
  const std::atomic<bool>* cancel = nullptr;
  job_peers* peers = nullptr;                 // a split render's other processes; null: this one alone
};

// One render done, as its report names it.
struct render_outcome {
  sieve::backend backend = sieve::backend::cpu;
  render_result result;         // the film and its statistics (on rank 0 of a split render: all ranks')
  std::uint32_t spp = 0;        // the film's samples per pixel
  std::uint32_t samples = 0;    // samples per pixel completed for every pixel (< spp when stopped)
  double seconds = 0;           // the render's wall time (a split render: until the tiles are put together)
  double bvh_seconds = 0;       // building the BVH (prepared_scene)
  double load_seconds = 0;      // loading the scene file
  setup_times setup;            // the setup's phases (setup_phase), as far as they ran
  // This process's time: setup (load, BVH, the render's setup: upload, graph capture), rendering,
  // waiting for the other processes to finish rendering, the reduction (the tiles to rank 0), all.
  double setup_seconds = 0, render_seconds = 0, wait_seconds = 0, reduction_seconds = 0, total_seconds = 0;
  std::vector<vec3> image;      // per pixel, the mean of its samples (where the job writes: rank 0)
  nlohmann::json report;        // the JSON report (render_report), on the process that writes
  bool writes = true;           // false on the ranks other than 0 of a split render
  // A job of one process stopped (job_hooks::cancel) before one sample of every pixel was done:
  // while the scene loaded, the BVH was built (at their next safe point: exec/stop.hpp) or in the
  // first pass. It ended there and wrote nothing: an image of no samples never replaces an output.
  bool stopped_early = false;
  bool partial() const;
};

// The JSON report (`sieve render --json`): scene, device and machine, settings, rays, stage and
// bounce times, the run (version, commit, command line).
nlohmann::json render_report(const render_request& rq, const scene& sc, const render_settings& settings,
                             const render_outcome& out, const std::string& command_line);

// A profiled render's loops (render_stats::loops) as a JSON array of {name, launches, items, ms}, in
// the order they first ran; empty unless profile_stages. The render report's and the benchmark's.
nlohmann::json loops_json(const render_stats& st);

// The setup's phases as the report's "setup_s" object, seconds under keys ending in _s: load_s (and
// load_bytes, load_mb_per_s), build_s with build_phases_s, upload_s, first_frame_s, first_image_s
// (null where the phase did not run).
nlohmann::json setup_report(const render_outcome& out, std::size_t triangles);

class render_job {
 public:
  render_job(render_request rq, render_outputs outputs, std::string command_line, job_hooks hooks = {});

  // Every step in order. Throws sieve::error on bad input (usage_error for a bad output name).
  const render_outcome& run();

  const render_request& request() const { return rq_; }
  const render_outputs& outputs() const { return outputs_; }
  // After the load step: the scene as overridden, the checked settings, the backend.
  const scene& loaded() const { return scene_; }
  const render_settings& settings() const { return settings_; }
  sieve::backend backend() const { return backend_; }
  const render_outcome& outcome() const { return out_; }

 private:
  void load();
  void prepare();
  void render();
  void reduce();
  void write();
  void phase_done(setup_phase p);
  template <class F>
  void on_every_rank(F&& step);

  render_request rq_;
  render_outputs outputs_;
  std::string command_line_;
  job_hooks hooks_;
  struct state;
  std::shared_ptr<state> state_;
  scene scene_;
  render_settings settings_;
  sieve::backend backend_ = sieve::backend::cpu;
  render_outcome out_;
};

// The job with no hooks, in this process alone: bench all's images.
render_outcome render_to_files(const render_request& rq, const render_outputs& outputs, const std::string& command_line);

}  // namespace sieve::render
