// The CUDA driver of the wavefront path tracer: the one bounce loop (driver.hpp) over a CUDA backend
// policy, its stages launched as kernels through exec::cuda over the scene, queues and film in
// device memory, the path queue compacted by the library's device-count calls
// (sieve::cuda::compact*_async with sieve::cuda::device_counts) with a workspace allocated once.
//
// No host round trip inside a wave: the counts stay on the device, every stage launches over the
// queue's capacity (threads past the live count exit, so the bounces after the queue empties cost
// a few empty launches), the wave's parameters are copied into device memory by a node of the graph,
// and the whole wave (generate, every bounce up to max_bounces, accumulate, the counts copied back) is
// captured once as a CUDA graph and replayed for every wave: one host synchronisation per wave (the
// stats, progress and Ctrl-C); the BFS traversal goes into it too (bfs_tracer_cuda::closest_async,
// its level loop a WHILE node). The exceptions run the same loop on the stream with a
// synchronisation per bounce (stats.wave_launch "stream"): the `thrust` strategy, which reads its
// counts back, and a BFS render with stage times (bfs_in_graph below).
#include "render.hpp"

#include "../frame/device_scene.hpp"

#include <exec/device_array.cuh>

#include "../trace/bfs.hpp"
#include "../core/marks.hpp"
#include "../megakernel/megakernel.hpp"
#include "../wavefront/driver.hpp"
#include "wave_loop.hpp"

#include <sieve/compaction/cuda.hpp>
#include <sieve/compaction/cuda_check.hpp>
#include <sieve/compaction/cuda_device.hpp>
#include <sieve/compaction/multisplit.hpp>
#include <sieve/compaction/radix_sort.hpp>

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <thread>
#include <chrono>
#include <memory>
#include <vector>

namespace sieve::render {
namespace {

using exec::device_array;

// The scene as the GPU's stages read it: each kind of ray traced as `--bvh` asks (gpu_traversals_for).
scene_view gpu_scene_view(scene_view v, const render_settings& settings) {
  v.trace = gpu_traversals_for(settings.bvh);
  return v;
}

// The BFS traversal inside the wave's graph (bfs_tracer_cuda::closest_async: a device count, its level
// loop a WHILE node of the wave's graph). Not with stage times: a conditional node's body holds no
// event record nodes, so a profiled BFS render takes the synchronous path, where the tracer's
// host-driven loop times each step's compaction (stats.bfs_compact_ms).
constexpr bool bfs_in_graph = true;

// The multisplit routing's design: the library's stable one-pass split (bench multisplit's fastest).
constexpr std::string_view multisplit_algorithm = "auto";

// Pinned host memory of T (cudaMallocHost): what a graph's copy nodes read and write.
template <class T>
class pinned {
 public:
  explicit pinned(std::size_t n) { SIEVE_CUDA_CHECK(cudaMallocHost(&p_, std::max<std::size_t>(n, 1) * sizeof(T))); }
  ~pinned() { cudaFreeHost(p_); }
  pinned(const pinned&) = delete;
  pinned& operator=(const pinned&) = delete;
  T* get() const { return p_; }

 private:
  T* p_ = nullptr;
};

// Stage times by CUDA events. On the stream (synchronous path) the spans are read and dropped after
// each synchronisation; recorded while a wave is captured, they become event record nodes of the
// graph, recorded again at every replay and read after each.
class event_clock {
 public:
  event_clock(render_stats& stats, cudaStream_t stream) : stats_(stats), stream_(stream) {}

  // Enqueues f between two events; `bounce` >= 0 also adds the time to that bounce's compaction.
  template <class F>
  void time(std::string_view name, int bounce, F&& f) {
    span_events s{std::string(name), {}, {}, bounce};
    s.start.record_or_capture(stream_);
    f();
    s.stop.record_or_capture(stream_);
    spans_.push_back(std::move(s));
  }
  // After a synchronisation: adds up the spans; keep them when a graph records them again.
  void collect(bool keep) {
    for (const auto& p : spans_) stats_.add_stage(p.name, p.bounce, p.stop.ms_since(p.start));
    if (!keep) spans_.clear();
  }

 private:
  struct span_events {
    std::string name;
    sieve::cuda::event start, stop;  // recorded as event record nodes while a wave is captured
    int bounce;
  };
  render_stats& stats_;
  cudaStream_t stream_;
  std::vector<span_events> spans_;
};

// The driver's backend policy on the GPU (driver.hpp).
class cuda_backend {
 public:
  template <class T>
  using array = device_array<T>;

