// multisplit, ballot_lookback (CUDA): the warp-synchronous multisplit (internal/ballot_split.cuh) in
// one tile pass with decoupled look-back, after a histogram.
//   1. count_tiles reads the id column once (16 ids a load) and adds every bin's total into one table;
//   2. split_tiles takes tiles in launch order, ranks each by ballots, publishes its count of every
//      bin and looks back over its predecessors' (tile, bin) statuses (look_back.cuh: a warp per bin
//      when the bins fit the warps, else a thread per bin) for where its run of each bin starts;
//      tile 0 starts from the histogram's exclusive prefix and writes the offsets.
// Stable. Statuses are 32-bit (2 flag bits, 30 bits of count): n < 2^30.
#include "internal/ballot_split.cuh"

namespace sieve::detail {
namespace {

struct lookback_place {
  const std::uint32_t* hist;
  unsigned* counter;
  std::uint32_t* status;  // [tile][bin]
  using st = tile_status<std::uint32_t>;

  __device__ unsigned tile_index(unsigned* slot) const { return take_tile(counter, slot); }
  __device__ std::uint32_t prefetch(unsigned, unsigned bins) const { return threadIdx.x < bins ? hist[threadIdx.x] : 0U; }
  template <class Storage>
  __device__ void place(unsigned tile, unsigned bins, unsigned buckets, std::uint32_t, std::uint32_t total,
                        std::uint32_t h, Storage& s, std::uint64_t* offsets) const {
    const unsigned d = threadIdx.x, lane = lane_id(), warp = d / 32;
    std::uint32_t start = 0, count = 0;
    if (d < bins) {
      start = s.table[d * split_warps];
      count = (d + 1 < bins ? s.table[(d + 1) * split_warps] : total) - start;
      if (tile > 0) publish(status[std::size_t{tile} * bins + d], st::aggregate, count);
      s.aux[d] = count;
    }
    std::uint32_t all;
    const std::uint32_t before_bin = block_exclusive_sum<split_threads>(h, all, s.warp_sums);
    if (tile == 0) {
      if (d < bins) {
        publish(status[d], st::prefix, count);
        s.shift[d] = before_bin - start;
      }
      if (d < buckets) offsets[d] = before_bin;
      if (d == 0) offsets[buckets] = all - (bins > buckets ? hist[buckets] : 0U);
    } else if (bins <= split_warps) {
      if (d < bins) s.shift[d] = before_bin - start;
      __syncthreads();
      if (warp < bins) {
        const std::uint32_t before = look_back_prefix<32>(status + warp, bins, tile);
        if (lane == 0) {
          publish(status[std::size_t{tile} * bins + warp], st::prefix, before + s.aux[warp]);
          s.shift[warp] += before;
        }
      }
    } else if (d < bins) {
      const std::uint32_t before = look_back_prefix<1>(status + d, bins, tile);
      publish(status[std::size_t{tile} * bins + d], st::prefix, before + count);
      s.shift[d] = before_bin + before - start;
    }
  }
};

struct layout {
  std::size_t hist, counter, status, zeroed, total;
};

layout layout_of(const cuda_multisplit_call& c) {
  layout l{};
  l.hist = 256;  // after the bad-id word
  l.counter = l.hist + 4 * 256;
  l.status = l.counter + 256;
  l.zeroed = l.status + 4 * std::size_t{multisplit_bins(c.buckets, c.checked)} * tiles_of_call(c);
  l.total = align_up(l.zeroed);
  return l;
}

}  // namespace

std::size_t cuda_multisplit_ballot_lookback(const cuda_multisplit_call& c) {
  const layout l = layout_of(c);
  if (c.query) return l.total;
  auto* ws = static_cast<std::byte*>(c.workspace);
  SIEVE_CUDA_CHECK(cudaMemsetAsync(ws, 0, l.zeroed, c.stream));
  auto* hist = reinterpret_cast<std::uint32_t*>(ws + l.hist);
  const lookback_place place{hist, reinterpret_cast<unsigned*>(ws + l.counter),
                             reinterpret_cast<std::uint32_t*>(ws + l.status)};
  enqueue_ballot_split(c, nullptr, hist, reinterpret_cast<unsigned long long*>(ws), place, [](std::size_t) {});
  return 0;
}

}  // namespace sieve::detail
