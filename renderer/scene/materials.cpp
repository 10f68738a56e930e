// Materials: the registry (one list for the scene, merged by name), the MTL mapping and the
// [[materials]] entries of a scene file.
#include "sections.hpp"

#include <tiny_obj_loader.h>

#include <algorithm>

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
         a.roughness == b.roughness && a.metallic == b.metallic && a.transmission == b.transmission &&
         a.thin == b.thin && a.albedo_texture == b.albedo_texture && a.opacity == b.opacity &&
         a.opacity_texture == b.opacity_texture && a.alpha == b.alpha && a.alpha_cutoff == b.alpha_cutoff &&
         a.emission_texture == b.emission_texture && a.metal_rough_texture == b.metal_rough_texture &&
         a.normal_texture == b.normal_texture && a.normal_scale == b.normal_scale &&
         std::equal(a.uv.m, a.uv.m + 6, b.uv.m);
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
  // Ns (the Phong exponent, >= 0) as a microfacet roughness: the Beckmann width that matches a Phong
  // lobe, alpha = sqrt(2 / (Ns + 2)); Pr where given (> 0) instead.
  const double ns = std::isfinite(m.shininess) && m.shininess > 0 ? m.shininess : 0;
  out.roughness = m.roughness > 0 ? static_cast<float>(m.roughness) : static_cast<float>(std::sqrt(2 / (ns + 2)));
  out.metallic = static_cast<float>(m.metallic);
  // d (or 1 - Tr) is opacity, never glass. `d 0` with no map_d would hide the surface: exporters
  // write it for opaque materials (Blender's, from an alpha of 0), so it is read as opaque and noted.
  out.opacity = static_cast<float>(m.dissolve);
  if (out.opacity == 0 && m.alpha_texname.empty()) out.opacity = 1, out.dissolve_ignored = true;
  out.specular_map = m.specular_texname;
  out.roughness_map = m.roughness_texname;
  out.metallic_map = m.metallic_texname;
  out.bump_map = !m.bump_texname.empty() ? m.bump_texname : m.normal_texname;
  const bool dielectric = m.illum == 4 || m.illum == 6 || m.illum == 7;
  const bool mirror = m.illum == 3 || m.illum == 5 || (max_component(ks) > 0 && max_component(kd) == 0) ||
                      (out.metallic >= 0.5f && out.roughness < 0.5f);
  if (dielectric) {
    out.kind = material_kind::dielectric;
    out.albedo = max_component(tf) > 0 ? tf : max_component(ks) > 0 ? ks : vec3{1, 1, 1};
  } else if (mirror) {
    out.kind = material_kind::mirror;
    out.albedo = max_component(ks) > 0 ? ks : max_component(kd) > 0 ? kd : vec3{1, 1, 1};
  } else {
    out.kind = material_kind::diffuse;
    out.albedo = kd;
    out.specular = ks;
  }
  return out;
}

std::string approximations(const std::vector<material>& materials) {
  std::size_t glossy = 0, rough_mirror = 0, metal = 0, cutout = 0, dissolve = 0, maps = 0;
  for (const material& m : materials) {
    glossy += m.kind == material_kind::diffuse && max_component(m.specular) > 0;
    rough_mirror += m.kind == material_kind::mirror && m.roughness > 0.1f;
    metal += m.kind == material_kind::diffuse && m.metallic > 0;
    cutout += m.opacity < 1 || m.opacity_texture >= 0;
    dissolve += m.dissolve_ignored;
    maps += !m.specular_map.empty() || !m.roughness_map.empty() || !m.metallic_map.empty() || !m.bump_map.empty();
  }
  std::string out;
  auto note = [&](std::size_t n, const char* what) {
    if (n > 0) out += (out.empty() ? "" : "; ") + std::to_string(n) + " " + what;
  };
  note(glossy, "with a glossy layer (Ks/Ns, Pr) drawn as Lambert");
  note(rough_mirror, "rough metal (Ns/Pr roughness > 0.1) drawn as a sharp mirror");
  note(metal, "metallic but rough (Pm, metallicFactor) drawn as Lambert");
  note(cutout, "with opacity (d, map_d) drawn as a stochastic cut-out");
  note(dissolve, "with d 0 and no map_d drawn opaque");
  note(maps, "with specular, roughness, metallic or bump/normal maps not read");
  return out;
}

namespace {

std::optional<material_kind> kind_of(std::string_view s) {
  if (s == "diffuse") return material_kind::diffuse;
  if (s == "mirror") return material_kind::mirror;
  if (s == "dielectric") return material_kind::dielectric;
  if (s == "conductor") return material_kind::conductor;
  if (s == "rough_dielectric") return material_kind::rough_dielectric;
  if (s == "gltf") return material_kind::gltf;
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
          rd.fail_at(v, key + ".type", in_quotes(s) + " is not one of diffuse, mirror, dielectric, conductor, rough_dielectric, gltf");
      }
      if (const toml::node* v = t.get("albedo")) e.albedo = rd.color(*v, key + ".albedo", 1);
      if (const toml::node* v = t.get("emission")) e.emission = rd.color(*v, key + ".emission", 1e30f);
      if (const toml::node* v = t.get("ior")) {
        const double d = rd.number(*v, key + ".ior");
        if (!(d > 1)) rd.fail_at(v, key + ".ior", str(d) + " is out of range (> 1)");
        e.ior = static_cast<float>(d);
      }
      auto unit = [&](const char* k) -> std::optional<float> {
        const toml::node* v = t.get(k);
        if (!v) return std::nullopt;
        const double d = rd.number(*v, key + "." + k);
        if (!(d >= 0 && d <= 1)) rd.fail_at(v, key + "." + k, str(d) + " is out of range (0 .. 1)");
        return static_cast<float>(d);
      };
      e.roughness = unit("roughness");
      e.metallic = unit("metallic");
      e.transmission = unit("transmission");
      if (const toml::node* v = t.get("thin")) {
        if (!v->is_boolean()) rd.fail_at(v, key + ".thin", "expected true or false");
        e.thin = v->as_boolean()->get();
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
    if (e.kind) {
      // A kind chosen by the scene file replaces what the MTL's glossy keys described.
      m.kind = *e.kind;
      m.specular = {0, 0, 0};
      m.metallic = 0;
      m.roughness = m.kind == material_kind::diffuse ? 1.0f : 0.0f;
    }
    if (e.albedo) m.albedo = *e.albedo, m.albedo_texture = -1;  // a constant albedo replaces a texture
    if (e.emission) m.emission = *e.emission;
    if (e.ior) m.ior = *e.ior;
    if (e.roughness) m.roughness = *e.roughness;
    if (e.metallic) m.metallic = *e.metallic;
    if (e.transmission) m.transmission = *e.transmission;
    if (e.thin) m.thin = *e.thin;
    if (e.texture) {
      if (m.kind != material_kind::diffuse && m.kind != material_kind::gltf)
        rd.fail_at(e.texture_node, e.key + ".texture", "only a diffuse or gltf material takes a texture");
      m.albedo_texture = reg.texture_index(base_dir / *e.texture, e.wrap, rd.where(e.texture_node, e.key + ".texture"));
    }
  }
}

}  // namespace sieve::render::detail
