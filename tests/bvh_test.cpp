// The BVH against brute force: random triangle soups and random rays, closest hit (t and primitive)
// and any hit; degenerate inputs (no triangles, one, coincident centroids, a flat sheet).
#include <bvh/bvh.hpp>
#include <bvh/node_steps.hpp>
#include <trace/dfs.hpp>
#include <trace/wide.hpp>
#include <exec/walk.hpp>

#include "layout_bytes.hpp"
#include "triangle_soup.hpp"

#include <gtest/gtest.h>
#include <oneapi/tbb/global_control.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
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

// `got` agrees with brute force's closest hit `want`: both found or both not, at the same t. Ties (two
// triangles at the same t) may resolve either way: then got's primitive must be hit at that t.
void expect_hit_matches(const std::vector<triangle>& tris, const ray& r, const hit& got, const hit& want) {
  ASSERT_EQ(got.found(), want.found());
  if (!want.found()) return;
  EXPECT_FLOAT_EQ(got.t, want.t);
  if (got.prim != want.prim) {
    tri_hit h;
    ASSERT_TRUE(hit_triangle(tris[got.prim], r, 1e30f, h));
    EXPECT_FLOAT_EQ(h.t, want.t);
  }
}

// check(soup) for soups of each count in `counts`, of small, middling and large triangles.
template <class Check>
void for_random_soups(std::initializer_list<std::size_t> counts, Check check) {
  for (std::size_t n : counts)
    for (float size : {0.05f, 1.0f, 6.0f}) {
      SCOPED_TRACE(std::to_string(n) + " triangles of size " + std::to_string(size));
      check(soup(n, static_cast<unsigned>(n), size));
    }
}

void expect_matches_brute_force(const std::vector<triangle>& tris, const bvh_build_options& opt = {}) {
  const bvh b = build_bvh(tris, opt);
  const bvh_view v = view_of(b, tris);
  int hits = 0;
  for (const ray& r : rays(tris, 3000, static_cast<unsigned>(tris.size()) + 7)) {
    const hit want = brute_force(tris, r);
    ASSERT_NO_FATAL_FAILURE(expect_hit_matches(tris, r, closest_hit(pairs_of(v), r), want));
    if (want.found()) ++hits;
    EXPECT_EQ(any_hit(pairs_of(v), r), want.found()) << "any hit disagrees with the closest hit";
  }
  if (!tris.empty()) {
    EXPECT_GT(hits, 0) << "the rays should hit something";
  }
}

TEST(Bvh, RandomSoupsMatchBruteForce) {
  for_random_soups({1, 2, 3, 5, 17, 100, 1000, 20000}, [](const auto& tris) { expect_matches_brute_force(tris); });
}

TEST(Bvh, OptionsDoNotChangeAnswers) {
  const auto tris = soup(5000, 3, 1.0f);
  for (std::uint32_t bins : {2U, 8U, 32U})
    for (std::uint32_t leaf : {1U, 4U, 16U}) expect_matches_brute_force(tris, {bins, leaf, 1.0f});
}

TEST(Bvh, EmptySceneHasNoHits) {
  const std::vector<triangle> none;
  const bvh b = build_bvh(none);
  EXPECT_TRUE(b.binary.nodes.empty());
  const ray r{{0, 0, 0}, {0, 0, 1}};
  EXPECT_FALSE(closest_hit(pairs_of(view_of(b, none)), r).found());
  EXPECT_FALSE(any_hit(pairs_of(view_of(b, none)), r));
}

