// The linear BVH builder's CPU run (the per-item code the GPU runs too): valid trees whose closest
// hits equal the SAH tree's, on random scenes, a hairball, degenerate inputs and the shipped scenes;
// its compressed encoding traced alike; bad options refused.
#include <bvh/lbvh.hpp>
#include <scene/load.hpp>

#include "hairball.hpp"
#include "lbvh_check.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace sieve::render {
namespace {

void expect_like_sah(const std::vector<triangle>& tris, const std::vector<ray>& rays, std::uint32_t max_leaf,
                     const std::string& what) {
  SCOPED_TRACE(what);
  const bvh_build_options opt{.max_leaf = max_leaf};
  const bvh l = build_lbvh(tris, opt, lbvh_device::cpu), s = build_bvh(tris, opt);
  expect_valid(l, tris, max_leaf);
  expect_same_hits(l, s, tris, rays, what);
  // A Morton tree costs more than a binned SAH one, but not without bound: a tree whose boxes were
  // wrong or whose leaves were scattered would.
  EXPECT_GE(sah_cost(l.binary), 0.9 * sah_cost(s.binary));
  EXPECT_LT(sah_cost(l.binary), 3.0 * sah_cost(s.binary));
}

TEST(Lbvh, RandomScenesAndHairballTraceAsTheSahTree) {
  for (unsigned seed : {1U, 2U}) {
    const scene_data s = random_scene(3000 * seed, 1500, seed);
    for (std::uint32_t leaf : {1U, 4U, 8U}) expect_like_sah(s.tris, s.rays, leaf, "random " + std::to_string(seed));
  }
  const auto [tris, rays] = hairball();
  expect_like_sah(tris, rays, 4, "hairball");
}

TEST(Lbvh, DegenerateInputs) {
  EXPECT_TRUE(build_lbvh({}, {}, lbvh_device::cpu).binary.nodes.empty());
  const triangle t{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  const std::vector<triangle> one{t};
  const bvh b1 = build_lbvh(one, {}, lbvh_device::cpu);
  expect_valid(b1, one, 4);
  EXPECT_EQ(closest_hit(pairs_of(view_of(b1, one)), ray{{0.2f, 0.2f, -1}, {0, 0, 1}}).prim, 0U);
  // Every centroid the same (every Morton code equal: the positions split them), and a few more
  // triangles than a leaf holds.
  const std::vector<triangle> same(1000, t), five(5, t);
  for (const auto* tris : {&same, &five}) {
    const bvh b = build_lbvh(*tris, {}, lbvh_device::cpu);
    expect_valid(b, *tris, 4);
    EXPECT_EQ(closest_hit(pairs_of(view_of(b, *tris)), ray{{0.2f, 0.2f, -1}, {0, 0, 1}}).prim, 0U) << "the lowest of tied hits";
  }
  // A leaf big enough for the whole scene: the root is that leaf.
  const bvh all = build_lbvh(five, {.max_leaf = 8}, lbvh_device::cpu);
  ASSERT_EQ(all.binary.nodes.size(), 1U);
  EXPECT_EQ(all.binary.nodes[0].count, 5U);
}

TEST(Lbvh, ShippedScenesTraceAsTheSahTree) {
  const std::filesystem::path dir = SIEVE_SCENES_DIR;
  for (const char* name : {"cornell-box/cornell-box.toml", "third-party/sponza/sponza.toml", "procedural/sphere-room.toml"}) {
    const scene sc = load_scene(dir / name);
    expect_like_sah(sc.triangles, rays_around(sc.triangles, 4000, 7), 4, name);
  }
}

TEST(Lbvh, BadOptionsAndNoGpuAreErrors) {
  const std::vector<triangle> tris(3, triangle{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}});
  EXPECT_THROW(build_lbvh(tris, {.max_leaf = 0}, lbvh_device::cpu), sieve::error);
#if !SIEVE_HAVE_CUDA_BUILD
  EXPECT_THROW(build_lbvh(tris, {}, lbvh_device::cuda), sieve::error);
#endif
}

}  // namespace
}  // namespace sieve::render
