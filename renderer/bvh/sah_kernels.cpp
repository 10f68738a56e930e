// The binned SAH builder's kernels (sah_kernels.hpp), written once over an operations type and
// compiled for any processor and for AVX2.
#include "sah_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SIEVE_BUILD_AVX2 1
#endif

namespace sieve::render::sah {
namespace {

// The kernels, written once over an operations type: the portable one (scalar lanes) and AVX2.
// Operations read and write 8-lane boxes in memory (32-byte aligned), never pass a vector by value:
// the kernels are compiled for any processor and inlined into the AVX2 entry points, and a 256-bit
// vector crossing a call between the two would change the ABI.
struct portable_ops {
  static void set_empty(float* acc) {
    for (int k = 0; k < 8; ++k) acc[k] = empty_lane;
  }
  static void copy(float* to, const float* from) { std::memcpy(to, from, 8 * sizeof(float)); }
  static void grow(float* acc, const float* x) {  // acc = max(acc, x), lane by lane
    for (int k = 0; k < 8; ++k) acc[k] = std::max(acc[k], x[k]);
  }
  // The three bins of the reference r (lanes 0..2 of out).
  static void bin_of(const float* r, const binner& b, std::int32_t* out) {
    for (int a = 0; a < 3; ++a) {
      const float t = (r[4 + a] - r[a] - b.lo2[a]) * b.scale[a];
      out[a] = std::clamp(static_cast<std::int32_t>(t), 0, b.last);
    }
  }
  // acc grown by r's doubled centroid as a box8 (-c2, c2).
  static void grow_centroid(float* acc, const float* r) {
    for (int a = 0; a < 3; ++a) {
      const float c2 = r[4 + a] - r[a];
      acc[a] = std::max(acc[a], -c2), acc[4 + a] = std::max(acc[4 + a], c2);
    }
  }
  // Half the surface area of a box8 (negative extents, an empty box's, count as 0).
  static float half_area(const float* b) {
    float e[3];
    for (int a = 0; a < 3; ++a) e[a] = std::max(b[4 + a] + b[a], 0.0f);
    return e[0] * e[1] + e[1] * e[2] + e[2] * e[0];
  }
};

#if SIEVE_BUILD_AVX2
#define SIEVE_AVX2 __attribute__((target("avx2"))) inline
struct avx2_ops {
  SIEVE_AVX2 static void set_empty(float* acc) { _mm256_store_ps(acc, _mm256_set1_ps(empty_lane)); }
  SIEVE_AVX2 static void copy(float* to, const float* from) { _mm256_store_ps(to, _mm256_load_ps(from)); }
  SIEVE_AVX2 static void grow(float* acc, const float* x) {
    _mm256_store_ps(acc, _mm256_max_ps(_mm256_load_ps(acc), _mm256_load_ps(x)));
  }
  SIEVE_AVX2 static void bin_of(const float* r, const binner& b, std::int32_t* out) {
    const __m128 c2 = _mm_sub_ps(_mm_load_ps(r + 4), _mm_load_ps(r));
    const __m128 t = _mm_mul_ps(_mm_sub_ps(c2, _mm_load_ps(b.lo2)), _mm_load_ps(b.scale));
    const __m128i k = _mm_min_epi32(_mm_max_epi32(_mm_cvttps_epi32(t), _mm_setzero_si128()), _mm_set1_epi32(b.last));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), k);
  }
  SIEVE_AVX2 static void grow_centroid(float* acc, const float* r) {
    const __m128 c2 = _mm_sub_ps(_mm_load_ps(r + 4), _mm_load_ps(r));
    const __m128 keep = _mm_castsi128_ps(_mm_set_epi32(0, -1, -1, -1));
    const __m128 empty = _mm_andnot_ps(keep, _mm_set1_ps(empty_lane));
    const __m128 hi = _mm_or_ps(_mm_and_ps(c2, keep), empty);
    const __m128 lo = _mm_or_ps(_mm_and_ps(_mm_sub_ps(_mm_setzero_ps(), c2), keep), empty);
    _mm256_store_ps(acc, _mm256_max_ps(_mm256_load_ps(acc), _mm256_set_m128(hi, lo)));
  }
  SIEVE_AVX2 static float half_area(const float* b) {
    const __m128 e = _mm_max_ps(_mm_add_ps(_mm_load_ps(b + 4), _mm_load_ps(b)), _mm_setzero_ps());
    const __m128 p = _mm_mul_ps(e, _mm_shuffle_ps(e, e, _MM_SHUFFLE(3, 0, 2, 1)));  // xy, yz, zx
    return _mm_cvtss_f32(_mm_add_ss(_mm_add_ss(p, _mm_shuffle_ps(p, p, 1)), _mm_movehl_ps(p, p)));
  }
};
#endif

