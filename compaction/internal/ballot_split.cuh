// The warp-synchronous multisplit of Ashkiani, Davidson, Meyer and Owens ("GPU Multisplit", PPoPP
// 2016), the one copy the `ballot` and `ballot_lookback` designs share (not installed).
//
// Ranking without shared-memory histograms or atomics. A warp holds 32 items at a time, one a lane.
// log2(bins) ballots of the bin's bits give, for every bin, the mask of the lanes holding it: lane b
// ANDs the ballots (or their complements, by the bits of b) into the mask of bin b (bin_masks::owned),
// so the warp's count of bin b is one popc in lane b. An item's rank among the earlier items of its
// bin is the running count of the bin (a shuffle from the bin's lane) plus the popc of its bin's mask
// below its lane. Up to 32 bins a lane owns one bin, plus one extra bin (the unchecked split's bin of
// ids out of range, 33 bins for 32 buckets) taken by a separate ballot; up to 256 bins a lane owns
// eight (lane + 32 r), and the running counts sit in shared memory.
//
// A block's tile: 256 threads, `Items` items a thread, loaded warp-striped (lane l holds items
// 32 j + l of its warp's run, so lane order within a group is input order and the rank is stable).
// The warps' counts per bin form a [bin][warp] table in shared memory whose exclusive scan gives every
// (bin, warp) its first slot in the tile's bin-major order; the items go to their slots in shared
// memory (the values themselves, or their place in the tile) and leave in slot order, so every bin's
// run of the tile is written as one contiguous, coalesced run. Where the run of bin b of a tile starts
// in the output is the design's part (Place): an exclusive scan of counts laid out [bin][tile]
// (reduce, scan, split: `ballot`), or a decoupled look-back over (tile, bin) counts after a global
// histogram (`ballot_lookback`).
//
// Records of several 4-byte-word columns (word_record) move column by column through shared memory:
// the tile's words are read as one contiguous run, written to their sorted slots in shared memory and
// leave as one contiguous run per bin (tiles of 1024 items: the 28-byte column of the renderer's path
// record takes 28 KB). One column of 4 or 8 bytes moves by value; anything else moves item by item
// from its place in the tile to its slot.
#pragma once

#include "device.cuh"
#include "look_back.cuh"
#include "multisplit_count.cuh"
#include "multisplit_table.hpp"
#include "select_common.cuh"

#include <sieve/compaction/cuda_check.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

namespace sieve::detail {
namespace {  // each design's translation unit has its own copy of the kernels

constexpr unsigned split_threads = 256;
constexpr unsigned split_warps = split_threads / 32;
constexpr unsigned full_warp = 0xffffffffU;
#ifndef SIEVE_BALLOT_ITEMS
#define SIEVE_BALLOT_ITEMS 16
#endif
// Items a thread of one column's tile (8 or 16; word records take 4).
constexpr unsigned ballot_items = SIEVE_BALLOT_ITEMS;
static_assert(ballot_items == 8 || ballot_items == 16, "SIEVE_BALLOT_ITEMS: 8 or 16");

// The ballots a group of 32 items takes: the bits of the bin that the buckets need (ceil(log2
// buckets), at least 1) up to 32 buckets, where lane b owns bin b < 2^Bits and bin 2^Bits, the
// unchecked bin of ids out of range when the buckets are a power of two, is the extra bin; 8 above,
// where a lane owns bins lane + 32 r. The kernels are built for Bits 1..5 and 8 alone.
constexpr unsigned ballot_bits(unsigned buckets) {
  if (buckets > 32) return 8;
  unsigned b = 1;
  while ((1U << b) < buckets) ++b;
  return b;
}

// The masks of one group of 32 items (lane l's item in bin `bin`, or no item where !live). Full: every
// lane holds an item and none is in the extra bin, so neither takes a ballot.
template <unsigned Bits, bool Full>
struct bin_masks {
  static constexpr unsigned R = Bits > 5 ? 8 : 1;
  static constexpr unsigned extra_bin = 1U << Bits;  // R == 1 only, by its own ballot
  unsigned bit[Bits];
  unsigned owned_live;  // lanes holding an item of an owned bin
  unsigned extra;       // lanes holding an item of the extra bin

