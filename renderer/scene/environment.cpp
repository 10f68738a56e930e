// [environment]: the radiance of rays that leave the scene.
#include "sections.hpp"

namespace sieve::render::detail {

void read_environment(const toml::table& doc, const reader& rd, scene& sc) {
  if (const toml::node* n = doc.get("environment")) {
    const toml::table& t = rd.table(*n, "environment");
    rd.known_keys(t, "environment.", table_keys.at("environment"), "[environment]");
    if (const toml::node* v = t.get("color")) sc.environment = rd.color(*v, "environment.color", 1e30f);
  }
}

}  // namespace sieve::render::detail
