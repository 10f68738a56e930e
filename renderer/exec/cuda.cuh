// exec::cuda: the parallel_for shim as a CUDA kernel launch (see exec.hpp). Include from .cu files.
#pragma once

#include "exec.hpp"

#include <sieve/compaction/cuda_check.hpp>
#include <sieve/compaction/cuda_device.hpp>

#include <cuda_runtime.h>

namespace sieve::exec {

struct cuda {
  cudaStream_t stream = nullptr;
};

namespace detail {
template <class Index, class F>
__global__ void parallel_for_kernel(std::size_t n, F body) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    body(static_cast<Index>(i));
}
}  // namespace detail

template <class Index = std::uint32_t, class F>
void parallel_for(cuda e, const char* name, std::size_t n, const F& body) {
  check_index_range<Index>(name, n);
  if (n == 0) return;
  const stage_range range(name);  // around the launch: the host side of the stage
  constexpr unsigned threads = 256;
  const std::size_t want = (n + threads - 1) / threads, most = static_cast<std::size_t>(sieve::cuda::sm_count()) * 16;
  detail::parallel_for_kernel<Index><<<static_cast<unsigned>(want < most ? want : most), threads, 0, e.stream>>>(n, body);
  SIEVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace sieve::exec
