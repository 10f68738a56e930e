// The megakernel integrator: one thread carries one path through every bounce, calling the very
// per-path functions the wavefront stages call (generate_path, trace_closest, shade_path,
// connect_path) on a queue of one held in registers. Same random numbers, same order of additions
// per pixel: its image equals the wavefront's bit for bit on the same backend.
#pragma once

#include <exec/exec.hpp>

#include "../path/connect.hpp"
#include "../trace/tracers.hpp"
#include "../path/generate.hpp"
#include "../path/shade.hpp"

namespace sieve::render {

// rays[0] and rays[1] count the extension and shadow rays traced (atomically, once per path).
// F: the one material family of the scene's surfaces (prepared_scene::family), or `any`: shade_in<F>,
// so the kernel holds the BSDFs of that family alone. Every BSDF compiled into one kernel took its registers from 78 to 142 and the cut-out test
// of the traversals, the tree choice and the texture reads the rest to 198 (nvcc -Xptxas -v, sm_90):
// fewer threads in flight for every scene, whatever its materials.
// Opaque: the scene has no cut-outs and the GPU walks the compressed tree for every extension ray
// (megakernel below checks both), so the kernel holds that one traversal without the cut-out test.
template <material_family F = material_family::any, bool Opaque = false>
SIEVE_HD inline void megakernel_path(std::uint32_t slot, const scene_view& s, const wave& w, vec3* film,
                                     std::uint32_t* rays) {
  std::uint32_t own_slot = 0;
  ray r;
  vec3 beta;
  float pdf = 0, cone = 0;
  const path_columns p{&own_slot, &r, &beta, &pdf, &cone};
  hit h;
  ray shadow;
  vec3 light;
  const bounce_columns b{&h, &shadow, &light, nullptr};  // no counter: it would be an atomic on a local
  std::uint8_t alive = 0;
  keep_marks marks;
  marks.flags = &alive;
  generate_path(0, slot, s, w, p);
  std::uint32_t traced = 0, shadows = 0;
  for (std::uint32_t vertex = 0; vertex <= s.max_bounces; ++vertex) {
    if constexpr (Opaque) h = trace_closest_compressed_opaque(s.bvh, s.trace.bounce, r);
    else h = trace_closest(s.bvh, s.trace.bounce, r);
    ++traced;
    const shade_args a{s, p, b, film, marks, vertex};
    shade_in<F>(0, a, w);
    shadows += max_component(light) > 0;  // shade wrote a shadow ray
    connect_path(0, s, p, b, film);
    if (!alive) break;
  }
  atomic_add_aggregated(&rays[0], traced);
  atomic_add_aggregated(&rays[1], shadows);
}

// The paths of wave w in slots [first, first + count) (default: all), adding to the wave's film (one
// entry per slot). The CPU driver launches a wave in slices to look for a cancel between them.
// `family`: prepared_scene::family(); the kernels compiled are those of the diffuse family (OBJ and
// TOML scenes of plain materials), of the glTF model (every glTF scene) and of all of them.
template <class Exec>
void megakernel(Exec e, const scene_view& s, const wave& w, vec3* film, std::uint32_t* rays, material_family family,
                std::uint32_t first = 0, std::uint32_t count = 0xffffffffU) {
  const std::uint32_t n = count < w.size() - first ? count : w.size() - first;
  const bool opaque = !s.bvh.alpha.present() && s.trace.bounce.tree == trace_tree::compressed;
  if (opaque && family == material_family::diffuse) {
    exec::parallel_for(e, "megakernel", n, [=] SIEVE_HD(std::uint32_t i) {
      megakernel_path<material_family::diffuse, true>(first + i, s, w, film, rays);
    });
    return;
  }
  if (opaque && family == material_family::pbr) {
    exec::parallel_for(e, "megakernel", n, [=] SIEVE_HD(std::uint32_t i) {
      megakernel_path<material_family::pbr, true>(first + i, s, w, film, rays);
    });
    return;
  }
  switch (family) {
    case material_family::diffuse:
      exec::parallel_for(e, "megakernel", n, [=] SIEVE_HD(std::uint32_t i) {
        megakernel_path<material_family::diffuse>(first + i, s, w, film, rays);
      });
      return;
    case material_family::pbr:
      exec::parallel_for(e, "megakernel", n, [=] SIEVE_HD(std::uint32_t i) {
        megakernel_path<material_family::pbr>(first + i, s, w, film, rays);
      });
      return;
    default:
      exec::parallel_for(e, "megakernel", n, [=] SIEVE_HD(std::uint32_t i) { megakernel_path(first + i, s, w, film, rays); });
  }
}

}  // namespace sieve::render
