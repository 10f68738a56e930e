// The BFS traversal's CUDA driver: the stages of bfs.hpp as kernels, the frontier of (ray, node)
// pairs compacted through sieve::cuda::compact*_async. See bfs.hpp.
#include <exec/cuda.cuh>
#include <exec/device_array.cuh>

#include "bfs.hpp"

#include <sieve/compaction/cuda_check.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>

namespace sieve::render {

using exec::device_array;

struct bfs_tracer_cuda::buffers {
  device_array<std::uint32_t> ray_of[2], node_of[2];  // frontier and children, swapped each level
  device_array<std::uint8_t> flags;
  device_array<std::uint32_t> mask, removals;
  device_array<std::uint64_t> best;
  device_array<std::uint64_t> counts{2};  // [0]: kept by the compaction; [1]: the removal list's length
  device_array<std::byte> workspace;
};

bfs_tracer_cuda::bfs_tracer_cuda(std::string strategy)
    : strategy_(std::move(strategy)),
      form_(marks_form_for(strategy_, sieve::backend::cuda, "BFS traversal (cuda)")),
      in_place_(!sieve::compaction_strategy(strategy_).out_of_place),
      buf_(std::make_unique<buffers>()) {}

bfs_tracer_cuda::~bfs_tracer_cuda() = default;

void bfs_tracer_cuda::closest(const bvh_view& b, const ray* rays, hit* hits, std::size_t n,
                              sieve::cuda::stream_t stream, bfs_stats* stats) {
  const auto start = std::chrono::steady_clock::now();
  if (stats) *stats = {{}, 0, 0, 0, strategy_, form_};
  buffers& B = *buf_;
  const exec::cuda gpu{stream};
  // ray_of[0]/node_of[0]: the stack of pairs (bfs.hpp bounds it); [1]: the children of a step.
  B.best.reserve_discard(n);
  for (auto* v : {&B.ray_of[0], &B.node_of[0]}) v->reserve_discard(n);
  bfs_begin(gpu, n, rays, B.best.get(), B.ray_of[0].get(), B.node_of[0].get());
  std::size_t stack = b.node_count > 0 ? n : 0;
  cudaEvent_t t0, t1;
  SIEVE_CUDA_CHECK(cudaEventCreate(&t0));
  SIEVE_CUDA_CHECK(cudaEventCreate(&t1));
  struct events_guard {
    cudaEvent_t a, b;
    ~events_guard() {
      cudaEventDestroy(a);
      cudaEventDestroy(b);
    }
  } guard{t0, t1};
  std::uint32_t* removal_count = reinterpret_cast<std::uint32_t*>(B.counts.get() + 1);
  while (stack > 0) {
    const std::size_t m = bfs_chunk(stack, n), base = stack - m, slots = 2 * m;
    if (stats) stats->peak_pairs = std::max(stats->peak_pairs, stack);
    for (auto* v : {&B.ray_of[1], &B.node_of[1]}) v->reserve_discard(slots);
    for (auto* v : {&B.ray_of[0], &B.node_of[0]}) v->reserve_keep(base + slots, stack, stream);  // room for the survivors
    keep_marks marks;
    if (form_ == sieve::form::byte_flags) {
      B.flags.reserve_discard(slots);
      marks.flags = B.flags.get();
    } else if (form_ == sieve::form::bit_mask) {
      B.mask.reserve_discard((slots + 31) / 32);
      SIEVE_CUDA_CHECK(cudaMemsetAsync(B.mask.get(), 0, (slots + 31) / 32 * 4, stream));
      marks.mask = B.mask.get();
    } else {
      B.removals.reserve_discard(slots);
      SIEVE_CUDA_CHECK(cudaMemsetAsync(removal_count, 0, 4, stream));
      marks.removals = B.removals.get();
      marks.removal_count = removal_count;
    }
    std::uint32_t *cr = B.ray_of[1].get(), *cn = B.node_of[1].get();
    bfs_expand(gpu, m, b, rays, B.best.get(), B.ray_of[0].get() + base, B.node_of[0].get() + base, cr, cn, marks);

    std::uint32_t removed = 0;
    if (form_ == sieve::form::removal_list) {
      SIEVE_CUDA_CHECK(cudaMemcpyAsync(&removed, removal_count, 4, cudaMemcpyDeviceToHost, stream));
      SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    const sieve::record children(std::span(cr, slots), std::span(cn, slots));
    sieve::selection keep = sieve::byte_flags{std::span<const std::uint8_t>(B.flags.get(), slots)};
    if (form_ == sieve::form::bit_mask) keep = sieve::bit_mask{std::span<const std::uint32_t>(B.mask.get(), (slots + 31) / 32)};
    if (form_ == sieve::form::removal_list) keep = sieve::removal_list{std::span(B.removals.get(), removed)};
    const std::size_t ws = sieve::cuda::workspace_bytes(strategy_, children, form_, in_place_);
    B.workspace.reserve_discard(ws);
    SIEVE_CUDA_CHECK(cudaEventRecord(t0, stream));
    if (in_place_) {
      sieve::cuda::compact_async(strategy_, children, keep, B.counts.get(), {B.workspace.get(), B.workspace.size()}, stream,
                                 {.checked = false});  // the frontier's own marks
    } else {
      const sieve::record frontier(std::span(B.ray_of[0].get() + base, slots), std::span(B.node_of[0].get() + base, slots));
      sieve::cuda::compact_copy_async(strategy_, children, frontier, keep, B.counts.get(),
                                      {B.workspace.get(), B.workspace.size()}, stream, {.checked = false});
    }
    SIEVE_CUDA_CHECK(cudaEventRecord(t1, stream));
    std::uint64_t kept = 0;
    SIEVE_CUDA_CHECK(cudaMemcpyAsync(&kept, B.counts.get(), sizeof kept, cudaMemcpyDeviceToHost, stream));
    SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
    float ms = 0;
    SIEVE_CUDA_CHECK(cudaEventElapsedTime(&ms, t0, t1));
    if (in_place_ && base == 0) {  // the whole stack was expanded: the children are the stack
      B.ray_of[0].swap(B.ray_of[1]);
      B.node_of[0].swap(B.node_of[1]);
    } else if (in_place_ && kept > 0) {  // the survivors take the place of the pairs they came from
      SIEVE_CUDA_CHECK(cudaMemcpyAsync(B.ray_of[0].get() + base, cr, kept * 4, cudaMemcpyDeviceToDevice, stream));
      SIEVE_CUDA_CHECK(cudaMemcpyAsync(B.node_of[0].get() + base, cn, kept * 4, cudaMemcpyDeviceToDevice, stream));
    }
    if (stats) {
      stats->levels.push_back({m, ms});
      stats->compact_ms += ms;
    }
    stack = base + static_cast<std::size_t>(kept);
  }
  bfs_finish(gpu, n, b, rays, B.best.get(), hits);
  SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (stats) stats->total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace sieve::render
