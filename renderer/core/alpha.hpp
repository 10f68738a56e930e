// Alpha: whether a traversal accepts a ray's hit on a triangle, one copy for the CPU and the GPU,
// called by every traversal (DFS, BFS, the 8-wide tree; closest and any hit, so shadow rays too)
// where it has found a hit and before it keeps it. An opaque triangle's hit is always accepted; a
// cut-out's (glTF alphaMode MASK) where its alpha is at least the cut-off; a blended one's (glTF
// alphaMode BLEND, MTL d and map_d) with probability alpha: a stochastic opacity that passes a
// fraction 1 - alpha of the light on average, shadows included.
//
// The chance is drawn from a hash of the ray and the triangle, not from the path's random numbers:
// the same ray meets the same decision in every traversal, in whatever order it visits the
// triangles, so images stay deterministic and equal across traversals and strategies.
#pragma once

#include "texture.hpp"
#include "triangle.hpp"

#include <sieve/hash.hpp>  // mix64

#include <cstdint>

namespace sieve::render {

enum class alpha_mode : std::uint8_t { opaque, mask, blend };

// A material's alpha: factor times the texture's first channel at the hit (the base colour
// image's alpha channel, read as an opacity; -1: none), through the material's uv map.
struct alpha_material {
  alpha_mode mode = alpha_mode::opaque;
  float factor = 1;
  float cutoff = 0.5f;          // mask: accepted where alpha >= cutoff
  std::int32_t texture = -1;    // index into `textures` of the alpha_view
  uv_transform uv;
};

// What the predicate reads (device-friendly). `materials` null: every triangle is opaque (the
// traversals then pay one test of a pointer per hit).
struct alpha_view {
  const std::uint32_t* material_of = nullptr;  // per triangle
  const alpha_material* materials = nullptr;   // per material
  const triangle_uvs* uvs = nullptr;           // per triangle, or null: (0, 0) everywhere
  const texture_view* textures = nullptr;
  SIEVE_HD bool present() const { return materials != nullptr; }
};

// Uniform in [0, 1) from the bits of a ray and a triangle's index.
SIEVE_HD inline float ray_hash_uniform(const ray& r, std::uint32_t prim) {
  const std::uint64_t a = std::uint64_t{float_bits(r.origin.x)} << 32 | float_bits(r.origin.y);
  const std::uint64_t b = std::uint64_t{float_bits(r.origin.z)} << 32 | float_bits(r.direction.x);
  const std::uint64_t c = std::uint64_t{float_bits(r.direction.y)} << 32 | float_bits(r.direction.z);
  const std::uint64_t h = mix64(mix64(mix64(a ^ 0x9E3779B97F4A7C15ULL) ^ b) ^ c ^ prim);
  return static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
}

// The alpha of triangle `prim` at barycentrics (b1, b2) of its material m.
SIEVE_HD inline float alpha_at(const alpha_view& a, const alpha_material& m, std::uint32_t prim, float b1, float b2) {
  if (m.texture < 0) return m.factor;
  tex_coord t = a.uvs ? interpolate(a.uvs[prim], b1, b2) : tex_coord{};
  m.uv.apply(t.u, t.v);
  return m.factor * bilinear(a.textures[m.texture], t.u, t.v).x;
}

// Whether ray r keeps its hit on triangle `prim` at barycentrics (b1, b2).
SIEVE_HD inline bool accept_hit(const alpha_view& a, const ray& r, std::uint32_t prim, float b1, float b2) {
  if (!a.present()) return true;
  const alpha_material& m = a.materials[a.material_of[prim]];
  if (m.mode == alpha_mode::opaque) return true;
  const float alpha = alpha_at(a, m, prim, b1, b2);
  if (m.mode == alpha_mode::mask) return alpha >= m.cutoff;
  return ray_hash_uniform(r, prim) < alpha;
}

}  // namespace sieve::render
