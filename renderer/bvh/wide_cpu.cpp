// The wide BVH's traversal on the CPU: the traversal of wide.hpp with the eight boxes of a node
// tested in one AVX2 pass (8 float lanes: dequantise, slab test, compare, movemask), chosen at run
// time when the processor has AVX2; else the portable box test of wide.hpp.
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

#if SIEVE_WIDE_AVX2
struct avx2_boxes {
  __attribute__((target("avx2"))) std::uint32_t operator()(const wide_node& n, const wide_ray& w, float limit) const {
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
    const auto hit = static_cast<std::uint32_t>(_mm256_movemask_ps(_mm256_cmp_ps(enter, leave, _CMP_LE_OQ)));
    const __m128i meta = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(n.meta));
    const auto empty = static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(meta, _mm_setzero_si128()))) & 0xFFU;
    return hit & ~empty;
  }
};

__attribute__((target("avx2"))) hit closest_avx2(const wide_view& v, const ray& r) {
  return wide_closest_hit(v, r, avx2_boxes{});
}
__attribute__((target("avx2"))) bool any_avx2(const wide_view& v, const ray& r) { return wide_any_hit(v, r, avx2_boxes{}); }

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

hit wide_closest_hit_cpu(const wide_view& v, const ray& r, wide_path path) {
#if SIEVE_WIDE_AVX2
  if (use_avx2(path)) return closest_avx2(v, r);
#endif
  (void)path;
  return wide_closest_hit(v, r, scalar_boxes{});
}

bool wide_any_hit_cpu(const wide_view& v, const ray& r, wide_path path) {
#if SIEVE_WIDE_AVX2
  if (use_avx2(path)) return any_avx2(v, r);
#endif
  (void)path;
  return wide_any_hit(v, r, scalar_boxes{});
}

}  // namespace sieve::render
