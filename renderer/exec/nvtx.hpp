// The range a stage's loop runs in, named after the stage (parallel_for's name), for profilers
// (Nsight Systems shows it on the thread that launched the loop). NVTX 3 is header-only and ships
// with CUDA; with no profiler attached a push or pop is a call through a pointer to an empty
// function, so builds that have the CUDA toolkit always mark (SIEVE_NVTX, set by CMake) and the
// others get an empty type.
#pragma once

#if defined(SIEVE_NVTX)
#include <nvtx3/nvToolsExt.h>
#endif

namespace sieve::exec {

class stage_range {
 public:
  explicit stage_range([[maybe_unused]] const char* name) {
#if defined(SIEVE_NVTX)
    nvtxRangePushA(name);
#endif
  }
  ~stage_range() {
#if defined(SIEVE_NVTX)
    nvtxRangePop();
#endif
  }
  stage_range(const stage_range&) = delete;
  stage_range& operator=(const stage_range&) = delete;
};

}  // namespace sieve::exec
