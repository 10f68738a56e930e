// multisplit, onesweep (CUDA): the digit pass of a onesweep radix sort (radix_sort_onesweep.cu)
// turned into a split by bucket, after one counting pass (multisplit_count.cuh).
//   1. count_bins reads the id column once: every bucket's total (and checked mode's bad ids).
//   2. One pass over tiles of `threads * items` items. A block takes the next tile from an atomic
//      counter, loads the ids warp-striped and ranks them within each warp (warp_rank.cuh), so the
//      tile's order by (bucket, input position) is known in shared memory. The tile publishes its
//      count per bucket and looks back over its predecessors (look_back.cuh: a whole warp per bucket
//      when the buckets fit the warps, 32 statuses a step, else one thread per bucket) to find where
//      its share of each bucket starts; tile 0 starts from the counting pass's exclusive prefix and
//      writes the offsets. The items then leave in (bucket, position) order, so each bucket's run of
//      the tile is written contiguously: one column of 1 to 8 bytes is staged through shared memory
//      (loaded coalesced, written in sorted order); other records move slot by slot from their
//      place in the tile (the read gathers inside the tile, the write is the contiguous run).
// Stable. Statuses are 32-bit (2 flag bits, 30 bits of count): n < 2^30.
#include "internal/device.cuh"
#include "internal/look_back.cuh"
#include "internal/multisplit_count.cuh"
#include "internal/select_common.cuh"
#include "internal/warp_rank.cuh"

#include <type_traits>

