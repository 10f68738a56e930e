// The compressed 8-wide BVH's traversal (after Ylitie, Karras and Laine, "Efficient incoherent ray
// traversal on GPUs through compressed wide BVHs", HPG 2017), one SIEVE_HD copy for the GPU and the
// CPU (where the tests check it against the binary DFS). The layout (cw_node, cw_triangle: bvh.hpp)
// is encoded from the 8-wide tree by cwbvh_build.cpp.
//
// A step visits one node: its eight child boxes, quantised to 8 bits per bound against the node's
// origin and power-of-two scale, are tested against the ray (the near and far bound of each axis
// picked once from the ray's direction signs, each bound one multiply-add), and the hits become two
// masks kept in registers: the inner children hit, in the ray's octant order (the nearest-looking
// first), and the node's leaf triangles hit, one bit each. The triangles hit are tested at once; the
// next node is the first inner child left, and the rest of the mask goes onto the stack as one
// 8-byte word (base, inner mask, children left), as the binary DFS's (dfs.hpp) entries are one word.
// The walk is resumable, so exec::parallel_walk runs it by persistent warps that give an idle lane a
// new ray between steps (dynamic fetch), as the binary DFS runs; closest hit and any hit.
#pragma once

#include "../core/atomic.hpp"  // cw_visit: the packed closest hit
#include "../bvh/bvh.hpp"
#include "dfs.hpp"
#include "wide.hpp"  // octant_order, inner_child, wide_entry, lowest_bit, load_quads

#include <cstdint>
#include <cstring>

namespace sieve::render {

// The quantised bound q (0..255) as 2^23 + 256 q, exactly: on the GPU one byte permute puts q into
// the second byte under the exponent of 2^23 (cheaper than an integer-to-float conversion, and no
// subtraction of 2^23 after it). A box test takes the bound as (2^23 + 256 q) * s / 256 + (offset -
// 2^15 s): one multiply-add, its second term computed once per node and axis (cw_axis_of).
SIEVE_HD SIEVE_FORCE_INLINE float cw_byte(std::uint32_t word, int byte) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(__byte_perm(word, 0x4B000000U, 0x7404U | (static_cast<unsigned>(byte) << 4)));
#else
  return static_cast<float>(8388608U + 256U * ((word >> (8 * byte)) & 0xFFU));
#endif
}

// a * b + c, fused on the GPU (the renderer's device code is built without contraction); the box
// bounds carry a margin of a quantisation step, so the rounding of either form is covered.
SIEVE_HD SIEVE_FORCE_INLINE float cw_fma(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return a * b + c;
#endif
}

// Three 16-byte loads straight into the triangle (through load_quads' copy the walk took 68
// registers instead of 61, and lost 14 % on diffuse rays).
SIEVE_HD SIEVE_FORCE_INLINE cw_triangle load_triangle(const cw_triangle* p) {
#if defined(__CUDA_ARCH__)
  const float4* src = reinterpret_cast<const float4*>(p);
  const float4 a = __ldg(src), b = __ldg(src + 1), c = __ldg(src + 2);
  return {{a.x, a.y, a.z, a.w}, {b.x, b.y, b.z, b.w}, {c.x, c.y, c.z, c.w}};
#else
  return *p;
#endif
}

// The node's hits: inner children in octant order (bit k: slot k ^ oct), leaf triangles (bit i:
// triangle tri_base + i).
struct cw_hits {
  std::uint32_t inner = 0, triangles = 0;
};

// The ray as every node's box test needs it.
struct cw_ray {
  vec3 origin, inv;
  std::uint32_t oct;  // direction sign bits (bit a: negative along axis a)
};

// The direction's octant: bit a set when its sign bit along axis a is (-0.0 included: its
// reciprocal, reciprocal(), is negative, and the box test takes the near bound by this bit).
SIEVE_HD SIEVE_FORCE_INLINE std::uint32_t cw_octant(vec3 d) {
  return (float_bits(d.x) >> 31) | (float_bits(d.y) >> 31) << 1 | (float_bits(d.z) >> 31) << 2;
}

