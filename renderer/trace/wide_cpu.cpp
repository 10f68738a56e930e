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
// The leaf triangles are read as blocks of eight (leaf_block, wide_blocks.cpp), nine aligned loads
// a block. An AVX-512 variant (mask registers, the children hit compressed) is there when asked for.
//
// This file is compiled without multiply-add contraction (renderer/CMakeLists.txt): the AVX-512
// target enables FMA, and the triangle test here must round exactly as hit_triangle does elsewhere,
// so the hits stay bit-identical to the binary DFS and the portable path.
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

// The inner children hit, as (node, entry distance), in slot order; returns how many. The SIMD paths
// may give them otherwise (avx512_boxes: by compressing lanes).
SIEVE_FORCE_INLINE int inner_hits(const wide_node& n, std::uint32_t hits, const float* enter, near_entry* out) {
  std::uint32_t inner = hits & n.inner_mask;
  int count = 0;
  while (inner) {
    const int s = lowest_bit(inner);
    inner &= inner - 1;
    out[count++] = {inner_child(n.child_base, n.inner_mask, s), enter[s]};
  }
  return count;
}

// The closest hit so far: its t, u, v in `hit` (prim left ~0) and its triangle's position in the
// leaf order; the primitive's index is read once at the end (an incoherent ray misses the cache on
// the index array, so it is not read for every hit that a nearer one replaces), or where a tie at the
// same t or a cut-out needs it.
struct closest_so_far {
  hit h;
  std::uint32_t at = ~0U;
};

// Keeps the hit of the triangle at position i (t, u, v) when it is the closest so far: the least
// (t, primitive), as closer() orders them, accepted by the cut-outs. The scalar and the SIMD leaf tests share it.
SIEVE_FORCE_INLINE void keep_closest(const wide_view& v, const ray& r, const alpha_view& alpha, std::uint32_t i, float t,
                                     float u, float w, closest_so_far& best) {
  if (!(t <= best.h.t)) return;
  if (t == best.h.t && !(v.prims[i] < (best.at == ~0U ? ~0U : v.prims[best.at]))) return;
  if (alpha.present() && !accept_hit(alpha, r, v.prims[i], u, w)) return;
  best.h = {t, ~0U, u, w};
  best.at = i;
}

// The portable leaf test: triangle by triangle (hit_triangle). Tests the triangles of n's leaf slots
// `leaves` against r: closest hit (Any false) into best, or (Any) true at the first that blocks r.
struct scalar_triangles {
  template <bool Any>
  SIEVE_FORCE_INLINE bool test(const wide_view& v, const wide_node& n, std::uint32_t leaves, const ray& r,
                               closest_so_far& best, const alpha_view& alpha) const {
    return for_leaf_triangles(n, leaves, 0, [&](std::uint32_t i) {
      tri_hit h;
      if (!hit_triangle(v.triangles[i].get(), r, best.h.t, h)) return false;
      if (Any) return accept_hit(alpha, r, v.prims[i], h.u, h.v);
      keep_closest(v, r, alpha, i, h.t, h.u, h.v, best);
      return false;
    });
  }
};

// The portable box test (wide.hpp), its inner children hit listed by inner_hits.
struct portable_boxes : scalar_boxes {
  static int children(const wide_node& n, std::uint32_t hits, const float* enter, near_entry* out) {
    return inner_hits(n, hits, enter, out);
  }
};

