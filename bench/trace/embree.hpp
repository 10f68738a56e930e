// Embree 3 as the CPU baseline of `sieve bench trace`: the same triangles in an Embree scene, the same
// rays traced one by one (rtcIntersect1, rtcOccluded1) on the same oneTBB threads as sieve's traversals.
// Built with Embree only when CMake finds it (SIEVE_EMBREE); embree_available() says whether it was.
#pragma once

#include <core/math.hpp>
#include <core/triangle.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace sieve::bench {

bool embree_available();

class embree_scene {
 public:
  // Builds the scene with Embree's default (medium) build quality. Throws sieve::error when this
  // build has no Embree or Embree fails.
  explicit embree_scene(std::span<const render::triangle> triangles);
  ~embree_scene();
  embree_scene(const embree_scene&) = delete;
  embree_scene& operator=(const embree_scene&) = delete;

  double build_seconds() const { return build_seconds_; }
  // Closest hit per ray: t (1e30 for a miss) and the triangle index (~0 for a miss).
  void closest(std::span<const render::ray> rays, std::span<float> t, std::span<std::uint32_t> prim) const;
  // Any hit per ray within (0, tmax]: 1 when blocked.
  void occluded(std::span<const render::ray> rays, std::span<std::uint8_t> blocked) const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
  double build_seconds_ = 0;
};

}  // namespace sieve::bench
