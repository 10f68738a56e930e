// The BFS traversal on the GPU: bfs_run (bfs_driver.hpp) over device memory, the stages as kernels,
// the frontier compacted by sieve::cuda::compact*_async with device counts. The loop runs on the
// device (a CUDA graph whose WHILE node replays one round of steps until no pair is left) or, for
// timing each step, is driven by the host. See bfs.hpp.
#include <exec/cuda.cuh>
#include <exec/device_array.cuh>

#include "bfs_driver.hpp"

#include <sieve/compaction/cuda_check.hpp>
#include <sieve/compaction/cuda_device.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <tuple>
#include <vector>

namespace sieve::render {

using exec::device_array;

namespace {

__global__ void bfs_set_while(const bfs_state* st, cudaGraphConditionalHandle loop) {
  cudaGraphSetConditional(loop, st->stack + st->kept > 0 ? 1U : 0U);
}

// bfs.expand for `append`: one tile of 256 pairs a block; the block's survivors are counted by a warp
// scan of each pair's survivor count and reserved with one atomic, each lane writing its pair's
// children side by side. (Warp-aggregated, sieve/compaction/append.cuh's way, a frontier of
// millions of pairs would put ~10^5 atomics on one address a step.)
constexpr unsigned append_threads = 256;
template <class Tree>
__global__ void __launch_bounds__(append_threads)
    bfs_expand_append(bfs_state* st, bvh_view b, const ray* rays, std::uint64_t* best, const bfs_pair* in,
                      bfs_pair* stack, bfs_pair* out) {
  constexpr unsigned warps = append_threads / 32;
  __shared__ unsigned warp_first[warps];
  __shared__ unsigned long long block_first;
  const std::uint32_t work = st->work, m = st->m;  // the same for the whole grid
  const std::uint64_t tile = std::uint64_t{blockIdx.x} * append_threads;
  if (tile >= work) return;  // the whole block: past this step's pairs (one tile a block, no loop around the barriers)
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::uint64_t i = tile + threadIdx.x;
  bfs_children<Tree::arity> c;
  std::uint32_t r = 0;
  if (i < work) {
    const bfs_pair p = bfs_take(*st, static_cast<std::uint32_t>(i), in, stack);
    if (i < m) {
      c = Tree::visit(b, rays, best, p);
      r = bfs_ray_of(p);
    }
  }
  const unsigned count = c.count();
  unsigned upto = count;  // inclusive scan of the warp's counts
#pragma unroll
  for (unsigned d = 1; d < 32; d <<= 1) {
    const unsigned y = __shfl_up_sync(~0U, upto, d);
    if (lane >= d) upto += y;
  }
  if (lane == 31) warp_first[warp] = upto;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned total = 0;
    for (unsigned w = 0; w < warps; ++w) {
      const unsigned n = warp_first[w];
      warp_first[w] = total;
      total += n;
    }
    block_first = total ? atomicAdd(reinterpret_cast<unsigned long long*>(&st->kept), total) : 0;
  }
  __syncthreads();
  bfs_put_children(out, block_first + warp_first[warp] + upto - count, c, r);
}

// A strategy that reads its counts back to the host (the registry's host_counts) cannot run inside
// a graph (nor `auto` where it picks one for a frontier of this capacity, as the library resolves
// it for the call).
bool capturable(const bfs_compaction& c, std::size_t frontier) {
  if (c.append) return true;  // no library call: the expansion appends on the device
  const std::size_t k = c.form == sieve::form::removal_list ? frontier : 0;
  return !sieve::compaction_strategy(c.resolved(sieve::backend::cuda, frontier, k)).host_counts;
}

}  // namespace

