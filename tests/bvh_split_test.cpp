// Reference pre-splitting (bvh/split.hpp): the clipping of a triangle to a box on hand-made cases,
// the pieces covering their triangle, the budget, and trees built with splits: well formed (every
// triangle reachable, each at most once a leaf, boxes holding the triangles' parts they stand for)
// and tracing the same closest hits as the tree without splits, on random soups and shipped scenes.
#include <bvh/bvh.hpp>
#include <trace/cwbvh.hpp>
#include <trace/dfs.hpp>
#include <bvh/split.hpp>
#include <trace/wide.hpp>
#include <core/camera.hpp>
#include <scene/load.hpp>

#include "triangle_soup.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <set>
#include <vector>

namespace sieve::render {
namespace {

const std::filesystem::path scenes_dir = SIEVE_SCENES_DIR;

void expect_box(const aabb& got, vec3 lo, vec3 hi) {
  EXPECT_EQ(got.lo.x, lo.x);
  EXPECT_EQ(got.lo.y, lo.y);
  EXPECT_EQ(got.lo.z, lo.z);
  EXPECT_EQ(got.hi.x, hi.x);
  EXPECT_EQ(got.hi.y, hi.y);
  EXPECT_EQ(got.hi.z, hi.z);
}

bool contains(const aabb& outer, const aabb& inner) {
  return outer.lo.x <= inner.lo.x && outer.lo.y <= inner.lo.y && outer.lo.z <= inner.lo.z && outer.hi.x >= inner.hi.x &&
         outer.hi.y >= inner.hi.y && outer.hi.z >= inner.hi.z;
}

bool contains(const aabb& b, vec3 p) { return contains(b, aabb{p, p}); }

const aabb everywhere{{-100, -100, -100}, {100, 100, 100}};

TEST(SplitClip, SlabsOfARightTriangle) {
  const triangle t{{0, 0, 0}, {4, 0, 0}, {0, 4, 0}};
  expect_box(clip_box(t, everywhere), {0, 0, 0}, {4, 4, 0});
  expect_box(clip_box(t, {{-100, -100, -100}, {2, 100, 100}}), {0, 0, 0}, {2, 4, 0});
  expect_box(clip_box(t, {{2, -100, -100}, {100, 100, 100}}), {2, 0, 0}, {4, 2, 0});
  expect_box(clip_box(t, {{-100, 1, -100}, {100, 3, 100}}), {0, 1, 0}, {3, 3, 0});
  expect_box(clip_box(t, {{1, 1, -1}, {100, 100, 1}}), {1, 1, 0}, {3, 3, 0});  // the corner cut off
  EXPECT_TRUE(clip_box(t, {{3, 3, -1}, {10, 10, 1}}).empty()) << "beyond the hypotenuse";
  EXPECT_TRUE(clip_box(t, {{0, 0, 1}, {4, 4, 2}}).empty()) << "above the triangle's plane";
}

TEST(SplitClip, ASlantedTriangleInThreeDimensions) {
  const triangle t{{0, 0, 0}, {4, 4, 4}, {4, 0, 0}};
  expect_box(clip_box(t, {{-1, -1, -1}, {2, 9, 9}}), {0, 0, 0}, {2, 2, 2});
  expect_box(clip_box(t, {{2, -1, -1}, {3, 9, 9}}), {2, 0, 0}, {3, 3, 3});
  expect_box(clip_box(t, {{-9, 1, -9}, {9, 9, 9}}), {1, 1, 1}, {4, 4, 4});
}

TEST(SplitClip, InexactCutsRoundOutwards) {
  // The edge (0,0,0)-(3,1,0) crosses x = 1 at y = 1/3, which no float holds: the box takes the float below.
  const triangle t{{0, 0, 0}, {3, 1, 0}, {0, 1, 0}};
  const aabb b = clip_box(t, {{1, -9, -9}, {9, 9, 9}});
  EXPECT_EQ(b.lo.x, 1.0f);
  EXPECT_EQ(b.hi.x, 3.0f);
  float below = static_cast<float>(1.0 / 3.0);
  if (static_cast<double>(below) > 1.0 / 3.0) below = std::nextafter(below, 0.0f);
  EXPECT_EQ(b.lo.y, below) << "the float just below 1/3";
  EXPECT_EQ(b.hi.y, 1.0f);
}

// Points on t (barycentric, in float as a traversal would reach them).
std::vector<vec3> points_on(const triangle& t, std::mt19937& rng, int n) {
  std::uniform_real_distribution<float> u(0, 1);
  std::vector<vec3> out{t.v0, t.v1, t.v2};
  for (int i = 0; i < n; ++i) {
    float a = u(rng), b = u(rng);
    if (a + b > 1) a = 1 - a, b = 1 - b;
    out.push_back(t.v0 + (t.v1 - t.v0) * a + (t.v2 - t.v0) * b);
  }
  return out;
}

// p within box, allowing the rounding of a point computed in float.
bool near_inside(const aabb& box, vec3 p) {
  const float e = 1e-5f * (1 + std::max({std::fabs(p.x), std::fabs(p.y), std::fabs(p.z)}));
  return contains(aabb{box.lo - vec3{e, e, e}, box.hi + vec3{e, e, e}}, p);
}

TEST(SplitTriangle, PiecesCoverTheTriangle) {
  std::mt19937 rng(5);
  for (const triangle& t : soup(200, 9, 6.0f))
    for (std::uint32_t k : {1U, 2U, 3U, 7U, split_pieces_max}) {
      std::vector<aabb> pieces(k);
      const std::uint32_t made = split_triangle(t, k, pieces.data());
      ASSERT_GE(made, 1U);
      ASSERT_LE(made, k);
      aabb whole, all;
      whole.grow(t.v0), whole.grow(t.v1), whole.grow(t.v2);
      double area = 0;
      for (std::uint32_t i = 0; i < made; ++i) {
        EXPECT_TRUE(contains(whole, pieces[i]));
        all.grow(pieces[i]);
        area += pieces[i].half_area();
      }
      expect_box(all, whole.lo, whole.hi);
      if (k == 1) {
        EXPECT_EQ(made, 1U);
      }
      if (made > 1) {
        EXPECT_LT(area, whole.half_area() * made) << "pieces should be smaller than the whole";
      }
      for (vec3 p : points_on(t, rng, 50))
        EXPECT_TRUE(std::any_of(pieces.begin(), pieces.begin() + made, [&](const aabb& b) { return near_inside(b, p); }));
    }
}

TEST(SplitCounts, BudgetGoesToTheLargeSlantedTriangles) {
  std::vector<triangle> tris(1000, triangle{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}});  // flat on an axis plane: no excess
  for (int i = 0; i < 100; ++i) tris[i * 10] = {{0, 0, 0}, {10, 10, 10}, {10, 0, 0}};  // slanted, box much larger
  EXPECT_EQ(split_counts(tris, 0), std::vector<std::uint32_t>(tris.size(), 1));
  const std::vector<std::uint32_t> c = split_counts(tris, 0.3f);
  std::size_t extra = 0;
  for (std::size_t i = 0; i < tris.size(); ++i) {
    extra += c[i] - 1;
    if (i % 10 != 0) {
      EXPECT_EQ(c[i], 1U) << i;
    }
    EXPECT_LE(c[i], split_pieces_max);
  }
  EXPECT_LE(extra, 300U);
  EXPECT_GE(extra, 200U);
  const std::vector<std::uint32_t> soup_counts = split_counts(soup(5000, 1, 3.0f), 0.5f);
  std::size_t soup_extra = 0;
  for (std::uint32_t x : soup_counts) soup_extra += x - 1;
  EXPECT_LE(soup_extra, 2500U);
  EXPECT_GE(soup_extra, 2000U);
}

// Every leaf's triangles distinct, every triangle in some leaf, each box inside its parent's, and
// every point of a triangle inside a leaf that holds it (the pieces' boxes cover the triangle).
void expect_split_tree_well_formed(const bvh& b, const std::vector<triangle>& tris) {
  std::vector<std::vector<std::uint32_t>> leaves_of(tris.size());
  for (std::uint32_t n = 0; n < b.binary.nodes.size(); ++n) {
    const bvh_node& node = b.binary.nodes[n];
    if (!node.leaf()) {
      for (std::uint32_t c : {node.first, node.first + 1}) EXPECT_TRUE(contains(node.bounds, b.binary.nodes.at(c).bounds));
      continue;
    }
    std::set<std::uint32_t> seen;
    for (std::uint32_t i = node.first; i < node.first + node.count; ++i) {
      const std::uint32_t p = b.binary.prims.at(i);
      EXPECT_TRUE(seen.insert(p).second) << "triangle " << p << " twice in leaf " << n;
      EXPECT_FALSE(clip_box(tris.at(p), node.bounds).empty()) << "leaf " << n << " misses its triangle " << p;
      leaves_of[p].push_back(n);
    }
  }
  EXPECT_EQ(b.stats.references, b.binary.prims.size());
  std::mt19937 rng(3);
  for (std::uint32_t p = 0; p < tris.size(); ++p) {
    ASSERT_FALSE(leaves_of[p].empty()) << "triangle " << p << " unreachable";
    for (vec3 q : points_on(tris[p], rng, 8))
      EXPECT_TRUE(std::any_of(leaves_of[p].begin(), leaves_of[p].end(), [&](std::uint32_t n) { return near_inside(b.binary.nodes[n].bounds, q); }))
          << "a point of triangle " << p << " is in none of its leaves";
  }
  // The 8-wide tree: each leaf slot's triangles distinct, every triangle present.
  std::vector<int> in_wide(tris.size(), 0);
  for (const wide_node& n : b.wide.nodes) {
    std::uint32_t offset = 0;
    for (int s = 0; s < wide_arity; ++s) {
      if (n.meta[s] == 0 || n.meta[s] == wide_meta_inner) continue;
      std::set<std::uint32_t> seen;
      for (std::uint32_t i = n.tri_base + offset; i < n.tri_base + offset + n.meta[s]; ++i) {
        EXPECT_TRUE(seen.insert(b.wide.prims.at(i)).second);
        ++in_wide.at(b.wide.prims[i]);
      }
      offset += n.meta[s];
    }
  }
  EXPECT_EQ(std::count(in_wide.begin(), in_wide.end(), 0), 0) << "triangles missing from the wide tree";
  const auto wide_refs = static_cast<std::size_t>(std::count_if(b.wide.prims.begin(), b.wide.prims.end(), [](std::uint32_t p) { return p != ~0U; }));
  EXPECT_LE(wide_refs, b.binary.prims.size()) << "a wide leaf holds each triangle once";
  EXPECT_GE(wide_refs, tris.size());
  EXPECT_EQ(b.pairs.triangles.size(), b.binary.prims.size());
}

// The split tree's traversals (binary DFS, the CPU's 8-wide, the GPU's compressed one run here)
// find exactly the unsplit tree's closest hits (t and primitive) and any hits.
void expect_same_hits(const std::vector<triangle>& tris, const std::vector<ray>& rays, float budget) {
  bvh_build_options split;
  split.split_budget = budget;
  const bvh plain = build_bvh(tris), cut = build_bvh(tris, split);
  ASSERT_GT(cut.stats.references, tris.size()) << "nothing was split";
  ASSERT_LE(cut.stats.references, tris.size() + static_cast<std::size_t>(budget * static_cast<float>(tris.size())) + 1);
  ASSERT_NO_FATAL_FAILURE(expect_split_tree_well_formed(cut, tris));
  const bvh_view a = view_of(plain, tris), b = view_of(cut, tris);
  int hits = 0;
  for (const ray& r : rays) {
    const hit want = closest_hit(pairs_of(a), r);
    hits += want.found();
    std::vector<hit> found{closest_hit(pairs_of(b), r), wide_closest_hit_cpu(b.wide, r, wide_path::portable), cw_closest_hit(b.cw, r)};
    if (cpu_has_avx2()) found.push_back(wide_closest_hit_cpu(b.wide, r, wide_path::avx2));
    for (const hit& got : found) {
      EXPECT_EQ(got.found(), want.found());
      EXPECT_EQ(got.t, want.t);
      EXPECT_EQ(got.prim, want.prim);
    }
    EXPECT_EQ(any_hit(pairs_of(b), r), want.found());
  }
  EXPECT_GT(hits, static_cast<int>(rays.size() / 4));
}

std::vector<ray> random_rays(const std::vector<triangle>& tris, std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> pos(-14, 14), u(0, 1);
  std::vector<ray> out(n);
  for (auto& r : out) {
    r.origin = {pos(rng), pos(rng), pos(rng)};
    const triangle& t = tris[rng() % tris.size()];
    const vec3 aim = t.v0 + (t.v1 - t.v0) * (0.5f * u(rng)) + (t.v2 - t.v0) * (0.5f * u(rng)) - r.origin;
    r.direction = length(aim) > 1e-3f ? normalize(aim) : vec3{1, 0, 0};
  }
  return out;
}

TEST(SplitBvh, RandomSoupsTraceTheUnsplitTreesHits) {
  for (float size : {0.5f, 3.0f, 8.0f})
    for (float budget : {0.3f, 1.0f}) {
      SCOPED_TRACE("size " + std::to_string(size) + ", budget " + std::to_string(budget));
      const auto tris = soup(3000, 17, size);
      expect_same_hits(tris, random_rays(tris, 3000, 4), budget);
    }
}

TEST(SplitBvh, BudgetOutOfRangeIsAnError) {
  const auto tris = soup(10, 1, 1.0f);
  bvh_build_options o;
  o.split_budget = -0.5f;
  EXPECT_THROW(build_bvh(tris, o), sieve::error);
  o.split_budget = 5;
  EXPECT_THROW(build_bvh(tris, o), sieve::error);
}

// The camera's rays through a grid of pixels, for a shipped scene.
std::vector<ray> camera_rays(const scene& s, unsigned w, unsigned h) {
  const camera cam = camera::look_at(s.camera.position, s.camera.look_at, s.camera.up, s.camera.vfov_degrees,
                                     static_cast<float>(w) / static_cast<float>(h));
  std::vector<ray> out;
  for (unsigned y = 0; y < h; ++y)
    for (unsigned x = 0; x < w; ++x)
      out.push_back(cam.generate((static_cast<float>(x) + 0.5f) / static_cast<float>(w), (static_cast<float>(y) + 0.5f) / static_cast<float>(h)));
  return out;
}

TEST(SplitBvh, ShippedScenesTraceTheUnsplitTreesHits) {
  for (const char* file : {"third-party/sponza/sponza.toml", "cornell-box/cornell-box.toml", "helmet/helmet.toml"}) {
    SCOPED_TRACE(file);
    const scene s = load_scene(scenes_dir / file);
    expect_same_hits(s.triangles, camera_rays(s, 96, 72), 0.5f);
  }
}

}  // namespace
}  // namespace sieve::render
