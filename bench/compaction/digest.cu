// device_digest: a grid-stride pass over the output rows, the same row_hash / position_hash as the
// host's expected digest (digest.hpp), a warp-shuffle sum, one 64-bit atomicAdd per warp and sum.
// Sums are taken mod 2^64, so the result does not depend on the order of the atomics.
#include "digest_cuda.hpp"

#include <sieve/compaction/cuda_check.hpp>
#include <sieve/compaction/error.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <string>

namespace sieve::bench {
namespace {

template <unsigned W>
struct alignas(W >= 16 ? 16 : W) row_bytes {
  unsigned char b[W];
};

template <unsigned W>
__global__ void digest_kernel(const row_bytes<W>* __restrict__ rows, std::size_t m, unsigned long long* sums) {
  std::uint64_t ordered = 0, unordered = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t j = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < m; j += stride) {
    const row_bytes<W> r = rows[j];
    add_row(row_hash(r.b, W), j, ordered, unordered);
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    ordered += __shfl_down_sync(0xFFFFFFFFu, ordered, offset);
    unordered += __shfl_down_sync(0xFFFFFFFFu, unordered, offset);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&sums[0], static_cast<unsigned long long>(ordered));
    atomicAdd(&sums[1], static_cast<unsigned long long>(unordered));
  }
}

template <unsigned W>
void launch(const void* rows, std::size_t m, std::uint64_t* d_sums) {
  constexpr unsigned threads = 256;
  const auto blocks = static_cast<unsigned>(std::min<std::size_t>((m + threads - 1) / threads, 4096));
  digest_kernel<W><<<blocks, threads>>>(static_cast<const row_bytes<W>*>(rows), m,
                                        reinterpret_cast<unsigned long long*>(d_sums));
}

}  // namespace

row_digest device_digest(const void* rows, std::size_t m, std::uint32_t width, std::uint64_t* d_sums) {
  SIEVE_CUDA_CHECK(cudaMemsetAsync(d_sums, 0, 2 * sizeof(std::uint64_t)));
  if (m) {
    switch (width) {
      case 1: launch<1>(rows, m, d_sums); break;
      case 2: launch<2>(rows, m, d_sums); break;
      case 4: launch<4>(rows, m, d_sums); break;
      case 8: launch<8>(rows, m, d_sums); break;
      case 32: launch<32>(rows, m, d_sums); break;
      default:
        throw error("device_digest: rows of " + std::to_string(width) + " bytes; the widths it takes: 1, 2, 4, 8, 32");
    }
    SIEVE_CUDA_CHECK(cudaGetLastError());
  }
  std::uint64_t sums[2] = {0, 0};
  SIEVE_CUDA_CHECK(cudaMemcpy(sums, d_sums, sizeof sums, cudaMemcpyDeviceToHost));
  return {sums[0], sums[1]};
}

}  // namespace sieve::bench
