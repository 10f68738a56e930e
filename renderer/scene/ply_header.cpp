// The PLY header, read and checked before the body (ply_header.hpp).
#include "ply_header.hpp"

#include "sections.hpp"

#include <algorithm>
#include <limits>
#include <optional>

namespace sieve::render::detail::ply {
namespace {

std::optional<ply_type> type_of(std::string_view s) {
  if (s == "char" || s == "int8") return ply_type::i8;
  if (s == "uchar" || s == "uint8") return ply_type::u8;
  if (s == "short" || s == "int16") return ply_type::i16;
  if (s == "ushort" || s == "uint16") return ply_type::u16;
  if (s == "int" || s == "int32") return ply_type::i32;
  if (s == "uint" || s == "uint32") return ply_type::u32;
  if (s == "float" || s == "float32") return ply_type::f32;
  if (s == "double" || s == "float64") return ply_type::f64;
  return std::nullopt;
}

// A count in the header: decimal digits only (no sign, point, exponent or hexadecimal).
std::optional<std::uint64_t> decimal_count(std::string_view s) {
  if (s.empty() || s.size() > 15) return std::nullopt;
  std::uint64_t v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

void read_property(const std::vector<std::string_view>& tok, std::string_view line, const std::string& at, ply_header& h) {
  if (h.elements.empty()) fail(at + "a property before any element");
  if (tok.size() != 3 && tok.size() != 5) fail(at + "cannot read the property " + in_quotes(line));
  const bool list = tok.size() == 5 && tok[1] == "list";
  const auto t = type_of(tok[list ? 3 : 1]);
  const auto c = list ? type_of(tok[2]) : std::optional<ply_type>(ply_type::u8);
  if ((!list && tok.size() != 3) || !t || !c) fail(at + "cannot read the property " + in_quotes(line));
  if (list && !integral(*c)) fail(at + "a list's count must be of an integer type: " + in_quotes(line));
  ply_element& e = h.elements.back();
  e.properties.push_back({std::string(tok.back()), *t, list, *c, role_of(tok.back())});
  e.has_list |= list;
  e.fixed += size_of(*t);
}

void read_element(const std::vector<std::string_view>& tok, const std::string& at, ply_header& h) {
  const std::optional<std::uint64_t> n = tok.size() == 3 ? decimal_count(tok[2]) : std::nullopt;
  if (!n) fail(at + "element needs a name and a count (decimal digits)");
  const int index = static_cast<int>(h.elements.size());
  if (tok[1] == "vertex" || tok[1] == "face") {
    int& slot = tok[1] == "vertex" ? h.vertex : h.face;
    if (slot >= 0) fail(at + "a second " + in_quotes(tok[1]) + " element (a PLY mesh has one)");
    slot = index;
  }
  h.elements.push_back({std::string(tok[1]), *n, {}, 0, false});
}

}  // namespace

role role_of(std::string_view n) {
  if (n == "x") return role::x;
  if (n == "y") return role::y;
  if (n == "z") return role::z;
  if (n == "nx") return role::nx;
  if (n == "ny") return role::ny;
  if (n == "nz") return role::nz;
  if (n == "u" || n == "s" || n == "texture_u") return role::u;
  if (n == "v" || n == "t" || n == "texture_v") return role::v;
  if (n == "red" || n == "diffuse_red") return role::red;
  if (n == "green" || n == "diffuse_green") return role::green;
  if (n == "blue" || n == "diffuse_blue") return role::blue;
  return role::none;
}

// The header's lines, checked; `bytes` holds at least the header (the file's first bytes).
ply_header parse_header(std::span<const unsigned char> bytes, bool whole_file, const std::string& file) {
  ply_header h;
  std::size_t i = 0, line_no = 0;
  bool format_seen = false;
  for (;;) {
    const std::size_t start = i;
    while (i < bytes.size() && bytes[i] != '\n' && i - start < 4096) ++i;
    if (i >= bytes.size() || bytes[i] != '\n') {
      if (i >= bytes.size() && !whole_file)
        fail(file + ": the PLY header does not end within its first " + std::to_string(max_header_bytes >> 20) + " MiB");
      fail(file + ": the PLY header does not end (no end_header line)");
    }
    std::string_view line(reinterpret_cast<const char*>(bytes.data() + start), i - start);
    ++i, ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string at = file + ":" + std::to_string(line_no) + ": ";
    const std::vector<std::string_view> tok = tokens(line);
    if (line_no == 1) {
      if (line != "ply") fail(file + ": not a PLY file (it does not start with \"ply\")");
      continue;
    }
    if (tok.empty() || tok[0] == "comment" || tok[0] == "obj_info") continue;
    if (tok[0] == "end_header") break;
    if (tok[0] == "format") {
      if (tok.size() < 2) fail(at + "format needs a name");
      if (tok[1] == "ascii") h.format = ply_format::ascii;
      else if (tok[1] == "binary_little_endian") h.format = ply_format::little;
      else if (tok[1] == "binary_big_endian") h.format = ply_format::big;
      else fail(at + "unknown PLY format " + in_quotes(tok[1]));
      format_seen = true;
    } else if (tok[0] == "element") {
      read_element(tok, at, h);
    } else if (tok[0] == "property") {
      read_property(tok, line, at, h);
    } else {
      fail(at + "unknown PLY header line " + in_quotes(line));
    }
  }
  if (!format_seen) fail(file + ": the PLY header has no format line");
  h.body = i;
  return h;
}

// The element table against the body's size and the renderer's needs, before the body is read.
void check_elements(ply_header& h, std::uint64_t body_bytes, const std::string& file, const std::string& context) {
  // Every item takes at least its fixed part of the body (ASCII: a digit and a separator a value),
  // and the items of all elements together must fit: an element alone may not, nor may thousands.
  std::uint64_t least_total = 0;
  for (const ply_element& e : h.elements) {
    if (e.count > 0 && e.properties.empty())
      fail(file + ": element " + in_quotes(e.name) + " has " + std::to_string(e.count) + " items but no property" + context);
    std::uint64_t least = 0;
    for (const ply_property& p : e.properties) least += h.format == ply_format::ascii ? 2 : size_of(p.list ? p.count_type : p.type);
    if (e.count > body_bytes / std::max<std::uint64_t>(least, 1) || least_total + e.count * least > body_bytes)
      fail(file + ": element " + in_quotes(e.name) + " claims " + std::to_string(e.count) + " items, more than the file holds" + context);
    least_total += e.count * least;
  }
  if (h.face >= 0) {
    const auto& props = h.elements[static_cast<std::size_t>(h.face)].properties;
    for (std::size_t p = 0; p < props.size(); ++p) {
      if (!props[p].list || (props[p].name != "vertex_indices" && props[p].name != "vertex_index")) continue;
      if (h.index_list >= 0) fail(file + ": the face element has two vertex index lists" + context);
      if (!integral(props[p].type)) fail(file + ": the face element's " + props[p].name + " must be of an integer type" + context);
      h.index_list = static_cast<int>(p);
    }
  }
  if (h.vertex >= 0)
    for (const ply_property& p : h.elements[static_cast<std::size_t>(h.vertex)].properties)
      if (p.list && p.meaning != role::none) fail(file + ": vertex property " + in_quotes(p.name) + " is a list" + context);
}

// The most bytes a binary body's elements can take (saturating): a file longer than its header
// claims (a large tail, a sparse file) is read no further than that. An ASCII body is read whole.
std::uint64_t body_bound(const ply_header& h, std::uint64_t body_bytes) {
  if (h.format == ply_format::ascii) return body_bytes;
  constexpr std::uint64_t most = std::numeric_limits<std::uint64_t>::max();
  const auto add = [](std::uint64_t a, std::uint64_t b) { return a > most - b ? most : a + b; };
  const auto mul = [](std::uint64_t a, std::uint64_t b) { return a != 0 && b > most / a ? most : a * b; };
  std::uint64_t sum = 0;
  for (const ply_element& e : h.elements) {
    std::uint64_t item = 0;
    for (const ply_property& p : e.properties) {
      constexpr std::uint64_t longest[] = {127, 255, 32767, 65535, 2147483647ULL, 4294967295ULL};
      item = add(item, p.list ? add(size_of(p.count_type), mul(longest[static_cast<int>(p.count_type)], size_of(p.type)))
                              : size_of(p.type));
    }
    sum = add(sum, mul(e.count, item));
  }
  return std::min(sum, body_bytes);
}

}  // namespace sieve::render::detail::ply
