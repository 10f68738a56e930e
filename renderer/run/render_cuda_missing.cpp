// Builds without CUDA: the GPU renderer is a clear error.
#include "render.hpp"

namespace sieve::render {

render_result render_cuda(const prepared_scene&, const render_settings&, const render_controls&) {
  throw sieve::error("this build has no CUDA backend (nvcc was not found, or SIEVE_CUDA=OFF): use --backend cpu");
}

std::size_t preload_render_kernels() { return 0; }

}  // namespace sieve::render
