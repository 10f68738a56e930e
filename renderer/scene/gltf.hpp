// glTF 2.0 meshes (.gltf and .glb: the container, buffers and images read by sieve, the JSON parsed
// by tinygltf, everything checked here): the triangles of the default
// scene's node tree with their world transforms, the materials mapped onto sieve's kinds, and the
// first perspective camera, normals, texture coordinates and the images of base colour,
// metallic-roughness and emissive textures. Internal to the loader (renderer/scene/load.cpp); the keys and the
// material mapping are documented in scenes/README.md.
#pragma once

#include "scene.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace sieve::render {

struct gltf_options {
  std::string context;  // " (objects[0] in scene.toml)", appended to messages
  std::uint64_t max_triangles = std::numeric_limits<std::uint64_t>::max();  // room left in the scene
  std::string limit_text;                    // how to name that limit in the message
  std::function<void(std::uint64_t)> admit;  // given the file's triangle count before they are made
  bool used_materials_only = false;          // read the images of only the materials some primitive uses
  bool camera = true;  // read the first perspective camera; false (a scene that places its own): cameras are not read or checked
};

struct gltf_mesh {
  static constexpr std::uint32_t no_material = ~std::uint32_t{0};  // a primitive without a material

  std::vector<triangle> triangles;          // in world space (the node transforms applied)
  std::vector<std::uint32_t> material_of;   // per triangle: into `materials`, or no_material
  // Shading attributes (core/triangle.hpp), each empty (no primitive has them) or one per triangle:
  // NORMAL in world space (all zero: flat, where a primitive has none or one is zero or degenerate);
  // TEXCOORD_0 in sieve's convention, (u, 1 - v) of glTF's (all zero where a primitive has none).
  std::vector<triangle_normals> normals;
  std::vector<triangle_uvs> uvs;
  // Per-vertex tangents (tangents.hpp) of the primitives whose material has a normal map and that
  // have normals and uvs (sign 0 on the others); empty when no primitive needs them.
  std::vector<triangle_tangents> tangents;
  std::vector<material> materials;          // the file's materials, mapped; names unique in the file

  // The images materials use, still encoded (the loader decodes them as textures).
  struct image {
    std::string name;  // the file, or "<gltf file>: images[i]" for an embedded one
    std::vector<unsigned char> bytes;
    bool missing = false;  // an external file that was not found (a warning; the material keeps its factors)
  };
  struct texture_ref {
    std::int32_t image = -1;  // into `images`; -1: none
    wrap_mode wrap = wrap_mode::repeat;
    uv_transform transform;   // KHR_texture_transform, in sieve's (u, v) convention
  };
  std::vector<image> images;
  std::vector<texture_ref> base_color_texture;  // per material
  std::vector<texture_ref> emissive_texture;    // per material
  std::vector<texture_ref> metal_rough_texture;  // per material: pbrMetallicRoughness.metallicRoughnessTexture
  std::vector<texture_ref> normal_texture;       // per material: normalTexture
  std::optional<camera_desc> camera;        // the first perspective camera met in the node tree
  std::vector<std::filesystem::path> files;  // the glTF file and the external buffers and images it read
};

// Reads `path` (.gltf: JSON, buffers as data URIs or files beside it; .glb: binary), reading only
// the buffers and images the scene uses (gltf_source.hpp: depth, chunk, URI and byte limits). Throws
// sieve::error naming the file and the element at fault (`meshes[0].primitives[1]`, `accessors[3]`):
// JSON or GLB syntax, indices of accessors, buffer views, buffers, nodes, meshes, materials or
// cameras out of range, accessors reaching past their buffer view or a view past its buffer, a
// component type or element type a semantic does not allow, a vertex index past the positions, a
// non-finite position or transform, a node reached twice (a cycle), a required extension sieve
// lacks, no triangles at all, or more triangles than `opt.max_triangles`. Points and lines are
// skipped with a warning on stderr.
gltf_mesh load_gltf(const std::filesystem::path& path, const gltf_options& opt = {});

}  // namespace sieve::render
