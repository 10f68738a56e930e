// Loading a scene: a TOML scene file (schema in scenes/README.md) or an OBJ file directly.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "scene.hpp"

#include <sieve/compaction/error.hpp>

namespace sieve::render {

// What a scene may ask for. A scene past a limit is an error naming the count and the limit, found
// before the memory is allocated (procedural scenes are counted before they are generated).
struct scene_limits {
  std::uint64_t max_triangles = std::uint64_t{1} << 27;  // 134M triangles: 4.5 GiB of vertices, ~10 GiB with the BVH
  std::uint64_t max_pixels = std::uint64_t{1} << 26;     // film.width x film.height (64M pixels, 8192 x 8192)
  // The host memory the scene may take (core/memory.hpp's model of its triangles and pixels, checked
  // as soon as an OBJ's or a procedural scene's triangles are counted, before they are read or made);
  // 0: MemAvailable of /proc/meminfo.
  std::uint64_t available_memory = 0;
  // Textures (map_Kd): each image at most max_texture_side pixels on a side, and all of them
  // together at most max_texture_bytes as stored (at their precision, mipmaps included): the
  // texture budget.
  std::uint32_t max_texture_side = 16384;
  std::uint64_t max_texture_bytes = std::uint64_t{1} << 31;
};

// Loads `path`:
//   *.toml  a scene file: [camera], [film], [environment], [compaction], [[objects]] (OBJ/MTL files,
//           relative to the TOML file), [[materials]] (added, or overriding MTL materials by name) and
//           [[lights]] (emissive quads). At least one object or light.
//   *.obj   a mesh alone: its MTL materials (grey diffuse where the MTL is missing or a face has
//           none; a missing MTL is a warning on stderr), a white sky (environment (1,1,1)), and a
//           camera on the -z side of the bounding box looking along +z at its centre, far enough back
//           that the whole box fits the (40 degree) vertical field of view and the film's aspect.
// `overrides` are "key=value" strings applied to the document before it is read, e.g. "film.spp=4",
// "compaction.strategy=billeter", "camera.vfov=30", "objects.0.scale=2" (or "objects[0].scale=2").
// The value is read as TOML (number, quoted string, array, boolean); a value that is not TOML is
// taken as a bare string. Setting camera.vfov drops focal_length_mm/film_height_mm and vice versa.
//
// Throws sieve::error naming the file (and the line, key, vertex or value) at fault: a missing file,
// a TOML or OBJ parse error, unknown keys, wrong types, out-of-range values, a missing MTL named by
// a TOML object, non-finite vertices, face indices past the vertex list, or a scene with no triangles.
// Past `limits`: an error naming the count asked for and the limit.
//
// `fit`, when given, sizes the film from the one the file and the overrides give (width, height),
// before the scene is read: the loader checks that size and frames a bare mesh for it, so a film
// that follows the scene's aspect needs one load.
// The checks load_scene makes before it reads anything: the file is there, a regular file, of a known
// type (.toml, .obj, .gltf, .glb, .ply); throws sieve::error naming it. `sieve --dry-run` makes them.
void check_scene_file(const std::filesystem::path& path);

using film_fit = std::function<std::pair<std::uint32_t, std::uint32_t>(const film_desc&)>;
scene load_scene(const std::filesystem::path& path, const std::vector<std::string>& overrides = {},
                 const scene_limits& limits = {}, const film_fit& fit = {});

// The bytes of the scene's input files (scene::files: the scene file, models, buffers, images) as
// they are now; a file gone since the load counts nothing. The load's MB/s divides it.
std::uint64_t input_bytes(const scene& s);

}  // namespace sieve::render
