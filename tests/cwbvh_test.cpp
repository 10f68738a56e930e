// The compressed 8-wide layout and its traversal (trace/cwbvh.hpp, the GPU's code run on the CPU):
// the encoding is well formed (every triangle once, each slot's decoded box around its subtree, the
// leaf masks within 32 bits), and the traversal finds what the binary DFS finds, hit for hit (the
// same triangle test: the stored edges round as the vertices' differences), closest and any hit, also
// step by step as exec::parallel_walk runs it; leaves too big for one slot split into nodes.
#include <bvh/bvh.hpp>
#include <trace/cwbvh.hpp>
#include <trace/dfs.hpp>
#include <exec/walk.hpp>

#include "hairball.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace sieve::render {
namespace {

// Checks node `node`'s subtree; returns the box of its triangles, counts each primitive in `seen`.
aabb check_subtree(const cw_bvh& c, std::uint32_t node, std::vector<int>& seen, std::size_t level, std::size_t& deepest) {
  EXPECT_LT(node, c.nodes.size());
  deepest = std::max(deepest, level);
  const cw_node& n = c.nodes.at(node);
  aabb all;
  std::uint32_t next_offset = 0;
  for (int s = 0; s < wide_arity; ++s) {
    if (n.meta[s] == 0) {
      EXPECT_FALSE(n.inner_mask >> s & 1U);
      continue;
    }
    aabb box;
    if (n.meta[s] == cw_meta_inner) {
      EXPECT_TRUE(n.inner_mask >> s & 1U);
      box = check_subtree(c, inner_child(n.child_base, n.inner_mask, s), seen, level + 1, deepest);
    } else {
      EXPECT_FALSE(n.inner_mask >> s & 1U);
      const std::uint32_t count = n.meta[s] >> 5, offset = n.meta[s] & 31U;
      EXPECT_GE(count, 1U);
      EXPECT_LE(count, cw_leaf_max);
      EXPECT_EQ(offset, next_offset) << "leaves are consecutive in slot order";
      EXPECT_LE(offset + count, cw_node_triangles);
      next_offset = offset + count;
      for (std::uint32_t i = n.tri_base + offset; i < n.tri_base + offset + count; ++i) {
        const cw_triangle& t = c.triangles.at(i);
        ++seen.at(float_bits(t.v0.w));
        const vec3 v0{t.v0.x, t.v0.y, t.v0.z};
        box.grow(v0), box.grow(v0 + vec3{t.e1.x, t.e1.y, t.e1.z}), box.grow(v0 + vec3{t.e2.x, t.e2.y, t.e2.z});
      }
    }
    for (int k = 0; k < 3; ++k) {  // the decoded box holds the subtree's
      const double step = std::ldexp(1.0, n.exponent[k]);
      EXPECT_LE(n.origin[k] + n.lo[k][s] * step, box.lo[k]) << "node " << node << " slot " << s << " axis " << k;
      EXPECT_GE(n.origin[k] + n.hi[k][s] * step, box.hi[k]) << "node " << node << " slot " << s << " axis " << k;
    }
    all.grow(box);
  }
  return all;
}

void expect_well_formed(const bvh& b, std::size_t triangles) {
  const cw_bvh& c = b.cw;
  ASSERT_EQ(c.triangles.size(), triangles);
  if (triangles == 0) {
    EXPECT_TRUE(c.nodes.empty());
    return;
  }
  std::vector<int> seen(triangles, 0);
  std::size_t deepest = 0;
  check_subtree(c, 0, seen, 1, deepest);
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(triangles)) << "each triangle in one leaf";
  EXPECT_EQ(deepest, c.depth);
  EXPECT_LT(c.depth, static_cast<std::size_t>(dfs_stack_size));
}

// Closest hits equal to the binary DFS's (t, primitive, barycentrics), any hits to its any hits.
void expect_matches_dfs(const scene_data& s, const bvh_build_options& opt = {}) {
  const bvh b = build_bvh(s.tris, opt);
  ASSERT_NO_FATAL_FAILURE(expect_well_formed(b, s.tris.size()));
  const bvh_view v = view_of(b, s.tris);
  std::size_t hits = 0;
  for (std::size_t i = 0; i < s.rays.size(); ++i) {
    const ray& r = s.rays[i];
    const hit want = closest_hit(pairs_of(v), r), got = cw_closest_hit(v.cw, r);
    ASSERT_EQ(got.prim, want.prim) << "ray " << i;
    ASSERT_EQ(got.t, want.t) << "ray " << i;
    ASSERT_EQ(got.u, want.u) << "ray " << i;
    ASSERT_EQ(got.v, want.v) << "ray " << i;
    ASSERT_EQ(cw_any_hit(v.cw, r), any_hit(pairs_of(v), r)) << "ray " << i;
    hits += want.found();
  }
  if (!s.tris.empty()) {
    EXPECT_GT(hits, s.rays.size() / 10) << "the rays should hit something";
  }
}

