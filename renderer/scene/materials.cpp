// Materials: the registry (one list for the scene, merged by name), the MTL mapping and the
// [[materials]] entries of a scene file.
#include "sections.hpp"

#include <tiny_obj_loader.h>

#include <cmath>

namespace sieve::render::detail {

std::optional<std::uint32_t> registry::find(const std::string& name) const {
  const auto it = by_name.find(name);
  if (it == by_name.end()) return std::nullopt;
  return it->second;
}

// Appends `m` whatever its name (a light's or a procedural material); returns its index.
std::uint32_t registry::push(material m, std::string from) {
  const auto i = static_cast<std::uint32_t>(list.size());
  by_name.emplace(m.name, i);
  list.push_back(std::move(m));
  origin.push_back(std::move(from));
  return i;
}

bool registry::same(const material& a, const material& b) {
  auto eq = [](vec3 x, vec3 y) { return x.x == y.x && x.y == y.y && x.z == y.z; };
  return a.kind == b.kind && eq(a.albedo, b.albedo) && eq(a.emission, b.emission) && a.ior == b.ior &&
         a.albedo_texture == b.albedo_texture;
}

// Adds `m`, or returns the material of that name when it is the same; a different material of the
// same name is an error (names are how [[materials]] and `material =` refer to them).
std::uint32_t registry::add(const material& m, const std::string& from) {
  if (auto i = find(m.name)) {
    if (!same(list[*i], m)) {
      fail(from + ": material " + in_quotes(m.name) + " differs from the material of that name in " +
           origin[*i] + " (material names must be unique across a scene's MTL files)");
    }
    return *i;
  }
  return push(m, from);
}

std::uint32_t registry::default_grey() {
  if (auto i = find("default")) return *i;
  material m;
  m.name = "default";
  m.kind = material_kind::diffuse;
  m.albedo = {0.8f, 0.8f, 0.8f};
  return add(m, "the default material");
}

// The MTL mapping of scene.hpp / scenes/README.md.
material map_mtl(const tinyobj::material_t& m, const std::string& from) {
  auto v3 = [](const tinyobj::real_t* a) {
    return vec3{static_cast<float>(a[0]), static_cast<float>(a[1]), static_cast<float>(a[2])};
  };
  const std::string where = from + ": material " + in_quotes(m.name) + ": ";
  auto check = [&](vec3 c, const char* key, bool unit) {
    for (int i = 0; i < 3; ++i) {
      if (!std::isfinite(c[i]) || c[i] < 0 || (unit && c[i] > 1)) {
        fail(where + key + " " + str(c) + " is out of range (each component in 0 .. " + (unit ? "1" : "inf") +
             ")");
      }
    }
  };
  const vec3 kd = v3(m.diffuse), ks = v3(m.specular), tf = v3(m.transmittance), ke = v3(m.emission);
  check(kd, "Kd", true);
  check(ks, "Ks", true);
  check(tf, "Tf", true);
  check(ke, "Ke", false);
  if (!std::isfinite(m.dissolve) || m.dissolve < 0 || m.dissolve > 1) {
    fail(where + "d " + str(m.dissolve) + " is out of range (0 .. 1)");
  }
  if (!std::isfinite(m.ior) || m.ior < 0) fail(where + "Ni " + str(m.ior) + " is out of range (>= 0)");

  material out;
  out.name = m.name;
  out.emission = ke;
  out.ior = m.ior > 1 ? static_cast<float>(m.ior) : 1.5f;
  const bool dielectric = m.illum == 4 || m.illum == 6 || m.illum == 7 || m.dissolve < 1;
  const bool mirror = m.illum == 3 || m.illum == 5 || (max_component(ks) > 0 && max_component(kd) == 0);
  if (dielectric) {
    out.kind = material_kind::dielectric;
    out.albedo = max_component(tf) > 0 ? tf : max_component(ks) > 0 ? ks : vec3{1, 1, 1};
  } else if (mirror) {
    out.kind = material_kind::mirror;
    out.albedo = max_component(ks) > 0 ? ks : vec3{1, 1, 1};
  } else {
    out.kind = material_kind::diffuse;
    out.albedo = kd;
  }
  return out;
}

namespace {

std::optional<material_kind> kind_of(std::string_view s) {
  if (s == "diffuse") return material_kind::diffuse;
  if (s == "mirror") return material_kind::mirror;
  if (s == "dielectric") return material_kind::dielectric;
  return std::nullopt;
}

}  // namespace

std::vector<material_entry> read_material_entries(const toml::table& doc, const reader& rd) {
  const toml::array* materials = array_of_tables(doc, "materials", rd);
  std::vector<material_entry> mat_entries;
  std::unordered_map<std::string, std::size_t> entry_of;  // name -> index into mat_entries
  if (materials) {
    for (std::size_t i = 0; i < materials->size(); ++i) {
      const std::string key = "materials[" + std::to_string(i) + "]";
      const toml::table& t = *(*materials)[i].as_table();
      rd.known_keys(t, key + ".", table_keys.at("materials"), "[[materials]]");
      material_entry e;
      e.node = &(*materials)[i];
      e.key = key;
      const toml::node* name = t.get("name");
      if (!name) rd.fail_at(e.node, key, "a material needs a name");
      e.name = rd.string(*name, key + ".name");
      if (e.name.empty()) rd.fail_at(name, key + ".name", "empty material name");
      if (const auto [it, fresh] = entry_of.emplace(e.name, mat_entries.size()); !fresh)
        rd.fail_at(name, key + ".name", in_quotes(e.name) + " is already defined by " + mat_entries[it->second].key);
      if (const toml::node* v = t.get("type")) {
        const std::string s = rd.string(*v, key + ".type");
        e.kind = kind_of(s);
        if (!e.kind)
          rd.fail_at(v, key + ".type", in_quotes(s) + " is not one of diffuse, mirror, dielectric");
      }
      if (const toml::node* v = t.get("albedo")) e.albedo = rd.color(*v, key + ".albedo", 1);
      if (const toml::node* v = t.get("emission")) e.emission = rd.color(*v, key + ".emission", 1e30f);
      if (const toml::node* v = t.get("ior")) {
        const double d = rd.number(*v, key + ".ior");
        if (!(d > 1)) rd.fail_at(v, key + ".ior", str(d) + " is out of range (> 1)");
        e.ior = static_cast<float>(d);
      }
      if (const toml::node* v = t.get("texture")) {
        e.texture = rd.path(*v, key + ".texture");
        e.texture_node = v;
        if (e.texture->empty()) rd.fail_at(v, key + ".texture", "empty texture path");
      }
      if (const toml::node* v = t.get("wrap")) {
        const std::string w = rd.string(*v, key + ".wrap");
        if (w != "repeat" && w != "clamp") rd.fail_at(v, key + ".wrap", in_quotes(w) + " is not one of repeat, clamp");
        if (!e.texture) rd.fail_at(v, key + ".wrap", "wrap goes with texture");
        e.wrap = w == "clamp" ? wrap_mode::clamp : wrap_mode::repeat;
      }
      mat_entries.push_back(std::move(e));
    }
  }
  return mat_entries;
}

void apply_material_entries(const std::vector<material_entry>& entries, registry& reg, const fs::path& base_dir,
                            const reader& rd) {
  for (const auto& e : entries) {
    std::optional<std::uint32_t> i = reg.find(e.name);
    if (!i) {
      material m;
      m.name = e.name;
      i = reg.push(m, e.key);
    }
    material& m = reg.list[*i];
    if (e.kind) m.kind = *e.kind;
    if (e.albedo) m.albedo = *e.albedo, m.albedo_texture = -1;  // a constant albedo replaces a texture
    if (e.emission) m.emission = *e.emission;
    if (e.ior) m.ior = *e.ior;
    if (e.texture) {
      if (m.kind != material_kind::diffuse) rd.fail_at(e.texture_node, e.key + ".texture", "only a diffuse material takes a texture");
      m.albedo_texture = reg.texture_index(base_dir / *e.texture, e.wrap, rd.where(e.texture_node, e.key + ".texture"));
    }
  }
}

}  // namespace sieve::render::detail
