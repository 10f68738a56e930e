// Host-callable helpers of device.cuh that launch kernels.
#include "device.cuh"

namespace sieve::detail {
namespace {
__global__ void write_count(std::uint64_t* d_count, std::uint64_t value) { *d_count = value; }
}  // namespace

void write_count_async(std::uint64_t* d_count, std::uint64_t value, cudaStream_t stream) {
  write_count<<<1, 1, 0, stream>>>(d_count, value);
  SIEVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace sieve::detail
