// A cut-out quad in front of an opaque one, for the alpha predicate (core/alpha.hpp) in every
// traversal: the front quad (triangles 0, 1) at z = 1, the back quad (2, 3) at z = 2, both over
// x, y in [-1, 1]; rays along +z from z = 0 on a grid of n x n points inside the quads.
#pragma once

#include <bvh/bvh.hpp>
#include <scene/scene.hpp>

#include <cstdint>
#include <vector>

namespace sieve::render::testing {

struct alpha_scene {
  std::vector<triangle> triangles;
  std::vector<std::uint32_t> material_of;   // front quad: material 0; back quad: material 1 (opaque)
  std::vector<alpha_material> materials;    // [0] as given, [1] opaque
  std::vector<triangle_uvs> uvs;            // u = (x + 1) / 2, v = (y + 1) / 2
  std::vector<vec3> texels;                 // the mask: 4 x 1 texels, alpha 0 0 1 1 (clamped)
  texture mask;                             // those texels stored
  std::vector<texture_view> textures;
  std::vector<ray> rays;

  // The predicate's inputs (pointing into this object: keep it alive and unmoved).
  alpha_view view() const { return {material_of.data(), materials.data(), uvs.data(), textures.data()}; }
};

inline void make_alpha_scene(alpha_scene& s, const alpha_material& front, int n = 64) {
  auto quad = [&](float z, std::uint32_t material) {
    const vec3 a{-1, -1, z}, b{1, -1, z}, c{1, 1, z}, d{-1, 1, z};
    s.triangles.push_back({a, b, c});
    s.triangles.push_back({a, c, d});
    s.uvs.push_back({{0, 0}, {1, 0}, {1, 1}});
    s.uvs.push_back({{0, 0}, {1, 1}, {0, 1}});
    s.material_of.push_back(material);
    s.material_of.push_back(material);
  };
  quad(1, 0);
  quad(2, 1);
  s.materials = {front, alpha_material{}};
  s.texels = {vec3{0, 0, 0}, vec3{0, 0, 0}, vec3{1, 1, 1}, vec3{1, 1, 1}};
  s.mask = make_texture("mask", 4, 1, s.texels, wrap_mode::clamp);
  s.textures = {s.mask.view()};
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const float x = -0.95f + 1.9f * (i + 0.5f) / n, y = -0.95f + 1.9f * (j + 0.5f) / n;
      s.rays.push_back({{x, y, 0}, {0, 0, 1}});
    }
}

// The same quads as a scene to render: the front one a diffuse cut-out (MASK through the texture),
// the back one diffuse and blended (opacity 0.5), under a white sky and a light above them (shadow
// rays cross both), the camera on -z looking along +z.
inline scene cutout_scene(std::uint32_t size, std::uint32_t spp) {
  alpha_scene a;
  make_alpha_scene(a, alpha_material{}, 1);
  scene s;
  s.name = "cut-out";
  s.triangles = a.triangles;
  s.material_of = a.material_of;
  s.uvs = a.uvs;
  material front, back, light;
  front.name = "front", back.name = "back", light.name = "light";
  front.alpha = alpha_mode::mask;
  front.opacity_texture = 0;
  back.albedo = {0.05f, 0.1f, 0.2f};
  back.opacity = 0.5f;
  light.emission = {4, 4, 4};
  s.materials = {front, back, light};
  s.textures = {a.mask};
  const vec3 p0{-1, 2, 0}, p1{1, 2, 0}, p2{1, 2, 3}, p3{-1, 2, 3};  // facing -y
  for (const triangle& tri : {triangle{p0, p1, p2}, triangle{p0, p2, p3}}) {
    s.emissive.push_back(static_cast<std::uint32_t>(s.triangles.size()));
    s.triangles.push_back(tri);
    s.material_of.push_back(2);
    s.uvs.push_back({});
  }
  s.camera.position = {0.2f, 0.3f, -3};
  s.camera.look_at = {0, 0, 1.5f};
  s.camera.vfov_degrees = 25;  // the quads fill the view
  s.film.width = s.film.height = size;
  s.film.spp = spp;
  s.film.max_bounces = 4;
  s.environment = {1, 1, 1};
  return s;
}

}  // namespace sieve::render::testing
