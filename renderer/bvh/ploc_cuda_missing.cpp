// Builds without CUDA: the device builder's GPU run is a clear error (its CPU run is ploc.cpp's).
#include "ploc.hpp"

namespace sieve::render {

struct device_tree::arrays {};

device_tree::device_tree(std::span<const triangle>, const bvh_build_options&, ploc_timing*, std::uint32_t) {
  throw sieve::error("BVH (ploc on cuda): this build has no CUDA backend (nvcc was not found, or SIEVE_CUDA=OFF)");
}
device_tree::~device_tree() = default;
bvh device_tree::to_host(ploc_timing*) const { return {}; }

}  // namespace sieve::render
