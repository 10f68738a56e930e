// What the device builder's tests (CPU and GPU) check of a tree: every layout it makes traced
// against the binary DFS of the SAH tree (the pair nodes by the BFS and the DFS, the 8-wide tree by
// the CPU's wide DFS, the compressed one by its walk), and two trees byte for byte.
#pragma once

#include <trace/bfs.hpp>
#include <bvh/ploc.hpp>
#include <trace/wide.hpp>

#include "layout_bytes.hpp"
#include "lbvh_check.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace sieve::render {

// The 8-wide tree's nodes, slots and triangles hold every triangle once, within its leaf slot's box.
inline void expect_valid_wide(const bvh& b, const std::vector<triangle>& tris) {
  ASSERT_EQ(b.wide.nodes.size(), b.cw.nodes.size());
  std::vector<int> seen(tris.size());
  for (const cw_node& n : b.cw.nodes) {
    std::uint32_t leaf_triangles = 0;
    for (int s = 0; s < wide_arity; ++s) {
      if (n.meta[s] == 0 || n.meta[s] == cw_meta_inner) continue;
      const std::uint32_t count = n.meta[s] >> 5, offset = n.meta[s] & 31U;
      ASSERT_GE(count, 1U);
      ASSERT_LE(count, cw_leaf_max);
      ASSERT_LE(offset + count, cw_node_triangles);
      leaf_triangles += count;
      for (std::uint32_t i = n.tri_base + offset; i < n.tri_base + offset + count; ++i) {
        ASSERT_LT(i, b.cw.triangles.size());
        ++seen[float_bits(b.cw.triangles[i].v0.w)];
      }
    }
    ASSERT_LE(leaf_triangles, cw_node_triangles);
  }
  for (std::size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << "triangle " << i << " in the compressed tree";
}

// Every layout of `got` finds the closest hits `want`'s binary DFS finds.
inline void expect_every_layout_hits(const bvh& got, const bvh& want, const std::vector<triangle>& tris,
                                     const std::vector<ray>& rays, const std::string& what) {
  expect_same_hits(got, want, tris, rays, what);  // the pair nodes' DFS and the compressed walk
  const bvh_view g = view_of(got, tris), w = view_of(want, tris);
  std::vector<hit> bfs(rays.size());
  bfs_tracer("auto").closest(g, rays, bfs);  // the pair nodes, breadth first
  for (std::size_t i = 0; i < rays.size(); ++i) {
    const hit e = closest_hit(pairs_of(w), rays[i]);
    const hit wide = wide_closest_hit_cpu(g.wide, rays[i]);
    ASSERT_EQ(wide.t, e.t) << what << " wide, ray " << i;
    ASSERT_EQ(wide.prim, e.prim) << what << " wide, ray " << i;
    ASSERT_EQ(bfs[i].t, e.t) << what << " BFS, ray " << i;
    ASSERT_EQ(bfs[i].prim, e.prim) << what << " BFS, ray " << i;
  }
}


}  // namespace sieve::render
