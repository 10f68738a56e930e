// The device builder's CPU run (the per-item code and driver the GPU runs too): valid trees whose
// every layout traces as the SAH tree's binary DFS, on random scenes, a hairball, degenerate inputs
// and the shipped scenes; SAH costs near the SAH tree's; the same tree every run; bad input refused.
#include <bvh/ploc.hpp>
#include <scene/load.hpp>

#include "hairball.hpp"
#include "ploc_check.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

namespace sieve::render {
namespace {

void expect_like_sah(const std::vector<triangle>& tris, const std::vector<ray>& rays, std::uint32_t max_leaf,
                     const std::string& what, double cost_bound = 1.35) {
  SCOPED_TRACE(what);
  const bvh_build_options opt{.max_leaf = max_leaf};
  const bvh p = build_ploc(tris, opt, lbvh_device::cpu), s = build_bvh(tris, opt);
  expect_valid(p, tris, max_leaf);
  expect_valid_wide(p, tris);
  expect_every_layout_hits(p, s, tris, rays, what);
  // Clustering's trees cost about what binned SAH's do (a Morton tree: up to 2.2x on a heightfield);
  // a wrong box or a scattered leaf would cost far more.
  EXPECT_GE(sah_cost(p.binary), 0.8 * sah_cost(s.binary));
  EXPECT_LT(sah_cost(p.binary), cost_bound * sah_cost(s.binary));
  EXPECT_LT(sah_cost(p.wide), cost_bound * sah_cost(s.wide));
}

TEST(Ploc, RandomScenesAndHairballTraceAsTheSahTree) {
  for (unsigned seed : {1U, 2U}) {
    const scene_data s = random_scene(3000 * seed, 1500, seed);
    for (std::uint32_t leaf : {1U, 3U, 7U}) expect_like_sah(s.tris, s.rays, leaf, "random " + std::to_string(seed));
  }
  const auto [tris, rays] = hairball();
  expect_like_sah(tris, rays, 3, "hairball");
}

TEST(Ploc, ShippedScenesTraceAsTheSahTree) {
  const std::filesystem::path dir = SIEVE_SCENES_DIR;
  for (const char* name : {"cornell-box/cornell-box.toml", "third-party/sponza/sponza.toml", "procedural/sphere-room.toml"}) {
    const scene sc = load_scene(dir / name);
    expect_like_sah(sc.triangles, rays_around(sc.triangles, 4000, 7), 3, name);
  }
}

// The same tree every run: no step's result depends on the order threads run in.
TEST(Ploc, Deterministic) {
  const scene sc = load_scene(std::filesystem::path(SIEVE_SCENES_DIR) / "third-party/sponza/sponza.toml");
  const bvh a = build_ploc(sc.triangles, {}, lbvh_device::cpu), b = build_ploc(sc.triangles, {}, lbvh_device::cpu);
  expect_same_layouts(a, b);
  // A smaller search radius makes another (valid) tree.
  const bvh r4 = build_ploc(sc.triangles, {}, lbvh_device::cpu, nullptr, 4);
  expect_valid(r4, sc.triangles, 3);
  EXPECT_NE(r4.binary.nodes.size() == a.binary.nodes.size() && std::memcmp(r4.binary.nodes.data(), a.binary.nodes.data(), a.binary.nodes.size() * sizeof(bvh_node)) == 0, true);
}

TEST(Ploc, DegenerateInputs) {
  EXPECT_TRUE(build_ploc({}, {}, lbvh_device::cpu).binary.nodes.empty());
  const triangle t{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  const std::vector<triangle> one{t};
  const bvh b1 = build_ploc(one, {}, lbvh_device::cpu);
  expect_valid(b1, one, 3);
  EXPECT_EQ(closest_hit(pairs_of(view_of(b1, one)), ray{{0.2f, 0.2f, -1}, {0, 0, 1}}).prim, 0U);
  EXPECT_EQ(cw_closest_hit(view_of(b1, one).cw, ray{{0.2f, 0.2f, -1}, {0, 0, 1}}).prim, 0U);
  // Every box the same, and a few more triangles than a leaf holds: the lowest of tied hits.
  const std::vector<triangle> same(1000, t), five(5, t);
  for (const auto* tris : {&same, &five}) {
    const bvh b = build_ploc(*tris, {}, lbvh_device::cpu);
    expect_valid(b, *tris, 3);
    expect_valid_wide(b, *tris);
    const bvh_view v = view_of(b, *tris);
    const ray r{{0.2f, 0.2f, -1}, {0, 0, 1}};
    EXPECT_EQ(closest_hit(pairs_of(v), r).prim, 0U);
    EXPECT_EQ(cw_closest_hit(v.cw, r).prim, 0U);
    EXPECT_EQ(wide_closest_hit_cpu(v.wide, r).prim, 0U);
  }
  // Two triangles, and a leaf big enough for the whole scene.
  const std::vector<triangle> two{t, triangle{{5, 0, 0}, {6, 0, 0}, {5, 1, 0}}};
  expect_valid(build_ploc(two, {}, lbvh_device::cpu), two, 3);
  const bvh all = build_ploc(five, {.max_leaf = 7}, lbvh_device::cpu);
  ASSERT_EQ(all.binary.nodes.size(), 1U);
  EXPECT_EQ(all.binary.nodes[0].count, 5U);
}

TEST(Ploc, BadInputIsAnError) {
  const std::vector<triangle> tris(3, triangle{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}});
  EXPECT_THROW(build_ploc(tris, {.max_leaf = 0}, lbvh_device::cpu), sieve::error);
  EXPECT_THROW(build_ploc(tris, {.max_leaf = cw_leaf_max + 1}, lbvh_device::cpu), sieve::error);
  EXPECT_THROW(build_ploc(tris, {.split_budget = 0.5f}, lbvh_device::cpu), sieve::error);
  EXPECT_THROW(build_ploc(tris, {}, lbvh_device::cpu, nullptr, 0), sieve::error);
  // A triangle with a NaN coordinate: no cluster can merge with it; one clear error, no hang.
  std::vector<triangle> bad(100, triangle{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}});
  for (std::size_t i = 0; i < bad.size(); ++i) bad[i].v0.x = static_cast<float>(i);
  bad[50].v1.y = std::numeric_limits<float>::quiet_NaN();
  try {
    (void)build_ploc(bad, {}, lbvh_device::cpu);
    ADD_FAILURE() << "expected an error";
  } catch (const sieve::error& e) {
    EXPECT_NE(std::string(e.what()).find("not finite"), std::string::npos) << e.what();
  }
#if !SIEVE_HAVE_CUDA_BUILD
  EXPECT_THROW(build_ploc(tris, {}, lbvh_device::cuda), sieve::error);
  EXPECT_THROW(device_tree(tris, {}), sieve::error);
#endif
}

}  // namespace
}  // namespace sieve::render
