// Ray-triangle intersection (Möller-Trumbore), one copy for CPU and GPU.
#pragma once

#include "math.hpp"

namespace sieve::render {

struct triangle {
  vec3 v0, v1, v2;
};

// Shading attributes, stored beside the triangles (same index) and read only at a hit, so the
// triangles the traversals intersect stay three positions each.
// Per-vertex shading normals (unit length), in the order v0, v1, v2; all three zero: the triangle
// is flat (shaded with its geometric normal).
struct triangle_normals {
  vec3 n0, n1, n2;
};
struct tex_coord {
  float u = 0, v = 0;
};
// Per-vertex texture coordinates, in the order v0, v1, v2.
struct triangle_uvs {
  tex_coord t0, t1, t2;
};

// Per-vertex tangents for normal maps: t0, t1, t2 along increasing u, and the bitangent's
// handedness: the bitangent (along increasing v, the image's up) is sign x cross(normal, tangent).
// sign 0: no tangents (the triangle's material reads no normal map).
struct triangle_tangents {
  vec3 t0, t1, t2;
  float sign = 0;
};

// The attribute at barycentrics (b1, b2) of v1 and v2 (tri_hit's u and v).
SIEVE_HD inline vec3 interpolate(const triangle_tangents& t, float b1, float b2) {
  return t.t0 * (1.0f - b1 - b2) + t.t1 * b1 + t.t2 * b2;
}
SIEVE_HD inline vec3 interpolate(const triangle_normals& n, float b1, float b2) {
  return n.n0 * (1.0f - b1 - b2) + n.n1 * b1 + n.n2 * b2;
}
SIEVE_HD inline tex_coord interpolate(const triangle_uvs& t, float b1, float b2) {
  const float b0 = 1.0f - b1 - b2;
  return {t.t0.u * b0 + t.t1.u * b1 + t.t2.u * b2, t.t0.v * b0 + t.t1.v * b1 + t.t2.v * b2};
}

struct tri_hit {
  float t;
  float u, v;  // barycentrics of v1 and v2
};

// The test's dot and cross products with their multiply-adds fused on the GPU, written out: the
// renderer's device code is built without contraction (--fmad=false, renderer/CMakeLists.txt: every
// kernel then rounds alike), and the traversal's inner loop keeps its fused operations this way. The
// host keeps the plain expressions (the same association), which x86-64's baseline does not fuse.
SIEVE_HD SIEVE_FORCE_INLINE float fixed_dot(vec3 a, vec3 b) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a.z, b.z, __fmaf_rn(a.y, b.y, __fmul_rn(a.x, b.x)));
#else
  return a.x * b.x + a.y * b.y + a.z * b.z;
#endif
}
SIEVE_HD SIEVE_FORCE_INLINE vec3 fixed_cross(vec3 a, vec3 b) {
#if defined(__CUDA_ARCH__)
  return {__fmaf_rn(a.y, b.z, -__fmul_rn(a.z, b.y)), __fmaf_rn(a.z, b.x, -__fmul_rn(a.x, b.z)),
          __fmaf_rn(a.x, b.y, -__fmul_rn(a.y, b.x))};
#else
  return cross(a, b);
#endif
}

// True when the ray hits the triangle at 0 < t <= tmax (both faces). tmax itself counts, so a
// traversal can break ties between triangles at the same distance by primitive index.
// hit_triangle_edges: the same test from the first vertex and the two edges (v1 - v0, v2 - v0): a layout that stores the
// edges (trace/cwbvh.hpp) skips their subtraction and rounds exactly as hit_triangle does.
SIEVE_HD SIEVE_FORCE_INLINE bool hit_triangle_edges(vec3 v0, vec3 e1, vec3 e2, const ray& r, float tmax, tri_hit& hit) {
  const vec3 p = fixed_cross(r.direction, e2);
  const float det = fixed_dot(e1, p);
  if (fabsf(det) < 1e-12f) return false;
  const float inv = 1.0f / det;
  const vec3 s = r.origin - v0;
  const float u = fixed_dot(s, p) * inv;
  if (u < 0.0f || u > 1.0f) return false;
  const vec3 q = fixed_cross(s, e1);
  const float v = fixed_dot(r.direction, q) * inv;
  if (v < 0.0f || u + v > 1.0f) return false;
  const float t = fixed_dot(e2, q) * inv;
  const float magnitude = fabsf(t) > 1.0f ? fabsf(t) : 1.0f;  // fmaxf(1, |t|) without a libm call on the CPU
  if (!(t > 1e-6f * magnitude && t <= tmax)) return false;
  hit = {t, u, v};
  return true;
}

SIEVE_HD SIEVE_FORCE_INLINE bool hit_triangle(const triangle& tri, const ray& r, float tmax, tri_hit& hit) {
  return hit_triangle_edges(tri.v0, tri.v1 - tri.v0, tri.v2 - tri.v0, r, tmax, hit);
}

}  // namespace sieve::render