// Closest hit (Any = false) or any hit (Any = true: found() says blocked), children nearest first
// (any hit: in slot order, unsorted: any blocker ends the walk, so order buys nothing).
template <bool Any, class Boxes, class Triangles>
SIEVE_FORCE_INLINE hit nearest_first(const wide_view& v, const ray& r, Boxes boxes, Triangles tris, const alpha_view& alpha) {
  if (v.node_count == 0) return {};
  closest_so_far best;
  best.h.t = r.tmax;
  const wide_ray w = prepare_wide(r);
  near_entry stack[near_stack_size];
  int top = 0;
  std::uint32_t node = 0;
  while (true) {
    const wide_node& n = v.nodes[node];
    alignas(32) float enter[wide_arity];
    const std::uint32_t hits = boxes(n, w, Any ? r.tmax : cull_limit(best.h.t), enter);
    // What the node's hits will read next starts on its way from memory at once (an incoherent ray
    // misses the cache on most nodes): the inner children's nodes, while the leaves are tested.
    near_entry kids[wide_arity];
    const int count = boxes.children(n, hits, enter, kids);
    for (int c = 0; c < count; ++c) {
      const char* p = reinterpret_cast<const char*>(v.nodes + kids[c].node);
      __builtin_prefetch(p);
      __builtin_prefetch(p + 64);
    }
    const bool blocked = tris.template test<Any>(v, n, hits & ~std::uint32_t{n.inner_mask}, r, best, alpha);
    if (Any && blocked) return {0, 0, 0, 0};
    // Inner children onto the stack, farthest first (insertion into the top of the stack).
    const int bottom = top;
    for (int c = 0; c < count; ++c) {
      const near_entry e = kids[c];
      int j = top++;
      while (!Any && j > bottom && stack[j - 1].t < e.t) {
        stack[j] = stack[j - 1];
        --j;
      }
      stack[j] = e;
    }
    // The nearest entry still in front of the closest hit.
    const float limit = cull_limit(best.h.t);
    while (top > 0 && !(stack[top - 1].t <= limit)) --top;
    if (top == 0) break;
    node = stack[--top].node;
  }
  if (best.at == ~0U) return {};
  best.h.prim = v.prims[best.at];
  return best.h;
}

#if SIEVE_WIDE_AVX2
// The slab test of a node's eight boxes (8 float lanes: dequantise, slab distances, entry and exit).
struct slabs8 {
  __m256 enter, leave;
};
__attribute__((target("avx2"))) SIEVE_FORCE_INLINE slabs8 slab_test(const wide_node& n, const wide_ray& w, float limit) {
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
  return {enter, leave};
}

struct avx2_boxes {
  static int children(const wide_node& n, std::uint32_t hits, const float* enter, near_entry* out) {
    return inner_hits(n, hits, enter, out);
  }
  __attribute__((target("avx2"))) std::uint32_t operator()(const wide_node& n, const wide_ray& w, float limit, float* enter_out) const {
    const slabs8 s = slab_test(n, w, limit);
    _mm256_store_ps(enter_out, s.enter);
    const auto hit = static_cast<std::uint32_t>(_mm256_movemask_ps(_mm256_cmp_ps(s.enter, s.leave, _CMP_LE_OQ)));
    const __m128i meta = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(n.meta));
    const auto empty = static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(meta, _mm_setzero_si128()))) & 0xFFU;
    return hit & ~empty;
  }
};

// The AVX-512 variant (AVX-512 F, VL, BW, DQ on 256-bit registers: the node's eight slots fill one):
// the comparisons straight into mask registers, and the inner children hit listed by expanding the
// inner slots' node indices and compressing the lanes hit, instead of a loop over the mask's bits.
#define SIEVE_AVX512 __attribute__((target("avx2,avx512f,avx512vl,avx512bw,avx512dq")))
struct avx512_boxes {
  SIEVE_AVX512 std::uint32_t operator()(const wide_node& n, const wide_ray& w, float limit, float* enter_out) const {
    const slabs8 s = slab_test(n, w, limit);
    _mm256_store_ps(enter_out, s.enter);
    const __mmask8 used = _mm_test_epi8_mask(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(n.meta)), _mm_set1_epi8(-1));
    return _mm256_mask_cmp_ps_mask(used, s.enter, s.leave, _CMP_LE_OQ);
  }
  SIEVE_AVX512 static int children(const wide_node& n, std::uint32_t hits, const float* enter, near_entry* out) {
    const auto inner = static_cast<__mmask8>(hits & n.inner_mask);
    if (!inner) return 0;
    const __m256i slots = _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(static_cast<int>(n.child_base)));
    const __m256i node = _mm256_maskz_compress_epi32(inner, _mm256_maskz_expand_epi32(n.inner_mask, slots));
    const __m256i t = _mm256_maskz_compress_epi32(inner, _mm256_castps_si256(_mm256_load_ps(enter)));
    const __m256i lo = _mm256_unpacklo_epi32(node, t), hi = _mm256_unpackhi_epi32(node, t);  // (node, t) pairs
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_permute2x128_si256(lo, hi, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out) + 1, _mm256_permute2x128_si256(lo, hi, 0x31));
    return bit_count(inner);
  }
};

