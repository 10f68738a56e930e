// Ranking a warp's items by a small digit in input order (not installed): the onesweep radix sort's
// digit pass and the multisplit's tile pass. Lane l holds items 32 j + l (j < Items) of the warp's
// run; running[d] (shared memory, one row per warp) counts the warp's items of digit d ranked so
// far. Per item, the lanes holding the same digit find each other with __match_any_sync; each takes
// the running count plus the number of its peers on lower lanes (stable), and the last peer adds
// the group to the count.
#pragma once

#include "select_common.cuh"

#include <cstdint>

namespace sieve::detail {

template <unsigned Items, class DigitOf>
__device__ inline void warp_rank(std::uint16_t* running, DigitOf digit_of, std::uint32_t (&rank)[Items]) {
  const unsigned below = lanes_below();
#pragma unroll
  for (unsigned j = 0; j < Items; ++j) {
    const unsigned dj = digit_of(j);
    const unsigned peers = __match_any_sync(0xffffffffU, dj);
    const unsigned before = __popc(peers & below);
    const std::uint32_t r = running[dj];
    rank[j] = r + before;
    __syncwarp();
    if (before + 1 == static_cast<unsigned>(__popc(peers))) running[dj] = static_cast<std::uint16_t>(r + before + 1);
    __syncwarp();
  }
}

// The digit's per-warp counts (warp_start[w][d] after ranking) become each warp's first slot of
// digit d in the tile, from `first` (the tile's slots before digit d) on.
template <unsigned Warps>
__device__ inline void warp_counts_to_slots(std::uint16_t (*warp_start)[256], unsigned d, std::uint32_t first) {
#pragma unroll
  for (unsigned w = 0; w < Warps; ++w) {
    const std::uint32_t c = warp_start[w][d];
    warp_start[w][d] = static_cast<std::uint16_t>(first);
    first += c;
  }
}

}  // namespace sieve::detail
