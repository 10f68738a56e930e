// Next-event estimation's light sampling: a point chosen uniformly by area over all emissive
// triangles (a triangle with probability area / total, then a uniform point on it), so the
// density of any point on any light is 1 / total area. One copy for CPU and GPU.
#pragma once

#include "sampling.hpp"

#include <cstdint>

namespace sieve::render {

struct light_table {
  const std::uint32_t* triangles = nullptr;  // emissive triangle indices
  const float* cdf = nullptr;                // cdf[i] = area of lights 0..i / total; cdf[count - 1] = 1
  std::uint32_t count = 0;
  float total_area = 0;
};

struct light_sample {
  vec3 point;
  vec3 normal;         // unit geometric normal of the light triangle
  std::uint32_t prim;  // the triangle
};

// The light triangle whose cdf interval holds u (binary search), and a uniform point on it.
SIEVE_HD inline light_sample sample_light(const light_table& l, const triangle* triangles, float u, float u1,
                                          float u2) {
  std::uint32_t lo = 0, hi = l.count - 1;
  while (lo < hi) {
    const std::uint32_t mid = (lo + hi) / 2;
    if (u < l.cdf[mid]) hi = mid;
    else lo = mid + 1;
  }
  const std::uint32_t prim = l.triangles[lo];
  const triangle& t = triangles[prim];
  float b1, b2;
  uniform_triangle(u1, u2, b1, b2);
  return {t.v0 * (1.0f - b1 - b2) + t.v1 * b1 + t.v2 * b2, geometric_normal(t), prim};
}

// The solid-angle density with which sample_light picks direction `w` (unit) towards a light point
// at distance `dist` whose unit normal is `n_light`; 0 when the light is seen edge-on.
SIEVE_HD inline float light_pdf_solid_angle(const light_table& l, vec3 w, float dist, vec3 n_light) {
  const float cos_l = fabsf(dot(n_light, w));
  if (cos_l <= 0 || l.total_area <= 0) return 0;
  return dist * dist / (cos_l * l.total_area);
}

// The power heuristic (beta = 2) for a sample drawn from the density `a` against `b`.
SIEVE_HD inline float power_heuristic(float a, float b) {
  const float a2 = a * a, b2 = b * b;
  return a2 + b2 > 0 ? a2 / (a2 + b2) : 0;
}

}  // namespace sieve::render
