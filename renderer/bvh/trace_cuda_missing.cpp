// Builds without CUDA: the GPU traversal is a clear error.
#include "trace_cuda.hpp"

namespace sieve::render {

gpu_trace trace_dfs_cuda(const bvh&, std::span<const triangle>, std::span<const ray>, int) {
  throw sieve::error("this build has no CUDA backend (nvcc was not found, or SIEVE_CUDA=OFF)");
}

}  // namespace sieve::render