// The CUDA backend of bfs_run. Stages go to `stream`; sizes are on the device, so stages launch
// over their capacity. The loop: in graph mode `stream` is being captured and the round becomes
// the body of a WHILE node (captured through `body_stream`); in host mode the host reads the state
// once per round (and once per step when it collects stats).
struct bfs_cuda_backend {
  cudaStream_t stream = nullptr;
  cudaStream_t body_stream = nullptr;
  sieve::cuda::workspace ws;
  bool host_loop = false;
  bfs_stats* stats = nullptr;       // host mode: per step, compaction timed by events
  std::size_t* syncs = nullptr;
  const sieve::cuda::event* t0 = nullptr;  // compaction start (host mode with stats)
  const sieve::cuda::event* t1 = nullptr;  // compaction end
  const sieve::cuda::event* ts = nullptr;  // step start
  exec::cuda_loop_clock* clock = nullptr;  // host mode: the loops timed (never inside a graph)
  bfs_state seen;                   // the state as last read (host mode)
  bool timed = false;               // the step under way recorded its compaction's events

  exec::cuda exec() const { return {stream, clock}; }
  template <class Live>
  std::size_t extent(std::size_t bound, Live) const {
    return bound;
  }
  void zero(void* p, std::size_t bytes) const { SIEVE_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, stream)); }

  template <class Tree>
  void expand_appended(std::size_t bound, bfs_state* st, const bvh_view& b, const ray* rays, std::uint64_t* best,
                       const bfs_pair* in, bfs_pair* stack, bfs_pair* out) const {
    // One tile of 256 pairs a block over the bound; blocks past the step's pairs exit at once.
    const auto blocks = static_cast<unsigned>(std::max<std::size_t>(1, (bound + append_threads - 1) / append_threads));
    bfs_expand_append<Tree><<<blocks, append_threads, 0, stream>>>(st, b, rays, best, in, stack, out);
    SIEVE_CUDA_CHECK(cudaGetLastError());
  }

  void compact(const sieve::strategy& strategy, const sieve::record& children, const sieve::record* frontier,
               const sieve::selection& keep, const sieve::cuda::device_counts& live, std::uint64_t* kept) {
    if (stats) t0->record(stream);
    const sieve::options unchecked{.checked = false};  // the frontier's own marks
    if (frontier) {
      sieve::cuda::compact_copy_async(strategy, children, *frontier, keep, live, kept, ws, stream, unchecked);
    } else {
      sieve::cuda::compact_async(strategy, children, keep, live, kept, ws, stream, unchecked);
    }
    if (stats) t1->record(stream);
    timed = stats != nullptr;
  }

  void read(const bfs_state* st) {
    SIEVE_CUDA_CHECK(cudaMemcpyAsync(&seen, st, sizeof seen, cudaMemcpyDeviceToHost, stream));
    SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
    ++*syncs;
  }

  template <class Round>
  void loop(bfs_state* st, Round round) {
    if (host_loop) {
      for (read(st); seen.stack + seen.kept > 0; read(st)) round();
      return;
    }
    cudaStreamCaptureStatus status;
    cudaGraph_t graph;
    const cudaGraphNode_t* deps = nullptr;
    std::size_t ndeps = 0;
    SIEVE_CUDA_CHECK(cudaStreamGetCaptureInfo(stream, &status, nullptr, &graph, &deps, nullptr, &ndeps));
    if (status != cudaStreamCaptureStatusActive) throw sieve::error("BFS traversal (cuda): the graph loop needs a capturing stream");
    cudaGraphConditionalHandle handle;
    SIEVE_CUDA_CHECK(cudaGraphConditionalHandleCreate(&handle, graph, 1, cudaGraphCondAssignDefault));
    cudaGraphNodeParams params{};
    params.type = cudaGraphNodeTypeConditional;
    params.conditional.handle = handle;
    params.conditional.type = cudaGraphCondTypeWhile;
    params.conditional.size = 1;
    cudaGraphNode_t node;
    SIEVE_CUDA_CHECK(cudaGraphAddNode(&node, graph, deps, nullptr, ndeps, &params));
    SIEVE_CUDA_CHECK(cudaStreamUpdateCaptureDependencies(stream, &node, nullptr, 1, cudaStreamSetCaptureDependencies));
    cudaGraph_t body = params.conditional.phGraph_out[0];
    SIEVE_CUDA_CHECK(cudaStreamBeginCaptureToGraph(body_stream, body, nullptr, nullptr, 0, cudaStreamCaptureModeRelaxed));
    const cudaStream_t outer = stream;
    stream = body_stream;
    try {
      round();
      bfs_set_while<<<1, 1, 0, stream>>>(st, handle);
      SIEVE_CUDA_CHECK(cudaGetLastError());
    } catch (...) {
      cudaStreamEndCapture(body_stream, &body);
      stream = outer;
      throw;
    }
    stream = outer;
    SIEVE_CUDA_CHECK(cudaStreamEndCapture(body_stream, &body));
  }

  void step_begins() const {
    if (stats) ts->record(stream);
  }
  void stepped(const bfs_state* st) {
    if (!host_loop || !stats) return;
    if (!timed) t0->record(stream);  // `append`: no compaction
    read(st);
    const float compact_ms = timed ? t1->ms_since(*t0) : 0.0F;
    const float expand_ms = t0->ms_since(*ts);
    timed = false;
    if (seen.m == 0) return;
    stats->levels.push_back({seen.m, compact_ms, expand_ms});
    stats->pairs += seen.m;
    stats->compact_ms += compact_ms;
    stats->expand_ms += expand_ms;
  }
};

