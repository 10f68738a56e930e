// Small vector math for the renderer, written once for the CPU and the GPU (SIEVE_HD).
#pragma once

#include <sieve/hd.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

// For the few small functions a traversal's inner loop must not call (g++ would otherwise keep
// the triangle test out of line in the AVX2 traversal, which has another target).
#if defined(__CUDACC__)
#define SIEVE_FORCE_INLINE __forceinline__
#elif defined(__GNUC__)
#define SIEVE_FORCE_INLINE inline __attribute__((always_inline))
#else
#define SIEVE_FORCE_INLINE inline
#endif

namespace sieve::render {

// A float's bits as a 32-bit word and back: a reinterpretation, not a conversion (the intrinsic in
// device code, a memcpy on the host; both are a register move).
SIEVE_HD inline std::uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}
SIEVE_HD inline float bits_float(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

struct vec3 {
  float x = 0, y = 0, z = 0;
  SIEVE_HD constexpr float operator[](int i) const { return i == 0 ? x : i == 1 ? y : z; }
};

SIEVE_HD constexpr vec3 operator+(vec3 a, vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
SIEVE_HD constexpr vec3 operator-(vec3 a, vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
SIEVE_HD constexpr vec3 operator-(vec3 a) { return {-a.x, -a.y, -a.z}; }
SIEVE_HD constexpr vec3 operator*(vec3 a, vec3 b) { return {a.x * b.x, a.y * b.y, a.z * b.z}; }
SIEVE_HD constexpr vec3 operator*(vec3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
SIEVE_HD constexpr vec3 operator*(float s, vec3 a) { return a * s; }
SIEVE_HD constexpr vec3 operator/(vec3 a, float s) { return {a.x / s, a.y / s, a.z / s}; }
SIEVE_HD constexpr vec3& operator+=(vec3& a, vec3 b) { return a = a + b; }
SIEVE_HD constexpr vec3& operator*=(vec3& a, vec3 b) { return a = a * b; }

SIEVE_HD constexpr float dot(vec3 a, vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
SIEVE_HD constexpr vec3 cross(vec3 a, vec3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
SIEVE_HD inline float length(vec3 a) { return std::sqrt(dot(a, a)); }
SIEVE_HD inline vec3 normalize(vec3 a) { return a * (1.0f / length(a)); }
SIEVE_HD constexpr vec3 min(vec3 a, vec3 b) {
  return {a.x < b.x ? a.x : b.x, a.y < b.y ? a.y : b.y, a.z < b.z ? a.z : b.z};
}
SIEVE_HD constexpr vec3 max(vec3 a, vec3 b) {
  return {a.x > b.x ? a.x : b.x, a.y > b.y ? a.y : b.y, a.z > b.z ? a.z : b.z};
}
SIEVE_HD constexpr float max_component(vec3 a) { return a.x > a.y ? (a.x > a.z ? a.x : a.z) : (a.y > a.z ? a.y : a.z); }
SIEVE_HD inline bool finite(vec3 a) { return std::isfinite(a.x) && std::isfinite(a.y) && std::isfinite(a.z); }

struct ray {
  vec3 origin;
  vec3 direction;  // not necessarily unit length
  float tmax = 1e30f;
};

// An axis-aligned box; empty() until something is added. It starts at +-infinity, not at a large
// finite value, so that a point beyond that value (any finite float) still moves both bounds.
struct aabb {
  vec3 lo{std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity(),
          std::numeric_limits<float>::infinity()};
  vec3 hi{-std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
          -std::numeric_limits<float>::infinity()};

  SIEVE_HD constexpr void grow(vec3 p) {
    lo = min(lo, p);
    hi = max(hi, p);
  }
  SIEVE_HD constexpr void grow(const aabb& b) {
    lo = min(lo, b.lo);
    hi = max(hi, b.hi);
  }
  SIEVE_HD constexpr bool empty() const { return lo.x > hi.x; }
  SIEVE_HD constexpr vec3 extent() const { return hi - lo; }
  SIEVE_HD constexpr vec3 center() const { return (lo + hi) * 0.5f; }
  SIEVE_HD constexpr float half_area() const {
    if (empty()) return 0;
    const vec3 e = extent();
    return e.x * e.y + e.y * e.z + e.z * e.x;
  }
};

// Slab test against a box, with the ray's reciprocal direction precomputed. Returns the entry
// distance, or a value > tmax when the ray misses the box within [0, tmax].
SIEVE_HD inline float hit_box(const aabb& b, vec3 origin, vec3 inv_dir, float tmax) {
  const vec3 t0 = (b.lo - origin) * inv_dir, t1 = (b.hi - origin) * inv_dir;
  const vec3 near = min(t0, t1), far = max(t0, t1);
  const float enter = fmaxf(fmaxf(near.x, near.y), fmaxf(near.z, 0.0f));
  const float leave = fminf(fminf(far.x, far.y), fminf(far.z, tmax));
  return enter <= leave ? enter : 1e30f * 2;
}

SIEVE_HD inline vec3 reciprocal(vec3 d) {
  // Zero components become huge but finite, so 0 * inf NaNs never reach the slab test.
  auto inv = [](float v) { return 1.0f / (fabsf(v) > 1e-20f ? v : copysignf(1e-20f, v)); };
  return {inv(d.x), inv(d.y), inv(d.z)};
}

}  // namespace sieve::render
