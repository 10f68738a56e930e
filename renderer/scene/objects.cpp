// [[objects]]: OBJ files placed in the scene (translate, scale, rotate_y), with their MTL materials or one `material =`.
#include "sections.hpp"

#include <algorithm>
#include <cmath>

namespace sieve::render::detail {

std::vector<material_override> read_objects(const toml::table& doc, const reader& rd, scene& sc, registry& reg,
                                            const fs::path& base_dir, bool obj_entry) {
  const toml::array* objects = array_of_tables(doc, "objects", rd);
  std::vector<material_override> material_overrides;
  if (objects) {
    for (std::size_t i = 0; i < objects->size(); ++i) {
      const std::string key = "objects[" + std::to_string(i) + "]";
      const toml::table& t = *(*objects)[i].as_table();
      rd.known_keys(t, key + ".", table_keys.at("objects"), "[[objects]]");
      const toml::node* obj = t.get("obj");
      if (!obj) rd.fail_at(&(*objects)[i], key, "an object needs obj = \"path.obj\"");
      const std::string rel = rd.string(*obj, key + ".obj");
      const fs::path obj_path = base_dir / fs::path(rel);
      if (!file_exists(obj_path)) {
        rd.fail_at(obj, key + ".obj",
                   "OBJ file " + in_quotes(rel) + " not found (looked for " + obj_path.string() + ")");
      }
      vec3 translate{0, 0, 0}, scale{1, 1, 1};
      double rotate = 0;
      if (const toml::node* v = t.get("translate")) translate = rd.vector(*v, key + ".translate");
      if (const toml::node* v = t.get("scale")) {
        if (v->is_array()) {
          scale = rd.vector(*v, key + ".scale");
        } else {
          const float s = static_cast<float>(rd.number(*v, key + ".scale"));
          scale = {s, s, s};
        }
        if (scale.x == 0 || scale.y == 0 || scale.z == 0)
          rd.fail_at(v, key + ".scale", "a scale of 0 flattens the object");
      }
      if (const toml::node* v = t.get("rotate_y")) rotate = rd.number(*v, key + ".rotate_y");
      std::optional<std::string> material_name;
      if (const toml::node* v = t.get("material")) material_name = rd.string(*v, key + ".material");

      obj_options opt;
      opt.strict = !obj_entry;
      opt.use_materials = !material_name;
      if (!obj_entry) opt.context = " (" + key + " in " + rd.file + ")";
      const std::uint64_t before = sc.triangles.size(), limit = rd.limits.max_triangles;
      opt.max_triangles = limit > before ? limit - before : 0;
      opt.admit = [&](std::uint64_t count) { rd.check_memory(before + count, sc.film); };
      opt.limit_text = before == 0 ? "(the scene's limit)"
                                   : "(what is left of the scene's limit of " + std::to_string(limit) + " with " +
                                         std::to_string(before) + " before this object)";
      obj_mesh mesh = load_obj(obj_path, opt, reg);
      sc.files.insert(sc.files.end(), mesh.files.begin(), mesh.files.end());
      rd.check_triangles(sc.triangles.size() + mesh.triangles.size(), "with " + in_quotes(rel));

      const double c = std::cos(rotate / degrees), s = std::sin(rotate / degrees);
      auto xf = [&](vec3 p) {
        p = p * scale;
        p = {static_cast<float>(c * p.x + s * p.z), p.y, static_cast<float>(-s * p.x + c * p.z)};
        return p + translate;
      };
      // Normals by the inverse transpose: divided by the scale, rotated like the vertices.
      auto xf_normal = [&](vec3 n) {
        if (n.x == 0 && n.y == 0 && n.z == 0) return n;
        n = {n.x / scale.x, n.y / scale.y, n.z / scale.z};
        n = {static_cast<float>(c * n.x + s * n.z), n.y, static_cast<float>(-s * n.x + c * n.z)};
        const float l = length(n);
        return l > 0 && std::isfinite(l) ? n / l : vec3{0, 0, 0};
      };
      const std::size_t begin = sc.triangles.size();
      if (!mesh.normals.empty()) {
        sc.normals.resize(begin);  // flat for the triangles before this object
        for (const triangle_normals& n : mesh.normals) {
          triangle_normals out{xf_normal(n.n0), xf_normal(n.n1), xf_normal(n.n2)};
          const vec3 zero{0, 0, 0};
          auto is_zero = [](vec3 v) { return v.x == 0 && v.y == 0 && v.z == 0; };
          if (is_zero(out.n0) || is_zero(out.n1) || is_zero(out.n2)) out = {zero, zero, zero};  // degenerate: flat
          sc.normals.push_back(out);
        }
      }
      if (!mesh.uvs.empty()) {
        sc.uvs.resize(begin);
        sc.uvs.insert(sc.uvs.end(), mesh.uvs.begin(), mesh.uvs.end());
      }
      for (std::size_t k = 0; k < mesh.triangles.size(); ++k) {
        const triangle& tri = mesh.triangles[k];
        const triangle out{xf(tri.v0), xf(tri.v1), xf(tri.v2)};
        if (!finite(out.v0) || !finite(out.v1) || !finite(out.v2)) {
          rd.fail_at(&(*objects)[i], key,
                     "the transformed vertices of " + in_quotes(rel) + " overflow a float");
        }
        sc.triangles.push_back(out);
        sc.material_of.push_back(material_name ? 0 : mesh.material_of[k]);
      }
      if (material_name) {
        material_overrides.push_back(
            {begin, sc.triangles.size(), *material_name, t.get("material"), key + ".material"});
      }
    }
  }
  return material_overrides;
}

void apply_material_overrides(const std::vector<material_override>& material_overrides, const reader& rd,
                              const registry& reg, scene& sc) {
  for (const auto& p : material_overrides) {
    const auto i = reg.find(p.material);
    if (!i) {
      std::vector<std::string_view> names;
      for (const auto& m : reg.list) names.push_back(m.name);
      rd.fail_at(p.node, p.key,
                 "no material named " + in_quotes(p.material) +
                     " (known: " + (names.empty() ? "none" : join(names)) + "; [[materials]] can define it)");
    }
    std::fill(sc.material_of.begin() + static_cast<std::ptrdiff_t>(p.begin),
              sc.material_of.begin() + static_cast<std::ptrdiff_t>(p.end), *i);
  }
}

}  // namespace sieve::render::detail
