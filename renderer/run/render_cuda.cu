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

#include "../bvh/bfs.hpp"
#include "../core/marks.hpp"
#include "../megakernel/megakernel.hpp"
#include "../wavefront/driver.hpp"

#include <sieve/compaction/cuda.hpp>
#include <sieve/compaction/cuda_check.hpp>
#include <sieve/compaction/cuda_device.hpp>
#include <sieve/compaction/radix_sort.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

namespace sieve::render {
namespace {

using exec::device_array;

// The BFS traversal inside the wave's graph (bfs_tracer_cuda::closest_async: a device count, its level
// loop a WHILE node of the wave's graph). Not with stage times: a conditional node's body holds no
// event record nodes, so a profiled BFS render takes the synchronous path, where the tracer's
// host-driven loop times each step's compaction (stats.bfs_compact_ms).
constexpr bool bfs_in_graph = true;

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

  cuda_backend(render_stats& stats, const render_settings& settings, cudaStream_t stream, std::uint32_t capacity)
      : stats_(stats), settings_(settings), stream_(stream), capacity_(capacity), clock_(stats, stream),
        loops_(stats.loops), loop_clock_(loops_) {
    if (settings.traversal == traversal_kind::bfs) {
      bfs_ = std::make_unique<bfs_tracer_cuda>(settings.strategy);
      bfs_->reserve(capacity);  // before any capture: closest_async never allocates
      if (settings.profile_stages) bfs_->time_loops(&loop_clock_);  // its host-driven loop (no graph when profiling)
    }
    if (settings.reorder != reorder_key::none) {
      const std::size_t bytes =
          sieve::cuda::radix_sort_workspace_bytes(to_string(settings.sort), capacity, 0, reorder_key_bits(settings.reorder));
      sort_ws_ = device_array<std::byte>(bytes);
    }
  }

  // Profiling: every loop timed by the loop clock (events; in a graph, event record nodes).
  exec::cuda exec() { return {stream_, settings_.profile_stages ? &loop_clock_ : nullptr}; }
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

  void compact(const sieve::strategy& strategy, bool in_place, const sieve::record& items, const sieve::record& out,
               const sieve::selection& keep, const std::uint64_t* live, const std::uint64_t* removals,
               std::uint64_t* kept) {
    const sieve::cuda::workspace ws{ws_.get(), ws_.size()};
    const bool list = std::holds_alternative<sieve::removal_list>(keep);
    const sieve::cuda::device_counts counts{live, list ? removals : nullptr};
    const std::size_t k = list ? std::get<sieve::removal_list>(keep).indices.size() : 0;
    const sieve::strategy ran = stats_.note_strategy(strategy, sieve::backend::cuda, in_place, items, k);
    if (ran.info().host_counts) ++stats_.host_syncs;  // it reads the counts back
    // The removal lists are the renderer's own (each terminated path once): unchecked.
    if (in_place)
      sieve::cuda::compact_async(ran, items, keep, counts, kept, ws, stream_, {.checked = false});
    else
      sieve::cuda::compact_copy_async(ran, items, out, keep, counts, kept, ws, stream_, {.checked = false});
  }

