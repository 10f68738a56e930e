// The per-node steps of the layouts, written once (SIEVE_HD) for the host's layouts of a built
// binary tree (build.cpp, wide_build.cpp) and the device builder's (ploc.hpp), so both make the
// same choices from the same numbers:
//   - the cost table of a binary node (Ylitie, Karras and Laine, HPG 2017): cost(n, j), the least
//     SAH cost of n's subtree given as at most j slots of a wide node, and which share of j its left
//     child takes (plan_leaf, plan_inner);
//   - the slot each child of a wide node takes (assign_octant_slots: slot s is for rays of octant s);
//   - the quantisation of the slots' boxes against their union (quantise_wide_slots);
//   - float_below, by which a binary node's box is widened a float step outwards;
//   - a child's entry in a pair node (the binary DFS's layout), a triangle in the compressed layout.
#pragma once

#include "bvh.hpp"

#include <sieve/hd.hpp>

#include <cmath>
#include <cstdint>

namespace sieve::render {

inline constexpr std::uint8_t collapse_one_slot = 0;  // pick: the subtree is one slot (no distribution)

// A binary node's plan. cost[j - 1]: cost(n, j); pick[j - 1]: the left child's share of j slots, or
// collapse_one_slot; leaf: as one slot, n is a leaf slot of all its triangles (not a wide node);
// split8: the left child's share when n is a wide node of its own (its eight slots).
struct collapse_entry {
  float cost[wide_arity];
  std::uint8_t pick[wide_arity];
  std::uint8_t leaf, split8;
};

// A leaf of `count` triangles: one slot whatever j is. A leaf of more than wide_leaf_max triangles
// will be split, so it is charged a node.
SIEVE_HD inline void plan_leaf(float area, std::uint32_t count, float traversal_cost, collapse_entry& e) {
  const float own = area * static_cast<float>(count) + (count > wide_leaf_max ? area * traversal_cost : 0.0f);
  for (int j = 0; j < wide_arity; ++j) e.cost[j] = own, e.pick[j] = collapse_one_slot;
  e.leaf = 1, e.split8 = 0;
}

// An inner node of `count` triangles over children l and r: as one slot (a leaf slot when it has at
// most leaf_max triangles and that costs no more, else a wide node taking the best distribution of
// eight slots), or its j slots shared between the children.
SIEVE_HD inline void plan_inner(float area, std::uint32_t count, std::uint32_t leaf_max, float traversal_cost,
                                const collapse_entry& l, const collapse_entry& r, collapse_entry& e) {
  float dist[wide_arity + 1];
  std::uint8_t best_k[wide_arity + 1] = {};
  for (int j = 2; j <= wide_arity; ++j) {
    dist[j] = 1e38f;
    for (int k = 1; k < j; ++k) {
      const float v = l.cost[k - 1] + r.cost[j - k - 1];
      if (v < dist[j]) dist[j] = v, best_k[j] = static_cast<std::uint8_t>(k);
    }
  }
  const float inner = area * traversal_cost + dist[wide_arity];
  const float as_leaf = count <= leaf_max ? area * static_cast<float>(count) : 1e38f;
  e.leaf = as_leaf <= inner ? 1 : 0;
  e.split8 = best_k[wide_arity];
  e.cost[0] = as_leaf < inner ? as_leaf : inner, e.pick[0] = collapse_one_slot;
  for (int j = 2; j <= wide_arity; ++j) {
    if (dist[j] < e.cost[j - 2]) e.cost[j - 1] = dist[j], e.pick[j - 1] = best_k[j];
    else e.cost[j - 1] = e.cost[j - 2], e.pick[j - 1] = e.pick[j - 2];
  }
}

// The slot of each of n <= 8 children (boxes[i] -> slot_of[i]): greedy, the pair (child, slot)
// of least cost first, where slot s prefers the child lying furthest back along octant s's
// diagonal (least centroid . diagonal, relative to the children's union); ties to the lower child,
// then the lower slot.
SIEVE_HD inline void assign_octant_slots(const aabb* boxes, int n, int* slot_of) {
  aabb all;
  for (int i = 0; i < n; ++i) all.grow(boxes[i]);
  const vec3 centre = all.center();
  float cost[wide_arity][wide_arity];
  for (int i = 0; i < n; ++i) {
    const vec3 c = boxes[i].center() - centre;
    for (int s = 0; s < wide_arity; ++s) cost[i][s] = (s & 1 ? -c.x : c.x) + (s & 2 ? -c.y : c.y) + (s & 4 ? -c.z : c.z);
  }
  bool placed[wide_arity] = {}, used[wide_arity] = {};
  for (int round = 0; round < n; ++round) {
    int bi = -1, bs = -1;
    float best = 0;
    for (int i = 0; i < n; ++i) {
      if (placed[i]) continue;
      for (int s = 0; s < wide_arity; ++s)
        if (!used[s] && (bi < 0 || cost[i][s] < best)) best = cost[i][s], bi = i, bs = s;
    }
    placed[bi] = used[bs] = true;
    slot_of[bi] = bs;
  }
}

// Per axis: a power-of-two step s with the box's extent within 250 steps and no finer than
// 2^-20 of its magnitude; the origin two steps below the box, so every child box widens by one
// step on each side without leaving 0..255, and rounding in the traversal cannot cut into it.
// Double arithmetic, exactly rounded on the CPU and the GPU alike. Slots and used: wide_arity entries.
template <class Node>
SIEVE_HD void quantise_wide_slots(const aabb& box, const aabb* slots, const bool* used, Node& node) {
  for (int k = 0; k < 3; ++k) {
    const double lo = box.lo[k], hi = box.hi[k];
    const double magnitude = ::fabs(lo) > ::fabs(hi) ? ::fabs(lo) : ::fabs(hi);
    double want = (hi - lo) / 250.0;
    if (magnitude * 0x1p-20 > want) want = magnitude * 0x1p-20;
    if (0x1p-100 > want) want = 0x1p-100;
    int e = 0;
    ::frexp(want, &e);  // want < 2^e
    e = e < -100 ? -100 : e > 127 ? 127 : e;
    const double step = ::ldexp(1.0, e);
    const double per_step = ::ldexp(1.0, -e);  // 1 / step, exactly (a power of two): the same quotients, no division
    const float origin = static_cast<float>(lo - 2 * step);
    node.origin[k] = origin;
    node.exponent[k] = static_cast<std::int8_t>(e);
    for (int s = 0; s < wide_arity; ++s) {
      if (!used[s]) continue;
      const double qlo = ::floor((static_cast<double>(slots[s].lo[k]) - origin) * per_step) - 1;
      const double qhi = ::ceil((static_cast<double>(slots[s].hi[k]) - origin) * per_step) + 1;
      node.lo[k][s] = static_cast<std::uint8_t>(qlo < 0 ? 0.0 : qlo > 255 ? 255.0 : qlo);
      node.hi[k][s] = static_cast<std::uint8_t>(qhi < 0 ? 0.0 : qhi > 255 ? 255.0 : qhi);
    }
  }
}

// The next float below x (toward -infinity; std::nextafter's, without its call): x's bits step
// one unit away from zero when negative, toward it when positive; 0 steps to the smallest negative
// subnormal; -infinity and NaN stay.
SIEVE_HD inline float float_below(float x) {
  if (x != x || x == -INFINITY) return x;
  std::uint32_t u = float_bits(x);
  if (x == 0) u = 0x80000001U;
  else u += (u >> 31) * 2 - 1;  // negative (sign bit set): + 1; positive: - 1 (no branch on the sign)
  return bits_float(u);
}

// A box widened by a float step on every side: a ray along a face plane (or an edge's line) still
// enters it (build.cpp's widen_boxes says why).
SIEVE_HD inline aabb widened(aabb b) {
  b.lo = {float_below(b.lo.x), float_below(b.lo.y), float_below(b.lo.z)};
  b.hi = {-float_below(-b.hi.x), -float_below(-b.hi.y), -float_below(-b.hi.z)};
  return b;
}

// Child c (0 or 1) of pair node p: its box and (child, count) as pair_node says.
SIEVE_HD inline void set_pair_child(pair_node& p, int c, const aabb& box, std::uint32_t child, std::uint32_t count) {
  p.q[c] = {box.lo.x, box.hi.x, box.lo.y, box.hi.y};
  (c == 0 ? p.q[2].x : p.q[2].z) = box.lo.z;
  (c == 0 ? p.q[2].y : p.q[2].w) = box.hi.z;
  (c == 0 ? p.q[3].x : p.q[3].z) = bits_float(child);
  (c == 0 ? p.q[3].y : p.q[3].w) = bits_float(count);
}

// Triangle t (primitive `prim`) as the compressed layout stores it: v0 (the index in its w), two edges.
SIEVE_HD inline cw_triangle cw_triangle_of(const triangle& t, std::uint32_t prim) {
  const vec3 e1 = t.v1 - t.v0, e2 = t.v2 - t.v0;
  return {{t.v0.x, t.v0.y, t.v0.z, bits_float(prim)}, {e1.x, e1.y, e1.z, 0}, {e2.x, e2.y, e2.z, 0}};
}

}  // namespace sieve::render
