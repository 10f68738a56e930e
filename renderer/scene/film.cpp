// [film] (size, samples, bounces, seed) and [compaction] (the strategy, ray reordering, sort).
#include "sections.hpp"

namespace sieve::render::detail {

void read_film(const toml::table& doc, const reader& rd, scene& sc) {
  if (const toml::node* n = doc.get("film")) {
    const toml::table& t = rd.table(*n, "film");
    rd.known_keys(t, "film.", table_keys.at("film"), "[film]");
    const auto max_pixels = static_cast<std::int64_t>(rd.limits.max_pixels);
    if (const toml::node* v = t.get("width"))
      sc.film.width = static_cast<std::uint32_t>(rd.integer(*v, "film.width", 1, max_pixels));
    if (const toml::node* v = t.get("height"))
      sc.film.height = static_cast<std::uint32_t>(rd.integer(*v, "film.height", 1, max_pixels));
    if (std::uint64_t{sc.film.width} * sc.film.height > static_cast<std::uint64_t>(max_pixels)) {
      rd.fail_at(t.get("width") ? t.get("width") : t.get("height"), "film.width * film.height",
                 std::to_string(sc.film.width) + " x " + std::to_string(sc.film.height) +
                     " pixels is more than the limit of " + std::to_string(max_pixels) + " pixels");
    }
    if (const toml::node* v = t.get("spp"))
      sc.film.spp = static_cast<std::uint32_t>(rd.integer(*v, "film.spp", 1, std::int64_t{1} << 20));
    if (const toml::node* v = t.get("max_bounces"))
      sc.film.max_bounces = static_cast<std::uint32_t>(rd.integer(*v, "film.max_bounces", 0, 1024));
    if (const toml::node* v = t.get("seed"))
      sc.film.seed = static_cast<std::uint32_t>(rd.integer(*v, "film.seed", 0, 0xffffffffLL));
    if (const toml::node* v = t.get("mipmaps")) {
      if (!v->is_boolean()) rd.fail_at(v, "film.mipmaps", "expected true or false");
      sc.film.mipmaps = v->as_boolean()->get();
    }
    if (const toml::node* v = t.get("sides")) {
      const auto s = v->value<std::string>();
      if (!s || (*s != "geometric" && *s != "shading")) rd.fail_at(v, "film.sides", "expected \"geometric\" or \"shading\"");
      sc.film.shading_sides = *s == "shading";
    }
    if (const toml::node* v = t.get("tangents")) {
      const auto s = v->value<std::string>();
      if (!s || (*s != "vertex" && *s != "uv")) rd.fail_at(v, "film.tangents", "expected \"vertex\" or \"uv\"");
      sc.film.uv_tangents = *s == "uv";
    }
  }
}

void fit_film(toml::table& doc, const reader& rd, const film_fit& fit) {
  scene given;
  read_film(doc, rd, given);  // the film the file and the overrides give, checked as it is read
  const auto [width, height] = fit(given.film);
  if (!doc.get("film")) doc.insert("film", toml::table{});
  toml::table& t = *doc.get("film")->as_table();
  t.insert_or_assign("width", static_cast<std::int64_t>(width));
  t.insert_or_assign("height", static_cast<std::int64_t>(height));
}

namespace {

// [compaction] key `key`, a mode's name, into `out` when given; else an error naming its valid names.
template <mode E>
void read_mode(const toml::table& t, const reader& rd, const char* key, E& out) {
  const toml::node* v = t.get(key);
  if (!v) return;
  const std::string where = std::string("compaction.") + key;
  const std::string name = rd.string(*v, where);
  const auto e = find_mode<E>(name);
  if (!e) rd.fail_at(v, where, in_quotes(name) + " is not one of " + mode_names_joined<E>());
  out = *e;
}

}  // namespace

void read_compaction(const toml::table& doc, const reader& rd, scene& sc) {
  if (const toml::node* n = doc.get("compaction")) {
    const toml::table& t = rd.table(*n, "compaction");
    rd.known_keys(t, "compaction.", table_keys.at("compaction"), "[compaction]");
    if (const toml::node* v = t.get("strategy")) {
      sc.compaction.strategy = rd.string(*v, "compaction.strategy");
      if (sc.compaction.strategy.empty()) rd.fail_at(v, "compaction.strategy", "empty strategy name");
    }
    read_mode(t, rd, "reorder", sc.compaction.reorder);
    read_mode(t, rd, "sort", sc.compaction.sort);
    read_mode(t, rd, "routing", sc.compaction.routing);
  }
}

}  // namespace sieve::render::detail
