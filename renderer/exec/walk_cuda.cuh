// exec::cuda's parallel_walk (walk.hpp): persistent warps with dynamic item fetch. Include from .cu
// files.
#pragma once

#include "cuda.cuh"
#include "walk.hpp"

#include <type_traits>

namespace sieve::exec {

namespace detail {

inline constexpr unsigned walk_threads = 256;
// Idle lanes that make a warp fetch new items. Fewer fetch more often (more atomics, and the
// fetched rays are spread over more warps); more leave lanes idle longer. H100, sphere room diffuse
// rays (bench/results/h100-80gb-hbm3/dfs-designs.txt): 4: 1639, 8: 1732, 16: 1762 Mrays/s.
inline constexpr int walk_refill = 16;

// A walk may set its own refill (static constexpr int refill) and blocks per multiprocessor for
// ptxas to fit its registers to (min_blocks); else walk_refill and no bound.
template <class W, class = void>
struct walk_tuning {
  static constexpr int refill = walk_refill, min_blocks = 1;
};
template <class W>
struct walk_tuning<W, std::void_t<decltype(W::refill), decltype(W::min_blocks)>> {
  static constexpr int refill = W::refill, min_blocks = W::min_blocks;
};

template <class W>
__global__ void __launch_bounds__(walk_threads, walk_tuning<W>::min_blocks) parallel_walk_kernel(W w, std::uint32_t* cursor) {
  constexpr int refill = walk_tuning<W>::refill;
  const std::uint32_t n = w.count();
  const unsigned lane = threadIdx.x % 32, below = (1U << lane) - 1;
  typename W::state s;
  typename W::scratch scratch;
  std::uint32_t item = 0;
  bool busy = false, more = true;  // more: the cursor may still have items (the same in all lanes)
  while (true) {
    const unsigned idle = __ballot_sync(~0U, !busy);
    if (more && __popc(idle) >= refill) {  // the idle lanes take the next items, one atomic a warp
      const int leader = __ffs(idle) - 1;
      std::uint32_t first = 0;
      if (static_cast<int>(lane) == leader) first = atomicAdd(cursor, static_cast<unsigned>(__popc(idle)));
      first = __shfl_sync(~0U, first, leader);
      more = first + __popc(idle) < n;
      if (!busy && (item = first + __popc(idle & below)) < n) {
        busy = w.start(item, s);
        if (!busy) w.finish(item, s);
      }
    }
    if (!__any_sync(~0U, busy)) {
      if (!more) return;
      continue;
    }
    if (busy && !w.step(s, scratch)) {
      w.finish(item, s);
      busy = false;
    }
  }
}

// Resident blocks of the kernel per multiprocessor (once per walk type).
template <class W>
int walk_blocks_per_sm() {
  static const int blocks = [] {
    int b = 0;
    SIEVE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, parallel_walk_kernel<W>, walk_threads, 0));
    return b > 0 ? b : 1;
  }();
  return blocks;
}

}  // namespace detail

// As many warps as the GPU holds at once, each walking items until the cursor passes count().
// `items`: what e's loop clock counts the launch as (count() is read on the device; the caller's
// bound, as a parallel_for over it would count).
template <class W>
void parallel_walk(cuda e, const char* name, const W& w, std::uint32_t* cursor, std::size_t items = 0) {
  const stage_range range(name);
  SIEVE_CUDA_CHECK(cudaMemsetAsync(cursor, 0, sizeof *cursor, e.stream));
  const int blocks = detail::walk_blocks_per_sm<W>() * sieve::cuda::sm_count();
  timed(e, name, items, [&] {
    detail::parallel_walk_kernel<W><<<blocks, detail::walk_threads, 0, e.stream>>>(w, cursor);
    SIEVE_CUDA_CHECK(cudaGetLastError());
  });
}

}  // namespace sieve::exec
