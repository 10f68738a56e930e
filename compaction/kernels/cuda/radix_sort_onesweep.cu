// radix sort, onesweep (CUDA): Adinets & Merrill, "Onesweep: A Faster Least Significant Digit Radix
// Sort for GPUs" (2022), for (u32 key, u32 value) pairs over a bit range, 8-bit digits.
//   1. One histogram pass reads the keys once and counts every digit of every pass (shared-memory
//      histograms per block, added into one global table).
//   2. Per digit, one pass over tiles of `threads * items` pairs. A block takes the next tile from an
//      atomic counter, loads its keys warp-striped (item j of lane l of warp w at w*32*items + 32 j + l,
//      so every load is coalesced and the warp's order is the input order), and ranks them within the
//      warp (warp_rank.cuh, shared with the multisplit). Per-warp counts become per-tile counts, which the tile
//      publishes for its successors and then looks back over its predecessors (decoupled look-back,
//      one digit per thread) to find where its share of each digit starts in the output. Tile 0 starts
//      from the global histogram's exclusive prefix. The keys go to shared memory in sorted order and
//      leave it in order, each to its digit's global offset: runs of equal digits write contiguously.
//      The values take the same shared slots after them.
// Statuses are 32-bit (2 flag bits, 30 bits of count), so n < 2^30. Stable; out of place: the first
// pass reads the inputs, the passes then alternate between the output and a buffer in the workspace
// so that the last one writes the output.
//
// The pass kernel is a template over its shape (threads, items per thread, early counts, staging of
// the values); ten shapes (these and the look-back window) were measured on an H100
// (bench/results/h100-80gb-hbm3/sort-variants.csv) and the fastest is built: 384 threads x 18 pairs, values staged
// through the keys' array, one status per look-back step. It stays latency-bound (ncu: shared-memory
// scoreboard stalls of the per-item ranking, 24 warps per SM): 0.66x cub at 2^26.
#include "internal/device.cuh"
#include "internal/look_back.cuh"
#include "internal/select_common.cuh"
#include "internal/warp_rank.cuh"

#include "internal/radix_sort_table.hpp"

#include <iterator>

