// The counting pass of the multisplit designs that need every bucket's total before they move
// anything (onesweep, atomic), and what they share around it (not installed): one read of the id
// column, per-warp histograms in shared memory added into one global table of bins, and in checked
// mode the first item whose id is out of range (as ~i, atomicMax: 0 means none).
#pragma once

#include "device.cuh"
#include "select_common.cuh"

#include "multisplit_table.hpp"

#include <sieve/compaction/cuda.hpp>

#include <cstdint>

namespace sieve::detail {
namespace {  // each design's translation unit has its own copy of the kernel

constexpr unsigned count_threads = 256;
constexpr unsigned count_warps = count_threads / 32;

__global__ void __launch_bounds__(count_threads)
    count_bins(const std::uint8_t* __restrict__ ids, live_count live, unsigned buckets, bool checked,
               std::uint32_t* __restrict__ hist, unsigned long long* bad) {
  __shared__ std::uint32_t h[count_warps][256];
  for (unsigned i = threadIdx.x; i < count_warps * 256; i += count_threads) (&h[0][0])[i] = 0;
  __syncthreads();
  const std::uint64_t n = live.get();
  std::uint32_t* mine = h[threadIdx.x / 32];
  unsigned long long first_bad = 0;
  auto count = [&](unsigned id, std::uint64_t i) {
    if (id >= buckets && checked && first_bad == 0) first_bad = ~static_cast<unsigned long long>(i);
    atomicAdd(&mine[multisplit_bin(id, buckets)], 1U);
  };
  const std::uint64_t stride = std::uint64_t{gridDim.x} * count_threads;
  // Sixteen ids a load where the column is 16-byte aligned.
  std::uint64_t scalar_from = 0;
  if (reinterpret_cast<std::uintptr_t>(ids) % 16 == 0) {
    const std::uint64_t quads = n / 16;
    const auto* q = reinterpret_cast<const uint4*>(ids);
    for (std::uint64_t v = blockIdx.x * count_threads + threadIdx.x; v < quads; v += stride) {
      const uint4 x = q[v];
      const std::uint32_t w[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
      for (unsigned k = 0; k < 16; ++k) count((w[k / 4] >> (8 * (k % 4))) & 0xFFU, v * 16 + k);
    }
    scalar_from = quads * 16;
  }
  for (std::uint64_t i = scalar_from + blockIdx.x * count_threads + threadIdx.x; i < n; i += stride) count(ids[i], i);
  if (first_bad) atomicMax(bad, first_bad);
  __syncthreads();
  for (unsigned b = threadIdx.x; b < 256; b += count_threads) {
    std::uint32_t c = 0;
#pragma unroll
    for (unsigned w = 0; w < count_warps; ++w) c += h[w][b];
    if (c) atomicAdd(&hist[b], c);
  }
}

// Enqueues count_bins over the live items into hist (256 zeroed words).
inline void count_bins_async(const cuda_multisplit_call& c, std::uint32_t* hist, unsigned long long* bad) {
  count_bins<<<grid_blocks(c.capacity / 16 + 1, count_threads, 4), count_threads, 0, c.stream>>>(
      c.ids, live_count{c.d_live, c.capacity}, c.buckets, c.checked, hist, bad);
  SIEVE_CUDA_CHECK(cudaGetLastError());
}

// Every offset invalid: what a checked split that found a bad id leaves (threads of one block).
__device__ inline void write_invalid_offsets(std::uint64_t* offsets, unsigned buckets) {
  for (unsigned b = threadIdx.x; b <= buckets; b += blockDim.x) offsets[b] = cuda::invalid_count;
}

}  // namespace
}  // namespace sieve::detail
