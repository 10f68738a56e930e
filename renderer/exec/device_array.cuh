// device_array<T>: device memory owned RAII-style (CUDA translation units). An allocation that does
// not fit is a sieve::error naming the size asked for and the memory free.
#pragma once

#include "staged_copy.cuh"

#include <sieve/compaction/cuda_check.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace sieve::exec {

template <class T>
class device_array {
 public:
  explicit device_array(std::size_t n = 0) : n_(n) {
    if (n == 0) return;
    const cudaError_t e = cudaMalloc(&data_, n * sizeof(T));
    if (e != cudaSuccess) {
      cudaGetLastError();
      std::size_t free = 0, total = 0;
      cudaMemGetInfo(&free, &total);
      throw sieve::error("GPU: cannot allocate " + std::to_string(n * sizeof(T) >> 20) + " MiB (" + std::to_string(n) +
                         " items of " + std::to_string(sizeof(T)) + " bytes); " + std::to_string(free >> 20) +
                         " MiB free of " + std::to_string(total >> 20));
    }
  }
  // A copy of `host`, complete when the constructor returns (a large one staged: staged_copy.cuh).
  template <class A>
  explicit device_array(const std::vector<T, A>& host) : device_array(host.size()) {
    if (!n_) return;
    copy_to_device(data_, host.data(), n_ * sizeof(T), nullptr);
    SIEVE_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  }
  ~device_array() {
    if (data_) cudaFree(data_);
  }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  device_array(device_array&& other) noexcept { swap(other); }
  device_array& operator=(device_array&& other) noexcept {
    device_array(std::move(other)).swap(*this);
    return *this;
  }
  T* get() const { return data_; }
  std::size_t size() const { return n_; }
  void swap(device_array& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(n_, other.n_);
  }
  // Grows to at least n items (contents not kept; kept when it is large enough already); never
  // shrinks. The old memory is freed first, so growing never holds both.
  void reserve_discard(std::size_t n) {
    if (n <= n_) return;
    device_array().swap(*this);
    device_array bigger(n);
    swap(bigger);
  }
  // Grows to at least n items keeping the first `used` (copied in `stream`, which is synchronised
  // before the old memory is freed).
  void reserve_keep(std::size_t n, std::size_t used, cudaStream_t stream) {
    if (n <= n_) return;
    device_array bigger(n);
    if (used) {
      SIEVE_CUDA_CHECK(cudaMemcpyAsync(bigger.get(), data_, used * sizeof(T), cudaMemcpyDeviceToDevice, stream));
      SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    swap(bigger);
  }

 private:
  T* data_ = nullptr;
  std::size_t n_ = 0;
};

}  // namespace sieve::exec
