// The three materials' scattering, one copy for the CPU and the GPU: sampling a direction (with
// its weight f cos / pdf), and for the diffuse lobe the evaluation and pdf that next-event
// estimation with MIS needs. Directions point away from the surface: wo towards the viewer.
#pragma once

#include "sampling.hpp"

#include <cstdint>

namespace sieve::render {

enum class surface_kind : std::uint8_t { diffuse, mirror, dielectric };

// A material as the stages see it (no strings: it lives in device memory too).
struct surface {
  surface_kind kind = surface_kind::diffuse;
  vec3 albedo{0.8f, 0.8f, 0.8f};
  vec3 emission{0, 0, 0};
  float ior = 1.5f;
  std::int32_t albedo_texture = -1;  // index into scene_view::textures: the albedo at the hit; -1: `albedo`
  float opacity = 1;                  // the chance a ray stops here (stochastic cut-out); 1: opaque
  std::int32_t opacity_texture = -1;  // index into scene_view::textures: opacity at the hit (x), times `opacity`
};

struct bsdf_sample {
  vec3 wi;             // the new direction (unit length)
  vec3 weight;         // f * |cos(wi, n)| / pdf: what the path throughput is multiplied by
  float pdf = 0;       // of wi; 0 for the specular lobes (a delta)
  bool specular = false;
};

// Radiance a surface emits towards unit direction w (pointing away from the surface): lights emit
// on the side their geometric normal faces (the triangle's winding), nothing behind.
SIEVE_HD inline vec3 emitted(const surface& s, vec3 n, vec3 w) { return dot(n, w) > 0 ? s.emission : vec3{0, 0, 0}; }

SIEVE_HD inline vec3 reflect(vec3 wo, vec3 n) { return n * (2 * dot(wo, n)) - wo; }

// Unpolarised Fresnel reflectance for light arriving at cos_i (> 0) from the side with index
// eta_i onto eta_t.
SIEVE_HD inline float fresnel_dielectric(float cos_i, float eta_i, float eta_t) {
  const float sin_t = eta_i / eta_t * sqrtf(fmaxf(0.0f, 1.0f - cos_i * cos_i));
  if (sin_t >= 1.0f) return 1.0f;  // total internal reflection
  const float cos_t = sqrtf(fmaxf(0.0f, 1.0f - sin_t * sin_t));
  const float rs = (eta_i * cos_i - eta_t * cos_t) / (eta_i * cos_i + eta_t * cos_t);
  const float rp = (eta_t * cos_i - eta_i * cos_t) / (eta_t * cos_i + eta_i * cos_t);
  return 0.5f * (rs * rs + rp * rp);
}

// Lambert: f = albedo / pi on the side of wo. For next-event estimation.
SIEVE_HD inline vec3 eval_diffuse(const surface& s, vec3 wo, vec3 wi, vec3 n) {
  if (dot(wo, n) * dot(wi, n) <= 0) return {0, 0, 0};
  return s.albedo * (fabsf(dot(wi, n)) / pi);  // f * |cos|
}
SIEVE_HD inline float pdf_diffuse(vec3 wo, vec3 wi, vec3 n) {
  if (dot(wo, n) * dot(wi, n) <= 0) return 0;
  return fabsf(dot(wi, n)) / pi;
}

// Samples the surface's lobe with three uniform numbers. n is the geometric normal, either side.
SIEVE_HD inline bsdf_sample sample_bsdf(const surface& s, vec3 wo, vec3 n, float u1, float u2, float u3) {
  const float cos_o = dot(wo, n);
  const vec3 facing = cos_o >= 0 ? n : -n;  // the normal on the viewer's side
  bsdf_sample out;
  switch (s.kind) {
    case surface_kind::diffuse: {
      const vec3 local = cosine_hemisphere(u1, u2);
      out.wi = frame::around(facing).to_world(local);
      out.pdf = local.z / pi;
      out.weight = s.albedo;  // (albedo / pi) cos / (cos / pi)
      return out;
    }
    case surface_kind::mirror:
      out.wi = reflect(wo, facing);
      out.weight = s.albedo;
      out.specular = true;
      return out;
    case surface_kind::dielectric: {
      // Entering when wo is on the side n points to; eta_i is the index wo travels in.
      const bool entering = cos_o >= 0;
      const float eta_i = entering ? 1.0f : s.ior, eta_t = entering ? s.ior : 1.0f;
      const float cos_i = fabsf(cos_o);
      const float fr = fresnel_dielectric(cos_i, eta_i, eta_t);
      out.specular = true;
      out.weight = s.albedo;  // choosing reflection with probability fr: the Fresnel factors cancel
      if (u3 < fr) {
        out.wi = reflect(wo, facing);
        return out;
      }
      const float eta = eta_i / eta_t;
      const float cos_t = sqrtf(fmaxf(0.0f, 1.0f - eta * eta * (1.0f - cos_i * cos_i)));
      out.wi = normalize(-wo * eta + facing * (eta * cos_i - cos_t));
      return out;
    }
  }
  return out;
}

}  // namespace sieve::render
