// Builds without CUDA: the GPU BFS traversal is a clear error.
#include "bfs.hpp"

namespace sieve::render {

struct bfs_tracer_cuda::buffers {};

bfs_tracer_cuda::bfs_tracer_cuda(std::string, trace_tree tree) : c_(std::string(bfs_append), sieve::backend::cuda), tree_(tree) {
  throw sieve::error("this build has no CUDA backend (nvcc was not found, or SIEVE_CUDA=OFF)");
}
bfs_tracer_cuda::~bfs_tracer_cuda() = default;
void bfs_tracer_cuda::reserve(std::size_t) {}
std::size_t bfs_tracer_cuda::capacity() const { return 0; }
void bfs_tracer_cuda::closest_async(const bvh_view&, const ray*, hit*, std::size_t, const std::uint32_t*,
                                    sieve::cuda::stream_t) {}
void bfs_tile_closest(const bvh_view&, const ray*, hit*, std::size_t, const std::uint32_t*, const bfs_tile_launch&,
                      sieve::cuda::stream_t) {
  throw sieve::error("this build has no CUDA backend (nvcc was not found, or SIEVE_CUDA=OFF)");
}
void bfs_tracer_cuda::closest(const bvh_view&, const ray*, hit*, std::size_t, sieve::cuda::stream_t, bfs_stats*) {}

}  // namespace sieve::render
