#include "prepared_scene.hpp"

namespace sieve::render {

prepared_scene::prepared_scene(const scene& s) : scene_(&s), bvh_(build_bvh(s.triangles)) {
  surfaces_.reserve(s.materials.size());
  for (const material& m : s.materials) {
    const auto kind = m.kind == material_kind::mirror       ? surface_kind::mirror
                      : m.kind == material_kind::dielectric ? surface_kind::dielectric
                                                            : surface_kind::diffuse;
    surfaces_.push_back({kind, m.albedo, m.emission, m.ior, m.albedo_texture, m.opacity, m.opacity_texture});
  }
  for (const texture& t : s.textures) textures_.push_back(t.view());
  double area = 0;
  for (const std::uint32_t t : s.emissive) {
    const triangle& tri = s.triangles[t];
    const double a = 0.5 * length(cross(tri.v1 - tri.v0, tri.v2 - tri.v0));
    if (!(a > 0)) continue;  // a degenerate light can neither be hit nor sampled
    area += a;
    light_triangles_.push_back(t);
    light_cdf_.push_back(static_cast<float>(area));
  }
  for (float& c : light_cdf_) c = static_cast<float>(c / area);
  if (!light_cdf_.empty()) light_cdf_.back() = 1.0f;
  light_area_ = static_cast<float>(area);
  for (const triangle& t : s.triangles) {
    bounds_.grow(t.v0);
    bounds_.grow(t.v1);
    bounds_.grow(t.v2);
  }
}

scene_view prepared_scene::view(std::uint32_t width, std::uint32_t height) const {
  const scene& s = *scene_;
  scene_view v;
  v.bvh = view_of(bvh_, s.triangles);
  v.surfaces = surfaces_.data();
  v.material_of = s.material_of.data();
  v.normals = s.normals.empty() ? nullptr : s.normals.data();
  v.uvs = s.uvs.empty() ? nullptr : s.uvs.data();
  v.textures = textures_.empty() ? nullptr : textures_.data();
  v.lights = {light_triangles_.data(), light_cdf_.data(), static_cast<std::uint32_t>(light_triangles_.size()),
              light_area_};
  v.environment = s.environment;
  v.env_map = s.environment_map.view();
  v.cam = camera::look_at(s.camera.position, s.camera.look_at, s.camera.up, s.camera.vfov_degrees,
                          static_cast<float>(width) / static_cast<float>(height));
  v.bounds = bounds_;
  v.width = width;
  v.height = height;
  v.max_bounces = s.film.max_bounces;
  v.seed = s.film.seed;
  return v;
}

}  // namespace sieve::render
