#include "prepared_scene.hpp"

#include "../bvh/lbvh.hpp"
#include "../core/bounds.hpp"

#include <utility>

namespace sieve::render {

namespace {

// The mean emitted radiance of triangle t (its grey level, the mean of the channels): the material's
// emission, times its emission texture's mean over the triangle where it has one (the texture read
// at 64 stratified points of the triangle's texture coordinates, through the material's uv map).
double mean_emission(const scene& s, std::uint32_t t) {
  const material& m = s.materials[s.material_of[t]];
  const double grey = (static_cast<double>(m.emission.x) + m.emission.y + m.emission.z) / 3;
  if (m.emission_texture < 0 || s.uvs.empty()) return grey;
  const texture_view tex = s.textures[static_cast<std::size_t>(m.emission_texture)].view();
  constexpr int n = 8;
  vec3 sum{0, 0, 0};
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      float b1 = 0, b2 = 0;
      uniform_triangle((i + 0.5f) / n, (j + 0.5f) / n, b1, b2);
      tex_coord c = interpolate(s.uvs[t], b1, b2);
      m.uv.apply(c.u, c.v);
      sum += m.emission * max(bilinear(tex, c.u, c.v), vec3{0, 0, 0});
    }
  return (static_cast<double>(sum.x) + sum.y + sum.z) / (3.0 * n * n);
}

}  // namespace

std::vector<alpha_material> alpha_table(const scene& s) {
  std::vector<alpha_material> out;
  bool any = false;
  for (const material& m : s.materials) {
    alpha_material a;
    a.factor = m.opacity;
    a.texture = m.opacity_texture;
    a.cutoff = m.alpha_cutoff;
    a.uv = m.uv;
    a.mode = m.alpha;
    if (a.mode == alpha_mode::opaque && (m.opacity < 1 || m.opacity_texture >= 0)) a.mode = alpha_mode::blend;
    any = any || a.mode != alpha_mode::opaque;
    out.push_back(a);
  }
  if (!any) out.clear();
  return out;
}

bool builds_on_device(bvh_builder builder, bool gpu, std::size_t triangles) {
  return gpu && triangles >= 2 && (builder == bvh_builder::automatic || builder == bvh_builder::ploc);
}

std::string builder_ran(bvh_builder builder, bool gpu, std::size_t triangles) {
  if (builds_on_device(builder, gpu, triangles)) return "ploc (GPU)";
  if (builder == bvh_builder::lbvh) return gpu ? "lbvh (GPU)" : "lbvh (CPU)";
  return builder == bvh_builder::ploc ? "ploc (CPU)" : "sah (CPU)";
}

namespace {

bvh host_tree(const scene& s, bvh_builder builder, bool gpu) {
  switch (builder) {
    case bvh_builder::lbvh: return build_lbvh(s.triangles, {}, gpu ? lbvh_device::cuda : lbvh_device::cpu);
    case bvh_builder::ploc: return build_ploc(s.triangles, {}, lbvh_device::cpu);
    case bvh_builder::automatic:
    case bvh_builder::sah: break;
  }
  return build_bvh(s.triangles);
}

}  // namespace

prepared_scene::prepared_scene(const scene& s) : prepared_scene(s, build_bvh(s.triangles)) {}

prepared_scene::prepared_scene(const scene& s, bvh_builder builder, bool gpu)
    : prepared_scene(s, builds_on_device(builder, gpu, s.triangles.size()) ? bvh{} : host_tree(s, builder, gpu)) {
  if (builds_on_device(builder, gpu, s.triangles.size()))
    device_ = std::make_shared<const device_tree>(s.triangles, bvh_build_options{}, &device_timing_);
}

prepared_scene::prepared_scene(const scene& s, bvh tree) : scene_(&s), bvh_(std::move(tree)) {
  surfaces_.reserve(s.materials.size());
  for (const material& m : s.materials) {
    constexpr surface_kind kinds[] = {surface_kind::diffuse,   surface_kind::mirror,           surface_kind::dielectric,
                                      surface_kind::conductor, surface_kind::rough_dielectric, surface_kind::pbr};
    surfaces_.push_back({kinds[static_cast<int>(m.kind)], m.albedo, m.emission, m.ior, m.roughness, m.metallic,
                         m.transmission, m.thin, m.albedo_texture, m.emission_texture,
                         m.metal_rough_texture, m.normal_texture, m.normal_scale, m.uv});
  }
  for (const texture& t : s.textures) textures_.push_back(t.view());
  alpha_ = alpha_table(s);
  // Next-event estimation picks a light triangle by its power (core/lights.hpp).
  double area = 0, power = 0;
  std::vector<double> powers;
  for (const std::uint32_t t : s.emissive) {
    const double a = triangle_area(s.triangles[t]);
    const double p = a * mean_emission(s, t);
    if (!(a > 0) || !(p > 0)) continue;  // no power: never picked (a degenerate light is never hit either)
    area += a;
    power += p;
    light_triangles_.push_back(t);
    powers.push_back(p);
  }
  light_alias_ = build_alias_table(powers);
  if (!powers.empty()) light_chance_.assign(s.triangles.size(), 0.0f);
  for (std::size_t i = 0; i < powers.size(); ++i) light_chance_[light_triangles_[i]] = static_cast<float>(powers[i] / power);
  light_area_ = static_cast<float>(area);
  bounds_ = bounds_of(s.triangles);
}

material_family prepared_scene::family() const {
  if (surfaces_.empty()) return material_family::any;
  const material_family f = family_of(surfaces_.front().kind);
  for (const surface& m : surfaces_)
    if (family_of(m.kind) != f) return material_family::any;
  return f;
}

scene_view prepared_scene::view(std::uint32_t width, std::uint32_t height) const {
  const scene& s = *scene_;
  scene_view v;
  v.bvh = view_of(bvh_, s.triangles);
  v.surfaces = surfaces_.data();
  v.material_count = static_cast<std::uint32_t>(surfaces_.size());
  v.material_of = s.material_of.data();
  v.normals = s.normals.empty() ? nullptr : s.normals.data();
  v.uvs = s.uvs.empty() ? nullptr : s.uvs.data();
  v.tangents = s.tangents.empty() ? nullptr : s.tangents.data();
  v.textures = textures_.empty() ? nullptr : textures_.data();
  if (!alpha_.empty()) v.bvh.alpha = {v.material_of, alpha_.data(), v.uvs, v.textures};
  v.lights = {light_triangles_.data(), light_alias_.data(), light_chance_.data(),
              static_cast<std::uint32_t>(light_triangles_.size()), light_area_};
  v.environment = s.environment;
  v.env_map = s.environment_map.view();
  v.cam = camera::look_at(s.camera.position, s.camera.look_at, s.camera.up, s.camera.vfov_degrees,
                          static_cast<float>(width) / static_cast<float>(height));
  v.pixel_spread = s.film.mipmaps ? length(v.cam.vertical) / static_cast<float>(height) : 0.0f;
  v.bounds = bounds_;
  v.width = width;
  v.height = height;
  v.max_bounces = s.film.max_bounces;
  v.seed = s.film.seed;
  v.shading_sides = s.film.shading_sides;
  v.uv_tangents = s.film.uv_tangents;
  return v;
}

}  // namespace sieve::render