TEST(CwBvh, RandomScenesAndHairballMatchDfs) {
  for (std::size_t n : {1, 2, 9, 100, 3000}) {
    SCOPED_TRACE(std::to_string(n) + " triangles");
    expect_matches_dfs(random_scene(n, 4000, static_cast<unsigned>(n)));
  }
  const auto [tris, rays] = hairball();
  expect_matches_dfs({tris, rays});
}

// Leaves of up to 16 triangles: leaves over 7 and nodes over 32 triangles split into nodes of their own.
TEST(CwBvh, BigLeavesSplitIntoNodes) {
  const scene_data s = random_scene(5000, 4000, 3);
  for (std::uint32_t leaf : {1U, 4U, 16U}) {
    SCOPED_TRACE("leaves of up to " + std::to_string(leaf));
    const bvh b = build_bvh(s.tris, {8, leaf, 1.0f});
    if (leaf == 16) {
      EXPECT_GT(b.cw.nodes.size(), b.wide.nodes.size()) << "big leaves should have become nodes";
    }
    expect_matches_dfs(s, {8, leaf, 1.0f});
  }
}

TEST(CwBvh, DegenerateInputs) {
  const scene_data base = random_scene(0, 3000, 5);
  auto with = [&](std::vector<triangle> tris) { return scene_data{std::move(tris), base.rays}; };
  {
    SCOPED_TRACE("no triangles");
    const bvh b = build_bvh({});
    EXPECT_TRUE(b.cw.nodes.empty());
    EXPECT_FALSE(cw_closest_hit(view_of(b.cw), base.rays[0]).found());
    EXPECT_FALSE(cw_any_hit(view_of(b.cw), base.rays[0]));
  }
  {
    SCOPED_TRACE("duplicates: 500 copies of one triangle, one binary leaf");
    const std::vector<triangle> tris(500, triangle{{-30, -20, 1}, {40, -20, 1}, {0, 50, 1}});
    const bvh b = build_bvh(tris);
    EXPECT_GT(b.cw.nodes.size(), b.wide.nodes.size());
    expect_matches_dfs(with(tris));
  }
  {
    SCOPED_TRACE("coincident centroids");
    std::vector<triangle> tris;
    for (int i = 0; i < 300; ++i) {
      const float s = 0.5f + 0.05f * static_cast<float>(i);
      tris.push_back({{-s, -s, 0}, {s, -s, 0}, {0, s, 0}});
    }
    expect_matches_dfs(with(tris));
  }
  {
    SCOPED_TRACE("far from the origin and small");
    scene_data s = random_scene(2000, 3000, 9);
    for (auto& t : s.tris)
      for (vec3* p : {&t.v0, &t.v1, &t.v2}) *p = *p * 1e-2f + vec3{1e3f, -2e3f, 3e3f};
    for (ray& r : s.rays) r.origin = r.origin * 1e-2f + vec3{1e3f, -2e3f, 3e3f};
    expect_matches_dfs(s);
  }
}

// Directions with zero components of either sign (-0.0 is what a sampled or reflected direction
// can round to): the box test takes each axis's near bound by the sign of its reciprocal, whose
// sign a -0.0 keeps, so the octant must too (with d.x < 0 it said +, and a ray along -0.0 missed
// every box). Rays along the axes and in the axis planes.
TEST(CwBvh, ZeroDirectionComponentsOfEitherSign) {
  scene_data s = random_scene(3000, 0, 31);
  const std::vector<float> zeros{0.0f, -0.0f};
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-8.0f, 8.0f), w(-1.0f, 1.0f);
  for (int i = 0; i < 600; ++i) {
    const int axis = i % 3;  // the axis the ray runs along (the other two components zero) ...
    const bool plane = (i / 3) % 2 == 1;  // ... or the axis whose component alone is zero
    vec3 d{zeros[(i / 6) % 2], zeros[(i / 12) % 2], zeros[(i / 24) % 2]};
    float* c[3] = {&d.x, &d.y, &d.z};
    if (plane) {
      for (int k = 0; k < 3; ++k)
        if (k != axis) *c[k] = w(rng);
    } else {
      *c[axis] = (i / 48) % 2 ? 1.0f : -1.0f;
    }
    const vec3 o{u(rng), u(rng), u(rng)};
    s.rays.push_back({o, normalize(d)});
  }
  expect_matches_dfs(s);
}

