// Ray-triangle intersection (Möller-Trumbore), one copy for CPU and GPU.
#pragma once

#include "math.hpp"

namespace sieve::render {

struct triangle {
  vec3 v0, v1, v2;
};

struct tri_hit {
  float t;
  float u, v;  // barycentrics of v1 and v2
};

// True when the ray hits the triangle at 0 < t <= tmax (both faces). tmax itself counts, so a
// traversal can break ties between triangles at the same distance by primitive index.
SIEVE_HD SIEVE_FORCE_INLINE bool hit_triangle(const triangle& tri, const ray& r, float tmax, tri_hit& hit) {
  const vec3 e1 = tri.v1 - tri.v0, e2 = tri.v2 - tri.v0;
  const vec3 p = cross(r.direction, e2);
  const float det = dot(e1, p);
  if (fabsf(det) < 1e-12f) return false;
  const float inv = 1.0f / det;
  const vec3 s = r.origin - tri.v0;
  const float u = dot(s, p) * inv;
  if (u < 0.0f || u > 1.0f) return false;
  const vec3 q = cross(s, e1);
  const float v = dot(r.direction, q) * inv;
  if (v < 0.0f || u + v > 1.0f) return false;
  const float t = dot(e2, q) * inv;
  const float magnitude = fabsf(t) > 1.0f ? fabsf(t) : 1.0f;  // fmaxf(1, |t|) without a libm call on the CPU
  if (!(t > 1e-6f * magnitude && t <= tmax)) return false;
  hit = {t, u, v};
  return true;
}

}  // namespace sieve::render
