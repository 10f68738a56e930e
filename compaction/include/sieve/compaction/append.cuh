#pragma once

// Producer-side compaction, for a user's own CUDA kernel (header-only, nvcc): the kernel that decides
// which items survive appends them straight to an output queue, so no separate compaction pass runs
// (pbrt-v4's wavefront queues work this way). The warp aggregates: one atomicAdd per warp reserves
// room for all of its surviving items, and each surviving lane gets its own slot. Unstable: the order
// of the warps' reservations varies from run to run.
//
//   __global__ void shade(..., Path* next, std::uint32_t* next_count) {
//     const bool alive = ...;                                   // every lane of the warp gets here
//     const std::uint32_t slot = sieve::cuda::warp_append(next_count, alive);
//     if (alive) next[slot] = path;
//   }

#include <cstdint>

namespace sieve::cuda {

namespace detail {
__device__ inline unsigned lane_index() {
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}
__device__ inline std::uint32_t reserve(std::uint32_t* count, unsigned items) {
  return atomicAdd(reinterpret_cast<unsigned*>(count), items);
}
__device__ inline std::uint64_t reserve(std::uint64_t* count, unsigned items) {
  return atomicAdd(reinterpret_cast<unsigned long long*>(count), static_cast<unsigned long long>(items));
}
}  // namespace detail

// Called by the lanes of a warp that are active here (converged: every lane that reaches the call
// together calls it together), each saying whether its item survives. Adds the warp's survivors to
// *count and returns each surviving lane's slot: *count before the call plus the survivors of the
// warp's earlier lanes. A lane whose item does not survive gets an unspecified value. Count:
// std::uint32_t or std::uint64_t in device memory. The caller checks the slot against its queue's
// capacity if the queue may overflow.
template <class Count>
__device__ inline Count warp_append(Count* count, bool survives) {
  const unsigned active = __activemask();
  const unsigned ballot = __ballot_sync(active, survives);
  const unsigned lane = detail::lane_index();
  const int leader = __ffs(active) - 1;
  Count base = 0;
  if (static_cast<int>(lane) == leader && ballot != 0) base = detail::reserve(count, __popc(ballot));
  base = __shfl_sync(active, base, leader);
  return base + static_cast<Count>(__popc(ballot & ((1U << lane) - 1U)));
}

}  // namespace sieve::cuda
