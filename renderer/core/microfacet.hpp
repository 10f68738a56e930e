// The GGX (Trowbridge-Reitz) microfacet distribution, one copy for the CPU and the GPU: the normal
// distribution D, Smith's masking with height-correlated masking-shadowing G2, and sampling of
// the visible normals (Heitz 2018, "Sampling the GGX Distribution of Visible Normals").
//
// Everything here is in a local frame whose z axis is the (shading) normal; directions point away
// from the surface, and the functions take the viewer wo on the +z side (callers flip first).
// alpha is the distribution's width: roughness^2 in the glTF convention.
#pragma once

#include "sampling.hpp"

namespace sieve::render {

// Below this alpha a lobe is treated as a perfect (delta) reflection or refraction: the
// distribution would be too narrow for float sampling and evaluation to agree.
inline constexpr float delta_alpha = 1e-3f;

SIEVE_HD inline float alpha_of(float roughness) {
  const float r = fminf(fmaxf(roughness, 0.0f), 1.0f);
  return r * r;
}

// D(m): microfacet normals per unit projected area, m local (unit).
SIEVE_HD inline float ggx_d(float alpha, vec3 m) {
  if (m.z <= 0) return 0;
  const float a2 = alpha * alpha;
  const float t = m.z * m.z * (a2 - 1.0f) + 1.0f;
  return a2 / (pi * t * t);
}

// Smith's Lambda(w) for GGX: G1(w) = 1 / (1 + Lambda(w)).
SIEVE_HD inline float ggx_lambda(float alpha, vec3 w) {
  const float c2 = w.z * w.z;
  if (!(c2 > 1e-12f)) return 1e30f;  // grazing: fully masked
  const float tan2 = fmaxf(0.0f, 1.0f - c2) / c2;
  return 0.5f * (sqrtf(1.0f + alpha * alpha * tan2) - 1.0f);
}

SIEVE_HD inline float ggx_g1(float alpha, vec3 w) { return 1.0f / (1.0f + ggx_lambda(alpha, w)); }

// Height-correlated masking-shadowing of the pair (wo, wi), either side of the surface.
SIEVE_HD inline float ggx_g2(float alpha, vec3 wo, vec3 wi) {
  return 1.0f / (1.0f + ggx_lambda(alpha, wo) + ggx_lambda(alpha, wi));
}

// Density of visible normal m seen from wo (wo.z > 0): G1(wo) max(0, wo.m) D(m) / wo.z.
SIEVE_HD inline float ggx_visible_pdf(float alpha, vec3 wo, vec3 m) {
  const float c = dot(wo, m);
  if (c <= 0 || wo.z <= 0) return 0;
  return ggx_g1(alpha, wo) * c * ggx_d(alpha, m) / wo.z;
}

// A visible normal for viewer wo (wo.z > 0), from two uniform numbers: the viewer's direction is
// stretched to the unit-roughness configuration, a point is drawn on the projected hemisphere
// (a disk whose far half is squeezed by the view's tilt), lifted, and the normal unstretched.
SIEVE_HD inline vec3 ggx_sample_visible(float alpha, vec3 wo, float u1, float u2) {
  const vec3 v = normalize(vec3{alpha * wo.x, alpha * wo.y, wo.z});
  const float len2 = v.x * v.x + v.y * v.y;
  const vec3 t1 = len2 > 1e-14f ? vec3{-v.y, v.x, 0} * (1.0f / sqrtf(len2)) : vec3{1, 0, 0};
  const vec3 t2 = cross(v, t1);
  const float r = sqrtf(u1), phi = 2 * pi * u2;
  const float p1 = r * cosf(phi);
  const float s = 0.5f * (1.0f + v.z);
  const float p2 = (1.0f - s) * sqrtf(fmaxf(0.0f, 1.0f - p1 * p1)) + s * r * sinf(phi);
  const vec3 h = t1 * p1 + t2 * p2 + v * sqrtf(fmaxf(0.0f, 1.0f - p1 * p1 - p2 * p2));
  return normalize(vec3{alpha * h.x, alpha * h.y, fmaxf(1e-7f, h.z)});
}

// A direction a lobe drew (local frame). For a delta lobe `weight` is f cos / probability; for the
// others the caller divides the family's evaluation by its pdf (so sampling and evaluation agree
// by construction, mixtures included).
struct lobe_sample {
  vec3 wi{0, 0, 1};
  vec3 weight{0, 0, 0};
  bool valid = false;
  bool delta = false;
};

// Mirror of w about unit m.
SIEVE_HD inline vec3 reflect_about(vec3 w, vec3 m) { return m * (2 * dot(w, m)) - w; }

// Refraction of w (on m's side, dot(w, m) > 0) through a facet of normal m, eta = eta_t / eta_i;
// false on total internal reflection.
SIEVE_HD inline bool refract_about(vec3 w, vec3 m, float eta, vec3& out) {
  const float c = dot(w, m);
  const float s2 = fmaxf(0.0f, 1.0f - c * c) / (eta * eta);
  if (s2 >= 1.0f) return false;
  out = normalize(-w / eta + m * (c / eta - sqrtf(1.0f - s2)));
  return true;
}

// Schlick's Fresnel approximation with reflectance f0 at normal incidence, per channel.
SIEVE_HD inline vec3 schlick(vec3 f0, float cos_i) {
  const float k = 1.0f - fminf(fmaxf(cos_i, 0.0f), 1.0f);
  const float k5 = k * k * k * k * k;
  return f0 + (vec3{1, 1, 1} - f0) * k5;
}

// The single-scattering GGX reflection lobe times |cos wi|: D G2 / (4 wo.z) (Fresnel left to the
// caller, as the half vector h it is evaluated at); wo.z > 0.
SIEVE_HD inline float ggx_reflection(float alpha, vec3 wo, vec3 wi, vec3& h) {
  if (wi.z <= 0 || wo.z <= 0) return 0;
  h = normalize(wo + wi);
  if (!(h.z > 0)) return 0;
  return ggx_d(alpha, h) * ggx_g2(alpha, wo, wi) / (4 * wo.z);
}

// The solid-angle pdf of wi when wo reflects about a visible normal: D_v(h) / (4 wo.h).
SIEVE_HD inline float ggx_reflection_pdf(float alpha, vec3 wo, vec3 wi) {
  if (wi.z <= 0 || wo.z <= 0) return 0;
  const vec3 h = normalize(wo + wi);
  const float c = dot(wo, h);
  if (!(c > 0)) return 0;
  return ggx_visible_pdf(alpha, wo, h) / (4 * c);
}

}  // namespace sieve::render
