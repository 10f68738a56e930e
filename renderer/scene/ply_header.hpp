// The PLY header (ply.cpp reads the body): the types, the element table, and its checks against the
// body's size and the renderer's needs, made before a byte of the body is read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sieve::render::detail::ply {

constexpr std::size_t max_header_bytes = std::size_t{1} << 20;

enum class ply_type : std::uint8_t { i8, u8, i16, u16, i32, u32, f32, f64 };

inline std::size_t size_of(ply_type t) {
  constexpr std::size_t sizes[] = {1, 1, 2, 2, 4, 4, 4, 8};
  return sizes[static_cast<int>(t)];
}
inline bool integral(ply_type t) { return t != ply_type::f32 && t != ply_type::f64; }

// What a vertex property means to the renderer.
enum class role : std::uint8_t { none, x, y, z, nx, ny, nz, u, v, red, green, blue };
role role_of(std::string_view n);

struct ply_property {
  std::string name;
  ply_type type = ply_type::f32;
  bool list = false;
  ply_type count_type = ply_type::u8;
  role meaning = role::none;
};

struct ply_element {
  std::string name;
  std::uint64_t count = 0;
  std::vector<ply_property> properties;
  std::size_t fixed = 0;  // bytes an item (binary), when no property is a list
  bool has_list = false;
};

enum class ply_format : std::uint8_t { ascii, little, big };

struct ply_header {
  ply_format format = ply_format::ascii;
  std::vector<ply_element> elements;
  std::size_t body = 0;   // where the data begins
  int vertex = -1, face = -1;  // the elements' indices
  int index_list = -1;         // the face element's vertex index list (a property index)
};

// The header's lines, checked; `bytes` holds at least the header (the file's first bytes).
ply_header parse_header(std::span<const unsigned char> bytes, bool whole_file, const std::string& file);
// The element table against the body's size and the renderer's needs, before the body is read.
void check_elements(ply_header& h, std::uint64_t body_bytes, const std::string& file, const std::string& context);
// The most bytes a binary body's elements can take (saturating): a file longer than its header
// claims (a large tail, a sparse file) is read no further than that. An ASCII body is read whole.
std::uint64_t body_bound(const ply_header& h, std::uint64_t body_bytes);

}  // namespace sieve::render::detail::ply
