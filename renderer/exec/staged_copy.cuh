// Host-to-device copies of pageable memory through pinned staging buffers (CUDA translation units).
// The driver copies pageable memory through a staging buffer of its own, filled by the calling
// thread alone: a few GB/s. Here each chunk is copied into a pinned buffer by every thread (oneTBB)
// while the copy engine sends the chunk before it, so a large upload runs at the bus's rate.
//
// SIEVE_UPLOAD=pageable (a measuring switch) sends everything through the driver's path as before.
#pragma once

#include <sieve/compaction/cuda_check.hpp>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>

namespace sieve::exec {

// Copies below this many bytes go the driver's way: staging them would only add steps.
inline constexpr std::size_t staged_copy_min_bytes = std::size_t{4} << 20;

// Whether large uploads are staged (the default) or left to the driver (SIEVE_UPLOAD=pageable).
inline bool staged_uploads() {
  static const bool on = [] {
    const char* v = std::getenv("SIEVE_UPLOAD");
    return !(v && std::string_view(v) == "pageable");
  }();
  return on;
}

// The process's staging buffers: pinned, allocated once (prepare(), or the first copy) and freed at
// exit (release(), registered with atexit after the CUDA runtime's own handler, so it runs first; a
// copy after it allocates them again). One copy at a time uses them; the next waits for the buffers'
// previous transfers by their events.
class staging_buffers {
 public:
  static constexpr std::size_t chunk_bytes = std::size_t{8} << 20;
  static constexpr int count = 4;

  static staging_buffers& get() {
    static staging_buffers* s = new staging_buffers;
    return *s;
  }

  // Allocates the buffers if they are not yet: done early (the CUDA context's thread) so that no
  // copy pays for it. False without CUDA.
  bool prepare() {
    const std::lock_guard lock(m_);
    return ready();
  }

  // Waits for the buffers' transfers and frees them; the next copy or prepare() allocates them again.
  void release() {
    const std::lock_guard lock(m_);
    for (int i = 0; i < count; ++i) {
      if (sent_[i]) cudaEventSynchronize(sent_[i]), cudaEventDestroy(sent_[i]);
      if (buffer_[i]) cudaFreeHost(buffer_[i]);
      buffer_[i] = nullptr, sent_[i] = nullptr;
    }
    cudaGetLastError();  // at exit the runtime may be going: nothing left to do then
    tried_ = ok_ = false;
  }

  // bytes from host memory at src to device memory at dst, in stream order on `stream`: returns
  // once src has been read (it may change or go), the transfer itself still in flight (like
  // cudaMemcpyAsync from pageable memory; a later kernel on `stream` sees the data).
  void copy(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
    const std::lock_guard lock(m_);
    if (!ready()) {
      SIEVE_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
      return;
    }
    auto* out = static_cast<unsigned char*>(dst);
    const auto* in = static_cast<const unsigned char*>(src);
    for (std::size_t at = 0, k = 0; at < bytes; at += chunk_bytes, ++k) {
      const int slot = static_cast<int>(k % count);
      const std::size_t n = std::min(chunk_bytes, bytes - at);
      SIEVE_CUDA_CHECK(cudaEventSynchronize(sent_[slot]));  // its last transfer is done
      unsigned char* buffer = buffer_[slot];
      constexpr std::size_t piece = std::size_t{256} << 10;
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, (n + piece - 1) / piece), [&](const tbb::blocked_range<std::size_t>& r) {
        const std::size_t from = r.begin() * piece, to = std::min(n, r.end() * piece);
        std::memcpy(buffer + from, in + at + from, to - from);
      });
      SIEVE_CUDA_CHECK(cudaMemcpyAsync(out + at, buffer, n, cudaMemcpyHostToDevice, stream));
      SIEVE_CUDA_CHECK(cudaEventRecord(sent_[slot], stream));
    }
  }

 private:
  staging_buffers() = default;

  bool ready() {
    if (tried_) return ok_;
    tried_ = true;
    for (int i = 0; i < count; ++i) {
      if (cudaMallocHost(&buffer_[i], chunk_bytes) != cudaSuccess ||
          cudaEventCreateWithFlags(&sent_[i], cudaEventDisableTiming) != cudaSuccess) {
        cudaGetLastError();  // the driver's copies serve instead
        for (int j = 0; j <= i; ++j) {
          if (buffer_[j]) cudaFreeHost(buffer_[j]);
          if (sent_[j]) cudaEventDestroy(sent_[j]);
          buffer_[j] = nullptr, sent_[j] = nullptr;
        }
        return ok_ = false;
      }
    }
    static const bool at_exit = std::atexit([] { get().release(); }) == 0;
    (void)at_exit;
    return ok_ = true;
  }

  std::mutex m_;
  bool tried_ = false, ok_ = false;
  unsigned char* buffer_[count] = {};
  cudaEvent_t sent_[count] = {};
};

// Host to device, in stream order on `stream`: staged when large (and staged_uploads()), else the
// driver's copy. Returns once src has been read.
inline void copy_to_device(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  if (bytes < staged_copy_min_bytes || !staged_uploads()) {
    SIEVE_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
    return;
  }
  staging_buffers::get().copy(dst, src, bytes, stream);
}

}  // namespace sieve::exec
