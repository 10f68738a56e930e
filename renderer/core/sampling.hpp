// Sampling helpers shared by CPU and GPU: an orthonormal basis around a normal, cosine-weighted
// hemisphere directions, uniform points on a triangle.
#pragma once

#include "math.hpp"
#include "triangle.hpp"

namespace sieve::render {

inline constexpr float pi = 3.14159265358979323846f;

// Tangent frame around unit n (Duff et al., "Building an Orthonormal Basis, Revisited").
struct frame {
  vec3 t, b, n;
  SIEVE_HD static frame around(vec3 n) {
    const float sign = copysignf(1.0f, n.z);
    const float a = -1.0f / (sign + n.z);
    const float c = n.x * n.y * a;
    return {{1.0f + sign * n.x * n.x * a, sign * c, -sign * n.x}, {c, sign + n.y * n.y * a, -n.y}, n};
  }
  SIEVE_HD vec3 to_world(vec3 v) const { return t * v.x + b * v.y + n * v.z; }
  SIEVE_HD vec3 to_local(vec3 v) const { return {dot(v, t), dot(v, b), dot(v, n)}; }
};

// Cosine-weighted direction on the hemisphere around +z; pdf = cos(theta) / pi.
SIEVE_HD inline vec3 cosine_hemisphere(float u1, float u2) {
  const float r = sqrtf(u1), phi = 2 * pi * u2;
  return {r * cosf(phi), r * sinf(phi), sqrtf(fmaxf(0.0f, 1.0f - u1))};
}

// Uniform point on a triangle, as barycentrics (b1, b2) of v1 and v2.
SIEVE_HD inline void uniform_triangle(float u1, float u2, float& b1, float& b2) {
  const float s = sqrtf(u1);
  b1 = s * (1.0f - u2);
  b2 = s * u2;
}

SIEVE_HD inline vec3 geometric_normal(const triangle& t) { return normalize(cross(t.v1 - t.v0, t.v2 - t.v0)); }

// A ray leaving surface point p (geometric normal n, either side) in direction w: its origin is
// pushed off the surface to w's side by a distance relative to p's magnitude, so that rounding in
// p does not let the ray hit the surface it starts on.
SIEVE_HD inline ray spawn_ray(vec3 p, vec3 n, vec3 w, float tmax = 1e30f) {
  const float offset = 1e-4f * fmaxf(1.0f, max_component(max(p, -p)));
  return {p + n * (dot(w, n) >= 0 ? offset : -offset), w, tmax};
}

}  // namespace sieve::render