// The DFS as a resumable walk (exec::parallel_walk, the GPU's extend stage): on the CPU, hit for hit
// what closest_hit finds, every ray written, a walk's steps counted; none for an empty tree.
TEST(Bvh, WalkStepByStepEqualsClosestHit) {
  for (const std::size_t n : {0, 1, 2000}) {
    const auto tris = soup(n, 9, 1.0f);
    const bvh b = build_bvh(tris);
    const bvh_view v = view_of(b, tris);
    const std::vector<ray> rs = rays(tris, 1000, 4);
    std::vector<hit> got(rs.size(), hit{-1.0f, 7, 0, 0});
    const ray* r = rs.data();
    const auto count = static_cast<std::uint32_t>(rs.size());
    exec::parallel_walk(exec::cpu{}, "walk", closest_hits_walk{pairs_of(v), [=](std::uint32_t i) { return r[i]; }, [=] { return count; }, got.data()},
                        nullptr);
    for (std::size_t i = 0; i < rs.size(); ++i) {
      const hit want = closest_hit(pairs_of(v), rs[i]);
      ASSERT_EQ(got[i].prim, want.prim) << n << " triangles, ray " << i;
      ASSERT_EQ(got[i].t, want.t) << n << " triangles, ray " << i;
    }
    if (n == 0) continue;
    closest_walk w;  // one walk by hand: it ends, not live, with closest_hit's answer
    dfs_local_stack stack;
    w.start(pairs_of(v), rs[3]);
    int steps = 0;
    while (w.live() && w.step(pairs_of(v), stack) && steps < 100000) ++steps;
    EXPECT_FALSE(w.live());
    EXPECT_EQ(w.result().prim, closest_hit(pairs_of(v), rs[3]).prim);
  }
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
  EXPECT_EQ(b.binary.prims.size(), tris.size());
  std::vector<int> seen(tris.size(), 0);
  for (auto p : b.binary.prims) ++seen[p];
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(tris.size())) << "each triangle in one leaf";
  EXPECT_LE(b.stats.max_depth, static_cast<std::size_t>(dfs_depth_limit()));
  EXPECT_LE(b.stats.max_leaf_size, 16U);
  expect_matches_brute_force(tris);
}

// The wide tree: every triangle in one leaf; every child box (dequantised) holds its subtree's
// triangles; returns the subtree's true box.
aabb check_wide_subtree(const wide_bvh& w, std::uint32_t node, std::vector<int>& seen, std::size_t level,
                        std::size_t& deepest) {
  const wide_node& n = w.nodes.at(node);
  deepest = std::max(deepest, level);
  aabb all;
  std::uint32_t offset = 0;
  for (int s = 0; s < wide_arity; ++s) {
    if (n.meta[s] == 0) {
      EXPECT_FALSE(n.inner_mask & (1U << s));
      continue;
    }
    aabb box;
    if (n.meta[s] == wide_meta_inner) {
      EXPECT_TRUE(n.inner_mask & (1U << s));
      box = check_wide_subtree(w, inner_child(n.child_base, n.inner_mask, s), seen, level + 1, deepest);
    } else {
      EXPECT_LE(n.meta[s], wide_leaf_max);
      for (std::uint32_t i = n.tri_base + offset; i < n.tri_base + offset + n.meta[s]; ++i) {
        ++seen.at(w.prims.at(i));
        const triangle t = w.triangles.at(i).get();
        box.grow(t.v0), box.grow(t.v1), box.grow(t.v2);
        // Its copy in the CPU's blocks: lane i % 8 of block i / 8, as the first vertex and the two edges.
        const leaf_block& b = w.blocks.at(i / 8);
        const vec3 e1 = t.v1 - t.v0, e2 = t.v2 - t.v0;
        const float want[9] = {t.v0.x, t.v0.y, t.v0.z, e1.x, e1.y, e1.z, e2.x, e2.y, e2.z};
        const float got[9] = {b.v0[0][i % 8], b.v0[1][i % 8], b.v0[2][i % 8], b.e1[0][i % 8], b.e1[1][i % 8],
                              b.e1[2][i % 8], b.e2[0][i % 8], b.e2[1][i % 8], b.e2[2][i % 8]};
        for (int c = 0; c < 9; ++c) EXPECT_EQ(got[c], want[c]) << "leaf block of triangle " << i << ", value " << c;
      }
      offset += n.meta[s];
    }
    for (int k = 0; k < 3; ++k) {
      const double step = std::ldexp(1.0, n.exponent[k]);
      EXPECT_LT(n.origin[k] + n.lo[k][s] * step, box.lo[k]) << "node " << node << " slot " << s << " axis " << k;
      EXPECT_GT(n.origin[k] + n.hi[k][s] * step, box.hi[k]) << "node " << node << " slot " << s << " axis " << k;
    }
    all.grow(box);
  }
  return all;
}

