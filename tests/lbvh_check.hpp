// What the linear BVH builder's tests (CPU and GPU) check of a tree: its structure, and that its
// closest hits are another tree's (dfs.hpp: the least (t, primitive), so ties agree too).
#pragma once

#include <bvh/bvh.hpp>
#include <trace/cwbvh.hpp>
#include <trace/dfs.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

namespace sieve::render {

inline bool contains(const aabb& outer, const aabb& inner) {
  return outer.lo.x <= inner.lo.x && outer.lo.y <= inner.lo.y && outer.lo.z <= inner.lo.z && outer.hi.x >= inner.hi.x &&
         outer.hi.y >= inner.hi.y && outer.hi.z >= inner.hi.z;
}

// Every node reached once from the root, every triangle in exactly one leaf, each box holding its
// children's and its leaf triangles, leaves of at most max_leaf triangles.
inline void expect_valid(const bvh& b, const std::vector<triangle>& tris, std::uint32_t max_leaf) {
  ASSERT_EQ(b.binary.prims.size(), tris.size());
  if (tris.empty()) return;
  std::vector<int> node_seen(b.binary.nodes.size()), prim_seen(tris.size());
  std::vector<std::uint32_t> todo{0};
  while (!todo.empty()) {
    const std::uint32_t at = todo.back();
    todo.pop_back();
    ASSERT_LT(at, b.binary.nodes.size());
    ASSERT_EQ(node_seen[at]++, 0) << "node " << at << " reached twice";
    const bvh_node& n = b.binary.nodes[at];
    if (n.leaf()) {
      ASSERT_LE(n.count, max_leaf) << "leaf " << at;
      ASSERT_LE(std::size_t{n.first} + n.count, b.binary.prims.size());
      for (std::uint32_t k = n.first; k < n.first + n.count; ++k) {
        const triangle& t = tris[b.binary.prims[k]];
        ASSERT_EQ(prim_seen[b.binary.prims[k]]++, 0) << "triangle " << b.binary.prims[k] << " in two leaves";
        aabb box;
        box.grow(t.v0), box.grow(t.v1), box.grow(t.v2);
        ASSERT_TRUE(contains(n.bounds, box)) << "leaf " << at << " triangle " << b.binary.prims[k];
      }
      continue;
    }
    ASSERT_LT(std::size_t{n.first} + 1, b.binary.nodes.size());
    for (std::uint32_t c = n.first; c < n.first + 2; ++c) ASSERT_TRUE(contains(n.bounds, b.binary.nodes[c].bounds)) << "node " << at;
    todo.push_back(n.first), todo.push_back(n.first + 1);
  }
  for (std::size_t i = 0; i < node_seen.size(); ++i) ASSERT_EQ(node_seen[i], 1) << "node " << i << " unreached";
  for (std::size_t i = 0; i < prim_seen.size(); ++i) ASSERT_EQ(prim_seen[i], 1) << "triangle " << i << " in no leaf";
}

// The closest hits of `rays` through `got` (binary DFS and the compressed 8-wide walk) equal those
// through `want` (binary DFS): distance, primitive and barycentrics.
inline void expect_same_hits(const bvh& got, const bvh& want, const std::vector<triangle>& tris,
                             const std::vector<ray>& rays, const std::string& what) {
  const bvh_view g = view_of(got, tris), w = view_of(want, tris);
  std::size_t found = 0;
  for (std::size_t i = 0; i < rays.size(); ++i) {
    const hit a = closest_hit(pairs_of(g), rays[i]), c = cw_closest_hit(g.cw, rays[i]), e = closest_hit(pairs_of(w), rays[i]);
    found += e.found();
    ASSERT_EQ(a.t, e.t) << what << " ray " << i;
    ASSERT_EQ(a.prim, e.prim) << what << " ray " << i;
    ASSERT_EQ(c.t, e.t) << what << " compressed, ray " << i;
    ASSERT_EQ(c.prim, e.prim) << what << " compressed, ray " << i;
  }
  EXPECT_GT(found, rays.size() / 10) << what << ": too few rays hit for the check to mean much";
}

}  // namespace sieve::render
