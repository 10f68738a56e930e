// `sieve check SCENE` (check.hpp).
#include "check.hpp"

#include <scene/load.hpp>

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

}  // namespace

void add_check_options(CLI::App& cmd, check_args& a) {
  cmd.add_option("scene", a.scene, "scene file (.toml) or a model alone (.obj, .gltf, .glb, .ply)")->required();
  cmd.add_option("--set", a.set, "override a scene key, key=value (repeatable), as for render");
}

int run_check(const check_args& a) {
  using namespace render;
  const scene s = load_scene(a.scene, a.set);
  std::size_t kinds[3] = {}, textured = 0, cutout = 0;
  for (const material& m : s.materials) {
    ++kinds[static_cast<int>(m.kind)];
    textured += m.albedo_texture >= 0;
    cutout += m.opacity < 1 || m.opacity_texture >= 0;
  }
  std::ostringstream out;
  out << "scene: " << s.name << " (" << a.scene << ")\n"
      << "triangles: " << s.triangles.size() << (s.normals.empty() ? "" : ", with vertex normals")
      << (s.uvs.empty() ? "" : ", with texture coordinates") << "\n"
      << "materials: " << s.materials.size() << ": " << kinds[0] << " diffuse, " << kinds[1] << " mirror, " << kinds[2]
      << " dielectric; " << textured << " textured, " << cutout << " with opacity\n";
  out << "textures: " << texture_memory_line(s.textures) << "\n";
  for (const texture& t : s.textures)
    out << "  " << t.name << ": " << t.width << " x " << t.height << ", " << describe_storage(t) << "\n";
  std::size_t emitting = 0;
  for (const material& m : s.materials) emitting += max_component(m.emission) > 0;
  out << "lights: " << s.emissive.size() << " emissive triangles (" << emitting << " materials); environment: ";
  if (!s.environment_map.texels.empty())
    out << "map " << s.environment_map.width << " x " << s.environment_map.height << "\n";
  else
    out << "colour " << vec(s.environment) << "\n";
  out << "camera: position " << vec(s.camera.position) << ", look_at " << vec(s.camera.look_at) << ", up "
      << vec(s.camera.up) << ", vfov " << s.camera.vfov_degrees << " degrees\n"
      << "film: " << s.film.width << " x " << s.film.height << ", " << s.film.spp << " spp, " << s.film.max_bounces
      << " bounces\n"
      << "files: " << s.files.size() << "\n";
  std::cout << out.str();
  return 0;
}

}  // namespace sieve::app