struct bfs_tracer_cuda::buffers {
  bfs_sizes sizes;
  device_array<bfs_pair> frontier[2], stack;
  device_array<std::uint8_t> flags;
  device_array<std::uint32_t> mask, removals;
  device_array<std::uint64_t> best;
  device_array<bfs_state> state{1};
  device_array<std::uint32_t> count{1};  // closest()'s n, on the device
  device_array<bfs_tile_counts> tile_counts{1};  // the tile frontier's counters (closest() with stats)
  device_array<std::uint32_t> tile_cursor{1};    // the next tile of a warp's tile frontier
  device_array<std::byte> workspace;
  cudaStream_t own = nullptr;   // captures the tracer's own graph
  cudaStream_t body = nullptr;  // captures the WHILE node's body
  sieve::cuda::event t0, t1, ts;  // compaction start, end; step start (host mode with stats)
  // The tracer's own graphs, for closest_async on a stream that is not being captured: one per set
  // of arguments, the last few kept (a wavefront alternates two path queues), the oldest replaced.
  struct own_graph {
    std::tuple<bvh_view, const ray*, hit*, std::size_t, const std::uint32_t*> key;
    cudaGraphExec_t exec = nullptr;
  };
  static constexpr std::size_t kept_graphs = 4;
  std::vector<own_graph> graphs;

  buffers() {
    SIEVE_CUDA_CHECK(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking));
    SIEVE_CUDA_CHECK(cudaStreamCreateWithFlags(&body, cudaStreamNonBlocking));
  }
  ~buffers() {
    drop_graphs();
    cudaStreamDestroy(own);
    cudaStreamDestroy(body);
  }
  void drop_graphs() {
    for (const own_graph& g : graphs) cudaGraphExecDestroy(g.exec);
    graphs.clear();
  }
  bfs_memory memory() const {
    return {{frontier[0].get(), frontier[1].get()}, stack.get(), flags.get(), mask.get(), removals.get(), best.get(),
            state.get()};
  }
};

namespace {

// The same layouts, triangles and cut-outs: what the recorded graphs read.
bool same_alpha(const alpha_view& a, const alpha_view& b) {
  return a.material_of == b.material_of && a.materials == b.materials && a.uvs == b.uvs && a.textures == b.textures;
}

bool same_view(const bvh_view& a, const bvh_view& b) {
  return a.binary.nodes == b.binary.nodes && a.binary.prims == b.binary.prims && a.binary.node_count == b.binary.node_count &&
         a.pairs.nodes == b.pairs.nodes && a.pairs.triangles == b.pairs.triangles && a.pairs.prims == b.pairs.prims &&
         a.pairs.node_count == b.pairs.node_count && a.wide.nodes == b.wide.nodes && a.wide.prims == b.wide.prims &&
         a.wide.triangles == b.wide.triangles && a.wide.node_count == b.wide.node_count && a.cw.nodes == b.cw.nodes &&
         a.cw.triangles == b.cw.triangles && a.cw.node_count == b.cw.node_count && a.triangles == b.triangles &&
         same_alpha(a.alpha, b.alpha);
}

}  // namespace