SIEVE_HD SIEVE_FORCE_INLINE cw_ray prepare_cw(const ray& r) { return {r.origin, reciprocal(r.direction), cw_octant(r.direction)}; }

// One axis of a node against the ray: bound q enters at cw_fma(cw_byte(q), scale, offset) along
// the ray, which is (origin + q 2^e - o) / d but for roundings: the subtraction of 2^15 s folded into
// the offset rounds to nearest once more, a shift of both bounds of the axis together as the
// offset's own rounding is; the quantisation's margin of a step covers both (quantise_slots), and
// the hits stay those of the binary DFS (tests/cwbvh_test.cpp, `sieve bench trace`'s validation).
struct cw_axis {
  float scale, offset;
};

SIEVE_HD SIEVE_FORCE_INLINE cw_axis cw_axis_of(std::int8_t exponent, float origin, float o, float inv) {
  const float s = exp2_of(exponent) * inv;
  // s / 256 exactly (exponents are >= -100) and offset - 2^15 s
  return {exp2_of(static_cast<std::int8_t>(exponent - 8)) * inv, cw_fma(-32768.0f, s, (origin - o) * inv)};
}

// Slots whose box the ray enters within [0, limit]. Along an axis with a negative direction the
// upper bound is the near one, so each bound takes a byte permute and one multiply-add, and no
// min/max.
SIEVE_HD SIEVE_FORCE_INLINE cw_hits cw_intersect(const cw_node& n, const cw_ray& w, float limit) {
  cw_axis axis[3];
  std::uint32_t near[3][2], far[3][2];
  SIEVE_UNROLL for (int k = 0; k < 3; ++k) {
    const float o = k == 0 ? w.origin.x : k == 1 ? w.origin.y : w.origin.z;
    const float inv = k == 0 ? w.inv.x : k == 1 ? w.inv.y : w.inv.z;
    axis[k] = cw_axis_of(n.exponent[k], n.origin[k], o, inv);
    std::uint32_t lo[2], hi[2];
    std::memcpy(lo, n.lo[k], sizeof lo);
    std::memcpy(hi, n.hi[k], sizeof hi);
    const bool negative = (w.oct >> k) & 1U;
    SIEVE_UNROLL for (int h = 0; h < 2; ++h) {
      near[k][h] = negative ? hi[h] : lo[h];
      far[k][h] = negative ? lo[h] : hi[h];
    }
  }
  std::uint32_t meta[2];
  std::memcpy(meta, n.meta, sizeof meta);
  cw_hits out;
  SIEVE_UNROLL for (int s = 0; s < wide_arity; ++s) {
    const std::uint32_t m = (meta[s / 4] >> (8 * (s % 4))) & 0xFFU;
    if (m == 0) continue;
    float enter = 0, leave = limit;
    SIEVE_UNROLL for (int k = 0; k < 3; ++k) {
      enter = fmaxf(enter, cw_fma(cw_byte(near[k][s / 4], s % 4), axis[k].scale, axis[k].offset));
      leave = fminf(leave, cw_fma(cw_byte(far[k][s / 4], s % 4), axis[k].scale, axis[k].offset));
    }
    if (!(enter <= leave)) continue;
    out.inner |= ((n.inner_mask >> s) & 1U) << (s ^ static_cast<int>(w.oct));
    out.triangles |= ((1U << (m >> 5)) - 1) << (m & 31U);  // 0 for an inner slot (count 0)
  }
  return out;
}

// The traversal's stack: one 8-byte word (wide_entry: base, inner mask, children left) a level.
class cw_stack {
 public:
  SIEVE_HD void put(int i, std::uint64_t e) { entry_[i] = e; }
  SIEVE_HD std::uint64_t get(int i) const { return entry_[i]; }

 private:
  std::uint64_t entry_[dfs_stack_size];
};

// What a walk counts: nothing (the traversals), or the nodes it visits and the triangles it tests
// (cw_counter: `sieve bench trace`'s work per ray on the CPU).
struct cw_no_counter {
  SIEVE_HD void node() {}
  SIEVE_HD void triangle() {}
};
struct cw_counter {
  std::uint64_t nodes = 0, triangles = 0;
  SIEVE_HD void node() { ++nodes; }
  SIEVE_HD void triangle() { ++triangles; }
};

