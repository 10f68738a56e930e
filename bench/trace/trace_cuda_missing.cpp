// Builds without CUDA: the GPU traversals are a clear error.
#include "trace_cuda.hpp"

namespace sieve::render {

gpu_trace trace_cuda(const bvh&, std::span<const triangle>, std::span<const ray>, const traversal&, const std::string&, int,
                     bfs_tracer_cuda::loop, bool) {
  throw sieve::error("this build has no CUDA backend (nvcc was not found, or SIEVE_CUDA=OFF)");
}

}  // namespace sieve::render
