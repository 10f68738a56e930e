// Device building blocks shared by the CUDA selection strategies (not installed):
//   movers       copy item `from` of the input record to slot `to` of the output: typed for one
//                column of 1, 2, 4, 8 or 16 bytes, word_record for records of 4-byte-multiple
//                columns up to 64 bytes, generic (device_mover) otherwise;
//   keep words   32 items' keep bits as one 32-bit word, from byte flags or a bit mask;
//   scans        warp and block exclusive sums;
//   look-back    one count per tile, summed over earlier tiles by look_back.cuh.
#pragma once

#include "device.cuh"
#include "look_back.cuh"

#include "cuda_call.hpp"

#include <cuda_pipeline.h>

#include <algorithm>
#include <type_traits>

#include <cstdint>

namespace sieve::detail {

// ---- movers ------------------------------------------------------------------------------------

// Typed movers also split a move into load and store, so kernels can put several loads in flight
// before the first store.
template <class T>
struct typed_mover {
  using value_type = T;
  const T* __restrict__ in;
  T* __restrict__ out;
  __device__ void operator()(std::size_t to, std::size_t from) const { out[to] = in[from]; }
  __device__ T load(std::size_t from) const { return in[from]; }
  __device__ void store(std::size_t to, const T& v) const { out[to] = v; }
};

template <class Move>
concept split_mover = requires { typename Move::value_type; };

// The value a split mover loads, or a placeholder byte for movers that move in one step.
template <class Move>
struct word_value {
  using type = unsigned char;
};
template <split_mover Move>
struct word_value<Move> {
  using type = typename Move::value_type;
};

template <std::size_t W>
struct word_of_width;
template <> struct word_of_width<1> { using type = std::uint8_t; };
template <> struct word_of_width<2> { using type = std::uint16_t; };
template <> struct word_of_width<4> { using type = std::uint32_t; };
template <> struct word_of_width<8> { using type = std::uint64_t; };
template <> struct word_of_width<16> { using type = uint4; };

// A record of several columns whose widths are multiples of 4 bytes (4-aligned), at most 64 bytes
// an item in all, moved as a flat array of 4-byte words: word j of an item is at base[j] + i *
// stride[j] (the column's base plus the word's offset in the item). The array is indexed only by
// compile-time constants, so an item lives in registers and the loads of several items can be in
// flight before their stores, as for one typed column (the renderer's path queue: 4 + 28 + 12 + 4
// bytes, twelve words).
struct word_record {
  static constexpr unsigned most = 16;
  struct value_type {
    std::uint32_t w[most];
  };
  const std::byte* in[most];
  std::byte* out[most];
  std::uint32_t stride[most];  // the column's width: bytes from item i to item i + 1
  unsigned words;
  struct column_view {
    const std::byte* in;
    std::byte* out;
    std::uint32_t width;
  } cols[record::max_columns];
  unsigned columns;
  std::size_t size;  // items in the input: a staged word past it holds fewer than 32

  // Whether `in` and `out` can move this way; fills the map when they can.
  static bool fits(const record& in, const record& out, word_record& m) {
    if (in.columns() < 2 || in.item_bytes() > 4 * most) return false;
    m = {};
    m.size = in.size();
    for (std::size_t c = 0; c < in.columns(); ++c) {
      const std::uint32_t width = in[c].width;
      if (width % 4 != 0 || reinterpret_cast<std::uintptr_t>(in[c].data) % 4 != 0 ||
          reinterpret_cast<std::uintptr_t>(out[c].data) % 4 != 0)
        return false;
      m.cols[m.columns++] = {in[c].data, out[c].data, width};
      for (std::uint32_t b = 0; b < width; b += 4, ++m.words) {
        m.in[m.words] = in[c].data + b;
        m.out[m.words] = out[c].data + b;
        m.stride[m.words] = width;
      }
    }
    return true;
  }
  __device__ value_type load(std::size_t from) const {
    value_type v;
#pragma unroll
    for (unsigned j = 0; j < most; ++j)
      if (j < words) v.w[j] = *reinterpret_cast<const std::uint32_t*>(in[j] + from * stride[j]);
    return v;
  }
  __device__ void store(std::size_t to, const value_type& v) const {
#pragma unroll
    for (unsigned j = 0; j < most; ++j)
      if (j < words) *reinterpret_cast<std::uint32_t*>(out[j] + to * stride[j]) = v.w[j];
  }
  __device__ void operator()(std::size_t to, std::size_t from) const { store(to, load(from)); }