// Closest hit (Any = false: the least (t, primitive) within (0, r.tmax], as closest_hit finds it) or
// any hit (Any = true: found() says whether anything blocks r), a node a step.
// Cutouts false: the scene has none, and the walk leaves out the cut-out test (accept_hit).
template <bool Any, class Counter = cw_no_counter, bool Cutouts = true>
class cw_walk {
 public:
  SIEVE_HD void start(const cw_view& v, const ray& r) {
    hit none;
    none.t = r.tmax;
    start_at(v, r, wide_entry(0, 1, 1U << cw_octant(r.direction)), none);  // the root: slot 0 of a node whose children start at 0
  }
  // The walk of a node group alone (wide_entry(base, inner mask, children left in the ray's octant
  // order), as cw_visit returns it), with `best` the closest hit so far: a breadth-first traversal
  // hands the rest of a subtree to one thread this way (bfs_tile_cuda.cu).
  SIEVE_HD void start_at(const cw_view& v, const ray& r, std::uint64_t group, const hit& best) {
    r_ = r;
    w_ = prepare_cw(r);
    best_ = best;
    top_ = 0;
    group_ = group;
    live_ = v.node_count != 0 && (group >> 40) != 0;
  }
  // The closest hit so far (prim ~0U: none; t the ray's tmax).
  SIEVE_HD const hit& best() const { return best_; }

  SIEVE_HD bool live() const { return live_; }
  SIEVE_HD const Counter& counter() const { return counter_; }

  SIEVE_HD bool step(const cw_view& v, cw_stack& stack) {
    std::uint32_t left = static_cast<std::uint32_t>(group_ >> 40);
    const std::uint32_t base = static_cast<std::uint32_t>(group_);
    const std::uint32_t imask = static_cast<std::uint32_t>(group_ >> 32) & 0xFFU;
    const int k = lowest_bit(left);
    left &= left - 1;
    if (left) stack.put(top_++, wide_entry(base, imask, left));
    const cw_node n = load_quads(v.nodes + inner_child(base, imask, k ^ static_cast<int>(w_.oct)));
    const cw_hits h = cw_intersect(n, w_, Any ? r_.tmax : cull_limit(best_.t));
    counter_.node();
    group_ = wide_entry(n.child_base, n.inner_mask, h.inner);
    for (std::uint32_t tris = h.triangles; tris; tris &= tris - 1) {
      counter_.triangle();
      const std::uint32_t i = n.tri_base + static_cast<std::uint32_t>(lowest_bit(tris));
      const cw_triangle t = load_triangle(v.triangles + i);
      tri_hit th;
      if (!hit_triangle_edges({t.v0.x, t.v0.y, t.v0.z}, {t.e1.x, t.e1.y, t.e1.z}, {t.e2.x, t.e2.y, t.e2.z}, r_, best_.t, th))
        continue;
      const std::uint32_t prim = float_bits(t.v0.w);
      if (Any) {
        if (Cutouts && !accept_hit(v.alpha, r_, prim, th.u, th.v)) continue;  // a cut-out lets the ray through
        best_ = {th.t, prim, th.u, th.v};
        return live_ = false;
      }
      if (closer(th.t, prim, best_) && (!Cutouts || accept_hit(v.alpha, r_, prim, th.u, th.v)))
        best_ = {th.t, prim, th.u, th.v};
    }
    if (group_ >> 40) return true;
    if (top_ == 0) return live_ = false;
    group_ = stack.get(--top_);
    return true;
  }

  // Closest: the hit (t 1e30 when none); any: prim 0 at t 0 when blocked, else no hit.
  SIEVE_HD hit result() const {
    if (Any) return best_.found() ? hit{0, 0, 0, 0} : hit{};
    hit out = best_;
    if (out.prim == ~0U) out.t = 1e30f;
    return out;
  }

 private:
  ray r_;
  cw_ray w_;
  hit best_;
  std::uint64_t group_ = 0;  // the node group to visit next: wide_entry(base, inner mask, children left)
  int top_ = 0;
  bool live_ = false;
  Counter counter_{};
};

