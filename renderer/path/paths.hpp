// The wavefront's queues, struct-of-arrays: the live paths (what survives from bounce to bounce and
// is compacted), and per-bounce scratch (hits, shadow rays). Raw pointers, so the same views serve
// host and device memory.
#pragma once

#include "../bvh/bvh.hpp"
#include "../core/hit.hpp"
#include "../trace/tracers.hpp"  // ray_traversals: how each kind of ray is traced
#include "../core/bsdf.hpp"
#include "../core/camera.hpp"
#include "../core/environment.hpp"
#include "../core/lights.hpp"
#include "../core/ray_cone.hpp"
#include "../core/shading.hpp"
#include "../core/texture.hpp"

#include <sieve/compaction/record.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <tuple>
#include <type_traits>

namespace sieve::render {

// A wave: samples [first_sample, first_sample + samples) of pixels [first_pixel, first_pixel +
// pixels), one path each. A path's slot, s * pixels + (pixel - first_pixel), names its pixel, its
// sample and its own entry of the wave's film: no two paths of a wave add to the same word, and the
// entries are added to the film sample by sample afterwards (accumulate.hpp), so the image does not
// depend on how many samples or pixels a wave holds.
struct wave {
  std::uint32_t first_pixel = 0, pixels = 0, first_sample = 0, samples = 1;
  SIEVE_HD constexpr std::uint32_t size() const { return pixels * samples; }
  SIEVE_HD constexpr std::uint32_t pixel_of(std::uint32_t slot) const { return first_pixel + slot % pixels; }
  SIEVE_HD constexpr std::uint32_t sample_of(std::uint32_t slot) const { return first_sample + slot / pixels; }
};

// One column per field; slot i of every column is one path. The columns are listed once, in
// `columns()` below: allocation (column_bytes, carve), the record compaction moves and the gather
// after a reordering all follow that list, so a new column is one line there.
struct path_columns {
  std::uint32_t* slot = nullptr;   // the path's slot in its wave (pixel, sample, film entry)
  ray* rays = nullptr;             // its next segment (unit direction)
  vec3* throughput = nullptr;      // product of BSDF weights so far
  float* bsdf_pdf = nullptr;       // solid-angle pdf of the last bounce's direction; 0: camera or specular
  float* cone = nullptr;           // the ray cone's width at the ray's origin (core/ray_cone.hpp): 0 at the camera

  // The list (a function, so that device code gets it by value).
  SIEVE_HD static constexpr auto columns() {
    return std::tuple{&path_columns::slot, &path_columns::rays, &path_columns::throughput, &path_columns::bsdf_pdf,
                      &path_columns::cone};
  }

  // f(member pointer) for each column, in order.
  template <class F>
  SIEVE_HD static constexpr void for_each_column(F&& f) {
    std::apply([&](auto... m) { (f(m), ...); }, columns());
  }

  // Bytes for n paths, every column aligned to 256 bytes (one allocation holds a whole queue).
  static constexpr std::size_t column_bytes(std::size_t n) {
    std::size_t bytes = 0;
    for_each_column([&](auto m) { bytes += aligned(n * element_size(m)); });
    return bytes;
  }
  // The columns of n paths laid out in `base` (column_bytes(n) bytes, 256-byte aligned).
  static path_columns carve(void* base, std::size_t n) {
    path_columns p;
    auto* at = static_cast<unsigned char*>(base);
    for_each_column([&](auto m) {
      p.*m = reinterpret_cast<std::remove_reference_t<decltype(p.*m)>>(at);
      at += aligned(n * element_size(m));
    });
    return p;
  }

  // The columns compaction moves together, for the first n slots.
  sieve::record record(std::size_t n) const {
    return std::apply([&](auto... m) { return sieve::record(std::span(this->*m, n)...); }, columns());
  }

  // Path j of `from` to slot i of this queue, every column.
  SIEVE_HD void copy_from(std::uint32_t i, const path_columns& from, std::uint32_t j) const {
    for_each_column([&](auto m) { (this->*m)[i] = (from.*m)[j]; });
  }

 private:
  static constexpr std::size_t aligned(std::size_t bytes) { return (bytes + 255) / 256 * 256; }
  template <class T>
  static constexpr std::size_t element_size(T* path_columns::*) {
    return sizeof(T);
  }
};

// Per-bounce scratch, indexed like the live paths.
struct bounce_columns {
  hit* hits = nullptr;            // extend's closest hits
  ray* shadow_rays = nullptr;     // shade's next-event rays, for connect
  vec3* shadow_light = nullptr;   // what each adds when unoccluded; zero: no shadow ray
  std::uint32_t* shadow_count = nullptr;  // shade counts the shadow rays it writes (when set)
  // An index queue: queue entry i is path index[i], whose state stays where generate put it. Null:
  // entry i is path i. The scratch columns above are indexed by queue entry.
  const std::uint32_t* index = nullptr;

  SIEVE_HD std::uint32_t path(std::uint32_t i) const { return index ? index[i] : i; }
};

// Everything the per-path functions read of the scene (device-friendly: no strings, no vectors).
struct scene_view {
  bvh_view bvh;
  ray_traversals trace = cpu_traversals;  // the GPU's: gpu_traversals_for(render_settings::bvh)
  const surface* surfaces = nullptr;         // per material
  std::uint32_t material_count = 0;          // surfaces' length
  const std::uint32_t* material_of = nullptr;  // per triangle
  const triangle_normals* normals = nullptr;   // per triangle, or null: every triangle flat
  const triangle_uvs* uvs = nullptr;           // per triangle, or null: (0, 0) everywhere
  const triangle_tangents* tangents = nullptr;  // per triangle, or null: no normal maps
  const texture_view* textures = nullptr;      // surfaces' albedo_texture index this
  light_table lights;
  vec3 environment;                          // radiance of escaping rays, where there is no map
  environment_map env_map;                   // the HDR environment (present() or not)
  camera cam;
  float pixel_spread = 0;                    // the camera ray cone's spread angle: a pixel's height at distance 1
  aabb bounds;                               // of the whole scene (ray reordering keys)
  std::uint32_t width = 0, height = 0, max_bounces = 0, seed = 0;
  bool shading_sides = false;  // film.sides "shading" (shade.hpp's side_normal)
  bool uv_tangents = false;    // film.tangents "uv" (shade.hpp's shading_normal_at)
};

}  // namespace sieve::render