  // materials: the scene's count (the sort routing's key bits).
  cuda_backend(render_stats& stats, const render_settings& settings, cudaStream_t stream, std::uint32_t capacity,
               std::uint32_t materials)
      : stats_(stats), settings_(settings), stream_(stream), capacity_(capacity), clock_(stats, stream),
        loops_(stats.loops), loop_clock_(loops_) {
    if (settings.traversal == traversal_kind::bfs) {
      bfs_ = std::make_unique<bfs_tracer_cuda>(settings.strategy);
      bfs_->reserve(capacity);  // before any capture: closest_async never allocates
      if (settings.profile_stages) bfs_->time_loops(&loop_clock_);  // its host-driven loop (no graph when profiling)
    }
    if (settings.reorder != reorder_key::none || settings.routing == routing_kind::sort) {
      const int bits = std::max(reorder_key_bits(settings.reorder), route_sort_bits(materials));
      sort_ws_ = device_array<std::byte>(sieve::cuda::radix_sort_workspace_bytes(to_string(settings.sort), capacity, 0, bits));
    }
  }

  // Profiling: every loop timed by the loop clock (events; in a graph, event record nodes) while
  // timing is on (set_timing: with sampled stage times the graph is captured bare and a timed wave
  // runs on the stream).
  exec::cuda exec() { return {stream_, timing_ ? &loop_clock_ : nullptr}; }
  void set_timing(bool on) { timing_ = on && settings_.profile_stages; }
  void zero(void* p, std::size_t bytes) const { SIEVE_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, stream_)); }
  // The synchronous path only: waits for the stream.
  std::uint64_t read(const std::uint64_t* count) {
    std::uint64_t v = 0;
    SIEVE_CUDA_CHECK(cudaMemcpyAsync(&v, count, sizeof v, cudaMemcpyDeviceToHost, stream_));
    synchronize();
    return v;
  }
  void synchronize() {
    SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    ++stats_.host_syncs;
    if (graph_) return;
    clock_.collect(false);
    loop_clock_.collect(false);
  }
  // A graph records the clocks' events again at each replay: keep them after collecting.
  void replayed() {
    clock_.collect(true);
    loop_clock_.collect(true);
  }
  void set_graph(bool on) { graph_ = on; }

  // Sized for the queue's shape once, before any capture: the compaction never allocates.
  void reserve_workspace(const sieve::record& queue, sieve::form form, bool in_place) {
    ws_ = device_array<std::byte>(sieve::cuda::workspace_bytes(settings_.strategy, queue, form, in_place));
  }

  // The multisplit routing's, for the entries' shape (route_record), before any capture.
  void reserve_multisplit(const sieve::record& entries) {
    split_ws_ = device_array<std::byte>(sieve::cuda::multisplit_workspace_bytes(multisplit_algorithm, entries, material_families));
  }

  // In place when out is null.
  void compact(const sieve::strategy& strategy, const sieve::record& items, const sieve::record* out,
               const sieve::selection& keep, const sieve::cuda::device_counts& live, std::uint64_t* kept) {
    const sieve::cuda::workspace ws{ws_.get(), ws_.size()};
    const bool list = std::holds_alternative<sieve::removal_list>(keep);
    const sieve::cuda::device_counts counts{live.items, list ? live.removals : nullptr};
    const std::size_t k = list ? std::get<sieve::removal_list>(keep).indices.size() : 0;
    const sieve::strategy ran = stats_.note_strategy(strategy, sieve::backend::cuda, out == nullptr, items, k);
    if (ran.info().host_counts) ++stats_.host_syncs;  // it reads the counts back
    // The removal lists are the renderer's own (each terminated path once): unchecked.
    if (!out)
      sieve::cuda::compact_async(ran, items, keep, counts, kept, ws, stream_, {.checked = false});
    else
      sieve::cuda::compact_copy_async(ran, items, *out, keep, counts, kept, ws, stream_, {.checked = false});
  }

  // Over n slots (the capacity in a graph: reorder_keys gave the slots past the live count the
  // largest key, so they sort last), out of place into the second halves of keys and values.
  std::pair<const std::uint32_t*, const std::uint32_t*> sort(std::uint32_t* keys, std::uint32_t* values, std::uint32_t n,
                                                             int bits) const {
    sieve::cuda::radix_sort_pairs_async(to_string(settings_.sort), std::span<const std::uint32_t>(keys, n),
                                        std::span<const std::uint32_t>(values, n), std::span(keys + capacity_, n),
                                        std::span(values + capacity_, n), 0, bits, {sort_ws_.get(), sort_ws_.size()},
                                        stream_);
    return {keys + capacity_, values + capacity_};
  }

