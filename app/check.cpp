// `sieve check SCENE` (check.hpp).
#include "check.hpp"

#include <report.hpp>
#include <scene/load.hpp>

#include <array>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace sieve::app {
namespace {

std::string vec(render::vec3 v) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "(%g, %g, %g)", double(v.x), double(v.y), double(v.z));
  return buf;
}

// Every material family (render::material_kind, in its order) as `sieve check` names it.
constexpr std::array<const char*, 6> family_names = {"diffuse", "mirror", "dielectric", "conductor", "rough dielectric",
                                                     "glTF metallic-roughness"};
static_assert(static_cast<std::size_t>(render::material_kind::gltf) + 1 == family_names.size(),
              "a material family without a name in sieve check");

}  // namespace

void add_check_options(CLI::App& cmd, check_args& a) {
  cmd.add_option("scene", a.scene, "scene file (.toml) or a model alone (.obj, .gltf, .glb, .ply)")->required();
  cmd.add_option("--set", a.set, "override a scene key, key=value (repeatable), as for render");
}

int run_check(const check_args& a) {
  using namespace render;
  const scene s = load_scene(a.scene, a.set);
  std::array<std::size_t, family_names.size()> kinds{};
  std::size_t textured = 0, cutout = 0;
  for (const material& m : s.materials) {
    ++kinds.at(static_cast<std::size_t>(m.kind));
    textured += m.albedo_texture >= 0;
    cutout += m.opacity < 1 || m.opacity_texture >= 0;
  }
  std::ostringstream out;
  out << "scene: " << report::printable(s.name) << " (" << report::printable(a.scene) << ")\n"
      << "triangles: " << s.triangles.size() << (s.normals.empty() ? "" : ", with vertex normals")
      << (s.uvs.empty() ? "" : ", with texture coordinates") << "\n"
      << "materials: " << s.materials.size() << ":";
  for (std::size_t k = 0; k < kinds.size(); ++k) out << (k ? ", " : " ") << kinds[k] << " " << family_names[k];
  out << "; " << textured << " textured, " << cutout << " with opacity\n";
  out << "textures: " << texture_memory_line(s.textures) << "\n";
  // A name comes from the scene's files: escaped, never a terminal sequence.
  for (const texture& t : s.textures)
    out << "  " << report::printable(t.name) << ": " << t.width << " x " << t.height << ", " << describe_storage(t) << "\n";
  std::size_t emitting = 0, emission_mapped = 0;
  for (const material& m : s.materials) {
    emitting += max_component(m.emission) > 0;
    emission_mapped += max_component(m.emission) > 0 && m.emission_texture >= 0;
  }
  out << "lights: " << s.emissive.size() << " emissive triangles (materials that emit: " << emitting
      << ", through an emission texture: " << emission_mapped << "); environment: ";
  if (!s.environment_map.texels.empty())
    out << "map " << s.environment_map.width << " x " << s.environment_map.height << "\n";
  else
    out << "colour " << vec(s.environment) << "\n";
  if (!s.emissive.empty()) {
    out << "  an emissive triangle is one whose material emits (MTL Ke, glTF emissiveFactor, a TOML light or\n"
           "  emission); each is sampled as a light, its radiance times its emission texture's texel where it has one\n";
  }
  out << "camera: position " << vec(s.camera.position) << ", look_at " << vec(s.camera.look_at) << ", up "
      << vec(s.camera.up) << ", vfov " << s.camera.vfov_degrees << " degrees\n"
      << "film: " << s.film.width << " x " << s.film.height << ", " << s.film.spp << " spp, " << s.film.max_bounces
      << " bounces\n"
      << "files: " << s.files.size() << "\n";
  std::cout << out.str();
  return 0;
}

}  // namespace sieve::app