namespace sieve::detail {
namespace {

constexpr unsigned threads = 256, items = 16;
constexpr unsigned warps = threads / 32;
constexpr unsigned tile_items = threads * items;
using status_word = tile_status<std::uint32_t>;

// Movers of one column of at most 8 bytes stage the tile's items in shared memory.
template <class Move>
constexpr bool staged() {
  if constexpr (split_mover<Move> && !std::is_same_v<Move, word_record>) return sizeof(typename Move::value_type) <= 8;
  return false;
}
template <class Move>
using stage_t = std::conditional_t<staged<Move>(), typename word_value<Move>::type, std::uint16_t>;

template <class Move>
struct tile_storage {
  stage_t<Move> stage[tile_items];       // staged: the items in sorted order; else each slot's item
  std::uint8_t slot_bin[tile_items];     // the bin of each sorted slot
  alignas(16) std::uint16_t warp_start[warps][256];
  std::uint32_t bin_count[256], bin_local[256], global_shift[256];
  std::uint32_t warp_sums[warps];
  unsigned tile;
};

template <class Move>
__global__ void __launch_bounds__(threads) split_tiles(Move move, const std::uint8_t* __restrict__ ids,
                                                        live_count live, unsigned buckets, unsigned bins,
                                                        const std::uint32_t* __restrict__ hist, unsigned* counter,
                                                        std::uint32_t* status, const unsigned long long* bad,
                                                        std::uint64_t* offsets) {
  __shared__ tile_storage<Move> s;
  if (*bad) {  // checked mode found an id out of range: nothing moves
    if (blockIdx.x == 0) write_invalid_offsets(offsets, buckets);
    return;
  }
  const auto n = static_cast<std::uint32_t>(live.get());
  const unsigned tile = take_tile(counter, &s.tile);
  const std::uint32_t base = tile * tile_items;
  if (tile > 0 && base >= n) return;  // past the live items (the grid covers the capacity)
  const unsigned lane = lane_id(), warp = threadIdx.x / 32, d = threadIdx.x;
  for (unsigned i = threadIdx.x; i < warps * 256 / 2; i += threads)
    reinterpret_cast<std::uint32_t*>(&s.warp_start[0][0])[i] = 0;

  const std::uint32_t warp_base = base + warp * 32 * items + lane;
  unsigned bin[items];
  stage_t<Move> value[items];
#pragma unroll
  for (unsigned j = 0; j < items; ++j) {
    const std::uint32_t i = warp_base + 32 * j;
    bin[j] = i < n ? multisplit_bin(ids[i], buckets) : 255;  // past n: ranked after every real item
    if constexpr (staged<Move>())
      if (i < n) value[j] = move.load(i);
  }
  __syncthreads();
  std::uint32_t rank[items];
  warp_rank<items>(s.warp_start[warp], [&](unsigned j) { return bin[j]; }, rank);
  __syncthreads();

  // Bin threads: the tile's count, published; its first slot in the tile, each warp's first slot.
  std::uint32_t count = 0;
  if (d < bins) {
#pragma unroll
    for (unsigned w = 0; w < warps; ++w) count += s.warp_start[w][d];
    if (tile > 0) publish(status[tile * bins + d], status_word::aggregate, count);
  }
  std::uint32_t tile_total;
  const std::uint32_t local = block_exclusive_sum<threads>(count, tile_total, s.warp_sums);
  if (d < bins) {
    warp_counts_to_slots<warps>(s.warp_start, d, local);
    s.bin_count[d] = count;
    s.bin_local[d] = local;
  }

  // Where the tile's share of each bin starts in the output.
  if (tile == 0) {
    std::uint32_t all;
    const std::uint32_t h = d < bins ? hist[d] : 0U;
    const std::uint32_t before = block_exclusive_sum<threads>(h, all, s.warp_sums);
    if (d < bins) {
      publish(status[d], status_word::prefix, before + count);
      s.global_shift[d] = before - local;
      if (d < buckets) offsets[d] = before;
      if (d == 0) offsets[buckets] = all - (bins > buckets ? hist[buckets] : 0U);
    }
  } else if (bins <= warps) {
    __syncthreads();
    if (warp < bins) {
      const std::uint32_t before = look_back_prefix<32>(status + warp, bins, tile);
      if (lane == 0) {
        publish(status[tile * bins + warp], status_word::prefix, before + s.bin_count[warp]);
        s.global_shift[warp] = before - s.bin_local[warp];
      }
    }
  } else if (d < bins) {
    const std::uint32_t before = look_back_prefix<1>(status + d, bins, tile);
    publish(status[tile * bins + d], status_word::prefix, before + count);
    s.global_shift[d] = before - local;
  }
  __syncthreads();

  // Each item into its sorted slot (staged: the item itself; else its place in the tile), then out.
#pragma unroll
  for (unsigned j = 0; j < items; ++j) {
    if (warp_base + 32 * j >= n) continue;
    const std::uint32_t slot = rank[j] + s.warp_start[warp][bin[j]];
    s.slot_bin[slot] = static_cast<std::uint8_t>(bin[j]);
    if constexpr (staged<Move>())
      s.stage[slot] = value[j];
    else
      s.stage[slot] = static_cast<std::uint16_t>(warp_base + 32 * j - base);
  }
  __syncthreads();
  const std::uint32_t valid = n - base < tile_items ? n - base : tile_items;
#pragma unroll
  for (unsigned j = 0; j < items; ++j) {
    const std::uint32_t i = j * threads + threadIdx.x;
    if (i >= valid) continue;
    const std::uint32_t to = s.global_shift[s.slot_bin[i]] + i;
    if constexpr (staged<Move>())
      move.store(to, s.stage[i]);
    else
      move(to, base + s.stage[i]);
  }
}

struct layout {
  std::size_t tiles, hist, counter, status, zeroed, total;
};

layout layout_of(const cuda_multisplit_call& c) {
  layout l{};
  l.tiles = (c.capacity + tile_items - 1) / tile_items;
  if (l.tiles == 0) l.tiles = 1;
  l.hist = 256;  // after the bad-id word
  l.counter = l.hist + 4 * 256;
  l.status = l.counter + 256;
  const std::size_t status_bytes = 4 * std::size_t{multisplit_bins(c.buckets, c.checked)} * l.tiles;
  l.zeroed = l.status + status_bytes;
  l.total = align_up(l.zeroed);
  return l;
}

}  // namespace

std::size_t cuda_multisplit_onesweep(const cuda_multisplit_call& c) {
  const layout l = layout_of(c);
  if (c.query) return l.total;
  auto* ws = static_cast<std::byte*>(c.workspace);
  SIEVE_CUDA_CHECK(cudaMemsetAsync(ws, 0, l.zeroed, c.stream));
  auto* bad = reinterpret_cast<unsigned long long*>(ws);
  auto* hist = reinterpret_cast<std::uint32_t*>(ws + l.hist);
  count_bins_async(c, hist, bad);
  with_device_mover(c.in, c.out, [&](auto move) {
    split_tiles<<<static_cast<unsigned>(l.tiles), threads, 0, c.stream>>>(
        move, c.ids, live_count{c.d_live, c.capacity}, c.buckets, multisplit_bins(c.buckets, c.checked), hist,
        reinterpret_cast<unsigned*>(ws + l.counter), reinterpret_cast<std::uint32_t*>(ws + l.status), bad,
        c.d_offsets);
    SIEVE_CUDA_CHECK(cudaGetLastError());
  });
  return 0;
}

}  // namespace sieve::detail