  // Only the low Bits bits of `bin` are read where Full (the count pass passes a shifted id word).
  __device__ bin_masks(unsigned bin, bool live, bool has_extra) {
#pragma unroll
    for (unsigned k = 0; k < Bits; ++k) bit[k] = __ballot_sync(full_warp, (bin >> k) & 1U);
    if constexpr (Full) {
      extra = 0;
      owned_live = full_warp;
    } else {
      extra = has_extra ? __ballot_sync(full_warp, live && bin == extra_bin) : 0U;
      owned_live = __ballot_sync(full_warp, live) & ~extra;
    }
  }
  // m narrowed to the lanes whose bin agrees with b on bit k: (ballot ^ flip) & m, one LOP3, with
  // flip all ones where bit k of b is clear.
  __device__ unsigned narrow(unsigned m, unsigned k, unsigned b) const { return m & (bit[k] ^ (((b >> k) & 1U) - 1U)); }
  // Lanes holding an item of owned bin b.
  __device__ unsigned of(unsigned b) const {
    unsigned m = owned_live;
#pragma unroll
    for (unsigned k = 0; k < Bits; ++k) m = narrow(m, k, b);
    return m;
  }
  // m[r]: lanes holding an item of bin lane + 32 r (R == 1: lane mod 2^Bits; lanes past 2^Bits own none).
  __device__ void owned(unsigned (&m)[R]) const {
    const unsigned lane = lane_id();
    unsigned low = owned_live;
#pragma unroll
    for (unsigned k = 0; k < (Bits < 5 ? Bits : 5); ++k) low = narrow(low, k, lane);
#pragma unroll
    for (unsigned r = 0; r < R; ++r) {
      unsigned x = low;
#pragma unroll
      for (unsigned k = 5; k < Bits; ++k) x = narrow(x, k, r << 5);
      m[r] = x;
    }
  }
};

// The lanes whose owned bin exists: below 2^Bits (R == 1) and below bins.
template <unsigned Bits>
__device__ bool owns_bin(unsigned lane, unsigned r, unsigned bins) {
  return (Bits > 5 || lane < (1U << Bits)) && lane + 32 * r < bins;
}

// Whether none of the four ids of word w is at or past `buckets` (always where buckets >= 256).
__device__ inline bool ids_below(std::uint32_t w, unsigned buckets) {
  return buckets >= 256 || __vcmpgeu4(w, 0x01010101U * buckets) == 0;
}

// Items packed four bins to a word and two ranks to a word (registers: the tile pass is latency-bound
// and every register costs resident warps).
template <unsigned Items>
struct packed_bins {
  std::uint32_t w[(Items + 3) / 4] = {};
  __device__ unsigned get(unsigned j) const { return (w[j / 4] >> (8 * (j % 4))) & 0xFFU; }
  __device__ void set(unsigned j, unsigned b) { w[j / 4] |= b << (8 * (j % 4)); }
};
template <unsigned Items>
struct packed_ranks {
  std::uint32_t w[(Items + 1) / 2] = {};
  __device__ unsigned get(unsigned j) const { return (w[j / 2] >> (16 * (j % 2))) & 0xFFFFU; }
  __device__ void set(unsigned j, unsigned r) { w[j / 2] |= r << (16 * (j % 2)); }
};

// Ranks the warp's 32 x Items items stably by bin (lane l's item j is item 32 j + l of the warp's
// run; `live` items of the run exist; Full: all of them, none in the extra bin). R == 1: count ends as
// the warp's count of bin `lane`, `extra` as that of the extra bin. R == 8: the running counts live in
// table[bin * split_warps + warp] (zeroed before), where they end as the warp's counts.
template <unsigned Items, unsigned Bits, bool Full>
__device__ void rank_in_warp(const packed_bins<Items>& bins, unsigned live, bool has_extra, packed_ranks<Items>& rank,
                             unsigned& count, unsigned& extra, std::uint32_t* table) {
  using masks = bin_masks<Bits, Full>;
  constexpr unsigned R = masks::R;
  const unsigned lane = lane_id(), warp = threadIdx.x / 32, below = lanes_below();
  count = 0;
  extra = 0;
#pragma unroll
  for (unsigned j = 0; j < Items; ++j) {
    const unsigned b = bins.get(j);
    const masks g(b, Full || 32 * j + lane < live, has_extra);
    unsigned m[R];
    g.owned(m);
    if constexpr (R == 1) {
      constexpr unsigned low = (1U << Bits) - 1U;
      const unsigned mine = __shfl_sync(full_warp, m[0], b & low);
      const unsigned before = __shfl_sync(full_warp, count, b & low);
      if constexpr (Full) {
        rank.set(j, before + __popc(mine & below));
      } else {
        const bool is_extra = b == masks::extra_bin;
        rank.set(j, (is_extra ? extra : before) + __popc((is_extra ? g.extra : mine) & below));
        extra += __popc(g.extra);
      }
      count += __popc(m[0]);
    } else {
      rank.set(j, table[b * split_warps + warp] + __popc(g.of(b) & below));
      __syncwarp();
#pragma unroll
      for (unsigned r = 0; r < R; ++r)
        if (m[r]) table[(lane + 32 * r) * split_warps + warp] += __popc(m[r]);
      __syncwarp();
    }
  }
}

// Exclusive scan, in place, of the first `entries` words of table (K a thread, consecutive); returns
// the sum to every thread. Three barriers.
template <unsigned K>
__device__ std::uint32_t scan_table(std::uint32_t* table, unsigned entries, std::uint32_t* warp_sums) {
  const unsigned first = threadIdx.x * K;
  std::uint32_t v[K], sum = 0;
#pragma unroll
  for (unsigned k = 0; k < K; ++k) {
    v[k] = first + k < entries ? table[first + k] : 0U;
    sum += v[k];
  }
  std::uint32_t total;
  std::uint32_t run = block_exclusive_sum<split_threads>(sum, total, warp_sums);
#pragma unroll
  for (unsigned k = 0; k < K; ++k)
    if (first + k < entries) {
      table[first + k] = run;
      run += v[k];
    }
  __syncthreads();
  return total;
}

// How a mover's items travel through the tile (see the top of the file).
enum class stage_kind { value, column, position };
template <class Move>
constexpr stage_kind stage_of() {
  if constexpr (std::is_same_v<Move, word_record>) return stage_kind::column;
  else if constexpr (split_mover<Move>) return sizeof(typename Move::value_type) <= 8 ? stage_kind::value : stage_kind::position;
  else return stage_kind::position;
}
template <class Move>
constexpr unsigned tile_items_of() {
  return split_threads * (stage_of<Move>() == stage_kind::column ? 4 : ballot_items);
}
template <class Move, stage_kind = stage_of<Move>()>
struct stage_type {
  using type = std::uint16_t;  // column: item -> slot; position: slot -> item
};
template <class Move>
struct stage_type<Move, stage_kind::value> {
  using type = typename Move::value_type;
};

template <class Move, unsigned R>
struct tile_storage {
  static constexpr unsigned tile_items = tile_items_of<Move>();
  typename stage_type<Move>::type stage[tile_items];
  std::uint8_t slot_bin[tile_items];  // the bin of each slot
  std::uint32_t table[(R == 1 ? 33 : 256) * split_warps];
  std::uint32_t shift[256];  // output slot of tile slot i of bin b: shift[b] + i
  std::uint32_t warp_sums[split_warps];
  std::uint32_t aux[256];  // the Place's own
  unsigned tile;
};

// Movers the ballot designs instantiate: one 4- or 8-byte column by value, word records by column,
// anything else item by item (fewer kernels to build).
template <class F>
void with_split_mover(const record& in, const record& out, F&& f) {
  if (word_record m; word_record::fits(in, out, m)) return f(m);
  if (in.columns() == 1) {
    const auto aligned = [&](std::size_t w) {
      return reinterpret_cast<std::uintptr_t>(in[0].data) % w == 0 && reinterpret_cast<std::uintptr_t>(out[0].data) % w == 0;
    };
    if (in[0].width == 4 && aligned(4))
      return f(typed_mover<std::uint32_t>{reinterpret_cast<const std::uint32_t*>(in[0].data),
                                          reinterpret_cast<std::uint32_t*>(out[0].data)});
    if (in[0].width == 8 && aligned(8))
      return f(typed_mover<std::uint64_t>{reinterpret_cast<const std::uint64_t*>(in[0].data),
                                          reinterpret_cast<std::uint64_t*>(out[0].data)});
  }
  f(device_mover{device_record::of(in), device_record::of(out)});
}

// Dynamic shared memory of the tile pass: the column buffer of word records (tile x widest column).
inline std::size_t column_buffer_bytes(const record& in) {
  word_record m;
  if (!word_record::fits(in, in, m)) return 0;
  std::uint32_t widest = 0;
  for (unsigned c = 0; c < m.columns; ++c) widest = m.cols[c].width > widest ? m.cols[c].width : widest;
  return std::size_t{split_threads} * 4 * widest;
}

// A word record's tile column by column: stage[item] is each item's slot, `valid` items.
__device__ inline void move_columns(const word_record& move, std::uint32_t base, std::uint32_t valid,
                                    const std::uint16_t* slot_of, const std::uint8_t* slot_bin,
                                    const std::uint32_t* shift, std::uint32_t* buffer) {
  for (unsigned c = 0; c < move.columns; ++c) {
    const unsigned words = move.cols[c].width / 4;
    const std::uint64_t magic = ((std::uint64_t{1} << 32) + words - 1) / words;  // f / words, exact for f < 2^16
    const auto div = [&](std::uint32_t f) { return static_cast<std::uint32_t>((f * magic) >> 32); };
    const auto* src = reinterpret_cast<const std::uint32_t*>(move.cols[c].in) + std::size_t{base} * words;
    auto* dst = reinterpret_cast<std::uint32_t*>(move.cols[c].out);
    const std::uint32_t all = valid * words;
    constexpr unsigned unroll = 4;
    for (std::uint32_t f0 = threadIdx.x; f0 < all; f0 += unroll * split_threads) {
      std::uint32_t v[unroll];
#pragma unroll
      for (unsigned u = 0; u < unroll; ++u) {
        const std::uint32_t f = f0 + u * split_threads;
        if (f < all) v[u] = src[f];
      }
#pragma unroll
      for (unsigned u = 0; u < unroll; ++u) {
        const std::uint32_t f = f0 + u * split_threads;
        if (f >= all) continue;
        const std::uint32_t item = div(f);
        buffer[slot_of[item] * words + (f - item * words)] = v[u];
      }
    }
    __syncthreads();
    for (std::uint32_t g = threadIdx.x; g < all; g += split_threads) {
      const std::uint32_t s = div(g);
      const std::size_t to = std::size_t{shift[slot_bin[s]] + s} * words + (g - s * words);
      dst[to] = buffer[g];
    }
    __syncthreads();
  }
}

// The tile pass: every tile ranked, placed (Place: where each bin's run of the tile starts in the
// output) and written out. bins: the buckets, plus the bin of ids out of range when unchecked.
template <unsigned Bits, class Move, class Place>
__global__ void __launch_bounds__(split_threads) split_tiles(Move move, const std::uint8_t* __restrict__ ids,
                                                              live_count live, unsigned buckets, unsigned bins,
                                                              bool checked, Place place,
                                                              const unsigned long long* bad, std::uint64_t* offsets) {
  constexpr unsigned R = bin_masks<Bits, false>::R;
  constexpr stage_kind kind = stage_of<Move>();
  constexpr unsigned tile_items = tile_items_of<Move>();
  constexpr unsigned items = tile_items / split_threads;
  __shared__ tile_storage<Move, R> s;
  extern __shared__ std::uint32_t column_buffer[];
  if (checked && *bad) {  // checked mode found an id out of range: nothing moves
    if (blockIdx.x == 0) write_invalid_offsets(offsets, buckets);
    return;
  }
  const auto n = static_cast<std::uint32_t>(live.get());
  const unsigned tile = place.tile_index(&s.tile);
  const std::uint32_t base = tile * tile_items;
  if (tile > 0 && base >= n) return;  // past the live items (the grid covers the capacity)
  const std::uint32_t early = place.prefetch(tile, bins);
  const bool has_extra = R == 1 && bins > (1U << Bits);
  const unsigned lane = lane_id(), warp = threadIdx.x / 32;
  const std::uint32_t warp_first = base + warp * 32 * items;
  const unsigned warp_live = n > warp_first ? (n - warp_first < 32 * items ? n - warp_first : 32 * items) : 0U;

  packed_bins<items> bin;
  typename stage_type<Move>::type value[kind == stage_kind::value ? items : 1];
  bool in_extra = false;
#pragma unroll
  for (unsigned j = 0; j < items; ++j) {
    const std::uint32_t i = warp_first + 32 * j + lane;
    if (32 * j + lane < warp_live) {
      const unsigned b = multisplit_bin(ids[i], buckets);
      bin.set(j, b);
      in_extra = in_extra || b == bin_masks<Bits, false>::extra_bin;
      if constexpr (kind == stage_kind::value) value[j] = move.load(i);
    }
  }
  // The full-tile fast path: a warp whose run is all live and holds no item of the extra bin ranks
  // without the live and extra ballots (warp-uniform).
  const bool full = warp_live == 32 * items && !__any_sync(full_warp, has_extra && in_extra);
  if constexpr (R != 1)
    for (unsigned i = threadIdx.x; i < 256 * split_warps; i += split_threads) s.table[i] = 0;
  __syncthreads();
  packed_ranks<items> rank;
  unsigned count, extra;
  if (full) rank_in_warp<items, Bits, true>(bin, warp_live, has_extra, rank, count, extra, s.table);
  else rank_in_warp<items, Bits, false>(bin, warp_live, has_extra, rank, count, extra, s.table);
  if constexpr (R == 1) {
    if (owns_bin<Bits>(lane, 0, bins)) s.table[lane * split_warps + warp] = count;
    if (has_extra && lane == 0) s.table[bin_masks<Bits, false>::extra_bin * split_warps + warp] = extra;
  }
  __syncthreads();
  const std::uint32_t total = scan_table<R == 1 ? 2 : 8>(s.table, bins * split_warps, s.warp_sums);
  place.place(tile, bins, buckets, n, total, early, s, offsets);
  __syncthreads();

#pragma unroll
  for (unsigned j = 0; j < items; ++j) {
    if (32 * j + lane >= warp_live) continue;
    const unsigned b = bin.get(j);
    const std::uint32_t slot = s.table[b * split_warps + warp] + rank.get(j);
    const auto at = static_cast<std::uint16_t>(warp_first - base + 32 * j + lane);
    s.slot_bin[slot] = static_cast<std::uint8_t>(b);
    if constexpr (kind == stage_kind::value) s.stage[slot] = value[j];
    else if constexpr (kind == stage_kind::position) s.stage[slot] = at;
    else s.stage[at] = static_cast<std::uint16_t>(slot);
  }
  __syncthreads();
  const std::uint32_t valid = n - base < tile_items ? n - base : tile_items;
  if constexpr (kind == stage_kind::column) {
    move_columns(move, base, valid, s.stage, s.slot_bin, s.shift, column_buffer);
  } else {
#pragma unroll
    for (unsigned j = 0; j < items; ++j) {
      const std::uint32_t i = j * split_threads + threadIdx.x;
      if (i >= valid) continue;
      const std::uint32_t to = s.shift[s.slot_bin[i]] + i;
      if constexpr (kind == stage_kind::value) move.store(to, s.stage[i]);
      else move(to, base + s.stage[i]);
    }
  }
}

// A warp's count of bin `lane` from per-thread byte counters (counter[w] byte q: bin 4 w + q, at most
// 255 a thread): the bytes split into 16-bit halves and summed over the warp by __reduce_add_sync.
template <unsigned W>
__device__ unsigned warp_byte_counts(const std::uint32_t (&counter)[W]) {
  const unsigned lane = lane_id();
  unsigned v = 0;
#pragma unroll
  for (unsigned w = 0; w < W; ++w) {
    const unsigned even = __reduce_add_sync(full_warp, counter[w] & 0x00FF00FFU);       // bytes 0, 2
    const unsigned odd = __reduce_add_sync(full_warp, (counter[w] >> 8) & 0x00FF00FFU);  // bytes 1, 3
    if (lane / 4 == w) v = lane & 1U ? odd : even;
  }
  return (v >> (16 * ((lane >> 1) & 1U))) & 0xFFFFU;
}

// Counts the bins of every tile of TileItems ids (a block a tile at a time, a thread's ids read as
// one 4-, 8- or 16-byte word): into per_tile[bin * tiles + tile] (every tile of the capacity, zero
// past the live count), or added into hist[bin]. Up to 8 buckets (Bits <= 3, at most 9 bins) each
// thread counts its ids in byte counters in registers (4 bins a word: a shift and an add an id) and
// the warp sums them (warp_byte_counts); above, by ballots, taken straight from the loaded words where
// the warp's ids are all live and in range. Checked mode notes the first id out of range in *bad (as
// ~i, atomicMax); unchecked, block 0 zeroes *bad.
template <unsigned TileItems, unsigned Bits>
__global__ void __launch_bounds__(split_threads)
    count_tiles(const std::uint8_t* __restrict__ ids, live_count live, unsigned buckets, unsigned bins, bool checked,
                std::uint32_t tiles, std::uint32_t* __restrict__ per_tile, std::uint32_t* __restrict__ hist,
                unsigned long long* bad) {
  constexpr unsigned R = bin_masks<Bits, false>::R;
  constexpr bool in_registers = Bits <= 3;
  constexpr unsigned W = ((1U << Bits) + 1 + 3) / 4;  // byte-counter words (in_registers)
  constexpr unsigned per_thread = TileItems / split_threads;  // 4, 8 or 16
  constexpr unsigned words = per_thread / 4;
  using word = std::conditional_t<words == 4, uint4, std::conditional_t<words == 2, uint2, std::uint32_t>>;
  __shared__ std::uint32_t warp_counts[split_warps][R == 1 ? 33 : 256];
  if (!checked && blockIdx.x == 0 && threadIdx.x == 0) *bad = 0;
  const std::uint64_t n = live.get();
  const bool has_extra = R == 1 && bins > (1U << Bits);
  const bool vector_ok = reinterpret_cast<std::uintptr_t>(ids) % sizeof(word) == 0;
  const unsigned lane = lane_id(), warp = threadIdx.x / 32;
  unsigned long long first_bad = 0;
  unsigned sum[R] = {}, sum_extra = 0;
  for (std::uint32_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::uint64_t first = std::uint64_t{t} * TileItems + threadIdx.x * per_thread;
    std::uint32_t w[words] = {};
    const bool whole = first + per_thread <= n;
    if (vector_ok && whole) {
      const word x = *reinterpret_cast<const word*>(ids + first);
      if constexpr (words == 4) {
        w[0] = x.x; w[1] = x.y; w[2] = x.z; w[3] = x.w;
      } else if constexpr (words == 2) {
        w[0] = x.x; w[1] = x.y;
      } else {
        w[0] = x;
      }
    } else {
      for (unsigned k = 0; k < per_thread; ++k)
        if (first + k < n) w[k / 4] |= std::uint32_t{ids[first + k]} << (8 * (k % 4));
    }
    bool clean = true;  // no id at or past buckets (the bytes past n read as 0)
#pragma unroll
    for (unsigned q = 0; q < words; ++q) clean = clean && ids_below(w[q], buckets);
    if (checked && !clean)
      for (unsigned k = 0; k < per_thread && first_bad == 0; ++k)
        if (first + k < n && ((w[k / 4] >> (8 * (k % 4))) & 0xFFU) >= buckets) first_bad = ~(first + k);
    unsigned cnt[R] = {}, cnt_extra = 0;
    if constexpr (in_registers) {
      std::uint32_t counter[W] = {};
#pragma unroll
      for (unsigned k = 0; k < per_thread; ++k) {
        const unsigned b = multisplit_bin((w[k / 4] >> (8 * (k % 4))) & 0xFFU, buckets);
        const std::uint32_t one = first + k < n ? 1U << (8 * (b & 3U)) : 0U;
#pragma unroll
        for (unsigned q = 0; q < W; ++q) counter[q] += b / 4 == q ? one : 0U;
      }
      cnt[0] = warp_byte_counts<W>(counter);
    } else if (__all_sync(full_warp, clean && whole)) {
#pragma unroll
      for (unsigned k = 0; k < per_thread; ++k) {
        const bin_masks<Bits, true> g(w[k / 4] >> (8 * (k % 4)), true, false);
        unsigned m[R];
        g.owned(m);
#pragma unroll
        for (unsigned r = 0; r < R; ++r) cnt[r] += __popc(m[r]);
      }
    } else {
#pragma unroll
      for (unsigned k = 0; k < per_thread; ++k) {
        const unsigned id = (w[k / 4] >> (8 * (k % 4))) & 0xFFU;
        const bin_masks<Bits, false> g(multisplit_bin(id, buckets), first + k < n, has_extra);
        unsigned m[R];
        g.owned(m);
#pragma unroll
        for (unsigned r = 0; r < R; ++r) cnt[r] += __popc(m[r]);
        cnt_extra += __popc(g.extra);
      }
    }
    // The bins this lane reports: in registers, every bin below `bins` (the extra bin among them).
    const auto reports = [&](unsigned r) { return in_registers ? lane < bins : owns_bin<Bits>(lane, r, bins); };
    constexpr unsigned extra_bin = bin_masks<Bits, false>::extra_bin;
    if (per_tile == nullptr) {
#pragma unroll
      for (unsigned r = 0; r < R; ++r) sum[r] += cnt[r];
      sum_extra += cnt_extra;
      continue;
    }
#pragma unroll
    for (unsigned r = 0; r < R; ++r)
      if (reports(r)) warp_counts[warp][lane + 32 * r] = cnt[r];
    if (!in_registers && has_extra && lane == 0) warp_counts[warp][extra_bin] = cnt_extra;
    __syncthreads();
    if (threadIdx.x < bins) {
      std::uint32_t c = 0;
#pragma unroll
      for (unsigned v = 0; v < split_warps; ++v) c += warp_counts[v][threadIdx.x];
      per_tile[std::size_t{threadIdx.x} * tiles + t] = c;
    }
    __syncthreads();
  }
  if (first_bad) atomicMax(bad, first_bad);
  if (hist == nullptr) return;
#pragma unroll
  for (unsigned r = 0; r < R; ++r)
    if (in_registers ? lane < bins : owns_bin<Bits>(lane, r, bins)) warp_counts[warp][lane + 32 * r] = sum[r];
  if (!in_registers && has_extra && lane == 0) warp_counts[warp][bin_masks<Bits, false>::extra_bin] = sum_extra;
  __syncthreads();
  if (threadIdx.x < bins) {
    std::uint32_t c = 0;
#pragma unroll
    for (unsigned v = 0; v < split_warps; ++v) c += warp_counts[v][threadIdx.x];
    if (c) atomicAdd(&hist[threadIdx.x], c);
  }
}

// The tiles of a split of this call's record shape.
template <class Move>
std::size_t tiles_of(std::size_t capacity) {
  const std::size_t t = (capacity + tile_items_of<Move>() - 1) / tile_items_of<Move>();
  return t ? t : 1;
}
// The most tiles a call of this shape can take (a workspace query): the small tiles of word records
// wherever the shape could move as one, whatever the alignment of the pointers passed later.
inline std::size_t tiles_of_call(const cuda_multisplit_call& c) {
  bool words = c.in.columns() >= 2 && c.in.item_bytes() <= 4 * word_record::most;
  for (std::size_t k = 0; k < c.in.columns(); ++k) words = words && c.in[k].width % 4 == 0;
  return words ? tiles_of<word_record>(c.capacity) : tiles_of<device_mover>(c.capacity);
}

// Enqueues count_tiles over the call's tiles (into per_tile, or added into hist), then between(tiles)
// (the design's step between the passes), then split_tiles with `place`, for the call's mover and
// lane-owned bins.
template <class Place, class Between>
void enqueue_ballot_split(const cuda_multisplit_call& c, std::uint32_t* per_tile, std::uint32_t* hist,
                          unsigned long long* bad, Place place, Between between) {
  const unsigned bins = multisplit_bins(c.buckets, c.checked);
  const live_count live{c.d_live, c.capacity};
  const auto with_bits = [&](auto bits) {
    constexpr unsigned Bits = decltype(bits)::value;
    with_split_mover(c.in, c.out, [&](auto move) {
      using Move = decltype(move);
      constexpr unsigned tile_items = tile_items_of<Move>();
      const std::size_t tiles = tiles_of<Move>(c.capacity);
      const unsigned count_blocks = per_tile ? static_cast<unsigned>(tiles) : grid_blocks(tiles * split_threads, split_threads, 8);
      count_tiles<tile_items, Bits><<<count_blocks, split_threads, 0, c.stream>>>(
          c.ids, live, c.buckets, bins, c.checked, static_cast<std::uint32_t>(tiles), per_tile, hist, bad);
      SIEVE_CUDA_CHECK(cudaGetLastError());
      between(tiles);
      const std::size_t dynamic = column_buffer_bytes(c.in);
      auto* kernel = &split_tiles<Bits, Move, Place>;
      if (dynamic > 48 * 1024)
        SIEVE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(dynamic)));
      kernel<<<static_cast<unsigned>(tiles), split_threads, dynamic, c.stream>>>(move, c.ids, live, c.buckets, bins,
                                                                               c.checked, place, bad, c.d_offsets);
      SIEVE_CUDA_CHECK(cudaGetLastError());
    });
  };
  switch (ballot_bits(c.buckets)) {
    case 1: return with_bits(std::integral_constant<unsigned, 1>{});
    case 2: return with_bits(std::integral_constant<unsigned, 2>{});
    case 3: return with_bits(std::integral_constant<unsigned, 3>{});
    case 4: return with_bits(std::integral_constant<unsigned, 4>{});
    case 5: return with_bits(std::integral_constant<unsigned, 5>{});
    default: return with_bits(std::integral_constant<unsigned, 8>{});
  }
}

}  // namespace
}  // namespace sieve::detail
