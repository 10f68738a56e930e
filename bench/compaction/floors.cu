// The two floors every CUDA compaction result is read against, measured in the same run:
// the device-to-device copy bandwidth (the ceiling of any O(n) pass), and the O(k) floor of removal
// from an index list: a kernel that reads R and the red zone and scatters the k writes
// A[R[i]] = A[z + i], and nothing else (it does not compact correctly; it is the least any
// removal must do).
#include "measure.hpp"

#include <sieve/compaction/cuda_check.hpp>
#include <sieve/compaction/cuda_device.hpp>

#include <cuda_runtime.h>

namespace sieve::bench {
namespace {

template <class T>
__global__ void floor_kernel(const std::uint32_t* __restrict__ R, std::size_t k, std::size_t z, T* items) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < k; i += stride)
    items[R[i]] = items[z + i];
}

template <unsigned W>
struct bytes_of {
  unsigned char b[W];
};

// Median-ready samples of f() timed with events, after the plan's warm-up runs.
template <class F>
std::vector<double> time_runs(const timing_plan& plan, F&& f) {
  cuda::event_timer t;
  std::vector<double> ms;
  for (int r = 0; r < plan.warmup + plan.repeats; ++r) {
    t.start();
    f();
    const double elapsed = t.stop_ms();
    if (r >= plan.warmup) ms.push_back(elapsed);
  }
  return ms;
}

}  // namespace

double device_copy_gbps(std::size_t bytes, timing_plan plan) {
  void *a = nullptr, *b = nullptr;
  SIEVE_CUDA_CHECK(cudaMalloc(&a, bytes));
  SIEVE_CUDA_CHECK(cudaMalloc(&b, bytes));
  SIEVE_CUDA_CHECK(cudaMemset(a, 1, bytes));
  const stats s = summarize(time_runs(plan, [&] { SIEVE_CUDA_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); }));
  cudaFree(a);
  cudaFree(b);
  return 2.0 * static_cast<double>(bytes) / (s.median * 1e6);  // read + written
}

stats measure_removal_floor(const bench_case& c, void* items, const std::uint32_t* r, std::size_t k, timing_plan plan) {
  const std::size_t n = c.n, z = n - k, w = c.type.width;
  const unsigned threads = 256, blocks = static_cast<unsigned>(std::min<std::size_t>((k + threads - 1) / threads, 132 * 16) + 1);
  auto launch = [&] {
    switch (w) {
      case 1: floor_kernel<<<blocks, threads>>>(r, k, z, static_cast<std::uint8_t*>(items)); break;
      case 2: floor_kernel<<<blocks, threads>>>(r, k, z, static_cast<std::uint16_t*>(items)); break;
      case 4: floor_kernel<<<blocks, threads>>>(r, k, z, static_cast<std::uint32_t*>(items)); break;
      case 8: floor_kernel<<<blocks, threads>>>(r, k, z, static_cast<std::uint64_t*>(items)); break;
      default: floor_kernel<<<blocks, threads>>>(r, k, z, static_cast<bytes_of<32>*>(items)); break;
    }
    SIEVE_CUDA_CHECK(cudaGetLastError());
  };
  return summarize(time_runs(plan, launch));
}

}  // namespace sieve::bench