namespace sieve::detail {
namespace {

constexpr unsigned threads = 256;  // of the histogram kernel
constexpr unsigned radix = 256;
constexpr unsigned max_passes = 4;

// Per digit and tile: 2 flag bits, 30 bits of count (look_back.cuh).
using status_word = tile_status<std::uint32_t>;

struct pass_digit {
  unsigned shift, mask;
  __device__ unsigned operator()(std::uint32_t key) const { return (key >> shift) & mask; }
};

__host__ __device__ inline pass_digit digit_of_pass(int begin_bit, int end_bit, unsigned pass) {
  const unsigned shift = static_cast<unsigned>(begin_bit) + 8 * pass;
  const unsigned bits = static_cast<unsigned>(end_bit) - shift < 8 ? static_cast<unsigned>(end_bit) - shift : 8;
  return {shift, (1U << bits) - 1U};
}

// ---- 1. every pass's histogram --------------------------------------------------------------------

__global__ void __launch_bounds__(threads) histogram(const std::uint32_t* __restrict__ keys, std::uint32_t n,
                                                      int begin_bit, int end_bit, unsigned passes,
                                                      std::uint32_t* __restrict__ hist, bool vector_ok) {
  __shared__ std::uint32_t h[max_passes][radix];
  for (unsigned i = threadIdx.x; i < max_passes * radix; i += threads) (&h[0][0])[i] = 0;
  __syncthreads();
  pass_digit digit[max_passes];
#pragma unroll
  for (unsigned p = 0; p < max_passes; ++p) digit[p] = digit_of_pass(begin_bit, end_bit, p < passes ? p : 0);
  auto count = [&](std::uint32_t key) {
#pragma unroll
    for (unsigned p = 0; p < max_passes; ++p)
      if (p < passes) atomicAdd(&h[p][digit[p](key)], 1U);
  };
  const std::uint32_t stride = gridDim.x * threads;
  std::uint32_t scalar_from = 0;
  if (vector_ok) {
    const std::uint32_t quads = n / 4;
    const auto* q = reinterpret_cast<const uint4*>(keys);
    for (std::uint32_t i = blockIdx.x * threads + threadIdx.x; i < quads; i += stride) {
      const uint4 v = q[i];
      count(v.x);
      count(v.y);
      count(v.z);
      count(v.w);
    }
    scalar_from = quads * 4;
  }
  for (std::uint32_t i = scalar_from + blockIdx.x * threads + threadIdx.x; i < n; i += stride) count(keys[i]);
  __syncthreads();
  for (unsigned i = threadIdx.x; i < passes * radix; i += threads) {
    const std::uint32_t c = (&h[0][0])[i];
    if (c) atomicAdd(&hist[i], c);
  }
}

// ---- 2. one pass per digit ----------------------------------------------------------------------------

// Where a tile's values wait while its keys are written out:
//   two_stage    loaded with the keys, staged in a shared array of their own, written beside the keys;
//   single_regs  loaded with the keys, staged through the keys' array once the keys are out (each
//                slot's destination kept in registers);
//   single_late  loaded only once the keys sit in shared memory (fewer registers), staged through the
//                keys' array (each slot's digit kept in shared memory).
enum class staging { two_stage, single_regs, single_late };

template <unsigned Threads, unsigned Items, staging Stage>
struct pass_storage {
  static constexpr unsigned warps = Threads / 32;
  std::uint32_t keys[Threads * Items];  // the tile's keys in sorted order (single_*: then its values)
  std::uint32_t values[Stage == staging::two_stage ? Threads * Items : 1];
  std::uint8_t slot_digit[Stage == staging::single_late ? Threads * Items : 4];
  // Per warp and digit: the running count while ranking, then the slot of the warp's first pair of
  // that digit in the tile.
  alignas(16) std::uint16_t warp_start[warps][radix];
  std::uint32_t block_count[radix];   // early counts: the tile's pairs per digit, before ranking
  std::uint32_t global_shift[radix];  // the digit's output offset minus its first slot in the tile
  std::uint32_t warp_sums[warps];
  unsigned tile;
};

// One digit pass over the tile the block takes. Early: count the tile's digits with shared-memory
// atomics before ranking, so the tile's aggregate is published before its ranking step.
// MinBlocks: blocks per SM the registers must allow. Each digit thread looks back alone
// (look_back_prefix<1>: one status a step).
template <unsigned Threads, unsigned Items, bool Early, unsigned MinBlocks, staging Stage>
__global__ void __launch_bounds__(Threads, MinBlocks) onesweep_pass(
    const std::uint32_t* __restrict__ keys_in, std::uint32_t* __restrict__ keys_out,
    const std::uint32_t* __restrict__ values_in, std::uint32_t* __restrict__ values_out, std::uint32_t n,
    pass_digit digit, const std::uint32_t* __restrict__ hist, unsigned* counter, std::uint32_t* status) {
  constexpr unsigned warps = Threads / 32;
  constexpr std::uint32_t tile_items = Threads * Items;
  __shared__ pass_storage<Threads, Items, Stage> s;
  const unsigned tile = take_tile(counter, &s.tile);
  const unsigned lane = lane_id(), warp = threadIdx.x / 32;
  for (unsigned i = threadIdx.x; i < warps * radix / 2; i += Threads) reinterpret_cast<std::uint32_t*>(&s.warp_start[0][0])[i] = 0;
  if (Early)
    for (unsigned i = threadIdx.x; i < radix; i += Threads) s.block_count[i] = 0;

  // Keys (and values), warp-striped; the values' loads stay in flight while the keys are ranked.
  const std::uint32_t base = tile * tile_items;
  const std::uint32_t warp_base = base + warp * 32 * Items + lane;
  std::uint32_t key[Items], value[Items];
#pragma unroll
  for (unsigned j = 0; j < Items; ++j) {
    const std::uint32_t i = warp_base + 32 * j;
    key[j] = i < n ? keys_in[i] : 0;
  }
  auto load_values = [&] {
#pragma unroll
    for (unsigned j = 0; j < Items; ++j) {
      const std::uint32_t i = warp_base + 32 * j;
      value[j] = i < n ? values_in[i] : 0;
    }
  };
  if constexpr (Stage != staging::single_late) load_values();
  // Past n: digit 255, ranked after every real pair of the tile, never written.
  auto digit_of = [&](unsigned j) { return warp_base + 32 * j < n ? digit(key[j]) : radix - 1; };
  __syncthreads();

  const bool digit_thread = threadIdx.x < radix;
  const unsigned d = threadIdx.x;  // the digit this thread looks back for, when digit_thread
  std::uint32_t count = 0;         // pairs of digit d in the tile
  if constexpr (Early) {
#pragma unroll
    for (unsigned j = 0; j < Items; ++j) atomicAdd(&s.block_count[digit_of(j)], 1U);
    __syncthreads();
    if (digit_thread) {
      count = s.block_count[d];
      if (tile > 0) publish(status[tile * radix + d], status_word::aggregate, count);
    }
  }

  // Rank within the warp, in input order.
  std::uint32_t rank[Items];
  warp_rank<Items>(s.warp_start[warp], digit_of, rank);
  __syncthreads();

  // Digit threads: the tile's count of the digit (not Early), published; its first slot in the tile,
  // and each warp's first slot for it.
  if constexpr (!Early) {
    if (digit_thread) {
#pragma unroll
      for (unsigned w = 0; w < warps; ++w) count += s.warp_start[w][d];
      if (tile > 0) publish(status[tile * radix + d], status_word::aggregate, count);
    }
  }
  std::uint32_t tile_total;
  const std::uint32_t local = block_exclusive_sum<Threads>(count, tile_total, s.warp_sums);
  if (digit_thread) warp_counts_to_slots<warps>(s.warp_start, d, local);

  std::uint32_t before_tile = 0;  // pairs of digit d in the output before this tile's
  if (tile == 0) {
    std::uint32_t all;
    before_tile = block_exclusive_sum<Threads>(digit_thread ? hist[d] : 0U, all, s.warp_sums);
    if (digit_thread) publish(status[d], status_word::prefix, before_tile + count);
  } else if (digit_thread) {
    before_tile = look_back_prefix<1>(status + d, radix, tile);
    publish(status[tile * radix + d], status_word::prefix, before_tile + count);
  }
  if (digit_thread) s.global_shift[d] = before_tile - local;
  __syncthreads();

  // Keys into shared memory in sorted order, then out in order: slot i goes to global_shift[digit] + i,
  // so each digit's run in the tile is written contiguously. The values take the same slots.
#pragma unroll
  for (unsigned j = 0; j < Items; ++j) {
    rank[j] += s.warp_start[warp][digit_of(j)];
    s.keys[rank[j]] = key[j];
    if constexpr (Stage == staging::two_stage) s.values[rank[j]] = value[j];
  }
  __syncthreads();
  const std::uint32_t valid = n - base < tile_items ? n - base : tile_items;
  if constexpr (Stage == staging::two_stage) {
#pragma unroll
    for (unsigned j = 0; j < Items; ++j) {
      const std::uint32_t i = j * Threads + threadIdx.x;
      if (i < valid) {
        const std::uint32_t k = s.keys[i];
        const std::uint32_t to = s.global_shift[digit(k)] + i;
        keys_out[to] = k;
        values_out[to] = s.values[i];
      }
    }
  } else if constexpr (Stage == staging::single_late) {
    load_values();
#pragma unroll
    for (unsigned j = 0; j < Items; ++j) {
      const std::uint32_t i = j * Threads + threadIdx.x;
      if (i < valid) {
        const std::uint32_t k = s.keys[i];
        const unsigned dk = digit(k);
        s.slot_digit[i] = static_cast<std::uint8_t>(dk);
        keys_out[s.global_shift[dk] + i] = k;
      }
    }
    __syncthreads();
#pragma unroll
    for (unsigned j = 0; j < Items; ++j) s.keys[rank[j]] = value[j];
    __syncthreads();
#pragma unroll
    for (unsigned j = 0; j < Items; ++j) {
      const std::uint32_t i = j * Threads + threadIdx.x;
      if (i < valid) values_out[s.global_shift[s.slot_digit[i]] + i] = s.keys[i];
    }
  } else {
    std::uint32_t to[Items];
#pragma unroll
    for (unsigned j = 0; j < Items; ++j) {
      const std::uint32_t i = j * Threads + threadIdx.x;
      to[j] = 0;
      if (i < valid) {
        const std::uint32_t k = s.keys[i];
        to[j] = s.global_shift[digit(k)] + i;
        keys_out[to[j]] = k;
      }
    }
    __syncthreads();
#pragma unroll
    for (unsigned j = 0; j < Items; ++j) s.keys[rank[j]] = value[j];
    __syncthreads();
#pragma unroll
    for (unsigned j = 0; j < Items; ++j) {
      const std::uint32_t i = j * Threads + threadIdx.x;
      if (i < valid) values_out[to[j]] = s.keys[i];
    }
  }
}

// ---- host side --------------------------------------------------------------------------------------

struct layout {
  unsigned passes, tiles;
  std::size_t alt_keys, alt_values, hist, counters, status, zeroed_bytes, total;
};

layout layout_of(const cuda_sort_call& c, std::size_t tile) {
  layout l{};
  l.passes = static_cast<unsigned>((c.end_bit - c.begin_bit + 7) / 8);
  l.tiles = static_cast<unsigned>((c.n + tile - 1) / tile);
  const std::size_t buffer = l.passes > 1 ? align_up(4 * c.n) : 0;
  l.alt_keys = 0;
  l.alt_values = buffer;
  l.hist = 2 * buffer;
  l.counters = l.hist + align_up(std::size_t{4} * radix * max_passes);
  l.status = l.counters + 256;
  const std::size_t status_bytes = std::size_t{4} * radix * l.tiles * l.passes;
  l.zeroed_bytes = l.status + status_bytes - l.hist;
  l.total = l.status + align_up(status_bytes);
  return l;
}

template <unsigned Threads, unsigned Items, bool Early, unsigned MinBlocks, staging Stage>
void sort(const cuda_sort_call& c) {
  const layout l = layout_of(c, Threads * Items);
  auto* ws = static_cast<std::byte*>(c.workspace);
  auto* hist = reinterpret_cast<std::uint32_t*>(ws + l.hist);
  auto* counters = reinterpret_cast<unsigned*>(ws + l.counters);
  auto* status = reinterpret_cast<std::uint32_t*>(ws + l.status);
  SIEVE_CUDA_CHECK(cudaMemsetAsync(ws + l.hist, 0, l.zeroed_bytes, c.stream));

  const auto n = static_cast<std::uint32_t>(c.n);
  const bool vector_ok = reinterpret_cast<std::uintptr_t>(c.keys_in) % 16 == 0;
  histogram<<<grid_blocks(c.n / 4 + 1, threads, 4), threads, 0, c.stream>>>(c.keys_in, n, c.begin_bit, c.end_bit,
                                                                           l.passes, hist, vector_ok);
  SIEVE_CUDA_CHECK(cudaGetLastError());

  auto* alt_keys = reinterpret_cast<std::uint32_t*>(ws + l.alt_keys);
  auto* alt_values = reinterpret_cast<std::uint32_t*>(ws + l.alt_values);
  const std::uint32_t* from_keys = c.keys_in;
  const std::uint32_t* from_values = c.values_in;
  for (unsigned p = 0; p < l.passes; ++p) {
    // The last pass writes the output; the ones before alternate so that it does.
    const bool to_output = (l.passes - 1 - p) % 2 == 0;
    std::uint32_t* to_keys = to_output ? c.keys_out : alt_keys;
    std::uint32_t* to_values = to_output ? c.values_out : alt_values;
    onesweep_pass<Threads, Items, Early, MinBlocks, Stage><<<l.tiles, Threads, 0, c.stream>>>(
        from_keys, to_keys, from_values, to_values, n, digit_of_pass(c.begin_bit, c.end_bit, p), hist + p * radix,
        counters + p, status + std::size_t{p} * radix * l.tiles);
    SIEVE_CUDA_CHECK(cudaGetLastError());
    from_keys = to_keys;
    from_values = to_values;
  }
}

// The pass kernel's shape: the fastest of the ten measured on an H100
// (bench/results/h100-80gb-hbm3/sort-variants.csv; the others are in the git history).
constexpr unsigned pass_threads = 384, pass_items = 18;

}  // namespace

std::size_t cuda_radix_sort_onesweep(const cuda_sort_call& c) {
  if (c.query) return layout_of(c, std::size_t{pass_threads} * pass_items).total;
  // threads, items, early counts, blocks per SM, staging
  sort<pass_threads, pass_items, false, 2, staging::single_regs>(c);
  return 0;
}

}  // namespace sieve::detail
