// The wide BVH's traversal on the CPU, with the eight boxes of a node tested in one AVX2 pass (8
// float lanes: dequantise, slab test, compare, movemask), chosen at run time when the processor has
// AVX2; else the portable box test of wide.hpp.
//
// The traversal takes another shape here than on the GPU (wide.hpp's, octant order): the box test
// gives every child's entry distance for free, so the children hit are visited nearest first and
// each waits on the stack with its distance, skipped when the closest hit has moved in front of it
// (as the binary DFS does), and the inner children hit are prefetched while the leaves are tested.
// On the GPU the octant order saves the sort and the larger stack. wide.hpp's traversal is still
// tested on the CPU (tests/bvh_test.cpp), with the same box test the GPU uses.
//
// The AVX2 functions are compiled with target("avx2") only, not "fma": g++ contracts a * b + c
// into a fused multiply-add where FMA is enabled, and the triangle test inlined here must round
// exactly as it does elsewhere, so the hits stay bit-identical to the binary DFS and the portable path.
#include "wide.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SIEVE_WIDE_AVX2 1
#endif

namespace sieve::render {
namespace {

// Closest hit, children nearest first. The stack holds (node, entry distance); a visit pushes at
// most seven, so it never holds more than 7 per level plus one.
struct near_entry {
  std::uint32_t node;
  float t;
};
constexpr int near_stack_size = 7 * dfs_stack_size + 1;

// What the node's hits will read next starts on its way from memory at once (an incoherent ray
// misses the cache on most nodes and leaves): the inner children's nodes, and the triangles of
// every leaf hit, so that their misses overlap instead of following one another.
SIEVE_FORCE_INLINE void prefetch_children(const wide_view& v, const wide_node& n, std::uint32_t hits) {
  std::uint32_t inner = hits & n.inner_mask;
  while (inner) {
    const int s = lowest_bit(inner);
    inner &= inner - 1;
    const char* p = reinterpret_cast<const char*>(v.nodes + inner_child(n.child_base, n.inner_mask, s));
    __builtin_prefetch(p);
    __builtin_prefetch(p + 64);
  }
  std::uint32_t leaves = hits & ~std::uint32_t{n.inner_mask};
  if (!leaves) return;
  const std::uint64_t counts = leaf_counts(n);
  while (leaves) {
    const int s = lowest_bit(leaves);
    leaves &= leaves - 1;
    const char* p = reinterpret_cast<const char*>(v.triangles + n.tri_base + leaf_offset(counts, s));
    const char* end = p + n.meta[s] * sizeof(leaf_triangle);
    for (; p < end; p += 64) __builtin_prefetch(p);
  }
}

// Closest hit (Any = false) or any hit (Any = true: found() says blocked), children nearest first.
template <bool Any, class Boxes>
SIEVE_FORCE_INLINE hit nearest_first(const wide_view& v, const ray& r, Boxes boxes, const alpha_view& alpha) {
  hit best;
  if (v.node_count == 0) return best;
  best.t = r.tmax;
  const wide_ray w = prepare_wide(r);
  near_entry stack[near_stack_size];
  int top = 0;
  std::uint32_t node = 0;
  while (true) {
    const wide_node& n = v.nodes[node];
    alignas(32) float enter[wide_arity];
    const std::uint32_t hits = boxes(n, w, Any ? r.tmax : cull_limit(best.t), enter);
    prefetch_children(v, n, hits);
    const bool blocked = for_leaf_triangles(n, hits & ~std::uint32_t{n.inner_mask}, 0, [&](std::uint32_t i) {
      tri_hit h;
      if (!hit_triangle(v.triangles[i].get(), r, best.t, h)) return false;
      const std::uint32_t prim = v.prims[i];
      if (Any) return accept_hit(alpha, r, prim, h.u, h.v);
      if (closer(h.t, prim, best) && accept_hit(alpha, r, prim, h.u, h.v)) best = {h.t, prim, h.u, h.v};
      return false;
    });
    if (Any && blocked) return {0, 0, 0, 0};
    // Inner children onto the stack, farthest first (insertion into the top of the stack).
    std::uint32_t inner = hits & n.inner_mask;
    const int bottom = top;
    while (inner) {
      const int s = lowest_bit(inner);
      inner &= inner - 1;
      const near_entry e{inner_child(n.child_base, n.inner_mask, s), enter[s]};
      int j = top++;
      while (j > bottom && stack[j - 1].t < e.t) {
        stack[j] = stack[j - 1];
        --j;
      }
      stack[j] = e;
    }
    // The nearest entry still in front of the closest hit.
    const float limit = cull_limit(best.t);
    while (top > 0 && !(stack[top - 1].t <= limit)) --top;
    if (top == 0) break;
    node = stack[--top].node;
  }
  if (best.prim == ~0U) best.t = 1e30f;
  return best;
}

#if SIEVE_WIDE_AVX2
struct avx2_boxes {
  __attribute__((target("avx2"))) std::uint32_t operator()(const wide_node& n, const wide_ray& w, float limit,
                                                           float* enter_out = nullptr) const {
    const float o[3] = {w.r.origin.x, w.r.origin.y, w.r.origin.z};
    const float inv[3] = {w.inv.x, w.inv.y, w.inv.z};
    __m256 enter = _mm256_setzero_ps(), leave = _mm256_set1_ps(limit);
    for (int k = 0; k < 3; ++k) {
      const __m256 a = _mm256_set1_ps(exp2_of(n.exponent[k]) * inv[k]);
      const __m256 b = _mm256_set1_ps((n.origin[k] - o[k]) * inv[k]);
      const __m256 lo = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(n.lo[k]))));
      const __m256 hi = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(n.hi[k]))));
      const __m256 t0 = _mm256_add_ps(_mm256_mul_ps(lo, a), b), t1 = _mm256_add_ps(_mm256_mul_ps(hi, a), b);
      enter = _mm256_max_ps(enter, _mm256_min_ps(t0, t1));
      leave = _mm256_min_ps(leave, _mm256_max_ps(t0, t1));
    }
    if (enter_out) _mm256_store_ps(enter_out, enter);
    const auto hit = static_cast<std::uint32_t>(_mm256_movemask_ps(_mm256_cmp_ps(enter, leave, _CMP_LE_OQ)));
    const __m128i meta = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(n.meta));
    const auto empty = static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(meta, _mm_setzero_si128()))) & 0xFFU;
    return hit & ~empty;
  }
};

