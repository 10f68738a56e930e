// A rough dielectric (glass, water), one copy for the CPU and the GPU: GGX reflection and
// refraction after Walter et al. 2007 ("Microfacet Models for Refraction through Rough
// Surfaces"), the exact unpolarised Fresnel term choosing between them, and a thin-walled variant
// (a sheet whose two faces are parallel: light leaves on the far side unbent, so transmission
// mirrors the reflection lobe through the surface). Below delta_alpha the lobes are perfect.
//
// Local frame; wo may lie on either side: +z is outside (index 1), -z inside (index ior), so a ray
// leaving the glass sees the relative index 1 / ior. Radiance is not rescaled by eta^2 across the
// boundary (as the smooth glass never was): for a closed object the two crossings cancel.
#pragma once

#include "microfacet.hpp"

namespace sieve::render {

struct dielectric_params {
  float ior = 1.5f;
  float alpha = 0.0f;
  vec3 reflect_tint{1, 1, 1};
  vec3 transmit_tint{1, 1, 1};
  bool thin = false;
};

// Unpolarised Fresnel reflectance at cos_i (> 0) for the relative index eta = eta_t / eta_i.
SIEVE_HD inline float fresnel_relative(float cos_i, float eta) {
  const float sin2_t = fmaxf(0.0f, 1.0f - cos_i * cos_i) / (eta * eta);
  if (sin2_t >= 1.0f) return 1.0f;
  const float cos_t = sqrtf(1.0f - sin2_t);
  const float rs = (cos_i - eta * cos_t) / (cos_i + eta * cos_t);
  const float rp = (eta * cos_i - cos_t) / (eta * cos_i + cos_t);
  return 0.5f * (rs * rs + rp * rp);
}

namespace detail {

// wo (and wi) turned so that wo.z > 0; the relative index seen from wo's side.
SIEVE_HD inline float dielectric_side(const dielectric_params& d, vec3& wo, vec3& wi) {
  if (wo.z >= 0) return d.ior;
  wo = -wo;
  wi = -wi;
  return d.thin ? d.ior : 1.0f / d.ior;
}

// The generalised half vector of a refraction wo -> wi (wi.z < 0), on the +z side; false where the
// pair cannot be joined by a facet both see from the right side.
SIEVE_HD inline bool refraction_half(vec3 wo, vec3 wi, float eta, vec3& h) {
  h = wo + wi * eta;
  const float l = length(h);
  if (!(l > 1e-12f)) return false;
  h = h / l;
  if (h.z < 0) h = -h;
  return dot(wo, h) > 0 && dot(wi, h) < 0;
}

// f cos (c = the colour) and pdf of the pair, wo.z > 0.
SIEVE_HD inline float dielectric_lobe(const dielectric_params& d, float eta, vec3 wo, vec3 wi, vec3& c, float& pdf) {
  const float a = d.alpha;
  pdf = 0;
  if (wo.z <= 0 || wi.z == 0) return 0;
  if (wi.z > 0 || d.thin) {
    // Reflection, or the thin sheet's transmission: the reflection lobe mirrored to -z.
    const bool through = wi.z < 0;
    const vec3 wr = through ? vec3{wi.x, wi.y, -wi.z} : wi;
    vec3 h{0, 0, 1};
    const float g = ggx_reflection(a, wo, wr, h);
    if (!(g > 0)) return 0;
    const float f = fresnel_relative(dot(wo, h), eta);
    const float chance = through ? 1.0f - f : f;
    c = through ? d.transmit_tint : d.reflect_tint;
    pdf = ggx_reflection_pdf(a, wo, wr) * chance;
    return g * chance;
  }
  vec3 h{0, 0, 1};
  if (!refraction_half(wo, wi, eta, h)) return 0;
  const float ci = dot(wi, h), co = dot(wo, h);
  const float t = 1.0f - fresnel_relative(co, eta);
  const float denom = (ci + co / eta) * (ci + co / eta);
  const float jacobian = fabsf(ci) / denom;  // d(h) / d(wi)
  c = d.transmit_tint;
  pdf = ggx_visible_pdf(a, wo, h) * jacobian * t;
  return ggx_d(a, h) * ggx_g2(a, wo, wi) * t * fabsf(ci) * co / (denom * wo.z);
}

}  // namespace detail

SIEVE_HD inline vec3 dielectric_eval(const dielectric_params& d, vec3 wo, vec3 wi) {
  if (d.alpha < delta_alpha) return {0, 0, 0};
  const float eta = detail::dielectric_side(d, wo, wi);
  vec3 c{0, 0, 0};
  float pdf = 0;
  const float v = detail::dielectric_lobe(d, eta, wo, wi, c, pdf);
  return c * v;
}

SIEVE_HD inline float dielectric_pdf(const dielectric_params& d, vec3 wo, vec3 wi) {
  if (d.alpha < delta_alpha) return 0;
  const float eta = detail::dielectric_side(d, wo, wi);
  vec3 c{0, 0, 0};
  float pdf = 0;
  detail::dielectric_lobe(d, eta, wo, wi, c, pdf);
  return pdf;
}

// Picks reflection with the Fresnel reflectance of the drawn facet (u3), else refraction.
SIEVE_HD inline lobe_sample dielectric_sample(const dielectric_params& d, vec3 wo, float u1, float u2, float u3) {
  vec3 dummy{0, 0, 0};
  const float sign = wo.z >= 0 ? 1.0f : -1.0f;
  const float eta = detail::dielectric_side(d, wo, dummy);
  lobe_sample out;
  const bool smooth = d.alpha < delta_alpha;
  const vec3 m = smooth ? vec3{0, 0, 1} : ggx_sample_visible(d.alpha, wo, u1, u2);
  const float f = fresnel_relative(dot(wo, m), eta);
  vec3 wi = reflect_about(wo, m);
  if (u3 < f) {
    out.weight = d.reflect_tint;
  } else if (d.thin) {
    wi = smooth ? -wo : vec3{wi.x, wi.y, -wi.z};
    out.weight = d.transmit_tint;
  } else if (refract_about(wo, m, eta, wi)) {
    out.weight = d.transmit_tint;
  } else {
    return out;  // total internal reflection has f = 1: unreachable but for rounding
  }
  out.wi = wi * sign;
  out.delta = smooth;
  out.valid = smooth || (u3 < f ? wi.z > 0 : wi.z < 0);
  return out;
}

}  // namespace sieve::render
