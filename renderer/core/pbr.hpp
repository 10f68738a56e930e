// The glTF 2.0 metallic-roughness model (the specification's Appendix B, with
// KHR_materials_transmission and KHR_materials_ior), one copy for the CPU and the GPU:
//
//   f = metallic * conductor(f0 = base colour)
//     + (1 - metallic) * (1 - transmission) * [F(wo.h) * GGX + (1 - F(wo.h)) * base colour / pi]
//     + (1 - metallic) * transmission * rough dielectric (transmission tinted by the base colour)
//
// with alpha = roughness^2, F Schlick's with f0 = ((ior - 1) / (ior + 1))^2 (0.04 at ior 1.5), h
// the half vector of (wo, wi): the Fresnel-weighted mix of a specular layer over Lambert that the
// specification calls fresnel_mix, which takes from the diffuse what the layer reflects. Opaque
// lobes are two-sided. Below delta_alpha the specular lobes are perfect (delta) ones; the diffuse
// lobe stays. Local frame.
#pragma once

#include "conductor.hpp"
#include "rough_dielectric.hpp"

namespace sieve::render {

struct pbr_params {
  vec3 base{0.8f, 0.8f, 0.8f};
  float metallic = 0;
  float alpha = 0.25f;
  float ior = 1.5f;
  float transmission = 0;
  bool thin = false;
};

namespace detail {

SIEVE_HD inline float pbr_f0(float ior) {
  const float r = (ior - 1.0f) / (ior + 1.0f);
  return r * r;
}

// The chances of the lobes a sample picks: metal, specular layer, diffuse, transmission (sum 1).
struct pbr_chances {
  float metal, layer, diffuse, transmission;
};

SIEVE_HD inline pbr_chances pbr_lobe_chances(const pbr_params& p, float cos_o) {
  const float opaque = (1 - p.metallic) * (1 - p.transmission);
  const float fs = schlick(vec3{1, 1, 1} * pbr_f0(p.ior), fabsf(cos_o)).x;
  const float albedo = (p.base.x + p.base.y + p.base.z) / 3;
  float q = fs / fmaxf(1e-6f, fs + (1 - fs) * albedo);
  q = fminf(fmaxf(q, 0.05f), 0.95f);
  return {p.metallic, opaque * q, opaque * (1 - q), (1 - p.metallic) * p.transmission};
}

SIEVE_HD inline dielectric_params pbr_dielectric(const pbr_params& p) { return {p.ior, p.alpha, {1, 1, 1}, p.base, p.thin}; }

}  // namespace detail

// f cos of the non-delta lobes at (wo, wi); pdf: their sampling density.
SIEVE_HD inline vec3 pbr_eval(const pbr_params& p, vec3 wo, vec3 wi, float* pdf = nullptr) {
  const detail::pbr_chances k = detail::pbr_lobe_chances(p, wo.z);
  vec3 f{0, 0, 0};
  float density = 0;
  if (k.transmission > 0) {
    const dielectric_params d = detail::pbr_dielectric(p);
    f += dielectric_eval(d, wo, wi) * k.transmission;
    density += dielectric_pdf(d, wo, wi) * k.transmission;
  }
  const vec3 o = wo.z >= 0 ? wo : -wo, i = wo.z >= 0 ? wi : -wi;  // opaque lobes: two-sided
  if (i.z > 0 && o.z > 0) {
    const vec3 h = normalize(o + i);
    const float fs = schlick(vec3{1, 1, 1} * detail::pbr_f0(p.ior), dot(o, h)).x;
    const float opaque = (1 - p.metallic) * (1 - p.transmission);
    f += p.base * ((1 - fs) * opaque * i.z / pi);
    density += k.diffuse * i.z / pi;
    if (p.alpha >= delta_alpha) {
      vec3 hh{0, 0, 1};
      const float g = ggx_reflection(p.alpha, o, i, hh);
      f += conductor_eval({p.base, p.alpha}, o, i) * p.metallic + vec3{1, 1, 1} * (g * fs * opaque);
      density += ggx_reflection_pdf(p.alpha, o, i) * (k.metal + k.layer);
    }
  }
  if (pdf) *pdf = density;
  return f;
}

SIEVE_HD inline float pbr_pdf(const pbr_params& p, vec3 wo, vec3 wi) {
  float density = 0;
  pbr_eval(p, wo, wi, &density);
  return density;
}

// Picks a lobe with u3 by pbr_lobe_chances, then samples it. A delta lobe's weight is its value
// over its chance; the others leave the weight to eval / pdf of the whole mixture.
SIEVE_HD inline lobe_sample pbr_sample(const pbr_params& p, vec3 wo, float u1, float u2, float u3) {
  const detail::pbr_chances k = detail::pbr_lobe_chances(p, wo.z);
  const float sign = wo.z >= 0 ? 1.0f : -1.0f;
  const vec3 o = wo * sign;
  lobe_sample out;
  if (u3 < k.transmission) {
    out = dielectric_sample(detail::pbr_dielectric(p), wo, u1, u2, u3 / k.transmission);
    out.weight = out.weight / k.transmission;
    return out;
  }
  u3 -= k.transmission;
  if (u3 < k.diffuse) {
    out.wi = cosine_hemisphere(u1, u2) * sign;
    out.valid = true;
    return out;
  }
  const bool metal = u3 - k.diffuse < k.metal;
  if (!((metal ? k.metal : k.layer) > 0)) return out;  // a lobe of no chance, reached by rounding
  if (p.alpha < delta_alpha) {
    out.wi = vec3{-o.x, -o.y, o.z} * sign;
    const float fs = schlick(vec3{1, 1, 1} * detail::pbr_f0(p.ior), o.z).x;
    const float opaque = (1 - p.metallic) * (1 - p.transmission);
    out.weight = metal ? schlick(p.base, o.z) * (p.metallic / k.metal) : vec3{1, 1, 1} * (fs * opaque / k.layer);
    out.delta = out.valid = true;
    return out;
  }
  out.wi = reflect_about(o, ggx_sample_visible(p.alpha, o, u1, u2)) * sign;
  out.valid = out.wi.z * sign > 0;
  return out;
}

}  // namespace sieve::render
