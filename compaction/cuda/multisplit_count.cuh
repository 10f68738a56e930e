// The counting pass of the multisplit designs that need every bucket's total before they move
// anything (onesweep, atomic), and what they share around it (not installed): one read of the id
// column, counts per bin (in registers for few buckets, else per-warp shared-memory histograms) added
// into one global table of bins, and in checked mode the first item whose id is out of range (as ~i,
// atomicMax: 0 means none).
#pragma once

#include "device.cuh"
#include "select_common.cuh"

#include "../src/multisplit_table.hpp"

#include <sieve/compaction/cuda.hpp>

#include <cstdint>

namespace sieve::detail {
namespace {  // each design's translation unit has its own copy of the kernel

constexpr unsigned count_threads = 256;
constexpr unsigned count_warps = count_threads / 32;

// Few > 0 (bins <= Few): each thread counts its ids per bin in registers, four at a time (a byte
// compare of a word against the bin, __vcmpeq4, and a population count), and each warp adds its sums
// once: no shared-memory atomics, whose same-address conflicts serialise a warp when the buckets are
// few. Few == 0: per-warp histograms in shared memory, one atomic per id.
template <unsigned Few>
__global__ void __launch_bounds__(count_threads)
    count_bins(const std::uint8_t* __restrict__ ids, live_count live, unsigned buckets, bool checked,
               std::uint32_t* __restrict__ hist, unsigned long long* bad) {
  __shared__ std::uint32_t h[Few ? 1 : count_warps][256];
  if constexpr (Few == 0) {
    for (unsigned i = threadIdx.x; i < count_warps * 256; i += count_threads) (&h[0][0])[i] = 0;
    __syncthreads();
  }
  const std::uint64_t n = live.get();
  std::uint32_t* mine = h[Few ? 0 : threadIdx.x / 32];
  std::uint32_t reg[Few + 1] = {};  // Few: per bin, then the ids out of range
  unsigned long long first_bad = 0;
  auto note_bad = [&](unsigned id, std::uint64_t i) {
    if (id >= buckets && checked && first_bad == 0) first_bad = ~static_cast<unsigned long long>(i);
  };
  // Four ids in a word, the first of them item `first`.
  auto count_word = [&](std::uint32_t w, std::uint64_t first) {
    if constexpr (Few > 0) {
      unsigned in_range = 0;
#pragma unroll
      for (unsigned b = 0; b < Few; ++b) {
        const unsigned m = b < buckets ? __popc(__vcmpeq4(w, b * 0x01010101U)) / 8 : 0U;
        reg[b] += m;
        in_range += m;
      }
      if (in_range < 4) {
        reg[Few] += 4 - in_range;
        for (unsigned k = 0; k < 4; ++k) note_bad((w >> (8 * k)) & 0xFFU, first + k);
      }
    } else {
      for (unsigned k = 0; k < 4; ++k) {
        const unsigned id = (w >> (8 * k)) & 0xFFU;
        note_bad(id, first + k);
        atomicAdd(&mine[multisplit_bin(id, buckets)], 1U);
      }
    }
  };
  const std::uint64_t stride = std::uint64_t{gridDim.x} * count_threads;
  // Sixteen ids a load where the column is 16-byte aligned.
  std::uint64_t scalar_from = 0;
  if (reinterpret_cast<std::uintptr_t>(ids) % 16 == 0) {
    const std::uint64_t quads = n / 16;
    const auto* q = reinterpret_cast<const uint4*>(ids);
    for (std::uint64_t v = blockIdx.x * count_threads + threadIdx.x; v < quads; v += stride) {
      const uint4 x = q[v];
      count_word(x.x, v * 16);
      count_word(x.y, v * 16 + 4);
      count_word(x.z, v * 16 + 8);
      count_word(x.w, v * 16 + 12);
    }
    scalar_from = quads * 16;
  }
  // The rest one id at a time, as a word whose other three bytes are bin 0, taken back off.
  for (std::uint64_t i = scalar_from + blockIdx.x * count_threads + threadIdx.x; i < n; i += stride) {
    count_word(ids[i], i);
    if constexpr (Few > 0) reg[0] -= 3;
    else atomicSub(&mine[0], 3U);
  }
  if (first_bad) atomicMax(bad, first_bad);
  if constexpr (Few > 0) {
#pragma unroll
    for (unsigned b = 0; b <= Few; ++b) {
      std::uint32_t c = reg[b];
#pragma unroll
      for (int d = 16; d >= 1; d /= 2) c += __shfl_xor_sync(0xffffffffU, c, d);
      const unsigned bin = b < Few ? b : buckets;  // ids out of range: the bin after the last bucket
      if (lane_id() == 0 && c) atomicAdd(&hist[bin], c);
    }
  } else {
    __syncthreads();
    for (unsigned b = threadIdx.x; b < 256; b += count_threads) {
      std::uint32_t c = 0;
#pragma unroll
      for (unsigned w = 0; w < count_warps; ++w) c += h[w][b];
      if (c) atomicAdd(&hist[b], c);
    }
  }
}

// Enqueues count_bins over the live items into hist (256 zeroed words).
inline void count_bins_async(const cuda_multisplit_call& c, std::uint32_t* hist, unsigned long long* bad) {
  const unsigned blocks = grid_blocks(c.capacity / 16 + 1, count_threads, 4);
  const live_count live{c.d_live, c.capacity};
  // Registers for up to 8 buckets (4 compares a word for up to 4), shared memory beyond.
  if (c.buckets <= 4)
    count_bins<4><<<blocks, count_threads, 0, c.stream>>>(c.ids, live, c.buckets, c.checked, hist, bad);
  else if (c.buckets <= 8)
    count_bins<8><<<blocks, count_threads, 0, c.stream>>>(c.ids, live, c.buckets, c.checked, hist, bad);
  else
    count_bins<0><<<blocks, count_threads, 0, c.stream>>>(c.ids, live, c.buckets, c.checked, hist, bad);
  SIEVE_CUDA_CHECK(cudaGetLastError());
}

// Every offset invalid: what a checked split that found a bad id leaves (threads of one block).
__device__ inline void write_invalid_offsets(std::uint64_t* offsets, unsigned buckets) {
  for (unsigned b = threadIdx.x; b <= buckets; b += blockDim.x) offsets[b] = cuda::invalid_count;
}

}  // namespace
}  // namespace sieve::detail
