// A scene as the renderer consumes it: triangles with a material each, the camera, the film, the
// environment and the compaction settings. Loaded from TOML (scene/load.hpp) or from an OBJ file.
#pragma once

#include "../core/alpha.hpp"
#include "../core/environment_data.hpp"
#include "../core/math.hpp"
#include "../core/texture.hpp"
#include "../core/texture_store.hpp"
#include "../core/modes.hpp"
#include "../core/triangle.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace sieve::render {

// OBJ/MTL mapping (documented in scenes/README.md, "OBJ/MTL mapping"):
//   dielectric  Tf (else Ks, else 1) -> albedo, Ni -> ior   (illum 4, 6 or 7 only)
//   mirror      Ks -> albedo      (illum 3 or 5; Ks > 0 with Kd = 0; Pm >= 0.5 with Pr < 0.5)
//   diffuse     Kd -> albedo      (otherwise)
//   any kind    Ke -> emission (a triangle with emission > 0 is a light)
//   diffuse     map_Kd -> albedo_texture (replaces Kd where the file is found; `-clamp on`: clamp)
//   any kind    d (1 - Tr) and map_d -> opacity, opacity_texture (a stochastic cut-out, never glass)
// The rest is kept by name for a BSDF that can show it (roughness, metallic, specular and their
// maps, the bump map) and named in one warning per scene where the present BSDFs approximate it.
// The microfacet kinds (core/bsdf.hpp): conductor (rough metal, f0 = albedo), rough_dielectric
// (rough glass, albedo tints it), gltf (the glTF 2.0 metallic-roughness model, albedo = base colour).
enum class material_kind : std::uint8_t { diffuse, mirror, dielectric, conductor, rough_dielectric, gltf };

struct material {
  std::string name;
  material_kind kind = material_kind::diffuse;
  vec3 albedo{0.8f, 0.8f, 0.8f};
  vec3 emission{0, 0, 0};
  float ior = 1.5f;
  float roughness = 0;     // microfacet kinds, 0 .. 1 (alpha = roughness^2); MTL: Pr, else sqrt(2 / (Ns + 2))
  float metallic = 0;      // gltf, 0 .. 1; MTL: Pm
  float transmission = 0;  // gltf, 0 .. 1
  bool thin = false;       // rough_dielectric, gltf: a thin-walled sheet (no refraction)
  std::int32_t albedo_texture = -1;  // index into scene::textures: the albedo (a diffuse material's); -1: none
  // Opacity, times its texture's texel: a ray passes the surface with probability 1 - opacity (a
  // stochastic cut-out: MTL d and map_d, glTF alphaMode BLEND), or, with alpha = mask, where opacity
  // is below alpha_cutoff (glTF alphaMode MASK). Every traversal applies it, shadow rays included
  // (core/alpha.hpp). `alpha` opaque with opacity < 1 or an opacity texture (MTL) reads as blend.
  float opacity = 1;                  // d, or 1 - Tr (d wins where both are given); glTF: baseColorFactor's alpha
  std::int32_t opacity_texture = -1;  // map_d: index into scene::textures (its alpha, else first channel); glTF: the base colour's alpha
  alpha_mode alpha = alpha_mode::opaque;  // glTF's alphaMode
  float alpha_cutoff = 0.5f;
  // Kept for the BSDFs to come; today's draw a diffuse material from an MTL file as Lambert (scenes/README.md).
  vec3 specular{0, 0, 0};   // Ks of a diffuse material: a glossy layer
  std::string specular_map{}, roughness_map{}, metallic_map{}, bump_map{};  // map_Ks, map_Pr, map_Pm, map_Bump/bump/norm: named, not read
  bool dissolve_ignored = false;  // `d 0` without map_d, read as opaque (exporters write it for opaque)
  std::int32_t emission_texture = -1;  // likewise: `emission` is multiplied by its texel at each point
  std::int32_t metal_rough_texture = -1;  // likewise (gltf): roughness x green, metallic x blue (not sRGB; stored as two channels)
  std::int32_t normal_texture = -1;  // likewise: a tangent-space normal map (glTF normalTexture; stored values)
  float normal_scale = 1;            // its x and y scaled (normalTexture.scale)
  uv_transform uv;  // applied to the texture coordinates before every texture of the material is read
};

struct camera_desc {
  vec3 position{0, 0, -5};
  vec3 look_at{0, 0, 0};
  vec3 up{0, 1, 0};
  float vfov_degrees = 40;
  float aspect = 0;  // width / height a model's camera asks for (glTF aspectRatio); 0: the film's
};

struct film_desc {
  std::uint32_t width = 512;
  std::uint32_t height = 512;
  std::uint32_t spp = 16;
  std::uint32_t max_bounces = 8;
  std::uint32_t seed = 1;
  bool mipmaps = true;  // false: textures read at level 0 alone (no ray cones), the aliasing baseline
  // Conventions another renderer may use, for comparisons (docs/renderer.md, "Conventions"):
  bool shading_sides = false;  // film.sides "shading": the side of a surface by its interpolated vertex normal
  bool uv_tangents = false;    // film.tangents "uv": normal maps in each triangle's dp/du frame, bitangent n x t
};

struct compaction_desc {
  std::string strategy = "auto";  // a name from sieve::compaction_strategies()
  reorder_key reorder = reorder_key::none;  // ray reordering by radix sort (core/modes.hpp)
  sort_kind sort = sort_kind::onesweep;     // the GPU radix sort that reorders
  routing_kind routing = routing_kind::branch;  // how shade reaches the material families
};

struct scene {
  std::string name;
  std::vector<triangle> triangles;
  std::vector<std::uint32_t> material_of;  // per triangle, index into materials
  std::vector<material> materials;
  std::vector<std::uint32_t> emissive;     // indices of the triangles whose material emits
  // Shading attributes per triangle (core/triangle.hpp), each either empty (no triangle has them) or
  // one per triangle: normals all zero for a flat triangle, uvs all zero where the mesh gave none.
  std::vector<triangle_normals> normals;
  std::vector<triangle_uvs> uvs;
  std::vector<triangle_tangents> tangents;  // empty, or one per triangle (sign 0: none): normal maps' frames
  std::vector<texture> textures;           // materials' albedo_texture index this
  camera_desc camera;
  film_desc film;
  vec3 environment{0, 0, 0};               // radiance of rays that leave the scene (no map)
  environment_data environment_map;        // [environment] map: an HDR image around the scene, or empty
  compaction_desc compaction;
  std::vector<std::filesystem::path> files;  // the scene's inputs, the one list outputs are refused against: scene file, OBJ, MTL, textures, glTF files, buffers and images, environment map
};

}  // namespace sieve::render