bfs_tracer_cuda::bfs_tracer_cuda(std::string strategy, trace_tree tree)
    : c_(std::move(strategy), sieve::backend::cuda), tree_(tree) {
  if (c_.tile && tree != trace_tree::compressed)
    throw sieve::error("BFS traversal (cuda): the '" + c_.name + "' frontier walks the compressed tree only");
}

bfs_tracer_cuda::~bfs_tracer_cuda() = default;

std::size_t bfs_tracer_cuda::capacity() const { return buf_ ? buf_->sizes.rays : 0; }

void bfs_tracer_cuda::reserve(std::size_t capacity) {
  if (!buf_) buf_ = std::make_unique<buffers>();
  buffers& B = *buf_;
  if (c_.tile) {  // the frontier lives in shared memory: nothing but the counters
    B.sizes.rays = std::max(B.sizes.rays, capacity);
    return;
  }
  if (capacity <= B.sizes.rays && B.best.size() > 0) return;
  const bfs_sizes z = bfs_sizes::for_rays(std::max<std::size_t>(capacity, 1), bfs_arity(tree_));
  B.drop_graphs();  // their pointers are about to change
  for (auto* v : {&B.frontier[0], &B.frontier[1]}) v->reserve_discard(z.frontier);
  B.stack.reserve_discard(z.stack);
  B.best.reserve_discard(z.rays);
  if (c_.form == sieve::form::byte_flags && !appends()) B.flags.reserve_discard(z.frontier);
  if (c_.form == sieve::form::bit_mask && !appends()) B.mask.reserve_discard(z.mask_words());
  if (c_.form == sieve::form::removal_list && !appends()) B.removals.reserve_discard(z.frontier);
  if (!appends()) {
    const sieve::record children(std::span(B.frontier[1].get(), z.frontier));
    B.workspace.reserve_discard(sieve::cuda::workspace_bytes(c_.strategy, children, c_.form, c_.in_place));
  }
  B.sizes = z;
}

void bfs_tracer_cuda::closest_async(const bvh_view& b, const ray* rays, hit* hits, std::size_t capacity,
                                    const std::uint32_t* d_count, sieve::cuda::stream_t stream) {
  if (!buf_ || capacity > buf_->sizes.rays)
    throw sieve::error("BFS traversal (cuda): closest_async for " + std::to_string(capacity) + " rays, reserved " +
                       std::to_string(this->capacity()) + ": call reserve(capacity) first (it allocates)");
  if (c_.tile) return bfs_tile_closest(b, rays, hits, capacity, d_count, {c_.warp_tile, buf_->tile_cursor.get()}, stream);
  if (!capturable(c_, bfs_sizes::for_rays(capacity, bfs_arity(tree_)).frontier))
    throw sieve::error("BFS traversal (cuda): strategy '" + c_.name +
                       "' reads its counts back to the host and cannot run inside a graph; use closest()");
  buffers& B = *buf_;
  const bfs_queue q(c_);
  const bfs_sizes z = bfs_sizes::for_rays(capacity, bfs_arity(tree_));  // launch bounds; the memory is at least this large
  auto enqueue = [&](cudaStream_t s) {
    bfs_cuda_backend be{.stream = s, .body_stream = B.body, .ws = {B.workspace.get(), B.workspace.size()}};
    bfs_run(tree_, be, q, B.memory(), z, b, rays, hits, d_count);
  };
  cudaStreamCaptureStatus status;
  SIEVE_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  if (status == cudaStreamCaptureStatusActive) return enqueue(stream);  // into the caller's graph
  auto same = [&](const buffers::own_graph& g) {
    const auto& [view, r, h, cap, count] = g.key;
    return same_view(view, b) && r == rays && h == hits && cap == capacity && count == d_count;
  };
  auto it = std::find_if(B.graphs.begin(), B.graphs.end(), same);
  if (it == B.graphs.end()) {
    cudaGraph_t g = nullptr;
    SIEVE_CUDA_CHECK(cudaStreamBeginCapture(B.own, cudaStreamCaptureModeThreadLocal));
    try {
      enqueue(B.own);
    } catch (...) {
      if (cudaStreamEndCapture(B.own, &g) == cudaSuccess && g) cudaGraphDestroy(g);
      throw;
    }
    SIEVE_CUDA_CHECK(cudaStreamEndCapture(B.own, &g));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t e = cudaGraphInstantiate(&exec, g, 0);
    cudaGraphDestroy(g);
    SIEVE_CUDA_CHECK(e);
    if (B.graphs.size() == buffers::kept_graphs) {
      cudaGraphExecDestroy(B.graphs.front().exec);
      B.graphs.erase(B.graphs.begin());
    }
    B.graphs.push_back({std::make_tuple(b, rays, hits, capacity, d_count), exec});
    it = B.graphs.end() - 1;
  }
  SIEVE_CUDA_CHECK(cudaGraphLaunch(it->exec, stream));
}