void expect_wide_tree_well_formed(const bvh& b, std::size_t triangles) {
  const wide_bvh& w = b.wide;
  if (triangles == 0) {
    EXPECT_TRUE(w.nodes.empty());
    EXPECT_TRUE(w.prims.empty());
    return;
  }
  // The leaf order padded to blocks of eight: every node's leaf triangles start a block, the lanes
  // after them are padding (no primitive, a degenerate triangle), and there is no other padding.
  ASSERT_EQ(w.prims.size() % 8, 0U);
  ASSERT_EQ(w.triangles.size(), w.prims.size());
  ASSERT_EQ(w.blocks.size() * 8, w.prims.size());
  std::size_t padded = 0;
  for (const wide_node& n : w.nodes) {
    EXPECT_EQ(n.tri_base % 8, 0U);
    padded += (leaf_total(n) + 7) / 8 * 8;
  }
  EXPECT_EQ(padded, w.prims.size()) << "padding beyond each node's last block";
  EXPECT_EQ(static_cast<std::size_t>(std::count(w.prims.begin(), w.prims.end(), ~0U)), w.prims.size() - triangles);
  for (std::size_t i = 0; i < w.prims.size(); ++i)
    if (w.prims[i] == ~0U) {
      EXPECT_EQ(w.blocks[i / 8].e1[0][i % 8], 0.0f) << "padding lane " << i;
    }
  std::vector<int> seen(triangles, 0);
  std::size_t deepest = 0;
  check_wide_subtree(w, 0, seen, 1, deepest);
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(triangles)) << "each triangle in one leaf";
  EXPECT_EQ(deepest, w.depth);
  EXPECT_LT(w.depth, static_cast<std::size_t>(dfs_stack_size));
  EXPECT_LE(w.depth, b.stats.max_depth + 8);
}

// The wide traversals (the CPU's: portable, and AVX2 where the processor has it; the GPU's, octant
// order) against brute force and the binary DFS: closest t and primitive equal to the DFS's exactly (both find the least (t, primitive)),
// to brute force as bvh tests compare it; any hit agrees.
void expect_wide_matches(const std::vector<triangle>& tris, const bvh_build_options& opt = {}) {
  const bvh b = build_bvh(tris, opt);
  expect_wide_tree_well_formed(b, tris.size());
  const bvh_view v = view_of(b, tris);
  std::vector<wide_path> paths{wide_path::portable};
  if (cpu_has_avx2()) paths.push_back(wide_path::avx2);
  if (cpu_has_avx512()) paths.push_back(wide_path::avx512);
  int hits = 0;
  for (const ray& r : rays(tris, 3000, static_cast<unsigned>(tris.size()) + 11)) {
    const hit want = brute_force(tris, r);
    const hit dfs = closest_hit(pairs_of(v), r);
    for (const wide_path path : paths) {
      SCOPED_TRACE(path == wide_path::avx2 ? "avx2" : path == wide_path::avx512 ? "avx512" : "portable");
      const hit got = wide_closest_hit_cpu(v.wide, r, path);
      ASSERT_NO_FATAL_FAILURE(expect_hit_matches(tris, r, got, want));
      EXPECT_EQ(got.prim, dfs.prim);
      EXPECT_EQ(got.t, dfs.t);
      if (want.found()) hits += path == wide_path::portable;
      EXPECT_EQ(wide_any_hit_cpu(v.wide, r, path), want.found()) << "wide any hit disagrees with brute force";
    }
    // The GPU's traversal (octant order, wide.hpp) run on the CPU with the GPU's box test.
    const hit octant = wide_closest_hit(v.wide, r, scalar_boxes{});
    EXPECT_EQ(octant.prim, dfs.prim);
    EXPECT_EQ(octant.t, dfs.t);
    EXPECT_EQ(wide_any_hit(v.wide, r, scalar_boxes{}), want.found()) << "octant-order any hit disagrees with brute force";
  }
  if (!tris.empty()) {
    EXPECT_GT(hits, 0) << "the rays should hit something";
  }
}

TEST(WideBvh, RandomSoupsMatchBruteForceAndDfs) {
  for_random_soups({1, 2, 3, 9, 17, 100, 1000, 20000}, [](const auto& tris) { expect_wide_matches(tris); });
}

TEST(WideBvh, LeafSizesAndBinsDoNotChangeAnswers) {
  const auto tris = soup(5000, 5, 1.0f);
  for (std::uint32_t leaf : {1U, 4U, 16U}) expect_wide_matches(tris, {8, leaf, 1.0f});
}