// Adds the reference r to its bin on each axis. (A function, not a lambda: a lambda does not take
// the AVX2 target of the kernel it sits in, and the operations would not inline into it.)
template <class Ops>
SIEVE_FORCE_INLINE void bin_one(const float* r, const binner& bn, bins& to) {
  alignas(16) std::int32_t k[4];
  Ops::bin_of(r, bn, k);
  Ops::grow(to.box[0][k[0]].lane, r);
  Ops::grow(to.box[1][k[1]].lane, r);
  Ops::grow(to.box[2][k[2]].lane, r);
  ++to.count[0][k[0]], ++to.count[1][k[1]], ++to.count[2][k[2]];
}

// The split of least cost over a node's bins: on each axis the right side's cost of every split
// (from the top bin down), then the left side's (from bin 0 up). The three axes go through each bin
// together: three independent chains of box growth, not one waiting on itself; the choice then
// runs as the axes one after another would (the first of least cost on the lowest axis wins).
template <class Ops>
SIEVE_FORCE_INLINE split sweep(const bins& b, const binner& bn, std::uint32_t n) {
  alignas(32) float acc[3][8];
  float cost[3][max_bins];
  std::uint32_t side[3] = {0, 0, 0}, total[3];
  for (int a = 0; a < 3; ++a) Ops::set_empty(acc[a]);
  for (std::uint32_t j = n - 1; j > 0; --j)
    for (int a = 0; a < 3; ++a) {
      Ops::grow(acc[a], b.box[a][j].lane);
      side[a] += b.count[a][j];
      cost[a][j] = Ops::half_area(acc[a]) * static_cast<float>(side[a]);
    }
  for (int a = 0; a < 3; ++a) total[a] = side[a] + b.count[a][0], side[a] = 0, Ops::set_empty(acc[a]);
  for (std::uint32_t j = 0; j + 1 < n; ++j)
    for (int a = 0; a < 3; ++a) {
      Ops::grow(acc[a], b.box[a][j].lane);
      side[a] += b.count[a][j];
      // cost[a][j]: now that of the split below bin j + 1 (both sides), or none
      const bool both = side[a] > 0 && side[a] < total[a];
      cost[a][j] = both ? Ops::half_area(acc[a]) * static_cast<float>(side[a]) + cost[a][j + 1] : 1e30f;
    }
  split best;
  for (int axis = 0; axis < 3; ++axis) {
    if (bn.scale[axis] <= 0) continue;
    for (std::uint32_t j = 0; j + 1 < n; ++j)
      if (cost[axis][j] < best.cost) best = {axis, static_cast<std::int32_t>(j + 1), cost[axis][j]};
  }
  return best;
}

