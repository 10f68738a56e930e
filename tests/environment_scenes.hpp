// Scenes for the environment map's render tests, CPU (environment_test) and GPU (render_cuda_test):
// a diffuse UV sphere under a map.
#pragma once

#include <scene/scene.hpp>

#include <cmath>
#include <utility>

namespace sieve::render::test_scenes {

// A UV sphere (a convex polyhedron: nothing on it sees itself) of material `material`.
inline void add_sphere(scene& s, vec3 centre, float radius, std::uint32_t material) {
  constexpr int rings = 24, segments = 48;
  auto at = [&](int ring, int seg) {
    const float th = 3.14159265f * static_cast<float>(ring) / rings, ph = 6.2831853f * static_cast<float>(seg % segments) / segments;
    return centre + vec3{std::sin(th) * std::cos(ph), std::cos(th), std::sin(th) * std::sin(ph)} * radius;
  };
  auto add = [&](vec3 a, vec3 b, vec3 c) {
    if (length(cross(b - a, c - a)) <= 0) return;
    s.triangles.push_back({a, b, c});
    s.material_of.push_back(material);
  };
  for (int r = 0; r < rings; ++r)
    for (int g = 0; g < segments; ++g) {
      add(at(r, g), at(r + 1, g), at(r + 1, g + 1));
      add(at(r, g), at(r + 1, g + 1), at(r, g + 1));
    }
}

// A sphere of radius 1 at the origin, diffuse `albedo`, under `map`; 24 x 24 pixels, 8 bounces.
inline scene sphere_under(environment_data map, float albedo, std::uint32_t spp) {
  scene s;
  s.name = "sphere-under-map";
  s.materials.push_back({"sphere", material_kind::diffuse, {albedo, albedo, albedo}, {0, 0, 0}, 1.5f});
  add_sphere(s, {0, 0, 0}, 1.0f, 0);
  s.camera = {{0, 0, -4}, {0, 0, 0}, {0, 1, 0}, 40};
  s.film = {24, 24, spp, 8, 1};
  s.environment_map = std::move(map);
  return s;
}

}  // namespace sieve::render::test_scenes