void bfs_tracer_cuda::closest(const bvh_view& b, const ray* rays, hit* hits, std::size_t n,
                              sieve::cuda::stream_t stream, bfs_stats* stats) {
  const auto start = std::chrono::steady_clock::now();
  if (stats) {
    *stats = bfs_stats{};
    stats->strategy = c_.name;
    stats->form = c_.form;
    stats->timed = true;
  }
  host_syncs_ = 0;
  reserve(n);
  buffers& B = *buf_;
  const std::uint32_t count = static_cast<std::uint32_t>(n);
  SIEVE_CUDA_CHECK(cudaMemcpyAsync(B.count.get(), &count, sizeof count, cudaMemcpyHostToDevice, stream));
  if (c_.tile) {  // one kernel whatever the loop; with stats, its counters
    if (stats) SIEVE_CUDA_CHECK(cudaMemsetAsync(B.tile_counts.get(), 0, sizeof(bfs_tile_counts), stream));
    bfs_tile_closest(b, rays, hits, n, B.count.get(), {c_.warp_tile, B.tile_cursor.get(), stats ? B.tile_counts.get() : nullptr},
                     stream);
    if (stats) {
      SIEVE_CUDA_CHECK(cudaMemcpyAsync(&stats->tile, B.tile_counts.get(), sizeof(bfs_tile_counts), cudaMemcpyDeviceToHost, stream));
      SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
      stats->pairs = stats->tile.pairs;
      stats->host_syncs = host_syncs_ = 1;
      stats->total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    } else {
      SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
      host_syncs_ = 1;
    }
    return;
  }
  const bool host_loop = stats || loop_ == loop::host || !capturable(c_, B.sizes.frontier);
  if (host_loop) {
    const bfs_queue q(c_);
    bfs_cuda_backend be{.stream = stream,
                        .body_stream = B.body,
                        .ws = {B.workspace.get(), B.workspace.size()},
                        .host_loop = true,
                        .stats = stats,
                        .syncs = &host_syncs_,
                        .t0 = &B.t0,
                        .t1 = &B.t1,
                        .ts = &B.ts,
                        .clock = clock_};
    bfs_run(tree_, be, q, B.memory(), B.sizes, b, rays, hits, B.count.get());
  } else {
    // Launch bounds over the reserved capacity, the count on the device: the graph stays the same
    // from call to call while the arrays do.
    closest_async(b, rays, hits, B.sizes.rays, B.count.get(), stream);
  }
  bfs_state last;
  SIEVE_CUDA_CHECK(cudaMemcpyAsync(&last, B.state.get(), sizeof last, cudaMemcpyDeviceToHost, stream));
  SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
  ++host_syncs_;
  if (stats) {
    stats->peak_pairs = last.peak;
    stats->host_syncs = host_syncs_;
    stats->total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
}

}  // namespace sieve::render