TEST(WideBvh, EmptySceneHasNoHits) {
  const std::vector<triangle> none;
  const bvh b = build_bvh(none);
  EXPECT_TRUE(b.wide.nodes.empty());
  const ray r{{0, 0, 0}, {0, 0, 1}};
  for (const wide_path path : {wide_path::portable, wide_path::automatic}) {
    EXPECT_FALSE(wide_closest_hit_cpu(view_of(b.wide), r, path).found());
    EXPECT_FALSE(wide_any_hit_cpu(view_of(b.wide), r, path));
  }
}

TEST(WideBvh, DegenerateInputs) {
  {
    SCOPED_TRACE("one triangle");
    expect_wide_matches({{{-1, -1, 2}, {1, -1, 2}, {0, 1, 2}}});
  }
  {
    SCOPED_TRACE("all coplanar: a flat sheet of 20000 triangles in z = 0");
    std::vector<triangle> tris;
    for (int y = 0; y < 100; ++y)
      for (int x = 0; x < 100; ++x) {
        const vec3 a{float(x) * 0.2f - 10, float(y) * 0.2f - 10, 0}, b = a + vec3{0.2f, 0, 0},
                   c = a + vec3{0, 0.2f, 0}, d = a + vec3{0.2f, 0.2f, 0};
        tris.push_back({a, b, d});
        tris.push_back({a, d, c});
      }
    expect_wide_matches(tris);
  }
  {
    SCOPED_TRACE("duplicates: 500 copies of one triangle, one binary leaf split over wide slots");
    const std::vector<triangle> tris(500, triangle{{-3, -2, 1}, {4, -2, 1}, {0, 5, 1}});
    const bvh b = build_bvh(tris);
    EXPECT_EQ(b.stats.leaves, 1U);
    EXPECT_GT(b.wide.nodes.size(), 1U) << "a leaf of 500 must spread over several wide nodes";
    expect_wide_matches(tris);
  }
  {
    SCOPED_TRACE("coincident centroids");
    std::vector<triangle> tris;
    for (int i = 0; i < 300; ++i) {
      const float s = 0.5f + 0.01f * static_cast<float>(i);
      tris.push_back({{-s, -s, 0}, {s, -s, 0}, {0, s, 0}});
    }
    expect_wide_matches(tris);
  }
  {
    SCOPED_TRACE("far from the origin and small: a scene 0.2 across at 1000 (steps near the 2^-20 floor)");
    std::vector<triangle> tris = soup(2000, 9, 1.0f);
    for (auto& t : tris) {
      t.v0 = t.v0 * 1e-2f + vec3{1e3f, -2e3f, 3e3f};
      t.v1 = t.v1 * 1e-2f + vec3{1e3f, -2e3f, 3e3f};
      t.v2 = t.v2 * 1e-2f + vec3{1e3f, -2e3f, 3e3f};
    }
    const bvh b = build_bvh(tris);
    expect_wide_tree_well_formed(b, tris.size());
    const bvh_view v = view_of(b, tris);
    int hits = 0;
    for (int i = 0; i < 2000; ++i) {  // rays from outside aimed at triangle centres
      const triangle& t = tris[static_cast<std::size_t>(i)];
      const vec3 c = (t.v0 + t.v1 + t.v2) / 3.0f;
      const ray r{c + vec3{0.005f, 0.003f, -0.004f}, normalize(vec3{-0.005f, -0.003f, 0.004f})};
      const hit want = closest_hit(pairs_of(v), r);
      hits += want.found();
      for (const wide_path path : {wide_path::portable, wide_path::automatic}) {
        const hit got = wide_closest_hit_cpu(v.wide, r, path);
        EXPECT_EQ(got.prim, want.prim);
        EXPECT_EQ(got.t, want.t);
      }
    }
    EXPECT_GT(hits, 1000);
  }
}

TEST(WideBvh, OctantOrderPermutesSlots) {
  for (std::uint32_t oct = 0; oct < 8; ++oct)
    for (std::uint32_t s = 0; s < 8; ++s) EXPECT_EQ(octant_order(1U << s, oct), 1U << (s ^ oct));
  std::uint64_t counts = 0;
  const std::uint8_t c[8] = {3, 0, 31, 1, 0, 0, 7, 2};
  for (int s = 0; s < 8; ++s) counts |= std::uint64_t{c[s]} << (8 * s);
  std::uint32_t sum = 0;
  for (int s = 0; s < 8; ++s) {
    EXPECT_EQ(leaf_offset(counts, s), sum);
    sum += c[s];
  }
}

