// exec::cuda: the parallel_for shim as a CUDA kernel launch (see exec.hpp). Include from .cu files.
#pragma once

#include "exec.hpp"

#include <sieve/compaction/cuda_check.hpp>
#include <sieve/compaction/cuda_device.hpp>

#include <cuda_runtime.h>

#include <string>
#include <vector>

namespace sieve::exec {

// The loop clock on the GPU: each launch between two CUDA events, taken from a pool, recorded on the
// launch's stream; nothing waits at a launch. collect(), after one of the render's own
// synchronisations, reads the spans into the loop clock's rows. Recorded while the stream is being
// captured, the events become event record nodes of the graph (sieve::cuda::event::record_or_capture),
// recorded again at every replay: collect(true) after each replay reads them and keeps them.
class cuda_loop_clock {
 public:
  explicit cuda_loop_clock(loop_clock& out) : out_(out) {}

  template <class Launch>
  void time(cudaStream_t stream, const char* name, std::size_t n, const Launch& launch) {
    const std::size_t at = used_;
    if (pool_.size() < at + 2) pool_.resize(at + 2);
    pool_[at].record_or_capture(stream);
    launch();
    pool_[at + 1].record_or_capture(stream);
    used_ += 2;
    spans_.push_back({name, n, at});
  }
  // Once the stream has synchronised: adds each span to the rows. keep: the spans are nodes of a
  // graph that records them again (collect after each replay); otherwise their events go back to
  // the pool.
  void collect(bool keep) {
    for (const span& s : spans_) out_.add(s.name, s.items, pool_[s.events + 1].ms_since(pool_[s.events]));
    if (keep) return;
    spans_.clear();
    used_ = 0;
  }

 private:
  struct span {
    std::string name;
    std::size_t items;
    std::size_t events;  // the start event's place in the pool; the stop event follows it
  };
  loop_clock& out_;
  std::vector<sieve::cuda::event> pool_;
  std::size_t used_ = 0;
  std::vector<span> spans_;
};

// clock: where a profiled render's launches are timed (null: not timed).
struct cuda {
  cudaStream_t stream = nullptr;
  cuda_loop_clock* clock = nullptr;
};

// Enqueues `launch` (loop `name` over n items) on e's stream, between the clock's events when e
// carries a clock.
template <class F>
void timed(cuda e, const char* name, std::size_t n, const F& launch) {
  if (!e.clock) return launch();
  e.clock->time(e.stream, name, n, launch);
}

namespace detail {
template <class Index, class F>
__global__ void parallel_for_kernel(std::size_t n, F body) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    body(static_cast<Index>(i));
}
}  // namespace detail

namespace detail {
inline constexpr unsigned grouped_threads = 256;  // a block: 8 warps

// Block b's items [256 b, 256 b + 256): those with first(i) go to the block's first threads, the
// others to the threads after them (each kind in its order), so that every warp but the one at the
// boundary runs one kind. One slice a block: a warp that ends early leaves, where a grid-stride
// loop would hold it at the barrier before the next slice until the block's slowest warp ends.
// Blocks an SM must hold at once: the register cap the compiler works to. 4 blocks of 256 hold
// the shade kernels to 64 registers (50 % occupancy; 80 registers and 37.5 % without the cap): on
// an H200 the helmet's shade stage 8.5 -> 7.6 ms with texture objects, 22.9 -> 17.7 ms packed
// (bench/results/h200/tex4/README.md).
#ifndef SIEVE_GROUPED_MIN_BLOCKS
#define SIEVE_GROUPED_MIN_BLOCKS 4
#endif
template <class Index, class P, class F>
__global__ void __launch_bounds__(grouped_threads, SIEVE_GROUPED_MIN_BLOCKS) parallel_for_grouped_kernel(std::size_t n, P first, F body) {
  constexpr unsigned warps = grouped_threads / 32;
  __shared__ unsigned short order[grouped_threads];
  __shared__ unsigned firsts[warps], items[warps];
  const unsigned lane = threadIdx.x & 31U, warp = threadIdx.x >> 5;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * grouped_threads, i = base + threadIdx.x;
  const bool in = i < n, f = in && first(static_cast<Index>(i));
  const unsigned fb = __ballot_sync(~0U, f), ib = __ballot_sync(~0U, in);
  if (lane == 0) firsts[warp] = __popc(fb), items[warp] = __popc(ib);
  __syncthreads();
  unsigned f_before = 0, o_before = 0, f_total = 0, total = 0;
  for (unsigned w = 0; w < warps; ++w) {
    if (w < warp) f_before += firsts[w], o_before += items[w] - firsts[w];
    f_total += firsts[w];
    total += items[w];
  }
  const unsigned below = (1U << lane) - 1U;
  if (in) order[f ? f_before + __popc(fb & below) : f_total + o_before + __popc(ib & ~fb & below)] = threadIdx.x;
  __syncthreads();
  if (threadIdx.x < total) body(static_cast<Index>(base + order[threadIdx.x]));
}
}  // namespace detail

template <class Index = std::uint32_t, class P, class F>
void parallel_for_grouped(cuda e, const char* name, std::size_t n, const P& first, const F& body) {
  check_index_range<Index>(name, n);
  if (n == 0) return;
  const stage_range range(name);
  constexpr unsigned threads = detail::grouped_threads;
  const std::size_t blocks = (n + threads - 1) / threads;  // Index's range (checked above) keeps it below 2^32
  timed(e, name, n, [&] {
    detail::parallel_for_grouped_kernel<Index><<<static_cast<unsigned>(blocks), threads, 0, e.stream>>>(n, first, body);
    SIEVE_CUDA_CHECK(cudaGetLastError());
  });
}

template <class Index = std::uint32_t, class F>
void parallel_for(cuda e, const char* name, std::size_t n, const F& body) {
  check_index_range<Index>(name, n);
  if (n == 0) return;
  const stage_range range(name);  // around the launch: the host side of the stage
  constexpr unsigned threads = 256;
  const std::size_t want = (n + threads - 1) / threads, most = static_cast<std::size_t>(sieve::cuda::sm_count()) * 16;
  timed(e, name, n, [&] {
    detail::parallel_for_kernel<Index><<<static_cast<unsigned>(want < most ? want : most), threads, 0, e.stream>>>(n, body);
    SIEVE_CUDA_CHECK(cudaGetLastError());
  });
}

}  // namespace sieve::exec