__attribute__((target("avx2"))) hit closest_avx2(const wide_view& v, const ray& r, const alpha_view& alpha) {
  return nearest_first<false>(v, r, avx2_boxes{}, alpha);
}
__attribute__((target("avx2"))) bool any_avx2(const wide_view& v, const ray& r, const alpha_view& alpha) {
  return nearest_first<true>(v, r, avx2_boxes{}, alpha).found();
}

bool use_avx2(wide_path path) {
  static const bool has = cpu_has_avx2();
  if (path == wide_path::avx2 && !has) throw error("the AVX2 traversal was asked for on a processor without AVX2");
  return path == wide_path::avx2 || (path == wide_path::automatic && has);
}
#endif

}  // namespace

bool cpu_has_avx2() {
#if SIEVE_WIDE_AVX2
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

hit wide_closest_hit_cpu(const wide_view& v, const ray& r, wide_path path, const alpha_view& alpha) {
#if SIEVE_WIDE_AVX2
  if (use_avx2(path)) return closest_avx2(v, r, alpha);
#endif
  (void)path;
  return nearest_first<false>(v, r, scalar_boxes{}, alpha);
}

bool wide_any_hit_cpu(const wide_view& v, const ray& r, wide_path path, const alpha_view& alpha) {
#if SIEVE_WIDE_AVX2
  if (use_avx2(path)) return any_avx2(v, r, alpha);
#endif
  (void)path;
  return nearest_first<true>(v, r, scalar_boxes{}, alpha).found();
}

}  // namespace sieve::render