// The subtrees at a and b, node for node (children numbers differ from build to build: subtrees
// built in parallel reserve their nodes in whatever order they run).
void expect_same_tree(const bvh& x, std::uint32_t a, const bvh& y, std::uint32_t b) {
  const bvh_node &n = x.binary.nodes[a], &m = y.binary.nodes[b];
  ASSERT_EQ(n.leaf(), m.leaf()) << "node " << a;
  ASSERT_TRUE(n.bounds.lo.x == m.bounds.lo.x && n.bounds.lo.y == m.bounds.lo.y && n.bounds.lo.z == m.bounds.lo.z &&
              n.bounds.hi.x == m.bounds.hi.x && n.bounds.hi.y == m.bounds.hi.y && n.bounds.hi.z == m.bounds.hi.z)
      << "node " << a;
  if (n.leaf()) {
    ASSERT_EQ(n.first, m.first);
    ASSERT_EQ(n.count, m.count);
    return;
  }
  expect_same_tree(x, n.first, y, m.first);
  expect_same_tree(x, n.first + 1, y, m.first + 1);
}

// n random rays (seed): the binary and the wide DFS over `b` find brute force's closest hits; some hit.
void expect_answers_as_brute_force(const bvh& b, const std::vector<triangle>& tris, std::size_t n, unsigned seed) {
  const bvh_view v = view_of(b, tris);
  int hits = 0;
  for (const ray& r : rays(tris, n, seed)) {
    const hit want = brute_force(tris, r);
    ASSERT_NO_FATAL_FAILURE(expect_hit_matches(tris, r, closest_hit(pairs_of(v), r), want));
    ASSERT_NO_FATAL_FAILURE(expect_hit_matches(tris, r, wide_closest_hit_cpu(v.wide, r), want));
    hits += want.found();
  }
  EXPECT_GT(hits, 0);
}

// Over 64K triangles the top levels bin a sample: the tree still answers as brute force does, and
// the AVX2 kernels build exactly the tree the portable ones do.
TEST(Bvh, SampledTopLevelsAndSimdKernels) {
  const auto tris = soup(70000, 11, 1.0f);
  bvh_build_options portable;
  portable.simd = false;
  const bvh a = build_bvh(tris), b = build_bvh(tris, portable);
  EXPECT_EQ(a.binary.prims, b.binary.prims);
  expect_same_tree(a, 0, b, 0);
  expect_answers_as_brute_force(a, tris, 300, 5);
}

// Past 2^17 references the top levels are partitioned by every thread and the subtrees built in
// parallel: the same arrays come out whatever the number of threads (1, 2, 8), and the tree still
// answers as brute force does.
// A terrain of n x n quads (two triangles each) on a regular grid: centroids tie on every axis.
std::vector<triangle> terrain(std::uint32_t n) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> h(0, 4);
  std::vector<float> z(std::size_t{n + 1} * (n + 1));
  for (float& v : z) v = h(rng);
  auto p = [&](std::uint32_t x, std::uint32_t y) { return vec3{float(x), z[std::size_t{y} * (n + 1) + x], float(y)}; };
  std::vector<triangle> out;
  for (std::uint32_t y = 0; y < n; ++y)
    for (std::uint32_t x = 0; x < n; ++x) {
      out.push_back({p(x, y), p(x, y + 1), p(x + 1, y + 1)});
      out.push_back({p(x, y), p(x + 1, y + 1), p(x + 1, y)});
    }
  return out;
}

TEST(Bvh, SameTreeWhateverTheThreads) {
  for (const bool grid : {false, true}) {
  SCOPED_TRACE(grid ? "terrain" : "soup");
  const auto tris = grid ? terrain(400) : soup(300000, 17, 0.3f);
  std::vector<bvh> built;
  for (const int threads : {1, 2, 8, 2}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
    built.push_back(build_bvh(tris));
  }
  for (std::size_t i = 1; i < built.size(); ++i) {
    SCOPED_TRACE("build " + std::to_string(i));
    expect_same_layouts(built[0], built[i]);
  }
  expect_answers_as_brute_force(built[0], tris, 100, 9);
  // Every reference once, each leaf's in [first, first + count), every node reached once.
  EXPECT_EQ(built[0].stats.references, tris.size());
  std::vector<int> seen(built[0].binary.nodes.size(), 0);
  seen[0] = 1;
  for (const bvh_node& n : built[0].binary.nodes)
    if (!n.leaf()) ++seen[n.first], ++seen[n.first + 1];
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int k) { return k == 1; }));
  }
}

