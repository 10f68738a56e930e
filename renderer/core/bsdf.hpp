// The materials' scattering, one copy for the CPU and the GPU: sampling a direction (with its
// weight f cos / pdf), and the evaluation and pdf of the non-delta lobes that next-event estimation
// with MIS needs. Directions point away from the surface: wo towards the viewer.
//
// The families: diffuse (Lambert), mirror and dielectric (perfect, as they always were), and the
// microfacet ones, each in its own file: conductor.hpp (rough metal), rough_dielectric.hpp (rough
// glass, thin-walled or not) and pbr.hpp (the glTF 2.0 metallic-roughness model). The perfect
// kinds are the microfacet ones' limits: a conductor of roughness 0 is a mirror (with Schlick's
// Fresnel rather than a constant reflectance), a rough dielectric of roughness 0 the glass, and
// the glTF model with metallic 0, transmission 0 a Lambert base under a 4 % specular layer.
#pragma once

#include "pbr.hpp"
#include "sampling.hpp"
#include "texture.hpp"

#include <cstdint>

namespace sieve::render {

enum class surface_kind : std::uint8_t { diffuse, mirror, dielectric, conductor, rough_dielectric, pbr };

// The shading families a wavefront bounce can route its paths by (wavefront/route.hpp), each shaded
// by its own instance of the one per-path function (path/shade.hpp): rays that found nothing (miss),
// Lambert (diffuse, emitters included), metals (mirror, conductor), glass (dielectric,
// rough_dielectric) and the glTF model (pbr). `any`: every kind, the single kernel that branches.
enum class material_family : std::uint8_t { miss, diffuse, conductor, dielectric, pbr, any };
inline constexpr std::uint32_t material_families = 5;  // the routed ones: miss .. pbr

SIEVE_HD constexpr material_family family_of(surface_kind k) {
  switch (k) {
    case surface_kind::diffuse: return material_family::diffuse;
    case surface_kind::mirror:
    case surface_kind::conductor: return material_family::conductor;
    case surface_kind::dielectric:
    case surface_kind::rough_dielectric: return material_family::dielectric;
    case surface_kind::pbr: return material_family::pbr;
  }
  return material_family::diffuse;
}

// A material as the stages see it (no strings: it lives in device memory too).
struct surface {
  surface_kind kind = surface_kind::diffuse;
  vec3 albedo{0.8f, 0.8f, 0.8f};  // the base colour: diffuse albedo, metal f0, glass tint
  vec3 emission{0, 0, 0};
  float ior = 1.5f;
  float roughness = 0;     // microfacet kinds: alpha = roughness^2
  float metallic = 0;      // pbr
  float transmission = 0;  // pbr
  bool thin = false;       // rough_dielectric, pbr: a thin-walled sheet
  std::int32_t albedo_texture = -1;  // index into scene_view::textures: the albedo at the hit; -1: `albedo`
  std::int32_t emission_texture = -1;  // likewise: the emission is `emission` times its texel at the hit
  std::int32_t metal_rough_texture = -1;  // likewise (pbr): roughness x green, metallic x blue (raw values)
  std::int32_t normal_texture = -1;       // likewise: a tangent-space normal map (shading.hpp's normal_mapped)
  float normal_scale = 1;
  uv_transform uv;  // applied to the hit's texture coordinates before the textures are read
};

// s.kind as family F's shading sees it: a constant where F holds one kind, one of its two kinds
// otherwise, so that the dispatch below keeps only F's cases (`any`: s.kind). The routing put only
// F's surfaces there: the same kind, the same arithmetic, the same bits.
template <material_family F>
SIEVE_HD constexpr surface_kind kind_in(const surface& s) {
  if constexpr (F == material_family::diffuse || F == material_family::miss) return surface_kind::diffuse;
  else if constexpr (F == material_family::pbr) return surface_kind::pbr;
  else if constexpr (F == material_family::conductor)
    return s.kind == surface_kind::mirror ? surface_kind::mirror : surface_kind::conductor;
  else if constexpr (F == material_family::dielectric)
    return s.kind == surface_kind::dielectric ? surface_kind::dielectric : surface_kind::rough_dielectric;
  else
    return s.kind;
}

struct bsdf_sample {
  vec3 wi{0, 0, 1};    // the new direction (unit length)
  vec3 weight{0, 0, 0};       // f * |cos(wi, n)| / pdf: what the path throughput is multiplied by
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

SIEVE_HD inline conductor_params conductor_of(const surface& s) { return {s.albedo, alpha_of(s.roughness)}; }
SIEVE_HD inline dielectric_params dielectric_of(const surface& s) {
  return {s.ior, alpha_of(s.roughness), s.albedo, s.albedo, s.thin};
}
SIEVE_HD inline pbr_params pbr_of(const surface& s) {
  return {s.albedo, s.metallic, alpha_of(s.roughness), s.ior, s.transmission, s.thin};
}

// Whether the surface has a lobe that next-event estimation can reach (one that is not a delta).
template <material_family F = material_family::any>
SIEVE_HD inline bool has_smooth_lobe(const surface& s) {
  switch (kind_in<F>(s)) {
    case surface_kind::diffuse: return true;
    case surface_kind::mirror:
    case surface_kind::dielectric: return false;
    case surface_kind::pbr: return alpha_of(s.roughness) >= delta_alpha || (1 - s.metallic) * (1 - s.transmission) > 0;
    default: return alpha_of(s.roughness) >= delta_alpha;
  }
}

// f cos of the non-delta lobes for light arriving from wi, and the density with which
// sample_bsdf draws wi (pdf). n: the shading normal, on the geometric normal's side.
template <material_family F = material_family::any>
SIEVE_HD inline vec3 eval_bsdf(const surface& s, vec3 wo, vec3 wi, vec3 n, float& pdf) {
  pdf = 0;
  const surface_kind kind = kind_in<F>(s);
  if (kind == surface_kind::diffuse) {
    pdf = pdf_diffuse(wo, wi, n);
    return eval_diffuse(s, wo, wi, n);
  }
  const frame f = frame::around(n);
  const vec3 o = f.to_local(wo), i = f.to_local(wi);
  switch (kind) {
    case surface_kind::conductor: {
      const float sign = o.z >= 0 ? 1.0f : -1.0f;  // two-sided
      pdf = conductor_pdf(conductor_of(s), o * sign, i * sign);
      return conductor_eval(conductor_of(s), o * sign, i * sign);
    }
    case surface_kind::rough_dielectric:
      pdf = dielectric_pdf(dielectric_of(s), o, i);
      return dielectric_eval(dielectric_of(s), o, i);
    case surface_kind::pbr: return pbr_eval(pbr_of(s), o, i, &pdf);
    default: return {0, 0, 0};
  }
}

namespace detail {

// A microfacet family's draw as a bsdf_sample: a delta lobe keeps its weight, the others take
// eval / pdf at the drawn direction.
template <material_family F>
SIEVE_HD inline bsdf_sample from_lobe(const surface& s, const frame& f, vec3 wo, vec3 n, lobe_sample ls) {
  bsdf_sample out;
  if (!ls.valid) return out;  // weight 0: the path ends
  out.wi = normalize(f.to_world(ls.wi));
  out.specular = ls.delta;
  if (ls.delta) {
    out.weight = ls.weight;
    return out;
  }
  const vec3 fc = eval_bsdf<F>(s, wo, out.wi, n, out.pdf);
  if (out.pdf > 0) out.weight = fc / out.pdf;
  return out;
}

}  // namespace detail

// Samples the surface's lobe with three uniform numbers. n is the shading normal, on the
// geometric normal's side (the geometric normal itself on flat triangles).
template <material_family F = material_family::any>
SIEVE_HD inline bsdf_sample sample_bsdf(const surface& s, vec3 wo, vec3 n, float u1, float u2, float u3) {
  const float cos_o = dot(wo, n);
  const vec3 facing = cos_o >= 0 ? n : -n;  // the normal on the viewer's side
  bsdf_sample out;
  switch (kind_in<F>(s)) {
    case surface_kind::conductor: {
      const frame f = frame::around(facing);
      return detail::from_lobe<F>(s, f, wo, n, conductor_sample(conductor_of(s), f.to_local(wo), u1, u2));
    }
    case surface_kind::rough_dielectric: {
      const frame f = frame::around(n);
      return detail::from_lobe<F>(s, f, wo, n, dielectric_sample(dielectric_of(s), f.to_local(wo), u1, u2, u3));
    }
    case surface_kind::pbr: {
      const frame f = frame::around(n);
      return detail::from_lobe<F>(s, f, wo, n, pbr_sample(pbr_of(s), f.to_local(wo), u1, u2, u3));
    }
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
