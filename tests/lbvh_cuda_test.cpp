// The linear BVH builder on the GPU (label `gpu`; skipped without a device): the same tree as its CPU
// run bit for bit in every layout (nodes, boxes included, and leaf order: both runs' steps are
// integer work or exact unions of boxes, compiled without contracted multiply-adds; the layouts are
// made from them on the host), and so it traces as the SAH tree's; the timings it reports are those
// of a run (gpu_builder_check.hpp).
#include "gpu_builder_check.hpp"

namespace sieve::render {
namespace {

const auto build = [](const std::vector<triangle>& tris, const bvh_build_options& opt, lbvh_device d, lbvh_timing* t) {
  return build_lbvh(tris, opt, d, t);
};
const auto traces_as_sah = [](const bvh& g, const lbvh_timing&, const bvh& sah, const std::vector<triangle>& tris,
                              const std::vector<ray>& rays, const std::string& what) { expect_same_hits(g, sah, tris, rays, what); };

TEST(LbvhCuda, EqualsItsCpuRunAndTracesAsTheSahTree) {
  expect_gpu_equals_cpu_on_test_scenes<lbvh_timing>(build, traces_as_sah, {1U, 4U}, 4);
}

TEST(LbvhCuda, ShippedScenes) { expect_gpu_equals_cpu_on_shipped_scenes<lbvh_timing>(build, traces_as_sah, 4); }

}  // namespace
}  // namespace sieve::render
