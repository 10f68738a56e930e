// Builds without CUDA: the GPU traversals are a clear error.
#include "trace_cuda.hpp"

namespace sieve::render {

gpu_trace trace_cuda(const bvh&, std::span<const triangle>, std::span<const ray>, const std::string&,
                     const std::string&, int, const std::string&, bool) {
  throw sieve::error("this build has no CUDA backend (nvcc was not found, or SIEVE_CUDA=OFF)");
}

}  // namespace sieve::render
