// A pair of CUDA events around a region of a stream (the default one unless named), for the CUDA benchmarks.
#pragma once

#include <sieve/compaction/cuda_check.hpp>

#include <cuda_runtime_api.h>

namespace sieve::bench {

class event_timer {
 public:
  explicit event_timer(cudaStream_t stream = nullptr) : stream_(stream) {
    SIEVE_CUDA_CHECK(cudaEventCreate(&start_));
    SIEVE_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~event_timer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  event_timer(const event_timer&) = delete;
  event_timer& operator=(const event_timer&) = delete;

  void start() { SIEVE_CUDA_CHECK(cudaEventRecord(start_, stream_)); }
  // Milliseconds since start(), once the work in between has finished.
  float stop_ms() {
    SIEVE_CUDA_CHECK(cudaEventRecord(stop_, stream_));
    SIEVE_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    SIEVE_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_{}, stop_{};
};

}  // namespace sieve::bench
