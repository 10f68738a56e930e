// The linear BVH builder on the GPU (label `gpu`; skipped without a device): the same tree as its CPU
// run bit for bit (nodes, boxes included, and leaf order: both runs' steps are integer work or
// exact unions of boxes, compiled without contracted multiply-adds), and so it traces as the SAH
// tree's; the timings it reports are those of a run.
#include <bvh/lbvh.hpp>
#include <scene/load.hpp>

#include <sieve/compaction/cuda.hpp>

#include "hairball.hpp"
#include "lbvh_check.hpp"
#include "scenes_dir.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

namespace sieve::render {
namespace {

void expect_gpu_equals_cpu(const std::vector<triangle>& tris, const std::vector<ray>& rays, std::uint32_t max_leaf,
                           const std::string& what) {
  SCOPED_TRACE(what);
  const bvh_build_options opt{.max_leaf = max_leaf};
  lbvh_timing t;
  const bvh g = build_lbvh(tris, opt, lbvh_device::cuda, &t), c = build_lbvh(tris, opt, lbvh_device::cpu);
  EXPECT_GT(t.device_ms, 0);
  EXPECT_GE(t.with_copies_ms, t.device_ms);
  ASSERT_EQ(g.binary.nodes.size(), c.binary.nodes.size());
  ASSERT_EQ(g.binary.prims, c.binary.prims);
  for (std::size_t i = 0; i < g.binary.nodes.size(); ++i)
    ASSERT_EQ(std::memcmp(&g.binary.nodes[i], &c.binary.nodes[i], sizeof(bvh_node)), 0) << "node " << i;
  expect_valid(g, tris, max_leaf);
  expect_same_hits(g, build_bvh(tris, opt), tris, rays, what);
}

TEST(LbvhCuda, EqualsItsCpuRunAndTracesAsTheSahTree) {
  if (!sieve::cuda::available()) GTEST_SKIP() << "no CUDA device: " << sieve::cuda::device_description();
  for (unsigned seed : {1U, 2U}) {
    const scene_data s = random_scene(20000 * seed, 3000, seed);
    for (std::uint32_t leaf : {1U, 4U}) expect_gpu_equals_cpu(s.tris, s.rays, leaf, "random " + std::to_string(seed));
  }
  const auto [tris, rays] = hairball();
  expect_gpu_equals_cpu(tris, rays, 4, "hairball");
  const std::vector<triangle> same(3000, triangle{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}});
  expect_gpu_equals_cpu(same, {ray{{0.2f, 0.2f, -1}, {0, 0, 1}}}, 4, "coincident");
}

TEST(LbvhCuda, ShippedScenes) {
  if (!sieve::cuda::available()) GTEST_SKIP() << "no CUDA device: " << sieve::cuda::device_description();
  const std::filesystem::path dir = sieve::test::scenes_dir();
  for (const char* name : {"third-party/sponza/sponza.toml", "procedural/sphere-room.toml"}) {
    const scene sc = load_scene(dir / name);
    expect_gpu_equals_cpu(sc.triangles, rays_around(sc.triangles, 20000, 7), 4, name);
  }
}

}  // namespace
}  // namespace sieve::render
