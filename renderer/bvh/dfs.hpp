// Depth-first single-ray traversal over the 64-byte pair nodes: closest hit and any hit, one copy
// for the CPU and the GPU. Nearer child first; a fixed stack of 64 entries (the builder keeps trees
// within 60 levels).
#pragma once

#include "bvh.hpp"

namespace sieve::render {

struct hit {
  float t = 1e30f;
  std::uint32_t prim = ~0U;  // ~0: no hit
  float u = 0, v = 0;
  SIEVE_HD constexpr bool found() const { return prim != ~0U; }
};

// The closest hit is the least (t, primitive index): ties at equal t go to the lower index, so
// every traversal order (DFS, BFS, any compaction of the BFS frontier) finds the same one.
SIEVE_HD constexpr bool closer(float t, std::uint32_t prim, const hit& best) {
  return t < best.t || (t == best.t && prim < best.prim);
}

// Boxes are culled against the closest hit so far with a small relative margin: a box's computed
// entry distance can round a few ulps above the distance of a triangle inside it, and a triangle
// tied with the closest hit must still be tested for the tie-break to be order-independent.
SIEVE_HD inline float cull_limit(float t) { return t + fabsf(t) * 1e-6f; }

inline constexpr int dfs_stack_size = 64;
static_assert(dfs_depth_limit() < dfs_stack_size, "the builder must keep trees within the DFS stack");

// One step of the traversal: a pair node's children, their boxes tested against the ray.
struct pair_step {
  float t[2];               // entry distances (> limit: missed)
  std::uint32_t child[2], count[2];
};

SIEVE_HD inline pair_step visit(const pair_node& node, const ray& r, vec3 inv, float limit) {
  const quad a = node.q[0], b = node.q[1], z = node.q[2], c = node.q[3];  // four 16-byte loads
  pair_step s;
  s.child[0] = float_bits(c.x), s.count[0] = float_bits(c.y);
  s.child[1] = float_bits(c.z), s.count[1] = float_bits(c.w);
  s.t[0] = hit_box(aabb{{a.x, a.z, z.x}, {a.y, a.w, z.y}}, r.origin, inv, limit);
  s.t[1] = s.child[1] == no_child ? 2 * 1e30f : hit_box(aabb{{b.x, b.z, z.z}, {b.y, b.w, z.w}}, r.origin, inv, limit);
  return s;
}

// Closest hit along r within (0, r.tmax]: leaves are intersected as soon as their box is hit, the
// nearer inner child is visited first and the farther pushed with its entry distance, so a popped
// node is skipped without a second box test when the closest hit has moved in front of it.
SIEVE_HD inline hit closest_hit(const bvh_view& b, const ray& r) {
  hit best;  // a miss: t = 1e30, prim = ~0
  if (b.node_count == 0) return best;
  best.t = r.tmax;
  const vec3 inv = reciprocal(r.direction);
  std::uint32_t stack_node[dfs_stack_size];
  float stack_t[dfs_stack_size];
  int top = 0;
  std::uint32_t node = 0;
  while (true) {
    const pair_step s = visit(b.pairs[node], r, inv, cull_limit(best.t));
    for (int c = 0; c < 2; ++c) {
      if (s.count[c] == 0 || !(s.t[c] <= cull_limit(best.t))) continue;
      for (std::uint32_t i = s.child[c]; i < s.child[c] + s.count[c]; ++i) {
        tri_hit h;
        if (!hit_triangle(b.leaf_triangles[i].get(), r, best.t, h)) continue;
        const std::uint32_t prim = b.prims[i];  // read for hits only
        if (closer(h.t, prim, best)) best = {h.t, prim, h.u, h.v};
      }
    }
    const float limit = cull_limit(best.t);
    const bool h0 = s.count[0] == 0 && s.child[0] != no_child && s.t[0] <= limit;
    const bool h1 = s.count[1] == 0 && s.child[1] != no_child && s.t[1] <= limit;
    if (h0 && h1) {
      const int near = s.t[0] <= s.t[1] ? 0 : 1;
      stack_node[top] = s.child[1 - near];
      stack_t[top++] = s.t[1 - near];
      node = s.child[near];
      continue;
    }
    if (h0 || h1) {
      node = s.child[h0 ? 0 : 1];
      continue;
    }
    // Pop the next node still in front of the closest hit.
    bool found = false;
    while (top > 0) {
      --top;
      if (stack_t[top] <= cull_limit(best.t)) {
        node = stack_node[top];
        found = true;
        break;
      }
    }
    if (!found) break;
  }
  if (best.prim == ~0U) best.t = 1e30f;
  return best;
}

// True when anything blocks r within (0, r.tmax): shadow rays.
SIEVE_HD inline bool any_hit(const bvh_view& b, const ray& r) {
  if (b.node_count == 0) return false;
  const vec3 inv = reciprocal(r.direction);
  std::uint32_t stack[dfs_stack_size];
  int top = 0;
  stack[top++] = 0;
  while (top > 0) {
    const pair_step s = visit(b.pairs[stack[--top]], r, inv, r.tmax);
    for (int c = 0; c < 2; ++c) {
      if (!(s.t[c] <= r.tmax)) continue;
      if (s.count[c] == 0) {
        if (s.child[c] != no_child) stack[top++] = s.child[c];
        continue;
      }
      for (std::uint32_t i = s.child[c]; i < s.child[c] + s.count[c]; ++i) {
        tri_hit h;
        if (hit_triangle(b.leaf_triangles[i].get(), r, r.tmax, h)) return true;
      }
    }
  }
  return false;
}

}  // namespace sieve::render
