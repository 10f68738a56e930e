// [environment]: the radiance of rays that leave the scene: a constant colour, or an HDR map
// (latitude-longitude EXR or Radiance .hdr, relative to the scene file) with rotation and scale.
#include "sections.hpp"

#include "environment_map.hpp"
#include "input_file.hpp"

#include <algorithm>
#include <limits>
#include <string_view>

namespace sieve::render::detail {

void read_environment(const toml::table& doc, const reader& rd, scene& sc, const fs::path& base_dir) {
  const toml::node* n = doc.get("environment");
  if (!n) return;
  const toml::table& t = rd.table(*n, "environment");
  rd.known_keys(t, "environment.", table_keys.at("environment"), "[environment]");
  if (const toml::node* v = t.get("color")) sc.environment = rd.color(*v, "environment.color", 1e30f);
  const toml::node* map = t.get("map");
  if (!map) {
    for (const char* key : {"rotation", "scale", "sample"})
      if (const toml::node* v = t.get(key))
        rd.fail_at(v, std::string("environment.") + key, "applies to a map: give environment.map too");
    return;
  }
  if (const toml::node* v = t.get("color"))
    rd.fail_at(v, "environment.color", "give either a color or a map, not both");
  const std::string rel = rd.path(*map, "environment.map");
  const fs::path path = base_dir / fs::path(rel);
  if (!file_exists(path))
    rd.fail_at(map, "environment.map", "environment map " + in_quotes(rel) + " not found (looked for " + path.string() + ")");
  float rotation = 0, scale = 1;
  bool sample = true;
  if (const toml::node* v = t.get("rotation")) rotation = static_cast<float>(rd.number(*v, "environment.rotation"));
  if (const toml::node* v = t.get("scale")) {
    scale = static_cast<float>(rd.number(*v, "environment.scale"));
    if (!(scale >= 0) || scale > 1e30f) rd.fail_at(v, "environment.scale", str(scale) + " is out of range (0 .. 1e30)");
  }
  if (const toml::node* v = t.get("sample")) {
    const auto b = v->value<bool>();
    if (!v->is_boolean() || !b) rd.fail_at(v, "environment.sample", std::string("expected a boolean, got ") + type_name(*v));
    sample = *b;
  }
  input_file file(path, "environment map");
  const std::vector<unsigned char> bytes = file.bytes(std::uint64_t{1} << 31);
  image_rgb image =
      decode_environment_image(path.string(), std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  // The radiance the renderer reads is a texel times the scale: it must stay a finite float.
  float brightest = 0;
  for (const vec3& p : image.pixels) brightest = std::max({brightest, p.x, p.y, p.z});
  if (static_cast<double>(brightest) * scale > std::numeric_limits<float>::max()) {
    rd.fail_at(t.get("scale") ? t.get("scale") : map, "environment.scale",
               "the brightest texel of " + in_quotes(rel) + " (" + str(brightest) + ") times the scale " + str(scale) +
                   " overflows a float");
  }
  sc.environment_map = build_environment(image.width, image.height, std::move(image.pixels), rotation, scale, sample);
  sc.files.push_back(path);
}

}  // namespace sieve::render::detail
