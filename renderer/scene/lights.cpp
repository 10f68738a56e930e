// [[lights]]: emissive quads, two triangles each with a material of their own.
#include "sections.hpp"

namespace sieve::render::detail {

void read_lights(const toml::table& doc, const reader& rd, scene& sc, registry& reg) {
  const toml::array* lights = array_of_tables(doc, "lights", rd);
  if (lights) {
    for (std::size_t i = 0; i < lights->size(); ++i) {
      const std::string key = "lights[" + std::to_string(i) + "]";
      const toml::node* node = &(*lights)[i];
      const toml::table& t = *node->as_table();
      rd.known_keys(t, key + ".", table_keys.at("lights"), "[[lights]]");
      if (const toml::node* v = t.get("type")) {
        const std::string s = rd.string(*v, key + ".type");
        if (s != "quad") rd.fail_at(v, key + ".type", in_quotes(s) + " is not a light type (quad)");
      }
      auto need = [&](const char* k) -> const toml::node& {
        const toml::node* v = t.get(k);
        if (!v) rd.fail_at(node, key, std::string("a quad light needs ") + k);
        return *v;
      };
      const vec3 corner = rd.vector(need("corner"), key + ".corner");
      const vec3 e1 = rd.vector(need("edge1"), key + ".edge1");
      const vec3 e2 = rd.vector(need("edge2"), key + ".edge2");
      const vec3 emission = rd.color(need("emission"), key + ".emission", 1e30f);
      if (!(max_component(emission) > 0))
        rd.fail_at(t.get("emission"), key + ".emission", "a light needs an emission > 0");
      if (!(length(cross(e1, e2)) > 0)) rd.fail_at(node, key, "edge1 and edge2 span no area");
      material m;
      m.name = key;
      m.kind = material_kind::diffuse;
      m.albedo = {0, 0, 0};
      m.emission = emission;
      const std::uint32_t mi = reg.push(m, key);
      sc.triangles.push_back({corner, corner + e1, corner + e1 + e2});
      sc.triangles.push_back({corner, corner + e1 + e2, corner + e2});
      sc.material_of.push_back(mi);
      sc.material_of.push_back(mi);
    }
  }
}

}  // namespace sieve::render::detail
