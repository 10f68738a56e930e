// The 8-wide BVH: the binary SAH tree (build.cpp) collapsed into nodes of up to eight children
// (wide_build.cpp), in one compressed 80-byte layout for the CPU and the GPU (after Ylitie, Karras
// and Laine, HPG 2017): each child box quantised to 8 bits per bound relative to the node's origin,
// with a power-of-two scale per axis. Triangles sit in leaf order, the children of a node side by side.
//
// One traversal source (SIEVE_HD, below) serves the GPU and the CPU; what differs is only how a
// node's eight boxes are tested (`Boxes`): one by one here (GPU, and the portable CPU path), or in
// one AVX2 pass on the CPU (wide_cpu.cpp).
#pragma once

#include "../bvh/bvh.hpp"  // the layout: wide_node, wide_bvh, wide_view
#include "../bvh/node_encoding.hpp"
#include "../core/modes.hpp"
#include "dfs.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__CUDACC__)
#define SIEVE_UNROLL _Pragma("unroll")
#else
#define SIEVE_UNROLL
#endif

namespace sieve::render {

// What a ray brings to every node.
struct wide_ray {
  ray r;
  vec3 inv;
  std::uint32_t oct;  // direction sign bits
};

SIEVE_HD inline wide_ray prepare_wide(const ray& r) {
  return {r, reciprocal(r.direction),
          (r.direction.x < 0 ? 1U : 0U) | (r.direction.y < 0 ? 2U : 0U) | (r.direction.z < 0 ? 4U : 0U)};
}

// A node (or any 16-byte aligned record of whole quads) as 16-byte read-only loads on the GPU.
template <class T>
SIEVE_HD SIEVE_FORCE_INLINE T load_quads(const T* p) {
  static_assert(sizeof(T) % 16 == 0 && alignof(T) >= 16, "a record of whole 16-byte quads");
#if defined(__CUDA_ARCH__)
  T n;
  const float4* src = reinterpret_cast<const float4*>(p);
  float4* dst = reinterpret_cast<float4*>(&n);
#pragma unroll
  for (int i = 0; i < static_cast<int>(sizeof(T) / 16); ++i) dst[i] = __ldg(src + i);
  return n;
#else
  return *p;
#endif
}

SIEVE_HD inline wide_node load_wide(const wide_node* p) { return load_quads(p); }

// The portable box test: the slots whose box the ray enters within [0, limit], as a slot mask;
// with `enter`, also each slot's entry distance.
struct scalar_boxes {
  SIEVE_HD std::uint32_t operator()(const wide_node& n, const wide_ray& w, float limit, float* enter_out = nullptr) const {
    float a[3], b[3];
    SIEVE_UNROLL for (int k = 0; k < 3; ++k) {
      const float o = k == 0 ? w.r.origin.x : k == 1 ? w.r.origin.y : w.r.origin.z;
      const float inv = k == 0 ? w.inv.x : k == 1 ? w.inv.y : w.inv.z;
      a[k] = exp2_of(n.exponent[k]) * inv;
      b[k] = (n.origin[k] - o) * inv;
    }
    std::uint32_t mask = 0;
    SIEVE_UNROLL for (int s = 0; s < wide_arity; ++s) {
      if (n.meta[s] == 0) continue;
      float enter = 0, leave = limit;
      SIEVE_UNROLL for (int k = 0; k < 3; ++k) {
        const float t0 = static_cast<float>(n.lo[k][s]) * a[k] + b[k];
        const float t1 = static_cast<float>(n.hi[k][s]) * a[k] + b[k];
        enter = fmaxf(enter, fminf(t0, t1));
        leave = fminf(leave, fmaxf(t0, t1));
      }
      if (enter <= leave) mask |= 1U << s;
      if (enter_out) enter_out[s] = enter;
    }
    return mask;
  }
};

// How a node's leaf slots are walked: by the set bits, lowest first (dynamic: one copy of the
// triangle loop), or by every slot in turn with a constant index (unrolled: the node stays in
// registers on the GPU, eight copies of the loop). The wide DFS gains by unrolling (4.7M rays on
// the H100: primary 0.84x -> 0.93x, diffuse 0.90x -> 0.96x of the binary DFS); the wide BFS step
// loses by it (diffuse 0.61x -> 0.51x of DFS: bfs-wide-designs.txt), so each traversal says which.
enum class leaf_walk { dynamic, unrolled };

// Calls test(i) for every triangle slot i of node n's leaves in `leaves` (a slot mask; dynamic: taken
// lowest bit first, slot s being the bit's index ^ oct, for masks put in octant order; unrolled: in
// slot order, oct 0); stops at once, and returns true, when test does (any-hit found). Every traversal
// of the wide tree tests its leaves here.
template <leaf_walk Walk = leaf_walk::dynamic, class Test>
SIEVE_HD SIEVE_FORCE_INLINE bool for_leaf_triangles(const wide_node& n, std::uint32_t leaves, std::uint32_t oct, Test&& test) {
  if (!leaves) return false;
  const std::uint64_t counts = leaf_counts(n);
  if constexpr (Walk == leaf_walk::unrolled) {
    SIEVE_UNROLL for (int s = 0; s < wide_arity; ++s) {
      if (!(leaves >> s & 1U)) continue;
      const std::uint32_t first = n.tri_base + leaf_offset(counts, s);
      for (std::uint32_t i = first; i < first + n.meta[s]; ++i)
        if (test(i)) return true;
    }
  } else {
    while (leaves) {
      const int s = lowest_bit(leaves) ^ static_cast<int>(oct);
      leaves &= leaves - 1;
      const std::uint32_t first = n.tri_base + leaf_offset(counts, s);
      for (std::uint32_t i = first; i < first + n.meta[s]; ++i)
        if (test(i)) return true;
    }
  }
  return false;
}

// The stack holds, per wide node still to finish, its inner children left (in octant order) with
// what finds them: child_base (bits 0..31), inner_mask (32..39), remaining (40..47).
SIEVE_HD inline std::uint64_t wide_entry(std::uint32_t base, std::uint32_t inner_mask, std::uint32_t rest) {
  return base | (std::uint64_t{inner_mask} << 32) | (std::uint64_t{rest} << 40);
}

// Closest hit along r within (0, r.tmax]: the least (t, primitive), as closest_hit (dfs.hpp) finds it.
// The octant-order step of both traversals: the next node is the first inner child hit of n in the
// ray's octant order (the rest of them pushed as one stack entry), or, when n has none, the next of
// the entry on top of the stack. False when the stack is empty: the traversal is done.
SIEVE_HD SIEVE_FORCE_INLINE bool wide_next(const wide_node& n, std::uint32_t hits, std::uint32_t oct, std::uint64_t* stack,
                                           int& top, std::uint32_t& node) {
  std::uint32_t inner = octant_order(hits & n.inner_mask, oct);
  std::uint32_t base = n.child_base, imask = n.inner_mask;
  if (!inner) {  // pop a node with children left
    if (top == 0) return false;
    const std::uint64_t e = stack[--top];
    base = static_cast<std::uint32_t>(e), imask = static_cast<std::uint32_t>(e >> 32) & 0xFF;
    inner = static_cast<std::uint32_t>(e >> 40);
  }
  const int k = lowest_bit(inner);
  inner &= inner - 1;
  if (inner) stack[top++] = wide_entry(base, imask, inner);
  node = inner_child(base, imask, k ^ static_cast<int>(oct));
  return true;
}

template <class Boxes>
SIEVE_HD SIEVE_FORCE_INLINE hit wide_closest_hit(const wide_view& v, const ray& r, Boxes boxes, const alpha_view& alpha = {}) {
  hit best;
  if (v.node_count == 0) return best;
  best.t = r.tmax;
  const wide_ray w = prepare_wide(r);
  std::uint64_t stack[dfs_stack_size];
  int top = 0;
  std::uint32_t node = 0;
  while (true) {
    const wide_node n = load_wide(v.nodes + node);
    const std::uint32_t hits = boxes(n, w, cull_limit(best.t));
    // Slot order, by constant index (the node stays in registers on the GPU; 4.7M rays: 0.84x -> 0.93x
    // of the binary DFS on primary rays): the closest hit is the least (t, primitive) whatever the order.
    for_leaf_triangles<leaf_walk::unrolled>(n, hits & ~std::uint32_t{n.inner_mask}, 0, [&](std::uint32_t i) {
      tri_hit h;
      if (!hit_triangle(v.triangles[i].get(), r, best.t, h)) return false;
      const std::uint32_t prim = v.prims[i];
      if (closer(h.t, prim, best) && accept_hit(alpha, r, prim, h.u, h.v)) best = {h.t, prim, h.u, h.v};
      return false;
    });
    if (!wide_next(n, hits, w.oct, stack, top, node)) break;
  }
  if (best.prim == ~0U) best.t = 1e30f;
  return best;
}

// True when anything blocks r within (0, r.tmax).
template <class Boxes>
SIEVE_HD SIEVE_FORCE_INLINE bool wide_any_hit(const wide_view& v, const ray& r, Boxes boxes, const alpha_view& alpha = {}) {
  if (v.node_count == 0) return false;
  const wide_ray w = prepare_wide(r);
  std::uint64_t stack[dfs_stack_size];
  int top = 0;
  std::uint32_t node = 0;
  while (true) {
    const wide_node n = load_wide(v.nodes + node);
    const std::uint32_t hits = boxes(n, w, r.tmax);
    const bool blocked = for_leaf_triangles<leaf_walk::unrolled>(n, hits & ~std::uint32_t{n.inner_mask}, 0, [&](std::uint32_t i) {
      tri_hit h;
      return hit_triangle(v.triangles[i].get(), r, r.tmax, h) && accept_hit(alpha, r, v.prims[i], h.u, h.v);
    });
    if (blocked) return true;
    if (!wide_next(n, hits, w.oct, stack, top, node)) break;
  }
  return false;
}

// The CPU entry points (wide_cpu.cpp): AVX2 when the processor has it, else the portable path;
// AVX-512 when asked for (sieve::error where the processor lacks what a path asks for).
bool cpu_has_avx2();
bool cpu_has_avx512();
// alpha: the scene's cut-outs (accept_hit), none by default.
hit wide_closest_hit_cpu(const wide_view& v, const ray& r, wide_path path = wide_path::automatic, const alpha_view& alpha = {});
bool wide_any_hit_cpu(const wide_view& v, const ray& r, wide_path path = wide_path::automatic, const alpha_view& alpha = {});

}  // namespace sieve::render