// The leaf test eight triangles at once, a block of leaf_block's: every lane does hit_triangle_edges'
// operations in its order (no fused multiply-adds, the same comparisons, NaNs rejected alike), so the
// hits are bit-identical. A node's leaf triangles are whole blocks; a block is tested when a leaf
// hit has triangles in it, its lanes of other leaves (and padding) masked off.
struct avx2_triangles {
  struct vec8 {
    __m256 x, y, z;
  };
  __attribute__((target("avx2"))) static vec8 load(const float (*c)[8]) {
    return {_mm256_load_ps(c[0]), _mm256_load_ps(c[1]), _mm256_load_ps(c[2])};
  }
  __attribute__((target("avx2"))) static __m256 mul_sub(__m256 a, __m256 b, __m256 c, __m256 d) {  // a * b - c * d
    return _mm256_sub_ps(_mm256_mul_ps(a, b), _mm256_mul_ps(c, d));
  }
  __attribute__((target("avx2"))) static __m256 dot(const vec8& a, const vec8& b) {
    return _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(a.x, b.x), _mm256_mul_ps(a.y, b.y)), _mm256_mul_ps(a.z, b.z));
  }
  __attribute__((target("avx2"))) static vec8 cross(const vec8& a, const vec8& b) {
    return {mul_sub(a.y, b.z, a.z, b.y), mul_sub(a.z, b.x, a.x, b.z), mul_sub(a.x, b.y, a.y, b.x)};
  }

  // Hit lanes of block b within tmax; t, u, v of each lane stored.
  __attribute__((target("avx2"))) static std::uint32_t test8(const leaf_block& b, const ray& r, float tmax, float* t_out,
                                                             float* u_out, float* v_out) {
    const vec8 v0 = load(b.v0), e1 = load(b.e1), e2 = load(b.e2);
    const vec8 d{_mm256_set1_ps(r.direction.x), _mm256_set1_ps(r.direction.y), _mm256_set1_ps(r.direction.z)};
    const vec8 p = cross(d, e2);
    const __m256 det = dot(e1, p);
    const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
    __m256 reject = _mm256_cmp_ps(_mm256_andnot_ps(sign, det), _mm256_set1_ps(1e-12f), _CMP_LT_OQ);
    const __m256 inv = _mm256_div_ps(one, det);
    const vec8 s{_mm256_sub_ps(_mm256_set1_ps(r.origin.x), v0.x), _mm256_sub_ps(_mm256_set1_ps(r.origin.y), v0.y),
                 _mm256_sub_ps(_mm256_set1_ps(r.origin.z), v0.z)};
    const __m256 u = _mm256_mul_ps(dot(s, p), inv);
    reject = _mm256_or_ps(reject, _mm256_or_ps(_mm256_cmp_ps(u, zero, _CMP_LT_OQ), _mm256_cmp_ps(u, one, _CMP_GT_OQ)));
    const vec8 q = cross(s, e1);
    const __m256 w = _mm256_mul_ps(dot(d, q), inv);
    reject = _mm256_or_ps(reject, _mm256_or_ps(_mm256_cmp_ps(w, zero, _CMP_LT_OQ),
                                               _mm256_cmp_ps(_mm256_add_ps(u, w), one, _CMP_GT_OQ)));
    const __m256 t = _mm256_mul_ps(dot(e2, q), inv);
    const __m256 magnitude = _mm256_max_ps(_mm256_andnot_ps(sign, t), one);  // |t| > 1 ? |t| : 1 (NaN: 1)
    const __m256 accept = _mm256_and_ps(_mm256_cmp_ps(t, _mm256_mul_ps(_mm256_set1_ps(1e-6f), magnitude), _CMP_GT_OQ),
                                        _mm256_cmp_ps(t, _mm256_set1_ps(tmax), _CMP_LE_OQ));
    const auto mask = static_cast<std::uint32_t>(_mm256_movemask_ps(_mm256_andnot_ps(reject, accept)));
    if (mask) _mm256_store_ps(t_out, t), _mm256_store_ps(u_out, u), _mm256_store_ps(v_out, w);
    return mask;
  }

  template <bool Any>
  __attribute__((target("avx2"))) bool test(const wide_view& v, const wide_node& n, std::uint32_t leaves, const ray& r,
                                            closest_so_far& best, const alpha_view& alpha) const {
    if (!leaves) return false;
    std::uint64_t active[4] = {};  // bit i: the node's leaf triangle i is in a leaf hit (at most 248)
    const std::uint64_t counts = leaf_counts(n);
    while (leaves) {
      const int s = lowest_bit(leaves);
      leaves &= leaves - 1;
      const std::uint32_t off = leaf_offset(counts, s), word = off / 64, bit = off % 64;
      const std::uint64_t ones = (std::uint64_t{1} << n.meta[s]) - 1;
      active[word] |= ones << bit;
      if (bit + n.meta[s] > 64) active[word + 1] |= ones >> (64 - bit);
    }
    alignas(32) float t[8], u[8], w[8];
    for (std::uint32_t word = 0; word < 4; ++word) {
      for (std::uint64_t bits = active[word]; bits;) {
        const std::uint32_t k = static_cast<std::uint32_t>(__builtin_ctzll(bits)) / 8;  // the block in this word
        const auto lanes = static_cast<std::uint32_t>(bits >> (8 * k)) & 0xFFU;
        bits &= ~(std::uint64_t{0xFF} << (8 * k));
        const std::uint32_t first = n.tri_base + 64 * word + 8 * k;
        std::uint32_t mask = test8(v.blocks[first / 8], r, best.h.t, t, u, w) & lanes;
        while (mask) {
          const int lane = lowest_bit(mask);
          mask &= mask - 1;
          const std::uint32_t i = first + static_cast<std::uint32_t>(lane);
          if (Any) {
            if (accept_hit(alpha, r, v.prims[i], u[lane], w[lane])) return true;
          } else {
            keep_closest(v, r, alpha, i, t[lane], u[lane], w[lane], best);
          }
        }
      }
    }
    return false;
  }
};

