// A rough conductor (metal), one copy for the CPU and the GPU: the GGX lobe of microfacet.hpp with
// Schlick's Fresnel tinted by the base colour (reflectance f0 = base colour at normal incidence,
// white at grazing), the glTF 2.0 metal. Below delta_alpha it is a perfect mirror with the same
// Fresnel. Local frame, wo.z > 0.
#pragma once

#include "microfacet.hpp"

namespace sieve::render {

struct conductor_params {
  vec3 f0{0.9f, 0.9f, 0.9f};
  float alpha = 0.25f;
};

// f cos at (wo, wi).
SIEVE_HD inline vec3 conductor_eval(const conductor_params& c, vec3 wo, vec3 wi) {
  if (c.alpha < delta_alpha) return {0, 0, 0};
  vec3 h{0, 0, 1};
  const float g = ggx_reflection(c.alpha, wo, wi, h);
  if (!(g > 0)) return {0, 0, 0};
  return schlick(c.f0, dot(wo, h)) * g;
}

SIEVE_HD inline float conductor_pdf(const conductor_params& c, vec3 wo, vec3 wi) {
  return c.alpha < delta_alpha ? 0.0f : ggx_reflection_pdf(c.alpha, wo, wi);
}

SIEVE_HD inline lobe_sample conductor_sample(const conductor_params& c, vec3 wo, float u1, float u2) {
  lobe_sample out;
  if (c.alpha < delta_alpha) {
    out.wi = {-wo.x, -wo.y, wo.z};
    out.weight = schlick(c.f0, wo.z);
    out.delta = out.valid = true;
    return out;
  }
  out.wi = reflect_about(wo, ggx_sample_visible(c.alpha, wo, u1, u2));
  out.valid = out.wi.z > 0;
  return out;
}

}  // namespace sieve::render