  // Over n slots (the capacity in a graph: reorder_keys gave the slots past the live count the
  // largest key, so they sort last), out of place into the second halves of keys and values.
  const std::uint32_t* sort(std::uint32_t* keys, std::uint32_t* values, std::uint32_t n, int bits) const {
    sieve::cuda::radix_sort_pairs_async(to_string(settings_.sort), std::span<const std::uint32_t>(keys, n),
                                        std::span<const std::uint32_t>(values, n), std::span(keys + capacity_, n),
                                        std::span(values + capacity_, n), 0, bits, {sort_ws_.get(), sort_ws_.size()},
                                        stream_);
    return values + capacity_;
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
    if (!settings_.profile_stages) return f();
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
  std::unique_ptr<bfs_tracer_cuda> bfs_;
  device_array<std::byte> ws_, sort_ws_;
};

// A CUDA graph, instantiated, owned.
struct graph_exec {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ~graph_exec() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
};

}  // namespace

render_result render_cuda(const prepared_scene& ps, const render_settings& settings) {
  const scene& sc = ps.source();
  const film_desc& film = sc.film;
  render_result result = begin_render(sc, settings, sieve::backend::cuda);
  if (!sieve::cuda::available()) throw sieve::error("the cuda backend needs a GPU: " + sieve::cuda::device_description());
  render_stats& stats = result.stats;
  const std::uint32_t pixels = film.width * film.height;

  // The scene in device memory.
  const device_scene scene_on_device(ps);
  const scene_view view = scene_on_device.view(film.width, film.height);

  const std::uint32_t capacity = wave_capacity(pixels, film.spp, settings.max_queue);
  const std::uint32_t max_pixels = std::min(pixels, settings.max_queue);
  cudaStream_t stream;
  SIEVE_CUDA_CHECK(cudaStreamCreate(&stream));
  struct stream_guard {
    cudaStream_t s;
    ~stream_guard() { cudaStreamDestroy(s); }
  } guard{stream};
  cuda_backend backend(stats, settings, stream, capacity);
  const exec::cuda gpu = backend.exec();
  device_array<vec3> d_film(pixels);
  device_array<wave> d_wave(1);
  const pinned<wave> h_wave(1);  // a graph's copy node reads it: written only while no wave runs
  SIEVE_CUDA_CHECK(cudaMemsetAsync(d_film.get(), 0, pixels * sizeof(vec3), stream));

  const auto start = std::chrono::steady_clock::now();
  if (settings.integrator == integrator_kind::megakernel) {
    // The sibling loop: no queues, one thread per path, through the same waves and film.
    device_array<vec3> d_wave_film(capacity);
    device_array<std::uint32_t> d_rays(2);
    const pinned<std::uint32_t> h_rays(2);
    SIEVE_CUDA_CHECK(cudaMemsetAsync(d_wave_film.get(), 0, capacity * sizeof(vec3), stream));
    for_each_wave(pixels, film.spp, settings, result, [&](const wave& w) {
      *h_wave.get() = w;
      SIEVE_CUDA_CHECK(cudaMemcpyAsync(d_wave.get(), h_wave.get(), sizeof(wave), cudaMemcpyHostToDevice, stream));
      SIEVE_CUDA_CHECK(cudaMemsetAsync(d_rays.get(), 0, 2 * sizeof(std::uint32_t), stream));
      backend.time("megakernel", -1, [&] { megakernel(gpu, view, w, d_wave_film.get(), d_rays.get()); });
      backend.time("accumulate", -1, [&] { accumulate(gpu, max_pixels, d_wave.get(), d_wave_film.get(), d_film.get()); });
      SIEVE_CUDA_CHECK(cudaMemcpyAsync(h_rays.get(), d_rays.get(), 2 * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream));
      backend.synchronize();
      stats.extension_rays += h_rays.get()[0];
      stats.shadow_rays += h_rays.get()[1];
      ++stats.waves;
      return true;
    });
  } else {
    wavefront_driver<cuda_backend> driver(backend, view, settings, stats.form, capacity, max_pixels, d_wave.get(),
                                          d_film.get());
    const bool append = driver.mode() == queue_mode::append;
    if (!append) backend.reserve_workspace(driver.compaction_record(), stats.form, driver.in_place());
    const wave_counts counts = driver.counts();
    const std::size_t count_bytes = wave_counts::size(film.max_bounces) * sizeof(std::uint64_t);
    const pinned<std::uint64_t> h_counts(wave_counts::size(film.max_bounces));
    // A strategy that reads its counts back (the registry's host_counts) runs on the stream.
    const bool host_counts =
        !append && sieve::strategy(settings.strategy)
                       .resolve(sieve::backend::cuda, stats.form, driver.in_place(), capacity,
                                stats.form == sieve::form::removal_list ? capacity : 0,
                                driver.compaction_record().item_bytes())
                       .info()
                       .host_counts;
    const bool bfs = settings.traversal == traversal_kind::bfs;
    const bool in_graph = settings.wave_graph && !host_counts && (!bfs || (bfs_in_graph && !settings.profile_stages));
    stats.wave_launch = in_graph ? "graph" : "stream";
    backend.set_graph(in_graph);
    // The wave's parameters in, the driver's work, the counts out: one stream's worth of work.
    auto enqueue_wave = [&](const wave& w, bool host_counts) {
      SIEVE_CUDA_CHECK(cudaMemcpyAsync(d_wave.get(), h_wave.get(), sizeof(wave), cudaMemcpyHostToDevice, stream));
      if (!driver.run(w, host_counts)) return false;
      SIEVE_CUDA_CHECK(cudaMemcpyAsync(h_counts.get(), counts.words, count_bytes, cudaMemcpyDeviceToHost, stream));
      return true;
    };
    graph_exec g;
    for_each_wave(pixels, film.spp, settings, result, [&](const wave& w) {
      *h_wave.get() = w;  // the previous wave has completed (synchronised): nothing reads it now
      if (!in_graph) {
        if (!enqueue_wave(w, true)) return false;
        backend.synchronize();
      } else {
        if (!g.exec) {
          // The first wave: captured once; every later wave replays it (nothing in it depends on w).
          SIEVE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
          try {
            enqueue_wave(w, false);
          } catch (...) {
            cudaGraph_t partial = nullptr;
            cudaStreamEndCapture(stream, &partial);
            if (partial) cudaGraphDestroy(partial);
            throw;
          }
          SIEVE_CUDA_CHECK(cudaStreamEndCapture(stream, &g.graph));
          SIEVE_CUDA_CHECK(cudaGraphInstantiate(&g.exec, g.graph, 0));
          ++stats.graphs;
        }
        SIEVE_CUDA_CHECK(cudaGraphLaunch(g.exec, stream));
        backend.synchronize();
        backend.replayed();
      }
      wavefront_driver<cuda_backend>::tally(h_counts.get(), film.max_bounces, stats);
      ++stats.waves;
      return true;
    });
  }
  SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  SIEVE_CUDA_CHECK(cudaMemcpy(result.sum.data(), d_film.get(), pixels * sizeof(vec3), cudaMemcpyDeviceToHost));
  return result;
}

}  // namespace sieve::render
