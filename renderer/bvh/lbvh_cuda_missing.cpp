// Builds without CUDA: the linear BVH builder's GPU run is a clear error (its CPU run is lbvh.cpp's).
#include "lbvh.hpp"

namespace sieve::render {

binary_bvh lbvh_build_cuda(std::span<const triangle>, std::uint32_t, lbvh_timing&) {
  throw sieve::error("BVH (lbvh on cuda): this build has no CUDA backend (nvcc was not found, or SIEVE_CUDA=OFF)");
}

}  // namespace sieve::render
