// Builds without CUDA: no device scene, no GPU memory to report.
#include "device_scene.hpp"
#include "cuda_context.hpp"
#include "waves.hpp"

#include <sieve/compaction/error.hpp>

namespace sieve::render {

struct device_bvh::arrays {};
struct device_scene::arrays {};

device_bvh::device_bvh(const bvh&, std::span<const triangle>) {
  throw sieve::error("the cuda backend is not available: this build has no CUDA");
}
device_bvh::device_bvh(const device_tree&) {
  throw sieve::error("the cuda backend is not available: this build has no CUDA");
}
device_bvh::~device_bvh() = default;

device_scene::device_scene(const prepared_scene& ps, texture_storage) : prepared_(ps), bvh_(ps.tree(), ps.source().triangles) {}
device_scene::~device_scene() = default;
scene_view device_scene::view(std::uint32_t width, std::uint32_t height) const { return prepared_.view(width, height); }

std::optional<std::uint64_t> cuda_free_memory() { return std::nullopt; }
void start_cuda_context() {}

}  // namespace sieve::render