__attribute__((target("avx2"))) hit closest_avx2(const wide_view& v, const ray& r, const alpha_view& alpha) {
  return nearest_first<false>(v, r, avx2_boxes{}, avx2_triangles{}, alpha);
}
__attribute__((target("avx2"))) bool any_avx2(const wide_view& v, const ray& r, const alpha_view& alpha) {
  return nearest_first<true>(v, r, avx2_boxes{}, avx2_triangles{}, alpha).found();
}

SIEVE_AVX512 hit closest_avx512(const wide_view& v, const ray& r, const alpha_view& alpha) {
  return nearest_first<false>(v, r, avx512_boxes{}, avx2_triangles{}, alpha);
}
SIEVE_AVX512 bool any_avx512(const wide_view& v, const ray& r, const alpha_view& alpha) {
  return nearest_first<true>(v, r, avx512_boxes{}, avx2_triangles{}, alpha).found();
}

// Which SIMD path runs: 0 the portable one, 1 AVX2, 2 AVX-512 (only when asked for: measured slower
// than AVX2 on the sphere room, bvh-cpu-designs.txt).
int simd_path(wide_path path) {
  static const bool avx2 = cpu_has_avx2(), avx512 = cpu_has_avx512();
  if (path == wide_path::avx2 && !avx2) throw error("the AVX2 traversal was asked for on a processor without AVX2");
  if (path == wide_path::avx512 && !avx512)
    throw error("the AVX-512 traversal was asked for on a processor without AVX-512 (F, VL, BW, DQ)");
  if (path == wide_path::avx512) return 2;
  return path == wide_path::avx2 || (path == wide_path::automatic && avx2) ? 1 : 0;
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

bool cpu_has_avx512() {
#if SIEVE_WIDE_AVX2
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq");
#else
  return false;
#endif
}

hit wide_closest_hit_cpu(const wide_view& v, const ray& r, wide_path path, const alpha_view& alpha) {
#if SIEVE_WIDE_AVX2
  const int simd = v.blocks ? simd_path(path) : 0;  // a view without leaf blocks: the portable path
  if (simd == 2) return closest_avx512(v, r, alpha);
  if (simd == 1) return closest_avx2(v, r, alpha);
#endif
  (void)path;
  return nearest_first<false>(v, r, portable_boxes{}, scalar_triangles{}, alpha);
}

bool wide_any_hit_cpu(const wide_view& v, const ray& r, wide_path path, const alpha_view& alpha) {
#if SIEVE_WIDE_AVX2
  const int simd = v.blocks ? simd_path(path) : 0;  // a view without leaf blocks: the portable path
  if (simd == 2) return any_avx512(v, r, alpha);
  if (simd == 1) return any_avx2(v, r, alpha);
#endif
  (void)path;
  return nearest_first<true>(v, r, portable_boxes{}, scalar_triangles{}, alpha).found();
}

}  // namespace sieve::render
