// The scene in device memory (frame layer): one copy of every array the traversals and shading read
// (the BVH in all its layouts, the wide tree too; triangles, surfaces, attributes, textures, lights,
// the environment map and its sampling tables), for the renderer's CUDA run and `bench trace`. Plain
// C++: the arrays live behind a pointer, so code that is not CUDA may hold one. Without CUDA
// (device_scene_missing.cpp) constructing one throws sieve::error.
#pragma once

#include "prepared_scene.hpp"

#include "../bvh/bvh.hpp"
#include "../core/modes.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>

namespace sieve::render {

// A BVH and its triangles in device memory: uploaded from the host, or a tree the device built.
class device_bvh {
 public:
  device_bvh(const bvh& b, std::span<const triangle> triangles);
  // A tree built on the device (ploc.hpp): its arrays are the tree's own (it must outlive this).
  explicit device_bvh(const device_tree& tree);
  ~device_bvh();
  device_bvh(const device_bvh&) = delete;
  device_bvh& operator=(const device_bvh&) = delete;
  // Device pointers; the wide layout's are null when the tree was built without it.
  const bvh_view& view() const { return view_; }

 private:
  struct arrays;
  std::unique_ptr<arrays> arrays_;
  bvh_view view_;
};

// A prepared scene in device memory.
class device_scene {
 public:
  // Textures as `textures` says (core/modes.hpp): texture objects, or packed texels.
  explicit device_scene(const prepared_scene& ps, texture_storage textures = texture_storage::hardware);
  ~device_scene();
  device_scene(const device_scene&) = delete;
  device_scene& operator=(const device_scene&) = delete;
  // The view the stages read on the device, for a film of width x height.
  scene_view view(std::uint32_t width, std::uint32_t height) const;

 private:
  struct arrays;
  const prepared_scene& prepared_;
  device_bvh bvh_;
  std::unique_ptr<arrays> arrays_;
};

}  // namespace sieve::render
