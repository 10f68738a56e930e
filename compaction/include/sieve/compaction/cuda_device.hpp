#pragma once

// Small helpers over the CUDA runtime for translation units that include it (the library's kernels,
// the renderer's CUDA backend, the CUDA benchmarks): the SM count of the current device, one CUDA
// event as an owning type, and a start/stop timer made of two. Every call is checked
// (SIEVE_CUDA_CHECK).

#include <sieve/compaction/cuda_check.hpp>

#include <cuda_runtime_api.h>

#include <utility>

namespace sieve::cuda {

// Streaming multiprocessors of the current device (asked each time: the current device may change).
inline int sm_count() {
  int dev = 0, sms = 1;
  SIEVE_CUDA_CHECK(cudaGetDevice(&dev));
  SIEVE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

// One CUDA event, created with the object and destroyed with it.
class event {
 public:
  event() { SIEVE_CUDA_CHECK(cudaEventCreate(&e_)); }
  ~event() {
    if (e_) cudaEventDestroy(e_);
  }
  event(event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  event& operator=(event&& o) noexcept {
    std::swap(e_, o.e_);
    return *this;
  }
  event(const event&) = delete;
  event& operator=(const event&) = delete;

  cudaEvent_t get() const { return e_; }
  void record(cudaStream_t stream = nullptr) const { SIEVE_CUDA_CHECK(cudaEventRecord(e_, stream)); }
  // As record(), and on a stream being captured an event record node (External) of the graph, which
  // each replay records like cudaEventRecord (a plain record would only order the capture).
  void record_or_capture(cudaStream_t stream) const {
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    SIEVE_CUDA_CHECK(cudaStreamIsCapturing(stream, &capturing));
    if (capturing == cudaStreamCaptureStatusActive)
      SIEVE_CUDA_CHECK(cudaEventRecordWithFlags(e_, stream, cudaEventRecordExternal));
    else
      record(stream);
  }
  void synchronize() const { SIEVE_CUDA_CHECK(cudaEventSynchronize(e_)); }
  // Milliseconds from `start` to this event; both have completed.
  float ms_since(const event& start) const {
    float ms = 0;
    SIEVE_CUDA_CHECK(cudaEventElapsedTime(&ms, start.e_, e_));
    return ms;
  }

 private:
  cudaEvent_t e_ = nullptr;
};

// A pair of events around a region of a stream (the default one unless named).
class event_timer {
 public:
  explicit event_timer(cudaStream_t stream = nullptr) : stream_(stream) {}
  void start() { start_.record(stream_); }
  // Milliseconds since start(), once the work in between has finished.
  float stop_ms() {
    stop_.record(stream_);
    stop_.synchronize();
    return stop_.ms_since(start_);
  }

 private:
  cudaStream_t stream_ = nullptr;
  event start_, stop_;
};

}  // namespace sieve::cuda
