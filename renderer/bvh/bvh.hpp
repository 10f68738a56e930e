// A binary BVH over triangles: binned SAH build on oneTBB (build.cpp), flattened into nodes the
// traversals (dfs.hpp on CPU and GPU; the BFS traversal) read through a bvh_view.
#pragma once

#include "../core/math.hpp"
#include "../core/triangle.hpp"

#include <sieve/compaction/error.hpp>

#include <cstdint>
#include <span>
#include <vector>

namespace sieve::render {

// 32 bytes. Inner node: count == 0, children at first and first + 1. Leaf: prims[first, first + count).
struct bvh_node {
  aabb bounds;
  std::uint32_t first = 0;
  std::uint32_t count = 0;
  SIEVE_HD constexpr bool leaf() const { return count != 0; }
};

// The DFS traversal's layout (Aila & Laine's): one 64-byte node per inner node of the binary tree,
// holding both children's boxes, so a step reads one cache line and tests two boxes. Four 16-byte
// quads (vector loads on the GPU): (c0.lo.x, c0.hi.x, c0.lo.y, c0.hi.y), (c1.lo.x, c1.hi.x, c1.lo.y,
// c1.hi.y), (c0.lo.z, c0.hi.z, c1.lo.z, c1.hi.z), (child0, count0, child1, count1) as integer bits.
// count == 0: the child is pair node `child`; count > 0: a leaf of prims [child, child + count);
// child == ~0 with count 0: no child (a tree that is a single leaf).
struct alignas(16) quad {
  float x, y, z, w;
};
struct alignas(64) pair_node {
  quad q[4];
};
inline constexpr std::uint32_t no_child = ~0U;

// A triangle again, stored in leaf order and 16-byte aligned (three quads, w unused): a leaf's
// triangles sit side by side and each loads as three vector loads, without going through prims[].
struct alignas(16) leaf_triangle {
  quad v[3];
  SIEVE_HD triangle get() const {
    const quad a = v[0], b = v[1], c = v[2];
    return {{a.x, a.y, a.z}, {b.x, b.y, b.z}, {c.x, c.y, c.z}};
  }
};

// The deepest a built tree goes: the DFS traversal's fixed stack holds one entry per level.
constexpr int dfs_depth_limit() { return 60; }

struct bvh_build_options {
  std::uint32_t bins = 16;      // SAH bins per axis
  std::uint32_t max_leaf = 4;   // split any node with more primitives (unless their centroids coincide)
  float traversal_cost = 1.0f;  // SAH cost of visiting a node, relative to one triangle test
};

struct bvh_stats {
  std::size_t nodes = 0, leaves = 0, max_depth = 0, max_leaf_size = 0;
  double seconds = 0;
};

struct bvh {
  std::vector<bvh_node> nodes;        // nodes[0] is the root (absent for an empty scene)
  std::vector<std::uint32_t> prims;   // triangle indices in leaf order
  std::vector<pair_node> pairs;       // the DFS layout of the same tree (pairs[0]: the root's children)
  std::vector<leaf_triangle> leaf_triangles;  // leaf_triangles[i] = triangles[prims[i]]
  bvh_stats stats;
};

// What the traversals read: raw pointers, so the same view works over device copies.
struct bvh_view {
  const bvh_node* nodes = nullptr;      // the binary layout (BFS)
  const std::uint32_t* prims = nullptr;
  const triangle* triangles = nullptr;
  std::uint32_t node_count = 0;
  const pair_node* pairs = nullptr;     // the 64-byte layout (DFS)
  const leaf_triangle* leaf_triangles = nullptr;  // what the traversals intersect; `triangles` is for shading
};

// Throws sieve::error for out-of-range options or more than 2^31 triangles.
bvh build_bvh(std::span<const triangle> triangles, const bvh_build_options& options = {});

inline bvh_view view_of(const bvh& b, std::span<const triangle> triangles) {
  return {b.nodes.data(),           b.prims.data(), triangles.data(), static_cast<std::uint32_t>(b.nodes.size()),
          b.pairs.data(),           b.leaf_triangles.data()};
}

}  // namespace sieve::render
