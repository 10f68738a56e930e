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