// Bins the references begin, begin + stride, ... (< end) into n bins per axis and sweeps them for
// the split of least cost.
template <class Ops>
SIEVE_FORCE_INLINE split bin_kernel(const prim_ref* refs, std::uint32_t begin, std::uint32_t end, std::uint32_t stride,
                                    const binner& bn, std::uint32_t n) {
  // Two sets of bins, for alternate references, when there are many: consecutive references often
  // fall in the same bin, and one set makes each update wait for the previous one's store.
  const bool two = (end - begin) / stride >= 64;
  bins b, b2;
  for (int a = 0; a < 3; ++a)
    for (std::uint32_t k = 0; k < n; ++k) {
      Ops::set_empty(b.box[a][k].lane), b.count[a][k] = 0;
      if (two) Ops::set_empty(b2.box[a][k].lane), b2.count[a][k] = 0;
    }
  std::uint32_t i = begin;
  if (two) {
    for (; i + stride < end; i += 2 * stride) bin_one<Ops>(refs[i].lane, bn, b), bin_one<Ops>(refs[i + stride].lane, bn, b2);
    if (i < end) bin_one<Ops>(refs[i].lane, bn, b);
    for (int a = 0; a < 3; ++a)
      for (std::uint32_t j = 0; j < n; ++j) {
        Ops::grow(b.box[a][j].lane, b2.box[a][j].lane);
        b.count[a][j] += b2.count[a][j];
      }
  } else {
    for (; i < end; i += stride) bin_one<Ops>(refs[i].lane, bn, b);
  }
  return sweep<Ops>(b, bn, n);
}

// Puts the references of [begin, end) whose bin on `axis` is below `split` first and returns where
// the others begin; measures both sides' bounds and centroid bounds on the way.
template <class Ops>
SIEVE_FORCE_INLINE std::uint32_t partition_kernel(prim_ref* refs, std::uint32_t begin, std::uint32_t end, int axis,
                                                  std::int32_t split, const binner& bn, range_bounds& left,
                                                  range_bounds& right) {
  alignas(16) std::int32_t k[4];
  alignas(32) float held[8];
  // The bounds grown in locals, not through the references' memory: a store to a reference cannot
  // change a local, so the four boxes stay in registers across the swaps.
  range_bounds l = left, rr = right;
  std::uint32_t i = begin, j = end;
  while (i < j) {
    const float* r = refs[i].lane;
    Ops::bin_of(r, bn, k);
    if (k[axis] < split) {
      Ops::grow(l.bounds.lane, r), Ops::grow_centroid(l.centroids.lane, r);
      ++i;
    } else {
      Ops::grow(rr.bounds.lane, r), Ops::grow_centroid(rr.centroids.lane, r);
      --j;
      Ops::copy(held, r);
      Ops::copy(refs[i].lane, refs[j].lane);
      Ops::copy(refs[j].lane, held);
    }
  }
  left = l, right = rr;
  return i;
}

template <class Ops>
SIEVE_FORCE_INLINE void measure_kernel(const prim_ref* refs, std::uint32_t begin, std::uint32_t end, range_bounds& out) {
  range_bounds m = out;
  for (std::uint32_t i = begin; i < end; ++i) Ops::grow(m.bounds.lane, refs[i].lane), Ops::grow_centroid(m.centroids.lane, refs[i].lane);
  out = m;
}

template <class Ops>
kernels kernels_of() {
  return {bin_kernel<Ops>, partition_kernel<Ops>, measure_kernel<Ops>};
}

#if SIEVE_BUILD_AVX2
__attribute__((target("avx2"))) split bin_avx2(const prim_ref* r, std::uint32_t b, std::uint32_t e, std::uint32_t s,
                                               const binner& bn, std::uint32_t n) {
  return bin_kernel<avx2_ops>(r, b, e, s, bn, n);
}
__attribute__((target("avx2"))) std::uint32_t partition_avx2(prim_ref* r, std::uint32_t b, std::uint32_t e, int axis,
                                                             std::int32_t split, const binner& bn, range_bounds& l,
                                                             range_bounds& rr) {
  return partition_kernel<avx2_ops>(r, b, e, axis, split, bn, l, rr);
}
__attribute__((target("avx2"))) void measure_avx2(const prim_ref* r, std::uint32_t b, std::uint32_t e, range_bounds& out) {
  measure_kernel<avx2_ops>(r, b, e, out);
}
#endif

}  // namespace

kernels pick_kernels(bool simd) {
#if SIEVE_BUILD_AVX2
  if (simd && __builtin_cpu_supports("avx2")) return {bin_avx2, partition_avx2, measure_avx2};
#endif
  return kernels_of<portable_ops>();
}

}  // namespace sieve::render::sah
