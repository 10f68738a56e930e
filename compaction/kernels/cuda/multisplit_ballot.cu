// multisplit, ballot (CUDA): the warp-synchronous multisplit (internal/ballot_split.cuh) as reduce,
// scan, split, with no look-back and no atomics.
//   1. count_tiles reads the id column once (16 ids a load) and writes every tile's count of every
//      bin, laid out [bin][tile];
//   2. one exclusive scan of that array (bins x tiles words: one block when it is small, else
//      cub::DeviceScan) gives, at [b][t], where tile t's run of bin b starts in the output, the
//      bucket boundaries at [b][0];
//   3. split_tiles ranks each tile by ballots, reorders it in shared memory and writes each bin's
//      run from that start.
// Stable. The id column is read twice (once a pass); the items once and written once.
#include "internal/ballot_split.cuh"

#include <cub/device/device_scan.cuh>

namespace sieve::detail {
namespace {

// Where tile t's run of bin b starts: scanned[b * tiles + t].
struct scan_place {
  const std::uint32_t* scanned;
  std::uint32_t tiles;
  __device__ unsigned tile_index(unsigned*) const { return blockIdx.x; }
  __device__ std::uint32_t prefetch(unsigned tile, unsigned bins) const {
    return threadIdx.x < bins ? scanned[std::size_t{threadIdx.x} * tiles + tile] : 0U;
  }
  template <class Storage>
  __device__ void place(unsigned tile, unsigned bins, unsigned buckets, std::uint32_t n, std::uint32_t,
                        std::uint32_t start, Storage& s, std::uint64_t* offsets) const {
    if (threadIdx.x < bins) s.shift[threadIdx.x] = start - s.table[threadIdx.x * split_warps];
    if (tile == 0)
      for (unsigned b = threadIdx.x; b <= buckets; b += split_threads)
        offsets[b] = b < bins ? scanned[std::size_t{b} * tiles] : n;
  }
};

constexpr unsigned small_scan_threads = 1024, small_scan_items = 16;
constexpr std::size_t small_scan_most = small_scan_threads * small_scan_items;

// The exclusive scan of up to small_scan_most words by one block.
__global__ void __launch_bounds__(small_scan_threads) scan_small(const std::uint32_t* __restrict__ in,
                                                                 std::uint32_t* __restrict__ out, std::uint32_t count) {
  __shared__ std::uint32_t warp_sums[small_scan_threads / 32];
  const std::uint32_t first = threadIdx.x * small_scan_items;
  std::uint32_t v[small_scan_items], sum = 0;
#pragma unroll
  for (unsigned k = 0; k < small_scan_items; ++k) {
    v[k] = first + k < count ? in[first + k] : 0U;
    sum += v[k];
  }
  std::uint32_t total;
  std::uint32_t run = block_exclusive_sum<small_scan_threads>(sum, total, warp_sums);
#pragma unroll
  for (unsigned k = 0; k < small_scan_items; ++k)
    if (first + k < count) {
      out[first + k] = run;
      run += v[k];
    }
}

struct layout {
  std::size_t tiles, entries, counts, scanned, scan, scan_bytes, total;
};

layout layout_of(const cuda_multisplit_call& c) {
  layout l{};
  l.tiles = tiles_of_call(c);
  l.entries = l.tiles * multisplit_bins(c.buckets, c.checked);
  l.counts = 256;  // after the bad-id word
  l.scanned = l.counts + align_up(4 * l.entries);
  l.scan = l.scanned + align_up(4 * l.entries);
  if (l.entries > small_scan_most)
    SIEVE_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, l.scan_bytes, static_cast<const std::uint32_t*>(nullptr),
                                                   static_cast<std::uint32_t*>(nullptr), static_cast<int>(l.entries)));
  l.total = l.scan + align_up(l.scan_bytes);
  return l;
}

}  // namespace

std::size_t cuda_multisplit_ballot(const cuda_multisplit_call& c) {
  if (c.query) return layout_of(c).total;
  auto* ws = static_cast<std::byte*>(c.workspace);
  auto* bad = reinterpret_cast<unsigned long long*>(ws);
  if (c.checked) SIEVE_CUDA_CHECK(cudaMemsetAsync(ws, 0, 8, c.stream));  // unchecked: count_tiles zeroes it
  const layout l = layout_of(c);
  auto* counts = reinterpret_cast<std::uint32_t*>(ws + l.counts);
  auto* scanned = reinterpret_cast<std::uint32_t*>(ws + l.scanned);
  const unsigned bins = multisplit_bins(c.buckets, c.checked);
  const auto scan = [&](std::size_t tiles) {
    const std::size_t entries = tiles * bins;
    if (entries <= small_scan_most) {
      scan_small<<<1, small_scan_threads, 0, c.stream>>>(counts, scanned, static_cast<std::uint32_t>(entries));
      SIEVE_CUDA_CHECK(cudaGetLastError());
    } else {
      std::size_t bytes = l.scan_bytes;
      SIEVE_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(ws + l.scan, bytes, counts, scanned, static_cast<int>(entries), c.stream));
    }
  };
  // The tiles of the mover the call takes (at most l.tiles): the place needs them before the launch.
  const std::size_t tiles_now = [&] {
    std::size_t t = 0;
    with_split_mover(c.in, c.out, [&](auto move) { t = tiles_of<decltype(move)>(c.capacity); });
    return t;
  }();
  enqueue_ballot_split(c, counts, nullptr, bad, scan_place{scanned, static_cast<std::uint32_t>(tiles_now)}, scan);
  return 0;
}

}  // namespace sieve::detail
