// What the GPU tests share: a skip without a device, and a device array for test data.
#pragma once

#include <sieve/compaction/cuda.hpp>
#include <sieve/compaction/cuda_check.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <vector>

// Skips the test, saying why, where there is no CUDA device (CI has none).
#define REQUIRE_DEVICE() \
  if (!sieve::cuda::available()) GTEST_SKIP() << "no CUDA device: " << sieve::cuda::device_description()

namespace sieve::test {

// n items of T in device memory (at least one allocated, so a zero-length array has an address).
template <class T>
struct device_array {
  T* data = nullptr;
  std::size_t n = 0;
  explicit device_array(std::size_t count) : n(count) {
    SIEVE_CUDA_CHECK(cudaMalloc(&data, std::max<std::size_t>(n, 1) * sizeof(T)));
  }
  explicit device_array(const std::vector<T>& host) : device_array(host.size()) { upload(host); }
  ~device_array() { cudaFree(data); }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;

  // Complete on return, for every stream: from pageable memory cudaMemcpy may return before its DMA
  // has landed, and work then queued on a non-blocking stream does not wait for it (a late copy of
  // the counts' sentinel overwrote a result now and then on a busy GPU).
  void upload(const std::vector<T>& h) {
    SIEVE_CUDA_CHECK(cudaMemcpy(data, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    SIEVE_CUDA_CHECK(cudaDeviceSynchronize());
  }
  std::vector<T> host(std::size_t count) const {
    std::vector<T> h(count);
    SIEVE_CUDA_CHECK(cudaMemcpy(h.data(), data, count * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
  std::vector<T> host() const { return host(n); }
  std::span<T> span() const { return {data, n}; }
  std::span<const T> cspan() const { return {data, n}; }
};

}  // namespace sieve::test