  // Staged moves of whole words, for the warp: the 32 items [first, first + 32) of every column go
  // into a buffer in shared memory as contiguous runs (asynchronous copies, cp.async: 16 bytes at a
  // time where the column is 16-byte aligned, no registers held while they fly), then the kept ones
  // leave as contiguous runs of 4-byte stores. Strided 4-byte accesses would touch up to seven
  // sectors per instruction for a 28-byte column; here every sector is whole. A buffer holds
  // 32 * 16 words (64 bytes an item at most).
  static constexpr unsigned buffer_words = 32 * most;
  __device__ void stage_word(std::size_t first, std::uint32_t* buffer) const {
    const unsigned lane = threadIdx.x % 32;
    const unsigned count = size - first < 32 ? static_cast<unsigned>(size - first) : 32U;
    unsigned at = 0;  // the column's run in the buffer, in words
    for (unsigned c = 0; c < columns; ++c) {
      const column_view& col = cols[c];
      const std::byte* src = col.in + first * col.width;
      const unsigned run_words = count * col.width / 4;
      if (count == 32 && reinterpret_cast<std::uintptr_t>(src) % 16 == 0) {
        for (unsigned q = lane; q < run_words / 4; q += 32)
          __pipeline_memcpy_async(buffer + at + 4 * q, src + 16 * q, 16);
      } else {
        for (unsigned q = lane; q < run_words; q += 32) __pipeline_memcpy_async(buffer + at + q, src + 4 * q, 4);
      }
      at += 8 * col.width;
    }
    __pipeline_commit();
  }
  // The kept items (bit i of bits keeps item i of the staged word) to [to, to + popc(bits)).
  // `lane_of` holds 32 words of the warp's shared memory.
  __device__ void store_word(std::uint32_t bits, unsigned long long to, const std::uint32_t* buffer,
                             std::uint32_t* lane_of) const {
    const unsigned lane = threadIdx.x % 32;
    if ((bits >> lane) & 1U) lane_of[__popc(bits & ((1U << lane) - 1U))] = lane;
    __syncwarp();
    const unsigned kept = __popc(bits);
    unsigned at = 0;
    for (unsigned c = 0; c < columns; ++c) {
      const unsigned item_words = cols[c].width / 4;
      auto* dst = reinterpret_cast<std::uint32_t*>(cols[c].out + to * cols[c].width);
      for (unsigned j = lane; j < kept * item_words; j += 32) {
        const unsigned r = j / item_words;
        dst[j] = buffer[at + lane_of[r] * item_words + (j - r * item_words)];
      }
      at += 8 * cols[c].width;
    }
    __syncwarp();
  }
};

template <class Move>
concept staged_mover = requires { Move::buffer_words; };

// Per-warp shared memory for staged moves, where the mover stages (none otherwise).
template <class Move, unsigned Warps, unsigned Words>
struct warp_stages {
  __device__ std::uint32_t* of(unsigned) { return nullptr; }
};
template <staged_mover Move, unsigned Warps, unsigned Words>
struct warp_stages<Move, Warps, Words> {
  std::uint32_t words[Warps][Words];
  __device__ std::uint32_t* of(unsigned warp) { return words[warp]; }
};

// Shared memory a warp needs for staged moves: two word buffers (one in flight while the other is
// written out) and the rank-to-lane table.
constexpr unsigned warp_stage_words = 2 * word_record::buffer_words + 32;

// Calls f(mover) with a typed mover when the record is one column of 1, 2, 4, 8 or 16 bytes whose
// input and output are aligned to the width, with word_record for records of several 4-byte-multiple
// columns of at most 64 bytes, else with the generic device_mover.
template <class F>
void with_device_mover(const record& in, const record& out, F&& f) {
  if (word_record m; word_record::fits(in, out, m)) return f(m);
  if (in.columns() == 1) {
    const auto aligned = [&](std::size_t w) {
      return reinterpret_cast<std::uintptr_t>(in[0].data) % w == 0 &&
             reinterpret_cast<std::uintptr_t>(out[0].data) % w == 0;
    };
    switch (in[0].width) {
#define SIEVE_TYPED_MOVER(W)                                                              \
  case W:                                                                                 \
    if (aligned(W)) {                                                                     \
      using T = typename word_of_width<W>::type;                                          \
      return f(typed_mover<T>{reinterpret_cast<const T*>(in[0].data), reinterpret_cast<T*>(out[0].data)}); \
    }                                                                                     \
    break;
      SIEVE_TYPED_MOVER(1) SIEVE_TYPED_MOVER(2) SIEVE_TYPED_MOVER(4) SIEVE_TYPED_MOVER(8) SIEVE_TYPED_MOVER(16)
#undef SIEVE_TYPED_MOVER
      default: break;
    }
  }
  f(device_mover{device_record::of(in), device_record::of(out)});
}

// ---- keep words --------------------------------------------------------------------------------

// Bits of the four bytes of x that are nonzero, as the low 4 bits (byte 0 -> bit 0).
__device__ inline std::uint32_t nonzero_nibble(std::uint32_t x) {
  const std::uint32_t high = (__vcmpne4(x, 0U) >> 7) & 0x01010101U;  // bit 0 of each nonzero byte
  return (high * 0x01020408U) >> 24;                                   // gather bits 0, 8, 16, 24
}

// Keep bits of items [32 w, 32 w + 32) from byte flags; bits past n are 0.
struct flag_words {
  const std::uint8_t* flags;
  std::size_t n;
  bool vector_ok;  // flags 16-byte aligned: two 16-byte loads per word
  __device__ std::uint32_t operator()(std::size_t w) const {
    const std::size_t first = w * 32;
    if (first >= n) return 0;
    std::uint32_t bits = 0;
    if (vector_ok && first + 32 <= n) {
      const uint4* p = reinterpret_cast<const uint4*>(flags + first);
      const uint4 a = p[0], b = p[1];
      const std::uint32_t v[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
      for (int q = 0; q < 8; ++q) bits |= nonzero_nibble(v[q]) << (4 * q);
      return bits;
    }
    const std::size_t count = n - first < 32 ? n - first : 32;
    for (std::size_t b = 0; b < count; ++b) bits |= std::uint32_t{flags[first + b] != 0} << b;
    return bits;
  }
};

// Keep bits of items [32 w, 32 w + 32) from a bit mask; bits past n are 0.
struct mask_words {
  const std::uint32_t* words;
  std::size_t n;
  __device__ std::uint32_t operator()(std::size_t w) const {
    const std::size_t first = w * 32;
    if (first >= n) return 0;
    const std::uint32_t bits = words[w];
    return n - first >= 32 ? bits : bits & ((1U << (n - first)) - 1U);
  }
};

// ---- scans -------------------------------------------------------------------------------------

__device__ inline unsigned lane_id() { return threadIdx.x % 32; }
__device__ inline unsigned lanes_below() { return (1U << lane_id()) - 1U; }

// Inclusive sum over the warp's lanes.
template <class T>
__device__ inline T warp_inclusive_sum(T x) {
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const T y = __shfl_up_sync(0xffffffffU, x, d);
    if (static_cast<int>(lane_id()) >= d) x += y;
  }
  return x;
}

// The warp writes out the kept items of 32 keep words, one per lane: lane l holds `bits` (its word:
// bit i keeps item first_item(l) + i) and `slot` (the output position of the word's first kept
// item). The warp walks the nonzero words; within a word only the lanes of kept items load, so a
// sector without a kept item is never read. Where the mover splits load and store, the loads of up
// to Batch words are in flight before their stores. SPACE's and Billeter's write-outs.
template <unsigned Batch, class Move, class FirstItem>
__device__ inline void warp_write_words(const Move& move, std::uint32_t bits, unsigned long long slot,
                                        const FirstItem& first_item, std::uint32_t* stage = nullptr) {
  const unsigned lane = lane_id();
  if constexpr (staged_mover<Move>) {
    if (stage) {  // a record of several columns: word by word through shared memory, two in flight
      std::uint32_t* buffers[2] = {stage, stage + Move::buffer_words};
      std::uint32_t* lane_of = stage + 2 * Move::buffer_words;
      unsigned nonzero = __ballot_sync(0xffffffffU, bits != 0);
      int next = nonzero ? __ffs(nonzero) - 1 : -1;
      if (next >= 0) move.stage_word(first_item(next), buffers[0]);
      for (unsigned b = 0; next >= 0; b ^= 1U) {
        const int j = next;
        nonzero &= nonzero - 1;
        next = nonzero ? __ffs(nonzero) - 1 : -1;
        if (next >= 0) {
          move.stage_word(first_item(next), buffers[b ^ 1U]);
          __pipeline_wait_prior(1);
        } else {
          __pipeline_wait_prior(0);
        }
        __syncwarp();
        move.store_word(__shfl_sync(0xffffffffU, bits, j), __shfl_sync(0xffffffffU, slot, j), buffers[b], lane_of);
      }
      return;
    }
  }
  unsigned nonzero = __ballot_sync(0xffffffffU, bits != 0);
  while (nonzero) {
    if constexpr (split_mover<Move>) {
      typename Move::value_type v[Batch];
      unsigned long long to[Batch];
      bool take[Batch];
#pragma unroll
      for (unsigned b = 0; b < Batch; ++b) {
        take[b] = false;
        if (!nonzero) continue;
        const int j = __ffs(nonzero) - 1;
        nonzero &= nonzero - 1;
        const std::uint32_t w = __shfl_sync(0xffffffffU, bits, j);
        to[b] = __shfl_sync(0xffffffffU, slot, j) + __popc(w & lanes_below());
        take[b] = (w >> lane) & 1U;
        if (take[b]) v[b] = move.load(first_item(j) + lane);
      }
#pragma unroll
      for (unsigned b = 0; b < Batch; ++b)
        if (take[b]) move.store(to[b], v[b]);
    } else {
      const int j = __ffs(nonzero) - 1;
      nonzero &= nonzero - 1;
      const std::uint32_t w = __shfl_sync(0xffffffffU, bits, j);
      const unsigned long long to = __shfl_sync(0xffffffffU, slot, j) + __popc(w & lanes_below());
      if ((w >> lane) & 1U) move(to, first_item(j) + lane);
    }
  }
}

// Entries of the per-warp index list of warp_write_out (shared memory, 4 bytes each).
constexpr unsigned write_out_list = 256;

// The warp writes out the kept items of Steps x 32 consecutive keep words: lane l holds bits[q], the
// word of items first_item + 32 (32 q + l) + [0, 32); the kept items go, in item order, to the
// contiguous slots from `base`. Sparse words (at most write_out_list kept items in all) first become
// a list of item offsets in `list` (the warp's own shared memory), then every lane moves items
// list[lane], list[lane + 32], ... with up to Batch loads in flight: the loads of the whole warp's
// kept items are in flight at once and the stores are one coalesced run, where a word-by-word walk
// would wait once per nonzero word. Denser words go word by word (warp_write_words).
template <unsigned Steps, unsigned Batch, class Move>
__device__ inline void warp_write_out(const Move& move, const std::uint32_t (&bits)[Steps], unsigned long long base,
                                      std::size_t first_item, std::uint32_t* list, std::uint32_t* stage = nullptr) {
  const unsigned lane = lane_id();
  unsigned before[Steps];  // kept items of the warp's words before lane's word of step q
  unsigned total = 0;
#pragma unroll
  for (unsigned q = 0; q < Steps; ++q) {
    const unsigned kept = __popc(bits[q]);
    const unsigned through = warp_inclusive_sum(kept);
    before[q] = total + through - kept;
    total += __shfl_sync(0xffffffffU, through, 31);
  }
  if (total <= write_out_list) {
#pragma unroll
    for (unsigned q = 0; q < Steps; ++q) {
      std::uint32_t b = bits[q];
      unsigned at = before[q];
      const std::uint32_t offset = (q * 32 + lane) * 32;
      while (b) {
        list[at++] = offset + (__ffs(b) - 1);
        b &= b - 1;
      }
    }
    __syncwarp();
    for (unsigned j0 = 0; j0 < total; j0 += 32 * Batch) {
      if constexpr (split_mover<Move>) {
        typename Move::value_type v[Batch];
#pragma unroll
        for (unsigned b = 0; b < Batch; ++b) {
          const unsigned j = j0 + 32 * b + lane;
          if (j < total) v[b] = move.load(first_item + list[j]);
        }
#pragma unroll
        for (unsigned b = 0; b < Batch; ++b) {
          const unsigned j = j0 + 32 * b + lane;
          if (j < total) move.store(base + j, v[b]);
        }
      } else {
#pragma unroll
        for (unsigned b = 0; b < Batch; ++b) {
          const unsigned j = j0 + 32 * b + lane;
          if (j < total) move(base + j, first_item + list[j]);
        }
      }
    }
    __syncwarp();  // the list is free for the warp's next call
    return;
  }
#pragma unroll
  for (unsigned q = 0; q < Steps; ++q)
    warp_write_words<Batch>(move, bits[q], base + before[q],
                            [&](int j) { return first_item + (std::size_t{q} * 32 + j) * 32; }, stage);
}

// Sum over the block (blockDim.x == Threads) of one value per thread, to every thread. Uses
// Threads / 32 words of shared memory and two barriers.
template <unsigned Threads, class T>
__device__ inline T block_sum(T x, T* warp_sums) {
#pragma unroll
  for (int d = 16; d >= 1; d /= 2) x += __shfl_xor_sync(0xffffffffU, x, d);
  if (lane_id() == 0) warp_sums[threadIdx.x / 32] = x;
  __syncthreads();
  T sum = 0;
#pragma unroll
  for (unsigned w = 0; w < Threads / 32; ++w) sum += warp_sums[w];
  __syncthreads();
  return sum;
}

// Exclusive sum over the block (blockDim.x == Threads); `total` gets the block's sum. Uses
// Threads / 32 words of shared memory and two barriers.
template <unsigned Threads, class T>
__device__ inline T block_exclusive_sum(T x, T& total, T* warp_sums) {
  constexpr unsigned warps = Threads / 32;
  const T inclusive = warp_inclusive_sum(x);
  const unsigned warp = threadIdx.x / 32;
  if (lane_id() == 31) warp_sums[warp] = inclusive;
  __syncthreads();
  T before = 0, sum = 0;
#pragma unroll
  for (unsigned w = 0; w < warps; ++w) {
    const T s = warp_sums[w];
    before += w < warp ? s : T{0};
    sum += s;
  }
  total = sum;
  __syncthreads();
  return before + inclusive - x;
}

// ---- decoupled look-back -----------------------------------------------------------------------

// Called by one whole warp of tile `tile` with the tile's own count: publishes it, looks back over
// earlier tiles (look_back.cuh), publishes the inclusive prefix and returns the exclusive one (to
// every lane).
__device__ inline unsigned long long look_back(unsigned long long* status, unsigned tile, unsigned long long count) {
  using st = tile_status<unsigned long long>;
  const bool lead = lane_id() == 0;
  if (tile == 0) {
    if (lead) publish(status[0], st::prefix, count);
    return 0;
  }
  if (lead) publish(status[tile], st::aggregate, count);
  const unsigned long long exclusive = look_back_prefix<32>(status, 1, tile);
  if (lead) publish(status[tile], st::prefix, exclusive + count);
  return exclusive;
}

}  // namespace sieve::detail
