// The loader's TOML helpers: the schema (the keys each table takes) and `reader`, which reads values
// with errors that point at the file, the line and the key (or the --set override that set it).
// Internal to the loader (renderer/scene/*.cpp).
#pragma once

#include "input_file.hpp"
#include "load.hpp"

#if __has_include(<toml++/toml.hpp>)
#include <toml++/toml.hpp>
#else
#include <toml++/toml.h>  // toml++ before 3.4 (Debian 12) has only this name
#endif

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sieve::render::detail {

namespace fs = std::filesystem;

constexpr double pi = 3.14159265358979323846;
constexpr double degrees = 180.0 / pi;

std::string str(vec3 v);
const char* type_name(const toml::node& n);
bool contains(const std::vector<std::string_view>& v, std::string_view s);

// The schema: the top-level keys and the keys each table may hold.
extern const std::vector<std::string_view> top_keys;
extern const std::map<std::string_view, std::vector<std::string_view>> table_keys;
bool is_array_table(std::string_view t);

struct reader {
  std::string file;                               // the scene file as given (TOML or OBJ)
  scene_limits limits;
  std::map<std::string, std::string> overridden;  // key path -> the override that set it

  // "file:line: key" (or "file: key (from override '...')").
  std::string where(const toml::node* n, std::string_view key) const;
  [[noreturn]] void fail_at(const toml::node* n, std::string_view key, const std::string& what) const;

  // The scene's triangle count, `what` saying where it stands (e.g. "with 'bunny.obj'").
  void check_triangles(std::uint64_t count, const std::string& what) const;
  // The memory the scene's triangles and film take (core/memory.hpp), against what is available.
  void check_memory(std::uint64_t triangles, const film_desc& film) const;
  // Every key of `t` is one of `keys` (`table` names the table in the message).
  void known_keys(const toml::table& t, const std::string& prefix, const std::vector<std::string_view>& keys,
                  std::string_view table) const;

  const toml::table& table(const toml::node& n, std::string_view key) const;
  double number(const toml::node& n, std::string_view key) const;  // finite as a float too
  std::int64_t integer(const toml::node& n, std::string_view key) const;
  std::int64_t integer(const toml::node& n, std::string_view key, std::int64_t lo, std::int64_t hi) const;
  std::string string(const toml::node& n, std::string_view key) const;
  // A string naming a file: no NUL in it.
  std::string path(const toml::node& n, std::string_view key) const;
  vec3 vector(const toml::node& n, std::string_view key) const;     // 3 numbers
  vec3 color(const toml::node& n, std::string_view key, float hi) const;  // each in 0 .. hi
};

// The [[key]] array of tables of `doc`, or null where absent.
const toml::array* array_of_tables(const toml::table& doc, std::string_view key, const reader& rd);

}  // namespace sieve::render::detail
