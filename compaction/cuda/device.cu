// Host-callable helpers of device.cuh that launch kernels.
#include "device.cuh"

namespace sieve::detail {
namespace {
__global__ void write_count(std::uint64_t* d_count, std::uint64_t value) { *d_count = value; }

__global__ void mark_removed(const std::uint32_t* R, live_count live_k, std::uint8_t* stencil) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t k = live_k.get();
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < k; i += stride)
    stencil[R[i]] = 0;
}

__global__ void check_removed(const std::uint32_t* R, std::size_t k, std::size_t n, std::uint32_t* seen,
                              unsigned long long* found) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < k; i += stride) {
    const std::uint32_t x = R[i];
    if (x >= n) {
      atomicMin(&found[0], static_cast<unsigned long long>(i));
      continue;
    }
    const std::uint32_t bit = 1u << (x % 32);
    if (atomicOr(&seen[x / 32], bit) & bit) atomicMin(&found[1], static_cast<unsigned long long>(i));
  }
}

__global__ void gather(const std::uint64_t* index, const std::uint64_t* count, device_mover move) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t m = *count;
  for (std::size_t j = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < m; j += stride)
    move(j, index[j]);
}
}  // namespace

void write_count_async(std::uint64_t* d_count, std::uint64_t value, cudaStream_t stream) {
  write_count<<<1, 1, 0, stream>>>(d_count, value);
  SIEVE_CUDA_CHECK(cudaGetLastError());
}

void check_removals_async(const std::uint32_t* R, std::size_t k, std::size_t n, std::uint32_t* seen,
                          unsigned long long* found, cudaStream_t stream) {
  SIEVE_CUDA_CHECK(cudaMemsetAsync(seen, 0, (n + 31) / 32 * sizeof(std::uint32_t), stream));
  const unsigned long long none[2] = {k, k};
  SIEVE_CUDA_CHECK(cudaMemcpyAsync(found, none, sizeof none, cudaMemcpyHostToDevice, stream));
  if (k == 0) return;
  check_removed<<<grid_blocks(k, 256), 256, 0, stream>>>(R, k, n, seen, found);
  SIEVE_CUDA_CHECK(cudaGetLastError());
}

void mark_removals_async(const std::uint32_t* R, live_count k, std::size_t n, std::uint8_t* stencil,
                         cudaStream_t stream) {
  SIEVE_CUDA_CHECK(cudaMemsetAsync(stencil, 1, n, stream));
  if (k.capacity == 0) return;
  mark_removed<<<grid_blocks(k.capacity, 256), 256, 0, stream>>>(R, k, stencil);
  SIEVE_CUDA_CHECK(cudaGetLastError());
}

void gather_columns_async(const record& in, const record& out, const std::uint64_t* index,
                          const std::uint64_t* d_count, std::byte* copy, cudaStream_t stream) {
  const std::size_t n = in.size();
  if (n == 0) return;
  for (std::size_t c = 0; c < in.columns(); ++c) {
    column src = in[c];
    if (copy) {
      SIEVE_CUDA_CHECK(cudaMemcpyAsync(copy, src.data, n * src.width, cudaMemcpyDeviceToDevice, stream));
      src.data = copy;
    }
    const column dst = out[c];
    const device_mover move{device_record::of(record(std::span(&src, 1), n)),
                            device_record::of(record(std::span(&dst, 1), n))};
    gather<<<grid_blocks(n, 256), 256, 0, stream>>>(index, d_count, move);
    SIEVE_CUDA_CHECK(cudaGetLastError());
  }
}

}  // namespace sieve::detail