  // 2048 threads a multiprocessor (Hopper's most).
  std::uint32_t resident_threads() const { return static_cast<std::uint32_t>(sieve::cuda::sm_count()) * 2048U; }

  // The library's multisplit (auto: the fastest design) with device counts (*live items of n), the bounds on the device.
  void multisplit(const std::uint8_t* keys, const std::uint32_t* in, std::uint32_t* out, std::uint32_t n,
                  const std::uint64_t* live, unsigned buckets, std::uint64_t* bounds) const {
    sieve::cuda::multisplit_async(multisplit_algorithm, sieve::const_record(std::span(in, n)),
                                  sieve::record(std::span(out, n)), sieve::bucket_ids{std::span(keys, n)}, buckets, bounds,
                                  {split_ws_.get(), split_ws_.size()}, stream_, live, {.checked = false});
  }

  // In a graph: *live rays (device count), n the capacity, nothing read back. On the stream: n is
  // the live count and the tracer returns when done (its own synchronisations counted; with stage
  // times its loop is host-driven and times the frontier's compaction).
  void extend_bfs(const scene_view& view, const ray* rays, hit* hits, std::uint32_t n, const std::uint32_t* live) {
    if (graph_) return bfs_->closest_async(view.bvh, rays, hits, n, live, stream_);
    bfs_stats bs;
    bfs_->closest(view.bvh, rays, hits, n, stream_, settings_.profile_stages ? &bs : nullptr);
    stats_.bfs_compact_ms += bs.compact_ms;
    stats_.host_syncs += bfs_->host_syncs();
  }

  template <class F>
  void time(std::string_view name, int bounce, F&& f) {
    if (!timing_) return f();
    clock_.time(name, bounce, f);
  }

 private:
  render_stats& stats_;
  const render_settings& settings_;
  cudaStream_t stream_;
  std::uint32_t capacity_;
  event_clock clock_;
  exec::loop_clock loops_;  // into stats.loops
  exec::cuda_loop_clock loop_clock_;
  bool graph_ = false;
  bool timing_ = settings_.profile_stages;
  std::unique_ptr<bfs_tracer_cuda> bfs_;
  device_array<std::byte> ws_, sort_ws_, split_ws_;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A CUDA graph, instantiated, owned.
struct graph_exec {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ~graph_exec() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
};

// A stream, owned.
struct stream_owner {
  cudaStream_t s = nullptr;
  stream_owner() { SIEVE_CUDA_CHECK(cudaStreamCreate(&s)); }
  ~stream_owner() { cudaStreamDestroy(s); }
  stream_owner(const stream_owner&) = delete;
  stream_owner& operator=(const stream_owner&) = delete;
};

// The GPU's side of the wave loop (wave_loop.hpp): the scene, the wave and the film in device memory,
// one stream; the wave's parameters copied in from pinned memory.
class cuda_run {
 public:
  using driver_backend = cuda_backend;

  cuda_run(const prepared_scene& ps, const render_settings& settings, render_result& result)
      : settings_(settings), stats_(result.stats), film_desc_(ps.source().film),
        pixels_(film_desc_.width * film_desc_.height),
        capacity_(wave_capacity(pixels_, film_desc_.spp, settings)), scene_(ps, settings.textures),
        view_(gpu_scene_view(scene_.view(film_desc_.width, film_desc_.height), settings)), family_(ps.family()),
        backend_(result.stats, settings, stream_.s, capacity_, view_.material_count),
        film_(pixels_), wave_(1), h_wave_(1) {
    SIEVE_CUDA_CHECK(cudaMemsetAsync(film_.get(), 0, pixels_ * sizeof(vec3), stream_.s));
  }

