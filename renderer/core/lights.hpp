// Next-event estimation's light sampling: an emissive triangle chosen by its power (area times
// its mean emitted radiance, over its texels where the emission is textured), then a uniform point
// on it. Triangles of no power are left out: they are reached by BSDF sampling alone, at full
// weight. The triangle is drawn by an alias table (O(1): one table read where a CDF's binary search
// over 15,000 lights took 14 dependent reads), and its chance, which multiple importance sampling
// reads at every hit on an emitter, is one read of a per-triangle array. One copy for CPU and GPU.
#pragma once

#include "alias_table.hpp"
#include "sampling.hpp"

#include <cstdint>

namespace sieve::render {

struct light_table {
  const std::uint32_t* triangles = nullptr;  // emissive triangle indices, increasing
  const alias_entry* alias = nullptr;        // count entries: light i by its power
  const float* chance_of = nullptr;          // per scene triangle: its chance of being drawn (0: no light)
  std::uint32_t count = 0;
  float total_area = 0;
};

struct light_sample {
  vec3 point;
  vec3 normal;         // unit geometric normal of the light triangle
  std::uint32_t prim;  // the triangle
  float b1, b2;        // the point's barycentrics (of v1 and v2)
};

SIEVE_HD inline float triangle_area(const triangle& t) { return 0.5f * length(cross(t.v1 - t.v0, t.v2 - t.v0)); }

// The light triangle that u draws, and a uniform point on it.
SIEVE_HD inline light_sample sample_light(const light_table& l, const triangle* triangles, float u, float u1,
                                          float u2) {
  const std::uint32_t prim = l.triangles[pick_alias(l.alias, l.count, u).index];
  const triangle& t = triangles[prim];
  float b1, b2;
  uniform_triangle(u1, u2, b1, b2);
  return {t.v0 * (1.0f - b1 - b2) + t.v1 * b1 + t.v2 * b2, geometric_normal(t), prim, b1, b2};
}

// The chance that sample_light picks triangle `prim`; 0 for a triangle that is no light.
SIEVE_HD inline float light_pick_chance(const light_table& l, std::uint32_t prim) {
  return l.count == 0 ? 0.0f : l.chance_of[prim];
}

// The solid-angle density with which sample_light picks direction `w` (unit) towards a point of
// light triangle `prim` at distance `dist` whose unit normal is `n_light`; 0 when the light is seen
// edge-on or never picked.
SIEVE_HD inline float light_pdf_solid_angle(const light_table& l, const triangle* triangles, std::uint32_t prim, vec3 w,
                                            float dist, vec3 n_light) {
  const float cos_l = fabsf(dot(n_light, w));
  const float area = triangle_area(triangles[prim]);
  if (cos_l <= 0 || !(area > 0)) return 0;
  return light_pick_chance(l, prim) / area * dist * dist / cos_l;
}

// The power heuristic (beta = 2) for a sample drawn from the density `a` against `b`.
SIEVE_HD inline float power_heuristic(float a, float b) {
  const float a2 = a * a, b2 = b * b;
  return a2 + b2 > 0 ? a2 / (a2 + b2) : 0;
}

}  // namespace sieve::render
