// The BVH against brute force: random triangle soups and random rays, closest hit (t and primitive)
// and any hit; degenerate inputs (no triangles, one, coincident centroids, a flat sheet).
#include <bvh/bvh.hpp>
#include <bvh/dfs.hpp>

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace sieve::render {
namespace {

hit brute_force(const std::vector<triangle>& tris, const ray& r) {
  hit best;
  best.t = r.tmax;
  for (std::uint32_t i = 0; i < tris.size(); ++i) {
    tri_hit h;
    if (hit_triangle(tris[i], r, best.t, h)) best = {h.t, i, h.u, h.v};
  }
  if (!best.found()) best.t = 1e30f;
  return best;
}

std::vector<triangle> soup(std::size_t n, unsigned seed, float size) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> pos(-10, 10), off(-size, size);
  std::vector<triangle> tris(n);
  for (auto& t : tris) {
    const vec3 c{pos(rng), pos(rng), pos(rng)};
    t = {c + vec3{off(rng), off(rng), off(rng)}, c + vec3{off(rng), off(rng), off(rng)},
         c + vec3{off(rng), off(rng), off(rng)}};
  }
  return tris;
}

// Random rays; every fourth aims at a triangle's centre, so even a sparse scene gets hits.
std::vector<ray> rays(const std::vector<triangle>& tris, std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> pos(-14, 14), dir(-1, 1);
  std::vector<ray> out(n);
  for (auto& r : out) {
    r.origin = {pos(rng), pos(rng), pos(rng)};
    vec3 d{dir(rng), dir(rng), dir(rng)};
    if (length(d) < 1e-3f) d = {1, 0, 0};
    r.direction = normalize(d);
    r.tmax = rng() % 4 == 0 ? 5.0f : 1e30f;  // some rays end early, like shadow rays
    if (!tris.empty() && rng() % 4 == 0) {
      const triangle& t = tris[rng() % tris.size()];
      const vec3 aim = (t.v0 + t.v1 + t.v2) / 3.0f - r.origin;
      if (length(aim) > 1e-3f) r.direction = normalize(aim);
      r.tmax = 1e30f;
    }
  }
  // Axis-aligned directions exercise the zero components of the slab test.
  out[0].direction = {0, 0, 1};
  out[1].direction = {0, -1, 0};
  out[2].direction = {1, 0, 0};
  return out;
}

void expect_matches_brute_force(const std::vector<triangle>& tris, const bvh_build_options& opt = {}) {
  const bvh b = build_bvh(tris, opt);
  const bvh_view v = view_of(b, tris);
  int hits = 0;
  for (const ray& r : rays(tris, 3000, static_cast<unsigned>(tris.size()) + 7)) {
    const hit want = brute_force(tris, r);
    const hit got = closest_hit(v, r);
    ASSERT_EQ(got.found(), want.found());
    if (want.found()) {
      ++hits;
      EXPECT_FLOAT_EQ(got.t, want.t);
      // Ties (two triangles at the same t) may resolve either way; compare the hit distance then.
      if (got.prim != want.prim) {
        tri_hit h;
        ASSERT_TRUE(hit_triangle(tris[got.prim], r, 1e30f, h));
        EXPECT_FLOAT_EQ(h.t, want.t);
      }
    }
    EXPECT_EQ(any_hit(v, r), want.found()) << "any hit disagrees with the closest hit";
  }
  if (!tris.empty()) {
    EXPECT_GT(hits, 0) << "the rays should hit something";
  }
}

TEST(Bvh, RandomSoupsMatchBruteForce) {
  for (std::size_t n : {1, 2, 3, 5, 17, 100, 1000, 20000})
    for (float size : {0.05f, 1.0f, 6.0f}) {
      SCOPED_TRACE(std::to_string(n) + " triangles of size " + std::to_string(size));
      expect_matches_brute_force(soup(n, static_cast<unsigned>(n), size));
    }
}

TEST(Bvh, OptionsDoNotChangeAnswers) {
  const auto tris = soup(5000, 3, 1.0f);
  for (std::uint32_t bins : {2U, 8U, 32U})
    for (std::uint32_t leaf : {1U, 4U, 16U}) expect_matches_brute_force(tris, {bins, leaf, 1.0f});
}

TEST(Bvh, EmptySceneHasNoHits) {
  const std::vector<triangle> none;
  const bvh b = build_bvh(none);
  EXPECT_TRUE(b.nodes.empty());
  const ray r{{0, 0, 0}, {0, 0, 1}};
  EXPECT_FALSE(closest_hit(view_of(b, none), r).found());
  EXPECT_FALSE(any_hit(view_of(b, none), r));
}

TEST(Bvh, CoincidentCentroidsStillBuildAndTraverse) {
  // 300 triangles whose bounding boxes share one centre: no split separates them, the builder must stop.
  std::vector<triangle> tris;
  for (int i = 0; i < 300; ++i) {
    const float s = 0.5f + 0.01f * static_cast<float>(i);
    tris.push_back({{-s, -s, 0}, {s, -s, 0}, {0, s, 0}});
  }
  const bvh b = build_bvh(tris);
  EXPECT_EQ(b.stats.leaves, 1U);
  expect_matches_brute_force(tris);
}

TEST(Bvh, FlatSheetAndTreeShape) {
  // A 100 x 100 grid of quads in z = 0: a flat box, many equal-area splits.
  std::vector<triangle> tris;
  for (int y = 0; y < 100; ++y)
    for (int x = 0; x < 100; ++x) {
      const vec3 a{float(x) * 0.2f - 10, float(y) * 0.2f - 10, 0}, b = a + vec3{0.2f, 0, 0},
                 c = a + vec3{0, 0.2f, 0}, d = a + vec3{0.2f, 0.2f, 0};
      tris.push_back({a, b, d});
      tris.push_back({a, d, c});
    }
  const bvh b = build_bvh(tris);
  EXPECT_EQ(b.prims.size(), tris.size());
  std::vector<int> seen(tris.size(), 0);
  for (auto p : b.prims) ++seen[p];
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(tris.size())) << "each triangle in one leaf";
  EXPECT_LE(b.stats.max_depth, static_cast<std::size_t>(dfs_depth_limit()));
  EXPECT_LE(b.stats.max_leaf_size, 16U);
  expect_matches_brute_force(tris);
}

TEST(Bvh, BadOptionsAreErrors) {
  const auto tris = soup(10, 1, 1.0f);
  EXPECT_THROW(build_bvh(tris, {1, 4, 1.0f}), sieve::error);
  EXPECT_THROW(build_bvh(tris, {64, 4, 1.0f}), sieve::error);
  EXPECT_THROW(build_bvh(tris, {16, 0, 1.0f}), sieve::error);
}

}  // namespace
}  // namespace sieve::render
