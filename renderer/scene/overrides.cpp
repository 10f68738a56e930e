// --set overrides: "key=value" applied to the scene document before it is read (load.hpp).
#include "sections.hpp"

#include <cerrno>
#include <cstdlib>

namespace sieve::render::detail {

void apply_override(toml::table& doc, const std::string& text, reader& rd) {
  const auto eq = text.find('=');
  const std::string what = rd.file + ": override " + in_quotes(text) + ": ";
  if (eq == std::string::npos) fail(what + "expected key=value");
  std::string key(trim(std::string_view(text).substr(0, eq)));
  const std::string value(trim(std::string_view(text).substr(eq + 1)));
  if (key.empty()) fail(what + "empty key");

  // objects[0].scale -> objects.0.scale
  for (std::size_t p; (p = key.find('[')) != std::string::npos;) {
    const auto q = key.find(']', p);
    if (q == std::string::npos) fail(what + "unbalanced '[' in the key");
    key = key.substr(0, p) + "." + key.substr(p + 1, q - p - 1) + key.substr(q + 1);
  }
  std::vector<std::string> seg;
  for (std::size_t b = 0;;) {
    const auto e = key.find('.', b);
    seg.emplace_back(trim(std::string_view(key).substr(b, e == std::string::npos ? e : e - b)));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  const std::string unknown = what + "unknown key " + in_quotes(key);
  if (!contains(top_keys, seg[0])) fail(unknown + " (top-level keys: " + join(top_keys) + ")");

  // Parse the value as TOML; what is not TOML is a bare string.
  toml::table parsed;
  bool is_toml = false;
  try {
    const std::string doc_text = "v = " + value + "\n";
    parsed = toml::parse(std::string_view(doc_text), std::string_view("override"));
    is_toml = parsed.size() == 1 && parsed.contains("v");
  } catch (const toml::parse_error&) {
  }
  auto set = [&](toml::table& t, const std::string& k) {
    if (is_toml) {
      t.insert_or_assign(k, std::move(*parsed.get("v")));
    } else {
      t.insert_or_assign(k, value);
    }
  };

  if (seg[0] == "name") {
    if (seg.size() != 1) fail(unknown + " (name is a string)");
    set(doc, "name");
    rd.overridden["name"] = text;
    return;
  }
  const auto& keys = table_keys.at(seg[0]);
  if (!is_array_table(seg[0])) {
    if (seg.size() == 1)
      fail(what + "[" + seg[0] + "] is a table: override one of its keys (" + join(keys) + ")");
    if (seg.size() != 2 || !contains(keys, seg[1])) {
      fail(unknown + " ([" + seg[0] + "] takes: " + join(keys) + ")");
    }
    toml::node* t = doc.get(seg[0]);
    if (!t) t = doc.insert_or_assign(seg[0], toml::table{}).first->second.as_table();
    if (!t->is_table()) fail(what + seg[0] + " in the scene is not a table");
    toml::table& tbl = *t->as_table();
    if (seg[0] == "camera") {  // vfov and focal_length_mm + film_height_mm exclude each other
      if (seg[1] == "vfov") {
        tbl.erase("focal_length_mm");
        tbl.erase("film_height_mm");
      } else if (seg[1] == "focal_length_mm" || seg[1] == "film_height_mm") {
        tbl.erase("vfov");
      }
    }
    if (seg[0] == "environment" && (seg[1] == "map" || seg[1] == "color")) {
      tbl.erase(seg[1] == "map" ? "color" : "map");  // the override's choice wins over the file's
      if (seg[1] == "color") tbl.erase("rotation"), tbl.erase("scale"), tbl.erase("sample");
    }
    set(tbl, seg[1]);
    if (seg[0] == "environment" && seg[1] == "map") {
      // A map named on the command line is relative to the working directory, not the scene file.
      if (const auto* m = tbl.get_as<std::string>("map"); m && fs::path(m->get()).is_relative())
        tbl.insert_or_assign("map", fs::absolute(m->get()).string());
    }
    rd.overridden[seg[0] + "." + seg[1]] = text;
    return;
  }
  // objects.N.key, materials.N.key, lights.N.key
  if (seg.size() != 3 || !contains(keys, seg[2])) {
    fail(unknown + " (expected " + seg[0] + ".N.key, key one of: " + join(keys) + ")");
  }
  char* end = nullptr;
  errno = 0;
  const unsigned long long index = std::strtoull(seg[1].c_str(), &end, 10);
  if (seg[1].empty() || *end != '\0' || errno != 0 || seg[1][0] == '-') {
    fail(what + in_quotes(seg[1]) + " is not an index into [[" + seg[0] + "]]");
  }
  toml::node* arr = doc.get(seg[0]);
  const std::size_t count = arr && arr->is_array() ? arr->as_array()->size() : 0;
  if (index >= count) {
    fail(what + seg[0] + "[" + seg[1] + "] does not exist (the scene has " + std::to_string(count) + " [[" +
         seg[0] + "]])");
  }
  toml::node& entry = (*arr->as_array())[index];
  if (!entry.is_table()) fail(what + seg[0] + "[" + seg[1] + "] is not a table");
  set(*entry.as_table(), seg[2]);
  rd.overridden[seg[0] + "[" + seg[1] + "]." + seg[2]] = text;
}

}  // namespace sieve::render::detail
