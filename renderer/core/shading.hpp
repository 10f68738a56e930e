// Smooth shading, one copy for the CPU and the GPU: the shading normal interpolated from a
// triangle's vertex normals, and the guards that keep it from leaking light or going black where
// it disagrees with the geometric normal. The geometric normal still decides which side of the
// surface a point is on (ray offsets, emission, entering or leaving a dielectric).
#pragma once

#include "triangle.hpp"

namespace sieve::render {

// The vertex normals interpolated at barycentrics (b1, b2) and normalised, turned to the side of
// the geometric normal ng (a mesh's normals may disagree with its winding); ng itself where the
// triangle is flat (its normals are zero) or the interpolation degenerates.
SIEVE_HD inline vec3 shading_normal(const triangle_normals& tn, float b1, float b2, vec3 ng) {
  const vec3 n = interpolate(tn, b1, b2);
  const float l = length(n);
  if (!(l > 1e-12f) || !(l < 1e30f)) return ng;
  const vec3 u = n / l;
  return dot(u, ng) < 0 ? -u : u;
}

// A normal map's normal at barycentrics (b1, b2): the texel c (stored values in 0 .. 1) read as a
// tangent-space normal (2c - 1, its x and y times `scale`: glTF's normalTexture.scale) in the frame
// of the interpolated vertex normal N, the tangent T made orthogonal to it and the bitangent
// B = sign x cross(N, T); turned with N where N faces away from ng (as shading_normal turns N). The plain shading normal
// where the frame degenerates.
SIEVE_HD inline vec3 normal_mapped(const triangle_normals& tn, vec3 tangent, float sign, float b1, float b2, vec3 ng,
                                   vec3 c, float scale) {
  const vec3 plain = shading_normal(tn, b1, b2, ng);
  const vec3 raw = interpolate(tn, b1, b2);
  const float l = length(raw);
  if (sign == 0 || !(l > 1e-12f) || !(l < 1e30f)) return plain;
  const vec3 n = raw / l;
  vec3 t = tangent - n * dot(n, tangent);
  const float lt = length(t);
  if (!(lt > 1e-12f) || !(lt < 1e30f)) return plain;
  t = t / lt;
  const vec3 b = cross(n, t) * sign;
  const vec3 m = t * ((2 * c.x - 1) * scale) + b * ((2 * c.y - 1) * scale) + n * (2 * c.z - 1);
  const float lm = length(m);
  if (!(lm > 1e-12f) || !(lm < 1e30f)) return plain;
  const vec3 u = m / lm;
  return dot(n, ng) < 0 ? -u : u;  // the whole frame turned where the vertex normals face away from ng
}
SIEVE_HD inline vec3 normal_mapped(const triangle_normals& tn, const triangle_tangents& tt, float b1, float b2, vec3 ng,
                                   vec3 c, float scale) {
  return normal_mapped(tn, interpolate(tt, b1, b2), tt.sign, b1, b2, ng, c, scale);
}

// The triangle's dp/du (the position's derivative along the texture's u), zero where its texture
// coordinates are degenerate: the tangent of film.tangents "uv", the frame Mitsuba 3's normalmap
// builds (its bitangent cross(n, t): sign 1, whatever the handedness of the mapping).
SIEVE_HD inline vec3 triangle_dp_du(const triangle& tri, const triangle_uvs& uv) {
  const float du0 = uv.t1.u - uv.t0.u, dv0 = uv.t1.v - uv.t0.v, du1 = uv.t2.u - uv.t0.u, dv1 = uv.t2.v - uv.t0.v;
  const float det = du0 * dv1 - dv0 * du1;
  if (!(fabsf(det) > 1e-30f)) return {0, 0, 0};
  return ((tri.v1 - tri.v0) * dv1 - (tri.v2 - tri.v0) * dv0) / det;
}

// The shading normal to use for a viewer in direction wo: ns where wo lies on the same side of
// the shading surface as of the geometric one; ng where it does not (near silhouettes of coarse
// meshes the shading surface can face away from a viewer that sees the geometric one).
SIEVE_HD inline vec3 shading_normal_towards(vec3 ns, vec3 ng, vec3 wo) { return dot(wo, ns) * dot(wo, ng) > 0 ? ns : ng; }

// Whether direction wi leaves the surface the way the shading normal says: reflected (on wo's side)
// by both normals or transmitted (the other side) by both. A direction the shading normal reflects
// but that passes through the geometric surface (a light leak), or the reverse, is refused.
SIEVE_HD inline bool sides_agree(vec3 wo, vec3 wi, vec3 ng, vec3 ns) {
  return (dot(wo, ns) * dot(wi, ns) > 0) == (dot(wo, ng) * dot(wi, ng) > 0);
}

}  // namespace sieve::render
