// multisplit, atomic (CUDA), unstable: after the counting pass (multisplit_count.cuh), each block
// takes a tile of items, counts them per bin in shared memory (one shared atomic per group of a
// warp's lanes holding the same bin, found with __match_any_sync), reserves its run of every bin
// with one global atomic per (tile, bin), and writes each item to the bin's start plus the run's
// start plus its rank in the tile. No look-back and no staging: the order within a bucket depends on
// which tile reserves first, and the writes are as coalesced as the warps' items of a bin are.
#include "internal/device.cuh"
#include "internal/multisplit_count.cuh"
#include "internal/select_common.cuh"

namespace sieve::detail {
namespace {

constexpr unsigned threads = 256, items = 8;
constexpr unsigned tile_items = threads * items;

template <class Move>
__global__ void __launch_bounds__(threads) split_atomic(Move move, const std::uint8_t* __restrict__ ids,
                                                         live_count live, unsigned buckets, unsigned bins,
                                                         const std::uint32_t* __restrict__ hist,
                                                         std::uint32_t* cursor, const unsigned long long* bad,
                                                         std::uint64_t* offsets) {
  __shared__ std::uint32_t start[256], tile_count[256], warp_sums[threads / 32];
  if (*bad) {
    if (blockIdx.x == 0) write_invalid_offsets(offsets, buckets);
    return;
  }
  const std::uint64_t n = live.get();
  const unsigned d = threadIdx.x;
  std::uint32_t all;
  const std::uint32_t h = d < bins ? hist[d] : 0U;
  const std::uint32_t before = block_exclusive_sum<threads>(h, all, warp_sums);
  if (blockIdx.x == 0 && d < buckets) offsets[d] = before;
  if (blockIdx.x == 0 && d == 0) offsets[buckets] = all - (bins > buckets ? hist[buckets] : 0U);
  const unsigned below = lanes_below();
  for (std::uint64_t base = std::uint64_t{blockIdx.x} * tile_items; base < n;
       base += std::uint64_t{gridDim.x} * tile_items) {
    tile_count[d] = 0;
    __syncthreads();
    unsigned bin[items];
    std::uint32_t rank[items];
#pragma unroll
    for (unsigned j = 0; j < items; ++j) {
      const std::uint64_t i = base + j * threads + threadIdx.x;
      bin[j] = i < n ? multisplit_bin(ids[i], buckets) : 256;
      const unsigned peers = __match_any_sync(0xffffffffU, bin[j]);
      const unsigned leader = __ffs(peers) - 1;
      std::uint32_t first = 0;
      if (bin[j] < 256 && lane_id() == leader) first = atomicAdd(&tile_count[bin[j]], __popc(peers));
      rank[j] = __shfl_sync(0xffffffffU, first, leader) + __popc(peers & below);
    }
    __syncthreads();
    if (d < bins && tile_count[d]) start[d] = before + atomicAdd(&cursor[d], tile_count[d]);
    __syncthreads();
#pragma unroll
    for (unsigned j = 0; j < items; ++j)
      if (bin[j] < 256) move(start[bin[j]] + rank[j], base + j * threads + threadIdx.x);
    __syncthreads();
  }
}

}  // namespace

std::size_t cuda_multisplit_atomic(const cuda_multisplit_call& c) {
  constexpr std::size_t hist = 256, cursor = hist + 4 * 256, zeroed = cursor + 4 * 256;
  if (c.query) return align_up(zeroed);
  auto* ws = static_cast<std::byte*>(c.workspace);
  SIEVE_CUDA_CHECK(cudaMemsetAsync(ws, 0, zeroed, c.stream));
  auto* bad = reinterpret_cast<unsigned long long*>(ws);
  count_bins_async(c, reinterpret_cast<std::uint32_t*>(ws + hist), bad);
  const std::size_t tiles = (c.capacity + tile_items - 1) / tile_items;
  const unsigned blocks = grid_blocks(tiles * threads, threads, 4);
  with_device_mover(c.in, c.out, [&](auto move) {
    split_atomic<<<blocks, threads, 0, c.stream>>>(move, c.ids, live_count{c.d_live, c.capacity}, c.buckets,
                                                   multisplit_bins(c.buckets, c.checked),
                                                   reinterpret_cast<std::uint32_t*>(ws + hist),
                                                   reinterpret_cast<std::uint32_t*>(ws + cursor), bad, c.d_offsets);
    SIEVE_CUDA_CHECK(cudaGetLastError());
  });
  return 0;
}

}  // namespace sieve::detail
