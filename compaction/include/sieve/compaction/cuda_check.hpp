#pragma once

// SIEVE_CUDA_CHECK(call): throws sieve::error naming the call, the file and line, and CUDA's message.
// For translation units that include the CUDA runtime.

#include <sieve/compaction/error.hpp>

#include <cuda_runtime_api.h>

#include <string>

namespace sieve::detail {
[[noreturn]] inline void cuda_failed(cudaError_t e, const char* what, const char* file, int line) {
  throw error(std::string("CUDA error: ") + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ") in " + what +
              " at " + file + ":" + std::to_string(line));
}
}  // namespace sieve::detail

#define SIEVE_CUDA_CHECK(call)                                                           \
  do {                                                                                   \
    const cudaError_t sieve_cuda_error_ = (call);                                        \
    if (sieve_cuda_error_ != cudaSuccess)                                                \
      ::sieve::detail::cuda_failed(sieve_cuda_error_, #call, __FILE__, __LINE__);        \
  } while (0)
