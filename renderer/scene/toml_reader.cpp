// The loader's TOML helpers (toml_reader.hpp).
#include "toml_reader.hpp"

#include "../core/memory.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace sieve::render::detail {

std::string str(vec3 v) { return "(" + str(v.x) + ", " + str(v.y) + ", " + str(v.z) + ")"; }

const char* type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
    case toml::node_type::time:
    case toml::node_type::date_time:
      return "a date/time";
    default:
      return "nothing";
  }
}

// ------------------------------------------------------------------------------------------------
// The schema: the keys each table may hold.

const std::vector<std::string_view> top_keys = {"name",    "camera",    "film",   "environment", "compaction",
                                                "objects", "materials", "lights", "procedural"};
const std::map<std::string_view, std::vector<std::string_view>> table_keys = {
    {"camera", {"position", "look_at", "up", "vfov", "focal_length_mm", "film_height_mm"}},
    {"film", {"width", "height", "spp", "max_bounces", "seed", "mipmaps", "sides", "tangents"}},
    {"environment", {"color", "map", "rotation", "scale", "sample"}},
    {"compaction", {"strategy", "reorder", "sort", "routing"}},
    {"objects", {"obj", "gltf", "ply", "translate", "scale", "rotate_y", "material"}},
    {"materials", {"name", "type", "albedo", "emission", "ior", "roughness", "metallic", "transmission", "thin", "texture", "wrap"}},
    {"lights", {"type", "corner", "edge1", "edge2", "emission"}},
    {"procedural", {"type", "n", "segments", "grid", "height", "seed"}},
};
bool is_array_table(std::string_view t) { return t == "objects" || t == "materials" || t == "lights"; }

bool contains(const std::vector<std::string_view>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}



std::string reader::where(const toml::node* n, std::string_view key) const {
  for (const auto& [k, text] : overridden) {
    if (key == k || (key.size() > k.size() && key.substr(0, k.size()) == k &&
                     (key[k.size()] == '.' || key[k.size()] == '['))) {
      return file + ": " + std::string(key) + " (from override " + in_quotes(text) + ")";
    }
  }
  if (n && n->source().begin.line > 0) {
    return file + ":" + std::to_string(n->source().begin.line) + ": " + std::string(key);
  }
  return file + ": " + std::string(key);
}
void reader::fail_at(const toml::node* n, std::string_view key, const std::string& what) const {
  fail(where(n, key) + ": " + what);
}

// The scene's triangle count, `what` saying where it stands (e.g. "with 'bunny.obj'").
void reader::check_triangles(std::uint64_t count, const std::string& what) const {
  if (count > limits.max_triangles) {
    fail(file + ": " + std::to_string(count) + " triangles " + what + " is more than the limit of " +
         std::to_string(limits.max_triangles));
  }
}

// The memory the scene's triangles and film take (core/memory.hpp), against what is available.
void reader::check_memory(std::uint64_t triangles, const film_desc& film) const {
  memory::counts c;
  c.triangles = triangles;
  c.pixels = std::uint64_t{film.width} * film.height;
  memory::check(c, limits.available_memory ? std::optional(limits.available_memory) : std::nullopt, std::nullopt,
                file);
}

void reader::known_keys(const toml::table& t, const std::string& prefix, const std::vector<std::string_view>& keys,
                std::string_view table) const {
  for (auto&& [k, v] : t) {
    if (!contains(keys, k.str())) {
      fail_at(&v, prefix + std::string(k.str()),
              "unknown key (" + std::string(table) + " takes: " + join(keys) + ")");
    }
  }
}

const toml::table& reader::table(const toml::node& n, std::string_view key) const {
  if (!n.is_table()) fail_at(&n, key, std::string("expected a table, got ") + type_name(n));
  return *n.as_table();
}

double reader::number(const toml::node& n, std::string_view key) const {
  double v;
  if (n.is_integer()) {
    v = static_cast<double>(n.as_integer()->get());
  } else if (n.is_floating_point()) {
    v = n.as_floating_point()->get();
  } else {
    fail_at(&n, key, std::string("expected a number, got ") + type_name(n));
  }
  if (!std::isfinite(v) || !std::isfinite(static_cast<float>(v))) {
    fail_at(&n, key, str(v) + " is not a finite number");
  }
  return v;
}

std::int64_t reader::integer(const toml::node& n, std::string_view key) const {
  if (n.is_floating_point()) {
    fail_at(&n, key, "expected an integer, got the float " + str(n.as_floating_point()->get()));
  }
  if (!n.is_integer()) fail_at(&n, key, std::string("expected an integer, got ") + type_name(n));
  return n.as_integer()->get();
}

std::int64_t reader::integer(const toml::node& n, std::string_view key, std::int64_t lo, std::int64_t hi) const {
  const std::int64_t v = integer(n, key);
  if (v < lo || v > hi) {
    fail_at(
        &n, key,
        std::to_string(v) + " is out of range (" + std::to_string(lo) + " .. " + std::to_string(hi) + ")");
  }
  return v;
}

std::string reader::string(const toml::node& n, std::string_view key) const {
  if (!n.is_string()) fail_at(&n, key, std::string("expected a string, got ") + type_name(n));
  return n.as_string()->get();
}

std::string reader::path(const toml::node& n, std::string_view key) const {
  std::string s = string(n, key);
  // A NUL would end the path early (another file opened) and cut the messages that quote it.
  if (s.find('\0') != std::string::npos) fail_at(&n, key, "the path holds a NUL character (\\u0000)");
  return s;
}

vec3 reader::vector(const toml::node& n, std::string_view key) const {
  if (!n.is_array()) fail_at(&n, key, std::string("expected an array of 3 numbers, got ") + type_name(n));
  const toml::array& a = *n.as_array();
  if (a.size() != 3) {
    fail_at(&n, key, "expected an array of 3 numbers, got " + std::to_string(a.size()) + " elements");
  }
  float c[3];
  for (std::size_t i = 0; i < 3; ++i) {
    c[i] = static_cast<float>(number(a[i], std::string(key) + "[" + std::to_string(i) + "]"));
  }
  return {c[0], c[1], c[2]};
}

vec3 reader::color(const toml::node& n, std::string_view key, float hi) const {
  const vec3 v = vector(n, key);
  for (int i = 0; i < 3; ++i) {
    if (v[i] < 0 || v[i] > hi) {
      fail_at(&n, key,
              str(v) + " is out of range (each component in 0 .. " + (hi > 1 ? "inf" : str(hi)) + ")");
    }
  }
  return v;
}

const toml::array* array_of_tables(const toml::table& doc, std::string_view key, const reader& rd) {
  const toml::node* n = doc.get(key);
  if (!n) return nullptr;
  if (!n->is_array() || !n->as_array()->is_array_of_tables()) {
    rd.fail_at(
        n, key,
        std::string("expected an array of tables ([[") + std::string(key) + "]]), got " + type_name(*n));
  }
  return n->as_array();
}

}  // namespace sieve::render::detail
