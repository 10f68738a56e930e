// [procedural]: generated geometry with its own materials (scene/procedural.hpp).
#include "sections.hpp"

#include "procedural.hpp"

namespace sieve::render::detail {

void read_procedural(const toml::table& doc, const reader& rd, scene& sc, registry& reg) {
  if (const toml::node* n = doc.get("procedural")) {
    const toml::table& t = rd.table(*n, "procedural");
    rd.known_keys(t, "procedural.", table_keys.at("procedural"), "[procedural]");
    const toml::node* type_node = t.get("type");
    if (!type_node) rd.fail_at(n, "procedural", "needs a type (spheres or heightfield)");
    const std::string type = rd.string(*type_node, "procedural.type");
    auto integer = [&](const char* key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
      const toml::node* v = t.get(key);
      return v ? rd.integer(*v, std::string("procedural.") + key, lo, hi) : fallback;
    };
    scene proc;
    auto check_count = [&](std::uint64_t count) {
      rd.check_triangles(sc.triangles.size() + count, "with the procedural " + type);
      rd.check_memory(sc.triangles.size() + count, sc.film);
    };
    if (type == "spheres") {
      rd.known_keys(t, "procedural.", {"type", "n", "segments"}, "[procedural] of type spheres");
      const auto spheres = static_cast<std::uint32_t>(integer("n", 32, 1, 256));
      const auto segments = static_cast<std::uint32_t>(integer("segments", 32, 4, 512));
      check_count(sphere_room_triangles(spheres, segments));
      add_sphere_room(proc, spheres, segments);
    } else if (type == "heightfield") {
      rd.known_keys(t, "procedural.", {"type", "grid", "height", "seed"}, "[procedural] of type heightfield");
      const auto grid = static_cast<std::uint32_t>(integer("grid", 2048, 2, 8192));
      check_count(heightfield_triangles(grid));
      const toml::node* h = t.get("height");
      const double height = h ? rd.number(*h, "procedural.height") : grid / 8.0;
      if (!(height >= 0 && height <= 1e6)) rd.fail_at(h, "procedural.height", str(height) + " is out of range (0 .. 1e6)");
      add_heightfield(proc, grid, static_cast<float>(height), static_cast<std::uint32_t>(integer("seed", 1, 0, 0xffffffffLL)));
    } else {
      rd.fail_at(type_node, "procedural.type", in_quotes(type) + " is not a procedural scene (spheres, heightfield)");
    }
    const auto base = static_cast<std::uint32_t>(reg.list.size());
    for (const material& m : proc.materials) reg.push(m, "procedural");
    sc.triangles.insert(sc.triangles.end(), proc.triangles.begin(), proc.triangles.end());
    for (const std::uint32_t m : proc.material_of) sc.material_of.push_back(base + m);
    if (!doc.get("camera")) sc.camera = proc.camera;
    if (!doc.get("environment")) sc.environment = proc.environment;
  }
}

}  // namespace sieve::render::detail
