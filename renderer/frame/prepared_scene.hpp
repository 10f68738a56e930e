// A scene made ready to render (frame layer): its BVH, its materials as surfaces, its light table,
// and the view the stages read. Built once per render, before either integrator runs.
#pragma once

#include "../bvh/bvh.hpp"
#include "../bvh/ploc.hpp"
#include "../core/modes.hpp"
#include "../path/paths.hpp"
#include "../scene/scene.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sieve::render {

// The materials' alpha as the traversals read it (core/alpha.hpp), one entry per material; empty
// where every material is opaque (the traversals then skip the predicate).
std::vector<alpha_material> alpha_table(const scene& s);

// Whether `builder` builds on the device for a render on the GPU (gpu) or the CPU: PLOC, or the
// automatic choice, when the GPU renders a scene of at least two triangles.
bool builds_on_device(bvh_builder builder, bool gpu, std::size_t triangles);
// The builder that runs, for reports: "ploc (GPU)", "ploc (CPU)", "lbvh (GPU)", "sah (CPU)".
std::string builder_ran(bvh_builder builder, bool gpu, std::size_t triangles);

// A scene made ready to render: its BVH, its materials as surfaces, its light table. Keeps a
// reference to `s`, which must outlive it.
class prepared_scene {
 public:
  explicit prepared_scene(const scene& s);
  // Over a tree already built for s's triangles (build_bvh(s.triangles), built elsewhere and sent).
  prepared_scene(const scene& s, bvh tree);
  // With the tree `builder` makes for a render on the GPU (gpu) or the CPU: on the device (device()),
  // where builds_on_device says so; else in host memory (tree()).
  prepared_scene(const scene& s, bvh_builder builder, bool gpu);

  const scene& source() const { return *scene_; }
  const bvh& tree() const { return bvh_; }  // empty when the tree was built on the device
  const device_tree* device() const { return device_.get(); }
  // The device build's steps and phases (zero when the tree was built on the host).
  const ploc_timing& device_timing() const { return device_timing_; }
  // The view the stages read, for a film of width x height.
  scene_view view(std::uint32_t width, std::uint32_t height) const;
  // The one material family of every surface (core/bsdf.hpp: family_of), or `any` where they mix:
  // the megakernel compiles its shading for that family alone (megakernel/megakernel.hpp).
  material_family family() const;

 private:
  const scene* scene_;
  bvh bvh_;
  std::shared_ptr<const device_tree> device_;  // the tree built on the device (its view: device pointers)
  ploc_timing device_timing_;
  std::vector<surface> surfaces_;
  std::vector<texture_view> textures_;  // of the scene's textures (host memory)
  std::vector<alpha_material> alpha_;   // alpha_table(scene)
  std::vector<std::uint32_t> light_triangles_;
  std::vector<alias_entry> light_alias_;
  std::vector<float> light_chance_;  // per scene triangle (empty without lights)
  float light_area_ = 0;
  aabb bounds_;
};

}  // namespace sieve::render