// One node of a breadth-first traversal (bfs.hpp, bfs_tile_cuda.cu): node `node`'s boxes tested
// against ray r (w: prepare_cw(r)) up to its closest hit so far, the packed (t, primitive) word
// *best (global or shared memory, updated by atomic minimum: pairs of one ray may run at once), its
// leaf triangles hit intersected. Returns the inner children entered as one group,
// wide_entry(child base, inner mask, hit mask in the ray's octant order): child k of the mask is
// node inner_child(base, inner mask, k ^ w.oct).
SIEVE_HD inline std::uint64_t cw_visit(const cw_view& v, const ray& r, const cw_ray& w, std::uint64_t* best,
                                       std::uint32_t node) {
  float t = unpack_t(atomic_load_u64(best));
  const cw_node n = load_quads(v.nodes + node);
  const cw_hits h = cw_intersect(n, w, cull_limit(t));
  for (std::uint32_t tris = h.triangles; tris; tris &= tris - 1) {
    const cw_triangle c = load_triangle(v.triangles + n.tri_base + static_cast<std::uint32_t>(lowest_bit(tris)));
    tri_hit th;
    if (!hit_triangle_edges({c.v0.x, c.v0.y, c.v0.z}, {c.e1.x, c.e1.y, c.e1.z}, {c.e2.x, c.e2.y, c.e2.z}, r, t, th)) continue;
    const std::uint32_t prim = float_bits(c.v0.w);
    if (!accept_hit(v.alpha, r, prim, th.u, th.v)) continue;
    atomic_min_u64(best, pack_hit(th.t, prim));
    t = th.t;  // hit_triangle_edges took only t <= the old one (a tie goes to the lower primitive by the minimum)
  }
  return wide_entry(n.child_base, n.inner_mask, h.inner);
}

// The compressed tree of a view, with the view's cut-outs.
SIEVE_HD inline cw_view cw_of(const bvh_view& v) {
  cw_view c = v.cw;
  c.alpha = v.alpha;
  return c;
}

// The whole walk of one ray (a GPU thread's loop, or the CPU's).
template <bool Any, bool Cutouts = true>
SIEVE_HD inline hit cw_trace(const cw_view& v, const ray& r) {
  cw_walk<Any, cw_no_counter, Cutouts> w;
  cw_stack stack;
  w.start(v, r);
  if (w.live())
    while (w.step(v, stack)) {
    }
  return w.result();
}

// The work of one ray's walk (host code: `sieve bench trace`).
template <bool Any>
inline cw_counter cw_count(const cw_view& v, const ray& r) {
  cw_walk<Any, cw_counter> w;
  cw_stack stack;
  w.start(v, r);
  if (w.live())
    while (w.step(v, stack)) {
    }
  return w.counter();
}

SIEVE_HD inline hit cw_closest_hit(const cw_view& v, const ray& r) { return cw_trace<false>(v, r); }
SIEVE_HD inline bool cw_any_hit(const cw_view& v, const ray& r) { return cw_trace<true>(v, r).found(); }

// The hits of a batch of rays as a walk for exec::parallel_walk (ray_walk, dfs.hpp): item i's ray is
// ray(i), its hit goes to hits[i] (any hit: prim 0 at t 0 when blocked). Its persistent warps fetch
// rays once 8 lanes are idle (the binary DFS: 16), and ptxas fits it to 4 blocks of 256 threads per
// multiprocessor (62 registers, nothing spilled; at 5 blocks 48 registers and spills, L2 throughput
// 70 % against 26 %): diffuse rays the same, camera rays by the walk 3847 -> 3980 Mrays/s; 6 blocks
// lost 11 % (H200, 4.7M rays: bench/results/h200/cwbvh-designs-2.txt).
template <bool Any, class Ray, class Count>
struct cw_hits_walk : ray_walk<cw_walk<Any>, cw_stack, cw_view, Ray, Count> {
  static constexpr int refill = 8, min_blocks = 4;
};

template <bool Any, class Ray, class Count>
cw_hits_walk<Any, Ray, Count> make_cw_walk(const cw_view& v, Ray ray, Count count, hit* hits) {
  return {{v, ray, count, hits}};
}

}  // namespace sieve::render