// As exec::parallel_walk runs it (the GPU's extend stage): every ray written, the same hits.
TEST(CwBvh, WalkEqualsWholeTrace) {
  const scene_data s = random_scene(2000, 5000, 21);
  const bvh b = build_bvh(s.tris);
  const cw_view v = view_of(b.cw);
  const ray* r = s.rays.data();
  const auto count = static_cast<std::uint32_t>(s.rays.size());
  std::vector<hit> closest(s.rays.size(), hit{-1, 7, 0, 0}), any(s.rays.size(), hit{-1, 7, 0, 0});
  exec::parallel_walk(exec::cpu{}, "walk", make_cw_walk<false>(v, [=](std::uint32_t i) { return r[i]; }, [=] { return count; }, closest.data()),
                      nullptr);
  exec::parallel_walk(exec::cpu{}, "walk", make_cw_walk<true>(v, [=](std::uint32_t i) { return r[i]; }, [=] { return count; }, any.data()),
                      nullptr);
  for (std::size_t i = 0; i < s.rays.size(); ++i) {
    const hit want = cw_closest_hit(v, r[i]);
    ASSERT_EQ(closest[i].prim, want.prim) << "ray " << i;
    ASSERT_EQ(closest[i].t, want.t) << "ray " << i;
    ASSERT_EQ(any[i].found(), cw_any_hit(v, r[i])) << "ray " << i;
  }
}

// The box test's decoding: a ray through the middle of a slot's box hits it, one beside it does not.
TEST(CwBvh, QuantisedBoxesDecode) {
  const aabb boxes[wide_arity] = {{{0, 0, 0}, {1, 1, 1}}, {{3, 0, 0}, {4, 1, 1}}};
  const bool used[wide_arity] = {true, true};
  aabb all = boxes[0];
  all.grow(boxes[1]);
  wide_node q{};
  quantise_slots(all, boxes, used, q);
  cw_node n{};
  for (int k = 0; k < 3; ++k) {
    n.origin[k] = q.origin[k], n.exponent[k] = q.exponent[k];
    for (int s = 0; s < 2; ++s) n.lo[k][s] = q.lo[k][s], n.hi[k][s] = q.hi[k][s];
  }
  n.meta[0] = 2 << 5 | 0;  // a leaf of two triangles (bits 0, 1)
  n.meta[1] = cw_meta_inner;
  n.inner_mask = 2;
  for (const float dir : {1.0f, -1.0f}) {
    const float from = dir > 0 ? -5.0f : 9.0f;
    const cw_ray through_both = prepare_cw({{from, 0.5f, 0.5f}, {dir, 0, 0}});
    const cw_hits both = cw_intersect(n, through_both, 1e30f);
    EXPECT_EQ(both.triangles, 3U);
    EXPECT_EQ(both.inner, 1U << (1 ^ through_both.oct)) << "slot 1 in octant order";
    const cw_hits neither = cw_intersect(n, through_both, 2.0f);
    EXPECT_EQ(neither.triangles | neither.inner, 0U) << "both boxes lie beyond t = 2";
    const cw_hits nearer = cw_intersect(n, through_both, 6.5f);  // the nearer box only (entered at t = 5)
    EXPECT_EQ(nearer.triangles, dir > 0 ? 3U : 0U);
    EXPECT_EQ(nearer.inner, dir > 0 ? 0U : 1U << (1 ^ through_both.oct));
    const cw_hits none = cw_intersect(n, prepare_cw({{from, 3.0f, 0.5f}, {dir, 0, 0}}), 1e30f);
    EXPECT_EQ(none.triangles | none.inner, 0U);
  }
}

// The box test's decode of one bound (cw_byte, cw_axis_of): (origin + q 2^e - o) / d within a
// 256th of a quantisation step plus the roundings of the offset and of the result.
TEST(CwBvh, FoldedBoundsDecode) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  for (int i = 0; i < 200000; ++i) {
    const auto e = static_cast<std::int8_t>(static_cast<int>(rng() % 60) - 40);
    const int byte = static_cast<int>(rng() % 4);
    const std::uint32_t q = rng() & 0xFFU, word = (rng() & ~(0xFFU << (8 * byte))) | q << (8 * byte);
    ASSERT_EQ(cw_byte(word, byte), 8388608.0f + 256.0f * static_cast<float>(q));
    const float inv = std::ldexp(unit(rng), static_cast<int>(rng() % 40) - 10);
    const float origin = std::ldexp(unit(rng), e + 8), o = std::ldexp(unit(rng), static_cast<int>(rng() % 30) - 10);
    const cw_axis a = cw_axis_of(e, origin, o, inv);
    const double step = std::ldexp(std::fabs(static_cast<double>(inv)), e);
    const double offset = (static_cast<double>(origin) - o) * inv;
    const double exact = offset + q * step * (inv < 0 ? -1 : 1);
    const double rounding = (std::fabs(offset) + 32768 * step + std::fabs(exact)) * 0x1p-23;
    ASSERT_NEAR(cw_fma(cw_byte(word, byte), a.scale, a.offset), exact, step / 256 + rounding) << i;
  }
}

}  // namespace
}  // namespace sieve::render