// The box a node stores is its triangles' box widened a float step (build.cpp's widen_boxes); the
// node's triangles are those of the leaves below it. Returns the unwidened box; counts the
// failures (a triangle partitioned to the wrong side leaves a child box that misses it).
aabb check_bounds(const bvh& b, const std::vector<triangle>& tris, std::uint32_t at, int& wrong) {
  const bvh_node& n = b.binary.nodes[at];
  aabb box;
  if (n.leaf()) {
    for (std::uint32_t i = n.first; i < n.first + n.count; ++i) {
      const triangle& t = tris[b.binary.prims[i]];
      box.grow(t.v0), box.grow(t.v1), box.grow(t.v2);
    }
  } else {
    box = check_bounds(b, tris, n.first, wrong);
    box.grow(check_bounds(b, tris, n.first + 1, wrong));
  }
  const aabb want = widened(box);
  if (std::memcmp(&want, &n.bounds, sizeof want) != 0) ++wrong;
  return box;
}

// Clusters of small triangles with a few long ones across them: uneven splits in the top levels.
std::vector<triangle> clusters(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0, 1);
  std::vector<triangle> out;
  std::vector<vec3> centres;
  for (int c = 0; c < 7; ++c) centres.push_back({100 * u(rng), 100 * u(rng) * (c % 2), 100 * u(rng)});
  for (std::size_t i = 0; i < n; ++i) {
    const float scale = i % 997 == 0 ? 50.0f : 0.05f;
    const vec3 c = centres[i % 7] + vec3{u(rng), u(rng), u(rng)} * (1 + static_cast<float>(i % 7));
    out.push_back({c, c + vec3{u(rng), u(rng), 0} * scale, c + vec3{0, u(rng), u(rng)} * scale});
  }
  return out;
}

// The parallel partition of the top levels (past 2^17 references) sorts every reference to its
// side: on three kinds of scene and at 1, 3 and 16 threads every node's box is exactly the box of
// the triangles below it (widened a step), every triangle sits in one leaf, and the trees are the
// same bytes with the same SAH cost whatever the threads.
TEST(Bvh, ParallelPartitionKeepsEveryTriangleInItsBox) {
  for (const int kind : {0, 1, 2}) {
    SCOPED_TRACE(kind == 0 ? "soup" : kind == 1 ? "terrain" : "clusters");
    const auto tris = kind == 0 ? soup(400000, 23, 0.2f) : kind == 1 ? terrain(300) : clusters(500000, 5);
    std::vector<bvh> built;
    for (const int threads : {1, 3, 16}) {
      SCOPED_TRACE("threads " + std::to_string(threads));
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
      built.push_back(build_bvh(tris));
      const bvh& b = built.back();
      int wrong = 0;
      check_bounds(b, tris, 0, wrong);
      EXPECT_EQ(wrong, 0);
      std::vector<std::uint8_t> seen(tris.size(), 0);
      for (const std::uint32_t p : b.binary.prims) ++seen[p];
      EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](std::uint8_t k) { return k == 1; }));
      EXPECT_DOUBLE_EQ(sah_cost(b.binary), sah_cost(built[0].binary));
      expect_same_layouts(built[0], b);
    }
  }
}

