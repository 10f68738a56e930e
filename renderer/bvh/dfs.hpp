// Depth-first single-ray traversal: closest hit and any hit, one copy for the CPU and the GPU.
// Nearer child first; a fixed stack of 64 entries (the builder keeps trees within 60 levels).
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

// Closest hit along r within (0, r.tmax).
SIEVE_HD inline hit closest_hit(const bvh_view& b, const ray& r) {
  hit best;  // a miss: t = 1e30, prim = ~0
  if (b.node_count == 0) return best;
  best.t = r.tmax;
  const vec3 inv = reciprocal(r.direction);
  std::uint32_t stack[dfs_stack_size];
  int top = 0;
  std::uint32_t node = 0;
  if (hit_box(b.nodes[0].bounds, r.origin, inv, cull_limit(best.t)) > cull_limit(best.t)) return hit{};
  while (true) {
    const bvh_node& n = b.nodes[node];
    if (n.leaf()) {
      for (std::uint32_t i = n.first; i < n.first + n.count; ++i) {
        tri_hit h;
        const std::uint32_t prim = b.prims[i];
        if (hit_triangle(b.triangles[prim], r, best.t, h) && closer(h.t, prim, best)) best = {h.t, prim, h.u, h.v};
      }
    } else {
      const std::uint32_t left = n.first, right = n.first + 1;
      const float limit = cull_limit(best.t);
      const float tl = hit_box(b.nodes[left].bounds, r.origin, inv, limit);
      const float tr = hit_box(b.nodes[right].bounds, r.origin, inv, limit);
      const bool hl = tl <= limit, hr = tr <= limit;
      if (hl && hr) {
        const bool left_first = tl <= tr;
        stack[top++] = left_first ? right : left;
        node = left_first ? left : right;
        continue;
      }
      if (hl || hr) {
        node = hl ? left : right;
        continue;
      }
    }
    // Pop the next node still in front of the closest hit.
    bool found = false;
    while (top > 0) {
      const std::uint32_t candidate = stack[--top];
      const float limit = cull_limit(best.t);
      if (hit_box(b.nodes[candidate].bounds, r.origin, inv, limit) <= limit) {
        node = candidate;
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
    const bvh_node& n = b.nodes[stack[--top]];
    if (hit_box(n.bounds, r.origin, inv, r.tmax) > r.tmax) continue;
    if (n.leaf()) {
      for (std::uint32_t i = n.first; i < n.first + n.count; ++i) {
        tri_hit h;
        if (hit_triangle(b.triangles[b.prims[i]], r, r.tmax, h)) return true;
      }
    } else {
      stack[top++] = n.first + 1;
      stack[top++] = n.first;
    }
  }
  return false;
}

}  // namespace sieve::render