  cuda_backend& backend() { return backend_; }
  const scene_view& view() const { return view_; }
  material_family family() const { return family_; }
  wave* wave_slot() const { return wave_.get(); }
  vec3* film() const { return film_.get(); }
  void wait() const { SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream_.s)); }
  // A tile's sums to the host (its waves are done: each ends with the host waiting for its counts).
  void read_tile(render_result& result, const tile_done& t) const {
    SIEVE_CUDA_CHECK(cudaMemcpyAsync(result.sum.data() + t.first_pixel, film_.get() + t.first_pixel, t.pixels * sizeof(vec3),
                                     cudaMemcpyDeviceToHost, stream_.s));
    wait();
  }
  // The film's sums to the host: a render by tiles reads its tiles' pixels alone (none when each
  // was read as it ended: controls.tile_rendered).
  void read_film(render_result& result, const render_controls& controls) const {
    if (controls.next_tile && (result.tiles.empty() || controls.tile_rendered)) return;
    if (result.tiles.empty()) {
      SIEVE_CUDA_CHECK(cudaMemcpy(result.sum.data(), film_.get(), pixels_ * sizeof(vec3), cudaMemcpyDeviceToHost));
      return;
    }
    for (const tile_done& t : result.tiles)
      SIEVE_CUDA_CHECK(cudaMemcpyAsync(result.sum.data() + t.first_pixel, film_.get() + t.first_pixel, t.pixels * sizeof(vec3),
                                       cudaMemcpyDeviceToHost, stream_.s));
    wait();
  }

  class megakernel_waves {
   public:
    megakernel_waves(cuda_run& r, std::uint32_t capacity, std::uint32_t max_pixels)
        : r_(r), max_pixels_(max_pixels), wave_film_(capacity), rays_(2), h_rays_(2) {
      SIEVE_CUDA_CHECK(cudaMemsetAsync(wave_film_.get(), 0, capacity * sizeof(vec3), r.stream_.s));
    }
    bool run(const wave& w, std::uint32_t rays[2]) {
      const cudaStream_t stream = r_.stream_.s;
      const exec::cuda gpu = r_.backend_.exec();
      const auto t_run = std::chrono::steady_clock::now();
      *r_.h_wave_.get() = w;
      SIEVE_CUDA_CHECK(cudaMemcpyAsync(r_.wave_.get(), r_.h_wave_.get(), sizeof(wave), cudaMemcpyHostToDevice, stream));
      SIEVE_CUDA_CHECK(cudaMemsetAsync(rays_.get(), 0, 2 * sizeof(std::uint32_t), stream));
      r_.backend_.time("megakernel", -1, [&] { megakernel(gpu, r_.view_, w, wave_film_.get(), rays_.get(), r_.family_); });
      r_.backend_.time("accumulate", -1,
                       [&] { accumulate(gpu, max_pixels_, r_.wave_.get(), wave_film_.get(), r_.film_.get()); });
      SIEVE_CUDA_CHECK(cudaMemcpyAsync(h_rays_.get(), rays_.get(), 2 * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream));
      r_.backend_.synchronize();
      if (r_.stats_.first_wave.run < 0) r_.stats_.first_wave.run = seconds_since(t_run);
      rays[0] = h_rays_.get()[0];
      rays[1] = h_rays_.get()[1];
      return true;
    }

   private:
    cuda_run& r_;
    std::uint32_t max_pixels_;
    device_array<vec3> wave_film_;
    device_array<std::uint32_t> rays_;
    pinned<std::uint32_t> h_rays_;
  };

  // Each wave captured once as a graph and replayed, or enqueued on the stream with the counts read
  // each bounce (a strategy that reads its counts back; BFS with stage times; wave_graph off).
  class wavefront_waves {
   public:
    wavefront_waves(cuda_run& r, wavefront_driver<cuda_backend>& driver)
        : r_(r), driver_(driver), counts_(driver.counts()),
          count_bytes_(wave_counts::size(r.film_desc_.max_bounces) * sizeof(std::uint64_t)),
          h_counts_(wave_counts::size(r.film_desc_.max_bounces)) {
      const render_settings& settings = r.settings_;
      render_stats& stats = r.stats_;
      const bool append = driver.mode() == queue_mode::append;
      if (!append) r.backend_.reserve_workspace(driver.compaction_record(), stats.form, driver.in_place());
      if (settings.routing == routing_kind::multisplit) r.backend_.reserve_multisplit(driver.route_record());
      const std::uint32_t capacity = r.capacity_;
      // A strategy that reads its counts back (the registry's host_counts) runs on the stream.
      const bool host_counts =
          !append && sieve::strategy(settings.strategy)
                         .resolve(sieve::backend::cuda, stats.form, driver.in_place(), capacity,
                                  stats.form == sieve::form::removal_list ? capacity : 0,
                                  driver.compaction_record().item_bytes())
                         .info()
                         .host_counts;
      const bool bfs = settings.traversal == traversal_kind::bfs;
      in_graph_ = settings.wave_graph && !host_counts && (!bfs || (bfs_in_graph && !settings.profile_stages));
      stats.wave_launch = in_graph_ ? "graph" : "stream";
      r.backend_.set_graph(in_graph_);
      // A graph's event nodes cost the wave a few microseconds each: one wave in profile_every is
      // enqueued on the stream with its events, the others replay a bare graph (settings.hpp).
      stats.sampled_waves = in_graph_ && settings.profile_stages && settings.profile_every > 1;
      const film_desc& film = r.film_desc_;
      total_waves_ = waves_in(film.width * film.height, film.spp, settings);
    }

    const std::uint64_t* run(const wave& w) {
      const cudaStream_t stream = r_.stream_.s;
      *r_.h_wave_.get() = w;  // the previous wave has completed (synchronised): nothing reads it now
      const auto t_run = std::chrono::steady_clock::now();
      const auto first_run = [&] {  // the first wave's time to the host's wait (stats.first_wave.run)
        if (r_.stats_.first_wave.run < 0) r_.stats_.first_wave.run = seconds_since(t_run);
      };
      if (!in_graph_) {
        if (!enqueue(w, true)) return nullptr;
        r_.backend_.synchronize();
        first_run();
        return h_counts_.get();
      }
      render_stats& stats = r_.stats_;
      if (stats.sampled_waves && timed_wave(index_++, total_waves_, r_.settings_.profile_every)) {
        // A timed wave: enqueued on the stream with its events (no second graph to instantiate).
        r_.backend_.set_graph(false);
        r_.backend_.set_timing(true);
        const bool done = enqueue(w, false);
        r_.backend_.synchronize();  // and the events read
        r_.backend_.set_timing(false);
        r_.backend_.set_graph(true);
        if (!done) return nullptr;
        first_run();
        ++stats.measured_waves;
        return h_counts_.get();
      }
      if (!g_.exec) {
        // Captured once; later waves replay it (nothing in it depends on w). Sampled stage times:
        // the bare wave, without events.
        const auto t_capture = std::chrono::steady_clock::now();
        r_.backend_.set_timing(!stats.sampled_waves);
        SIEVE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        try {
          enqueue(w, false);
        } catch (...) {
          cudaGraph_t partial = nullptr;
          cudaStreamEndCapture(stream, &partial);
          if (partial) cudaGraphDestroy(partial);
          throw;
        }
        SIEVE_CUDA_CHECK(cudaStreamEndCapture(stream, &g_.graph));
        stats.first_wave.capture = seconds_since(t_capture);
        const auto t_instantiate = std::chrono::steady_clock::now();
        SIEVE_CUDA_CHECK(cudaGraphInstantiate(&g_.exec, g_.graph, 0));
        stats.first_wave.instantiate = seconds_since(t_instantiate);
        ++stats.graphs;
        stats.setup_seconds += seconds_since(t_capture);
      }
      const auto t_launch = std::chrono::steady_clock::now();
      SIEVE_CUDA_CHECK(cudaGraphLaunch(g_.exec, stream));
      r_.backend_.synchronize();
      if (stats.first_wave.run < 0) stats.first_wave.run = seconds_since(t_launch);
      r_.backend_.replayed();  // the events of a graph timed throughout (profile_every 1), if any
      return h_counts_.get();
    }

   private:
    // The wave's parameters in, the driver's work, the counts out: one stream's worth of work.
    bool enqueue(const wave& w, bool host_counts) {
      const cudaStream_t stream = r_.stream_.s;
      SIEVE_CUDA_CHECK(cudaMemcpyAsync(r_.wave_.get(), r_.h_wave_.get(), sizeof(wave), cudaMemcpyHostToDevice, stream));
      if (!driver_.run(w, host_counts)) return false;
      SIEVE_CUDA_CHECK(cudaMemcpyAsync(h_counts_.get(), counts_.words, count_bytes_, cudaMemcpyDeviceToHost, stream));
      return true;
    }

    cuda_run& r_;
    wavefront_driver<cuda_backend>& driver_;
    wave_counts counts_;
    std::size_t count_bytes_;
    pinned<std::uint64_t> h_counts_;
    bool in_graph_ = false;
    std::uint64_t total_waves_ = 0, index_ = 0;
    graph_exec g_;
  };

 private:
  const render_settings& settings_;
  render_stats& stats_;
  const film_desc& film_desc_;
  std::uint32_t pixels_;
  std::uint32_t capacity_;  // the most paths a wave holds
  const device_scene scene_;  // the scene in device memory
  scene_view view_;
  material_family family_;  // the shading kernels' (prepared_scene::family)
  stream_owner stream_;
  cuda_backend backend_;
  device_array<vec3> film_;
  device_array<wave> wave_;
  const pinned<wave> h_wave_;  // a graph's copy node reads it: written only while no wave runs
};