// The collapse of least SAH cost: never above the binary tree's cost but for the quantised boxes'
// margin (a binary tree is itself a collapse, of two slots a node); eight small triangles far apart
// become one wide node of eight one-triangle leaves.
TEST(WideBvh, CollapseCostIsAtMostTheBinaryTrees) {
  for (const float size : {0.01f, 1.0f}) {
    const auto tris = soup(20000, 5, size);
    const bvh b = build_bvh(tris);
    EXPECT_GT(sah_cost(b.wide), 1.0);
    EXPECT_LE(sah_cost(b.wide), sah_cost(b.binary) * 1.05) << "size " << size;
  }
  std::vector<triangle> eight;
  for (int i = 0; i < 8; ++i) {
    const vec3 c{static_cast<float>(i & 1) * 100, static_cast<float>(i >> 1 & 1) * 100, static_cast<float>(i >> 2) * 100};
    eight.push_back({c, c + vec3{0.1f, 0, 0}, c + vec3{0, 0.1f, 0}});
  }
  bvh_build_options one;
  one.max_leaf = 1;
  const bvh b = build_bvh(eight, one);
  ASSERT_EQ(b.wide.nodes.size(), 1U);
  for (int s = 0; s < wide_arity; ++s) EXPECT_EQ(b.wide.nodes[0].meta[s], 1) << "slot " << s;
  EXPECT_LT(sah_cost(b.wide), sah_cost(b.binary));
}

// The build of the CPU tracer's layout alone (cpu_wide_only) skips the pair nodes, the binary
// leaf triangles and the GPU encoding, and builds the same 8-wide tree as the full build; its
// triangles are the source triangles in the wide leaf order; each build's phases are timed.
TEST(WideBvh, BuildForTheCpuTracerAlone) {
  const auto tris = soup(70000, 13, 1.0f);
  const bvh all = build_bvh(tris), cpu = build_bvh(tris, cpu_wide_only());
  EXPECT_FALSE(all.pairs.nodes.empty());
  EXPECT_FALSE(all.cw.nodes.empty());
  EXPECT_TRUE(cpu.pairs.nodes.empty());
  EXPECT_TRUE(cpu.pairs.triangles.empty());
  EXPECT_TRUE(cpu.cw.nodes.empty());
  ASSERT_EQ(all.wide.nodes.size(), cpu.wide.nodes.size());
  EXPECT_EQ(0, std::memcmp(all.wide.nodes.data(), cpu.wide.nodes.data(), cpu.wide.nodes.size() * sizeof(wide_node)));
  EXPECT_EQ(all.wide.prims, cpu.wide.prims);
  ASSERT_EQ(cpu.wide.triangles.size(), cpu.wide.prims.size());  // padded to whole leaf blocks (~0: padding)
  EXPECT_EQ(cpu.wide.prims.size() - static_cast<std::size_t>(std::count(cpu.wide.prims.begin(), cpu.wide.prims.end(), ~0U)), tris.size());
  for (std::size_t i = 0; i < cpu.wide.prims.size(); ++i) {
    if (cpu.wide.prims[i] == ~0U) continue;
    const triangle want = tris[cpu.wide.prims[i]], got = cpu.wide.triangles[i].get();
    ASSERT_EQ(0, std::memcmp(&got, &want, sizeof got)) << "triangle " << i;
  }
  EXPECT_GT(all.stats.cpu.binary, 0.0);
  EXPECT_GT(all.stats.cpu.pairs, 0.0);
  EXPECT_EQ(cpu.stats.cpu.pairs, 0.0);
  EXPECT_EQ(cpu.stats.cpu.cw, 0.0);
  EXPECT_GT(cpu.stats.cpu.total(), cpu.stats.cpu.binary);
  int hits = 0;
  for (const ray& r : rays(tris, 300, 9)) {
    const hit want = brute_force(tris, r);
    ASSERT_NO_FATAL_FAILURE(expect_hit_matches(tris, r, wide_closest_hit_cpu(view_of(cpu.wide), r), want));
    hits += want.found();
  }
  EXPECT_GT(hits, 0);
}

TEST(WideBvh, Avx2PathIsRefusedWithoutAvx2) {
  if (cpu_has_avx2()) GTEST_SKIP() << "this processor has AVX2";
  const auto tris = soup(10, 1, 1.0f);
  const bvh b = build_bvh(tris);
  EXPECT_THROW(wide_closest_hit_cpu(view_of(b.wide), ray{{0, 0, 0}, {0, 0, 1}}, wide_path::avx2), sieve::error);
}

TEST(Bvh, BadOptionsAreErrors) {
  const auto tris = soup(10, 1, 1.0f);
  EXPECT_THROW(build_bvh(tris, {1, 4, 1.0f}), sieve::error);
  EXPECT_THROW(build_bvh(tris, {64, 4, 1.0f}), sieve::error);
  EXPECT_THROW(build_bvh(tris, {16, 0, 1.0f}), sieve::error);
}

}  // namespace
}  // namespace sieve::render
