// The device builder on the GPU (label `gpu`; skipped without a device): the same tree as its CPU
// run byte for byte in every layout (both runs' steps are integer work, exact unions of boxes, and
// float sums in one order compiled without contracted multiply-adds), the same tree every run, every
// layout traced as the SAH tree's binary DFS; the tree the renderer keeps on the device traced there.
#include <bvh/ploc.hpp>
#include <scene/load.hpp>

#include <sieve/compaction/cuda.hpp>

#include "hairball.hpp"
#include "ploc_check.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace sieve::render {
namespace {

void expect_gpu_equals_cpu(const std::vector<triangle>& tris, const std::vector<ray>& rays, std::uint32_t max_leaf,
                           const std::string& what) {
  SCOPED_TRACE(what);
  const bvh_build_options opt{.max_leaf = max_leaf};
  ploc_timing t;
  const bvh g = build_ploc(tris, opt, lbvh_device::cuda, &t), c = build_ploc(tris, opt, lbvh_device::cpu);
  EXPECT_GT(t.device_ms, 0);
  EXPECT_GE(t.with_copies_ms, t.device_ms);
  EXPECT_GT(t.rounds, 0U);
  expect_same_layouts(g, c);
  expect_same_layouts(g, build_ploc(tris, opt, lbvh_device::cuda));  // and every GPU run alike
  expect_valid(g, tris, max_leaf);
  expect_valid_wide(g, tris);
  expect_every_layout_hits(g, build_bvh(tris, opt), tris, rays, what);
}

TEST(PlocCuda, EqualsItsCpuRunAndTracesAsTheSahTree) {
  if (!sieve::cuda::available()) GTEST_SKIP() << "no CUDA device: " << sieve::cuda::device_description();
  for (unsigned seed : {1U, 2U}) {
    const scene_data s = random_scene(20000 * seed, 3000, seed);
    for (std::uint32_t leaf : {1U, 3U, 7U}) expect_gpu_equals_cpu(s.tris, s.rays, leaf, "random " + std::to_string(seed));
  }
  const auto [tris, rays] = hairball();
  expect_gpu_equals_cpu(tris, rays, 3, "hairball");
  const std::vector<triangle> same(3000, triangle{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}});
  expect_gpu_equals_cpu(same, {ray{{0.2f, 0.2f, -1}, {0, 0, 1}}}, 3, "coincident");
}

TEST(PlocCuda, ShippedScenes) {
  if (!sieve::cuda::available()) GTEST_SKIP() << "no CUDA device: " << sieve::cuda::device_description();
  const std::filesystem::path dir = SIEVE_SCENES_DIR;
  for (const char* name : {"third-party/sponza/sponza.toml", "procedural/sphere-room.toml"}) {
    const scene sc = load_scene(dir / name);
    expect_gpu_equals_cpu(sc.triangles, rays_around(sc.triangles, 20000, 7), 3, name);
  }
}

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
