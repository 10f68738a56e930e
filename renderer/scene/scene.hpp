// A scene as the renderer consumes it: triangles with a material each, the camera, the film, the
// environment and the compaction settings. Loaded from TOML (scene/load.hpp) or from an OBJ file.
#pragma once

#include "../core/environment_data.hpp"
#include "../core/math.hpp"
#include "../core/texture.hpp"
#include "../core/modes.hpp"
#include "../core/triangle.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace sieve::render {

// OBJ/MTL mapping (documented in scenes/README.md):
//   diffuse     Kd -> albedo                        (illum 0, 1, 2 without a mirror-like Ks)
//   mirror      Ks -> albedo                        (illum 3 or 5, or Ks > 0 with Kd = 0)
//   dielectric  Tf (else Ks, else 1) -> albedo, Ni -> ior   (illum 4, 6, 7, or d < 1)
//   any kind    Ke -> emission (a triangle with emission > 0 is a light)
//   diffuse     map_Kd -> albedo_texture (replaces Kd where the file is found; `-clamp on`: clamp)
enum class material_kind : std::uint8_t { diffuse, mirror, dielectric };

struct material {
  std::string name;
  material_kind kind = material_kind::diffuse;
  vec3 albedo{0.8f, 0.8f, 0.8f};
  vec3 emission{0, 0, 0};
  float ior = 1.5f;
  std::int32_t albedo_texture = -1;  // index into scene::textures: the albedo (a diffuse material's); -1: none
};

// An image a material reads: linear RGB (8- and 16-bit files decoded from sRGB, .hdr as stored).
struct texture {
  std::string name;  // the file it was read from
  std::uint32_t width = 0, height = 0;
  wrap_mode wrap = wrap_mode::repeat;
  std::vector<vec3> texels;  // width * height, row 0 at the top
  texture_view view() const { return {texels.data(), width, height, wrap}; }
};

struct camera_desc {
  vec3 position{0, 0, -5};
  vec3 look_at{0, 0, 0};
  vec3 up{0, 1, 0};
  float vfov_degrees = 40;
};

struct film_desc {
  std::uint32_t width = 512;
  std::uint32_t height = 512;
  std::uint32_t spp = 16;
  std::uint32_t max_bounces = 8;
  std::uint32_t seed = 1;
};

struct compaction_desc {
  std::string strategy = "auto";  // a name from sieve::compaction_strategies()
  reorder_key reorder = reorder_key::none;  // ray reordering by radix sort (core/modes.hpp)
  sort_kind sort = sort_kind::onesweep;     // the GPU radix sort that reorders
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
  std::vector<texture> textures;           // materials' albedo_texture index this
  camera_desc camera;
  film_desc film;
  vec3 environment{0, 0, 0};               // radiance of rays that leave the scene (no map)
  environment_data environment_map;        // [environment] map: an HDR image around the scene, or empty
  compaction_desc compaction;
  std::vector<std::filesystem::path> files;  // the scene's inputs, the one list outputs are refused against: scene file, OBJ, MTL, textures, glTF files, buffers and images, environment map
};

}  // namespace sieve::render
