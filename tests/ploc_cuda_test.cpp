// The device builder on the GPU (label `gpu`; skipped without a device): the same tree as its CPU
// run byte for byte in every layout (both runs' steps are integer work, exact unions of boxes, and
// float sums in one order compiled without contracted multiply-adds), the same tree every run, every
// layout traced as the SAH tree's binary DFS; the tree the renderer keeps on the device traced there.
#include <bvh/ploc.hpp>
#include <scene/load.hpp>

#include <sieve/compaction/cuda.hpp>

#include "gpu_builder_check.hpp"
#include "ploc_check.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace sieve::render {
namespace {

const auto build = [](const std::vector<triangle>& tris, const bvh_build_options& opt, lbvh_device d, ploc_timing* t) {
  return build_ploc(tris, opt, d, t);
};
// Its 8-wide tree within the compressed layout's bounds, every layout traced as the SAH tree's DFS.
const auto own_checks = [](const bvh& g, const ploc_timing& t, const bvh& sah, const std::vector<triangle>& tris,
                           const std::vector<ray>& rays, const std::string& what) {
  EXPECT_GT(t.rounds, 0U);
  expect_valid_wide(g, tris);
  expect_every_layout_hits(g, sah, tris, rays, what);
};

TEST(PlocCuda, EqualsItsCpuRunAndTracesAsTheSahTree) {
  expect_gpu_equals_cpu_on_test_scenes<ploc_timing>(build, own_checks, {1U, 3U, 7U}, 3);
}

TEST(PlocCuda, ShippedScenes) { expect_gpu_equals_cpu_on_shipped_scenes<ploc_timing>(build, own_checks, 3); }

// Layouts left out are not made (and their views are empty).
TEST(PlocCuda, OnlyTheLayoutsAskedFor) {
  if (!sieve::cuda::available()) GTEST_SKIP() << "no CUDA device: " << sieve::cuda::device_description();
  const scene_data s = random_scene(5000, 10, 3);
  bvh_build_options opt;
  opt.pairs = false, opt.cw = false;
  const device_tree d(s.tris, opt);
  EXPECT_EQ(d.view().pairs.nodes, nullptr);
  EXPECT_EQ(d.view().pairs.node_count, 0U);
  EXPECT_EQ(d.view().cw.node_count, 0U);
  EXPECT_GT(d.view().wide.node_count, 0U);
  const bvh h = d.to_host();
  EXPECT_TRUE(h.pairs.nodes.empty());
  EXPECT_TRUE(h.pairs.triangles.empty());
  EXPECT_TRUE(h.cw.nodes.empty());
  expect_valid(h, s.tris, 3);
}

TEST(PlocCuda, BadInputIsAnError) {
  if (!sieve::cuda::available()) GTEST_SKIP() << "no CUDA device: " << sieve::cuda::device_description();
  std::vector<triangle> bad(1000, triangle{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}});
  bad[700].v2.z = std::numeric_limits<float>::infinity();
  EXPECT_THROW(device_tree(bad, {}), sieve::error);
  EXPECT_THROW(build_ploc(bad, {.max_leaf = 9}, lbvh_device::cuda), sieve::error);
}

}  // namespace
}  // namespace sieve::render