// An empty kernel: its module is this translation unit's, the one every stage of a render's wave
// comes from (preload_render_kernels).
__global__ void render_module_anchor() {}

// A driver function by name (no link to the driver library), null where the driver lacks it.
template <class F>
F driver_function(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12040, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return reinterpret_cast<F>(fn);
}

}  // namespace

std::size_t preload_render_kernels() {
  if (!sieve::cuda::available()) return 0;
  using get_module = CUresult (*)(CUmodule*, CUfunction);
  using count_functions = CUresult (*)(unsigned*, CUmodule);
  using enumerate_functions = CUresult (*)(CUfunction*, unsigned, CUmodule);
  using load_function = CUresult (*)(CUfunction);
  const auto module_of = driver_function<get_module>("cuFuncGetModule");
  const auto count = driver_function<count_functions>("cuModuleGetFunctionCount");
  const auto enumerate = driver_function<enumerate_functions>("cuModuleEnumerateFunctions");
  const auto load = driver_function<load_function>("cuFuncLoad");
  cudaFunction_t anchor = nullptr;
  if (!module_of || !count || !enumerate || !load || cudaGetFuncBySymbol(&anchor, reinterpret_cast<const void*>(&render_module_anchor)) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  CUmodule module = nullptr;
  unsigned n = 0;
  if (module_of(&module, reinterpret_cast<CUfunction>(anchor)) != CUDA_SUCCESS || count(&n, module) != CUDA_SUCCESS) return 0;
  std::vector<CUfunction> functions(n);
  if (n == 0 || enumerate(functions.data(), n, module) != CUDA_SUCCESS) return 0;
  // SIEVE_PRELOAD=parallel: the kernels split over 8 threads; SIEVE_PRELOAD_TRACE: a line per kernel
  // on stderr (its load's time, its local memory, its name). Both for measuring.
  const char* mode = std::getenv("SIEVE_PRELOAD");
  const bool trace = std::getenv("SIEVE_PRELOAD_TRACE") != nullptr;
  const auto local_bytes = driver_function<CUresult (*)(int*, CUfunction_attribute, CUfunction)>("cuFuncGetAttribute");
  const auto name_of = driver_function<CUresult (*)(const char**, CUfunction)>("cuFuncGetName");
  std::atomic<std::size_t> loaded{0};
  const auto load_range = [&](std::size_t from, std::size_t step) {
    for (std::size_t i = from; i < functions.size(); i += step) {
      const auto t = std::chrono::steady_clock::now();
      const bool ok = load(functions[i]) == CUDA_SUCCESS;
      loaded += ok;
      if (!trace || !ok) continue;
      const double ms = seconds_since(t) * 1e3;
      int local = -1;
      const char* name = "?";
      if (local_bytes) local_bytes(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, functions[i]);
      if (name_of) name_of(&name, functions[i]);
      std::fprintf(stderr, "preload: %.3f ms, %d local bytes, %.120s\n", ms, local, name);
    }
  };
  if (mode && std::string_view(mode) == "parallel") {
    std::vector<std::thread> threads;
    for (std::size_t k = 0; k < 8; ++k) threads.emplace_back(load_range, k, 8);
    for (auto& t : threads) t.join();
  } else {
    load_range(0, 1);
  }
  return loaded;
}

render_result render_cuda(const prepared_scene& ps, const render_settings& settings, const render_controls& controls) {
  render_result result = begin_render(ps.source(), settings, sieve::backend::cuda);
  if (!sieve::cuda::available()) throw sieve::error("the cuda backend needs a GPU: " + sieve::cuda::device_description());
  const auto t_setup = std::chrono::steady_clock::now();
  cuda_run run(ps, settings, result);
  run.wait();  // the scene and the film on the device
  result.stats.upload_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_setup).count();
  result.stats.setup_seconds += result.stats.upload_seconds;
  if (controls.uploaded) controls.uploaded(result.stats.upload_seconds);
  run_waves(run, ps.source().film, settings, controls, result);
  run.read_film(result, controls);
  return result;
}

}  // namespace sieve::render
