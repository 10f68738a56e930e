// Stage `shade`: at each path's hit, add what it sees (environment or emission, weighted by MIS
// against next-event estimation), prepare a shadow ray towards a light or the environment map (next-event estimation on
// surfaces with a non-delta lobe), play Russian roulette, sample the BSDF for the next segment, and mark the path
// kept or removed in the form the compaction strategy takes.
//
// Random numbers: vertex b of a path (its b-th hit, from 0) draws from rng_key{pixel, sample,
// b + 1, seed} (vertex 0's camera jitter is bounce 0): dimensions below.
#pragma once

#include <exec/exec.hpp>

#include <type_traits>

#include "../core/marks.hpp"
#include "../core/rng.hpp"
#include "paths.hpp"

#if defined(__CUDACC__)
#include <sieve/compaction/append.cuh>
#endif

namespace sieve::render {

namespace dim {
inline constexpr std::uint32_t light_pick = 0, light_u = 1, light_v = 2;  // next-event estimation
inline constexpr std::uint32_t bsdf_u = 3, bsdf_v = 4, bsdf_lobe = 5;    // the next direction
inline constexpr std::uint32_t roulette = 6;
}  // namespace dim

// Russian roulette starts at this vertex; a path survives with probability min(0.95, max beta).
inline constexpr std::uint32_t roulette_from_vertex = 3;

struct shade_args {
  scene_view scene;
  path_columns paths;
  bounce_columns scratch;
  vec3* film = nullptr;    // the wave's film: one entry per path slot
  keep_marks marks;
  std::uint32_t vertex = 0;  // the bounce: 0 for the camera rays' hits
};

// The material of triangle `prim` at barycentrics (b1, b2): its albedo read from its texture where
// it has one (at the interpolated texture coordinates; clamped to 0 .. 1, an albedo), its emission
// times its emission texture's texel there, its roughness and metallic times the two channels of
// its metallic-roughness texture (glTF's green and blue). The textures are read at the level of a
// ray cone `width` wide meeting the triangle at cosine `cos_theta` (core/ray_cone.hpp), whose
// level-0 term goes to `lod0` for the normal map; width 0: level 0.
SIEVE_HD inline surface surface_at(const scene_view& s, std::uint32_t prim, float b1, float b2, float& lod0,
                                   float width = 0, float cos_theta = 1) {
  surface m = s.surfaces[s.material_of[prim]];
  lod0 = -1e30f;
  if (m.albedo_texture < 0 && m.emission_texture < 0 && m.metal_rough_texture < 0 && m.normal_texture < 0) return m;
  tex_coord t{};
  if (s.uvs) {
    t = interpolate(s.uvs[prim], b1, b2);
    if (width > 0) lod0 = footprint_lod(s.bvh.triangles[prim], s.uvs[prim], m.uv, width, cos_theta);
  }
  if (!m.uv.identity()) m.uv.apply(t.u, t.v);
  auto read = [&](std::int32_t i) {
    const texture_view& tex = s.textures[i];
    return texture_lookup(tex, t.u, t.v, texture_lod(tex, lod0));
  };
  if (m.albedo_texture >= 0) m.albedo = min(max(read(m.albedo_texture), vec3{0, 0, 0}), vec3{1, 1, 1});
  if (m.emission_texture >= 0) m.emission = m.emission * max(read(m.emission_texture), vec3{0, 0, 0});
  if (m.metal_rough_texture >= 0) {
    const vec3 mr = min(max(read(m.metal_rough_texture), vec3{0, 0, 0}), vec3{1, 1, 1});
    m.roughness *= mr.x;
    m.metallic *= mr.y;
  }
  return m;
}
SIEVE_HD inline surface surface_at(const scene_view& s, std::uint32_t prim, float b1, float b2) {
  float lod0;
  return surface_at(s, prim, b1, b2, lod0);
}

// The normal that decides which side of the surface at hit h a direction is on (emission, the
// shading normal's guards): the geometric normal ng; with film.sides "shading" the interpolated
// vertex normal (Mitsuba 3's convention: its two-sided BSDFs and area lights go by the shading
// frame), so that comparisons configure both renderers alike.
SIEVE_HD inline vec3 side_normal(const scene_view& s, const hit& h, vec3 ng) {
  return s.shading_sides && s.normals ? shading_normal(s.normals[h.prim], h.u, h.v, ng) : ng;
}

// The shading normal at hit h for a viewer in direction wo: ng on flat triangles; interpolated
// where the mesh has vertex normals; bent by the material's normal map where it has one and the
// triangle has tangents (core/shading.hpp), read at level lod0 (surface_at's); with film.tangents
// "uv" in the frame of the triangle's dp/du instead. A two-channel map holds x and y; z is rebuilt
// as sqrt(1 - x^2 - y^2). ng here: side_normal's.
SIEVE_HD inline vec3 shading_normal_at(const scene_view& s, const hit& h, const surface& m, vec3 ng, vec3 wo, float lod0) {
  if (!s.normals) return ng;
  const triangle_normals& tn = s.normals[h.prim];
  const bool uv_frame = s.uv_tangents && s.uvs;
  if (m.normal_texture >= 0 && (uv_frame || (s.tangents && s.tangents[h.prim].sign != 0))) {
    tex_coord t = s.uvs ? interpolate(s.uvs[h.prim], h.u, h.v) : tex_coord{};
    if (!m.uv.identity()) m.uv.apply(t.u, t.v);
    const texture_view& tex = s.textures[m.normal_texture];
    vec3 c = texture_lookup(tex, t.u, t.v, texture_lod(tex, lod0));
    if (tex.channels == 2) {
      const float x = 2 * c.x - 1, y = 2 * c.y - 1, zz = 1 - x * x - y * y;
      c.z = 0.5f * (zz > 0 ? sqrtf(zz) : 0.0f) + 0.5f;
    }
    const vec3 bent = uv_frame ? normal_mapped(tn, triangle_dp_du(s.bvh.triangles[h.prim], s.uvs[h.prim]), 1.0f, h.u,
                                               h.v, ng, c, m.normal_scale)
                               : normal_mapped(tn, s.tangents[h.prim], h.u, h.v, ng, c, m.normal_scale);
    return shading_normal_towards(bent, ng, wo);
  }
  return shading_normal_towards(shading_normal(tn, h.u, h.v, ng), ng, wo);
}

// Next-event estimation at a point x of a surface with a non-delta lobe (geometric normal ng, side
// normal side (side_normal's), shading normal n; `smooth`: n and side differ): a direction towards the environment map (with probability environment_pick) or a
// light point by area, the MIS-weighted light it would add, and the shadow ray that decides whether
// it does. Without a sampled map the pick costs nothing: u is the light's number as it was.
template <material_family F>
SIEVE_HD inline void next_event(const shade_args& a, std::uint32_t i, rng_key key, const surface& m, vec3 x, vec3 ng,
                                vec3 side, vec3 n, bool smooth, vec3 wo, vec3 beta) {
  const scene_view& s = a.scene;
  const float pick_env = environment_pick(s.env_map, s.lights.count);
  const float u = uniform(key, dim::light_pick);
  if (u < pick_env) {
    const environment_sample es = sample_environment(s.env_map, uniform(key, dim::light_u), uniform(key, dim::light_v));
    if (smooth && !sides_agree(wo, es.wi, side, n)) return;
    const float pdf_env = es.pdf * pick_env;
    float pdf_bsdf = 0;
    const vec3 f_cos = eval_bsdf<F>(m, wo, es.wi, n, pdf_bsdf);
    if (!(pdf_env > 0) || max_component(f_cos) <= 0) return;
    const vec3 light = beta * f_cos * es.radiance * (power_heuristic(pdf_env, pdf_bsdf) / pdf_env);
    if (!finite(light) || max_component(light) <= 0) return;
    a.scratch.shadow_rays[i] = spawn_ray(x, ng, es.wi);  // unoccluded: it leaves the scene
    a.scratch.shadow_light[i] = light;
    if (a.scratch.shadow_count) atomic_add_aggregated(a.scratch.shadow_count, 1U);
    return;
  }
  const float pick_light = 1.0f - pick_env;
  const light_sample ls = sample_light(s.lights, s.bvh.triangles, (u - pick_env) / pick_light,
                                       uniform(key, dim::light_u), uniform(key, dim::light_v));
  const vec3 d = ls.point - x;
  const float dist = length(d);
  if (!(dist > 0)) return;
  const vec3 wi = d / dist;
  if (smooth && !sides_agree(wo, wi, side, n)) return;
  const float pdf_light = light_pdf_solid_angle(s.lights, s.bvh.triangles, ls.prim, wi, dist, ls.normal) * pick_light;
  float pdf_bsdf = 0;
  const vec3 f_cos = eval_bsdf<F>(m, wo, wi, n, pdf_bsdf);
  if (pdf_light <= 0 || max_component(f_cos) <= 0) return;
  const vec3 le = emitted(surface_at(s, ls.prim, ls.b1, ls.b2), ls.normal, -wi);
  const vec3 light = beta * f_cos * le * (power_heuristic(pdf_light, pdf_bsdf) / pdf_light);
  if (!finite(light) || max_component(light) <= 0) return;
  a.scratch.shadow_rays[i] = spawn_ray(x, ng, wi, dist * (1.0f - 1e-3f));  // stop short of the light itself
  a.scratch.shadow_light[i] = light;
  if (a.scratch.shadow_count) atomic_add_aggregated(a.scratch.shadow_count, 1U);
}

// What an escaping ray (unit direction w) sees: the map, weighed by MIS against next-event
// estimation at the previous vertex, whose BSDF drew w with solid-angle density
// `bsdf_pdf` (0: a camera or specular bounce, full weight); or the constant colour.
SIEVE_HD inline vec3 escaped(const scene_view& s, vec3 w, float bsdf_pdf) {
  if (!s.env_map.present()) return s.environment;
  const vec3 le = environment_radiance(s.env_map, w);
  if (!(bsdf_pdf > 0)) return le;
  const float pdf_env = environment_pdf(s.env_map, w) * environment_pick(s.env_map, s.lights.count);
  return le * power_heuristic(bsdf_pdf, pdf_env);
}

// Path a.scratch.path(i) at queue entry i; returns whether it goes on (also marked in a.marks).
// F: the family the path's hit belongs to (wavefront/route.hpp routed it there), or `any`, the one
// kernel that branches on the surface: one copy of the shading, F only prunes the dispatch.
template <material_family F = material_family::any>
SIEVE_HD inline bool shade_path(std::uint32_t i, const shade_args& a, const wave& w) {
  const scene_view& s = a.scene;
  const path_columns& p = a.paths;
  const std::uint32_t j = a.scratch.path(i);  // the path's state; i: its queue entry (scratch, marks)
  const std::uint32_t slot = p.slot[j];
  const ray r = p.rays[j];
  const hit h = a.scratch.hits[i];
  vec3 beta = p.throughput[j];
  a.scratch.shadow_light[i] = {0, 0, 0};

  vec3 seen{0, 0, 0};
  bool keep = false;
  const bool found = F == material_family::any ? h.found() : F != material_family::miss;
  if (!found) {
    seen = beta * escaped(s, r.direction, p.bsdf_pdf[j]);
  } else {
    const triangle& tri = s.bvh.triangles[h.prim];
    const vec3 ng = geometric_normal(tri), wo = -r.direction, x = r.origin + r.direction * h.t;
    const float cone = p.cone[j] + s.pixel_spread * h.t;  // the ray cone's width at the hit
    float lod0;
    const surface m = surface_at(s, h.prim, h.u, h.v, lod0, cone, dot(ng, r.direction));
    const rng_key key{w.pixel_of(slot), w.sample_of(slot), a.vertex + 1, s.seed};
    // (A cut-out's passes never reach here: the traversal refused them, core/alpha.hpp.)
    const vec3 side = side_normal(s, h, ng);
    const vec3 n = shading_normal_at(s, h, m, side, wo, lod0);
    const bool smooth = n.x != side.x || n.y != side.y || n.z != side.z;
    const vec3 le = emitted(m, side, wo);
    if (max_component(le) > 0) {
      // Reached by BSDF sampling: weigh against the chance that next-event estimation at the previous
      // vertex picked this point. Camera and specular bounces carry pdf 0: full weight.
      const float prev = p.bsdf_pdf[j];
      const float pick_light = 1.0f - environment_pick(s.env_map, s.lights.count);
      const float w =
          prev > 0 ? power_heuristic(prev, light_pdf_solid_angle(s.lights, s.bvh.triangles, h.prim, r.direction, h.t, ng) *
                                                   pick_light)
                 : 1.0f;
      seen = beta * le * w;
    }
    const float survive = a.vertex >= roulette_from_vertex ? fminf(0.95f, max_component(beta)) : 1.0f;
    if (a.vertex < s.max_bounces && uniform(key, dim::roulette) < survive) {
      beta = beta / survive;
      if (has_smooth_lobe<F>(m) && (s.lights.count > 0 || s.env_map.sampled))
        next_event<F>(a, i, key, m, x, ng, side, n, smooth, wo, beta);
      const bsdf_sample bs =
          sample_bsdf<F>(m, wo, n, uniform(key, dim::bsdf_u), uniform(key, dim::bsdf_v), uniform(key, dim::bsdf_lobe));
      beta = beta * bs.weight;
      if (smooth && !sides_agree(wo, bs.wi, side, n)) beta = {0, 0, 0};  // through the geometric surface: ends here
      if (max_component(beta) > 0 && finite(beta)) {
        p.rays[j] = spawn_ray(x, ng, bs.wi);
        p.cone[j] = cone;
        p.throughput[j] = beta;
        p.bsdf_pdf[j] = bs.specular ? 0.0f : bs.pdf;
        keep = true;
      }
    }
  }
  if (finite(seen) && max_component(seen) > 0) a.film[slot] += seen;
  a.marks.mark(i, keep);
  return keep;
}

// Queue entry i shaded where every surface is of family F (prepared_scene::family): a hit by
// shade_path<F>, a miss by shade_path<miss>, so that the kernel holds the BSDFs of that family
// alone (fewer registers: more paths in flight); `any`: the one kernel that branches on the surface.
// The image is the same bit for bit (F only prunes the dispatch).
template <material_family F>
SIEVE_HD inline bool shade_in(std::uint32_t i, const shade_args& a, const wave& w) {
  if constexpr (F == material_family::any) return shade_path<F>(i, a, w);
  else if (a.scratch.hits[i].found()) return shade_path<F>(i, a, w);
  else return shade_path<material_family::miss>(i, a, w);
}

// Calls launch(std::integral_constant<material_family, F>{}) with the family the shading kernels
// are compiled for: the scene's one family among those with kernels of their own, else `any`.
template <class L>
void with_family(material_family family, const L& launch) {
  switch (family) {
    case material_family::diffuse: return launch(std::integral_constant<material_family, material_family::diffuse>{});
    case material_family::pbr: return launch(std::integral_constant<material_family, material_family::pbr>{});
    default: return launch(std::integral_constant<material_family, material_family::any>{});
  }
}

// The entries whose ray hit a surface, grouped apart from those that escaped (exec::parallel_for_grouped):
// a warp of both kinds runs the surface's shading (textures, next-event estimation, BSDF sampling)
// at the few lanes that hit, with the others idle; after the first bounces most of the helmet's
// rays escape to the sky.
struct hit_first {
  const hit* hits;
  const std::uint32_t* live;
  SIEVE_HD bool operator()(std::uint32_t i) const { return i < *live && hits[i].found(); }
};

template <material_family F, class Exec>
void shade_as(Exec e, std::uint32_t capacity, const std::uint32_t* live, const shade_args& a, const wave* w) {
  exec::parallel_for_grouped(e, "shade", capacity, hit_first{a.scratch.hits, live}, [=] SIEVE_HD(std::uint32_t i) {
    if (i < *live) shade_in<F>(i, a, *w);
  });
}

// `family`: the scene's one material family (prepared_scene::family), or `any`.
template <class Exec>
void shade(Exec e, std::uint32_t capacity, const std::uint32_t* live, const shade_args& a, const wave* w,
           material_family family = material_family::any) {
  with_family(family, [&](auto f) { shade_as<decltype(f)::value>(e, capacity, live, a, w); });
}

// The slot of a surviving item in a queue whose length is *count (producer-side append): one
// atomic per warp on the GPU (the library's warp_append; every lane of the warp calls it), one per
// item on the CPU. Unstable: the order of the slots varies from run to run.
SIEVE_HD inline std::uint32_t append_slot(std::uint32_t* count, bool survives) {
#if defined(__CUDA_ARCH__)
  return sieve::cuda::warp_append(count, survives);
#else
  return survives ? atomic_add_u32(count, 1U) : 0;
#endif
}

// Stage `shade` with producer-side append: each surviving path is written straight to the next
// queue (`next`, *next_count paths long), so no compaction pass runs. Queue order changes, the
// image does not (random numbers and film entries are keyed by the path's slot).
template <material_family F, class Exec>
void shade_append_as(Exec e, std::uint32_t capacity, const std::uint32_t* live, const shade_args& a, const wave* w,
                     const path_columns& next, std::uint32_t* next_count) {
  exec::parallel_for_grouped(e, "shade", capacity, hit_first{a.scratch.hits, live}, [=] SIEVE_HD(std::uint32_t i) {
    const bool keep = i < *live && shade_in<F>(i, a, *w);
    const std::uint32_t k = append_slot(next_count, keep);
    if (keep) next.copy_from(k, a.paths, a.scratch.path(i));
  });
}

template <class Exec>
void shade_append(Exec e, std::uint32_t capacity, const std::uint32_t* live, const shade_args& a, const wave* w,
                  const path_columns& next, std::uint32_t* next_count, material_family family = material_family::any) {
  with_family(family,
              [&](auto f) { shade_append_as<decltype(f)::value>(e, capacity, live, a, w, next, next_count); });
}

}  // namespace sieve::render
