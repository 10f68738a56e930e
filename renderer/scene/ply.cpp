// PLY meshes (Stanford polygon files): ASCII and binary, little and big endian. Read here (Debian 12
// packages no PLY library).
//
// The header is read and checked first, alone (at most max_header_bytes): every count a decimal
// integer, the items of all elements together no more than the file could hold (an item of no
// property is refused: it would cost no byte), one vertex and one face element, the face's vertex
// index list of an integer type. Only then is the body read, by every thread (input_file::
// read_parallel). A binary body is parsed in parallel: each element's items are located (fixed
// sizes by arithmetic; lists of one length, verified at every item in parallel, likewise; else one
// serial pass that records where every block of items starts), the faces' triangles are counted
// and admitted against the scene's limits before any is made, then vertices and faces are parsed by
// blocks, each block writing its own part of the arrays. An ASCII body is read by one thread, twice
// (counted, then made). The same per-item code serves both (a cursor over binary values or over
// words); where blocks fail at once, the first item's error in the file is the one reported.
#include "sections.hpp"

#include "../exec/fresh_memory.hpp"

#include <sieve/compaction/error.hpp>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>

namespace sieve::render::detail {
namespace {

constexpr std::size_t max_header_bytes = std::size_t{1} << 20;
constexpr std::uint64_t block_items = 1 << 12;  // items a block of a parallel pass

enum class ply_type : std::uint8_t { i8, u8, i16, u16, i32, u32, f32, f64 };

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

std::size_t size_of(ply_type t) {
  constexpr std::size_t sizes[] = {1, 1, 2, 2, 4, 4, 4, 8};
  return sizes[static_cast<int>(t)];
}
bool integral(ply_type t) { return t != ply_type::f32 && t != ply_type::f64; }

// What a vertex property means to the renderer.
enum class role : std::uint8_t { none, x, y, z, nx, ny, nz, u, v, red, green, blue };

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

// Where an error is: the element's name and the item's number, made into text only on failure.
struct item_at {
  const std::string* file;
  const std::string* element;
  std::uint64_t item;
  std::string text() const { return *file + ": " + *element + " " + std::to_string(item); }
};

// A value of type t in the machine's byte order at `bytes`, made a To.
template <class To>
To value_as(const unsigned char* bytes, ply_type t) {
  auto as = [&](auto x) {
    std::memcpy(&x, bytes, sizeof x);
    return static_cast<To>(x);
  };
  switch (t) {
    case ply_type::i8: return as(std::int8_t{});
    case ply_type::u8: return as(std::uint8_t{});
    case ply_type::i16: return as(std::int16_t{});
    case ply_type::u16: return as(std::uint16_t{});
    case ply_type::i32: return as(std::int32_t{});
    case ply_type::u32: return as(std::uint32_t{});
    case ply_type::f32: return as(float{});
    default: return as(double{});
  }
}

// Values of a binary body, from `at` on (a block's first item).
class binary_cursor {
 public:
  binary_cursor(const unsigned char* at, const unsigned char* end, bool swap) : p_(at), end_(end), swap_(swap) {}
  double value(ply_type t, const item_at& where) {
    const std::size_t n = size_of(t);
    if (static_cast<std::size_t>(end_ - p_) < n) ends_inside(where);
    unsigned char v[8];
    std::memcpy(v, p_, n);
    p_ += n;
    if (swap_) std::reverse(v, v + n);
    return value_as<double>(v, t);
  }
  // A list's count (an integer type, the header checked).
  double count(ply_type t, const item_at& where) { return value(t, where); }
  void skip(ply_type t, std::uint64_t n, const item_at& where) {
    if (n > static_cast<std::uint64_t>(end_ - p_) / size_of(t)) ends_inside(where);
    p_ += n * size_of(t);
  }
  const unsigned char* at() const { return p_; }

 private:
  [[noreturn]] static void ends_inside(const item_at& where) { fail(*where.file + ": the file ends inside " + *where.element + " " + std::to_string(where.item)); }
  const unsigned char* p_;
  const unsigned char* end_;
  bool swap_;
};

// Words of an ASCII body; a line starting "comment" is skipped (hand-edited files have them).
// Integer properties take decimal integers in their type's range, others decimal numbers.
class ascii_cursor {
 public:
  ascii_cursor(const unsigned char* at, const unsigned char* end) : p_(at), end_(end) {}
  double value(ply_type t, const item_at& where) {
    const std::string_view w = word(where);
    bool finite = false;
    const bool hex = w.find_first_of("xX") != std::string_view::npos;
    const std::optional<double> v = hex ? std::nullopt : number_token(w, finite);
    if (!v) fail(where.text() + ": " + in_quotes(w) + " is not a number");
    // An integer property takes decimal digits (a sign allowed), within its type's range.
    const std::size_t digits = w.front() == '-' || w.front() == '+' ? 1 : 0;
    if (integral(t) && (w.size() == digits || w.find_first_not_of("0123456789", digits) != std::string_view::npos ||
                        *v < lowest(t) || *v > highest(t)))
      fail(where.text() + ": " + in_quotes(w) + " is not an integer of the property's type");
    return *v;
  }
  double count(ply_type t, const item_at& where) { return value(t, where); }
  void skip(ply_type t, std::uint64_t n, const item_at& where) {
    for (std::uint64_t i = 0; i < n; ++i) value(t, where);
  }

 private:
  static double lowest(ply_type t) {
    constexpr double v[] = {-128, 0, -32768, 0, -2147483648.0, 0};
    return v[static_cast<int>(t)];
  }
  static double highest(ply_type t) {
    constexpr double v[] = {127, 255, 32767, 65535, 2147483647.0, 4294967295.0};
    return v[static_cast<int>(t)];
  }
  std::string_view word(const item_at& where) {
    for (;;) {
      while (p_ < end_ && std::isspace(*p_)) ++p_;
      const unsigned char* start = p_;
      while (p_ < end_ && !std::isspace(*p_) && p_ - start < 64) ++p_;
      if (p_ == start) fail(*where.file + ": the file ends inside " + *where.element + " " + std::to_string(where.item));
      const std::string_view w(reinterpret_cast<const char*>(start), static_cast<std::size_t>(p_ - start));
      if (w != "comment") return w;
      while (p_ < end_ && *p_ != '\n') ++p_;
    }
  }
  const unsigned char* p_;
  const unsigned char* end_;
};

// One vertex as read_item makes it (then stored by attribute, mesh_parts::store).
struct vertex {
  vec3 p, n, color;
  tex_coord uv;
};

// A vertex property's value where its role puts it (a colour of an integer type scaled from 0..255).
void set_role(vertex& v, role r, float f, bool float_color) {
  const float col = float_color ? f : f / 255.0f;
  switch (r) {
    case role::x: v.p.x = f; break;
    case role::y: v.p.y = f; break;
    case role::z: v.p.z = f; break;
    case role::nx: v.n.x = f; break;
    case role::ny: v.n.y = f; break;
    case role::nz: v.n.z = f; break;
    case role::u: v.uv.u = f; break;
    case role::v: v.uv.v = f; break;
    case role::red: v.color.x = col; break;
    case role::green: v.color.y = col; break;
    case role::blue: v.color.z = col; break;
    case role::none: break;
  }
}

// The reading context: what every item needs to know.
struct ply_context {
  const ply_header& h;
  std::string file;
  const obj_options& opt;
  std::uint64_t vertices = 0;
  bool float_color = false;
};

// One item of element e. Vertex: its values into v (each a finite number). Face: the vertex index
// list into idx (n of them, each inside the vertex list). Any other property is read over.
template <class Cursor>
void read_item(Cursor& c, const ply_element& e, int which, const ply_context& cx, std::uint64_t k, vertex* v,
               std::uint32_t* idx, std::uint32_t& n) {
  const item_at where{&cx.file, &e.name, k};
  const bool is_vertex = which == cx.h.vertex, is_face = which == cx.h.face;
  if (v) *v = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0}};
  for (std::size_t pi = 0; pi < e.properties.size(); ++pi) {
    const ply_property& p = e.properties[pi];
    if (p.list) {
      const double count = c.count(p.count_type, where);
      if (!(count >= 0)) fail(where.text() + " has a list of " + str(count) + " items" + cx.opt.context);
      if (!is_face || static_cast<int>(pi) != cx.h.index_list) {
        c.skip(p.type, static_cast<std::uint64_t>(count), where);
        continue;
      }
      if (count > double(max_face_vertices))
        fail(where.text() + " has a list of " + str(count) + " vertices (at most " + std::to_string(max_face_vertices) + ")" + cx.opt.context);
      n = static_cast<std::uint32_t>(count);
      for (std::uint32_t j = 0; j < n; ++j) {
        const double x = c.value(p.type, where);
        if (!(x >= 0 && x < double(cx.vertices)))
          fail(where.text() + " refers to vertex " + str(x) + ", past the " + std::to_string(cx.vertices) + " vertices" + cx.opt.context);
        if (idx) idx[j] = static_cast<std::uint32_t>(x);
      }
      continue;
    }
    const double x = c.value(p.type, where);
    if (!is_vertex || !v) continue;
    if (!(std::isfinite(x) && std::isfinite(static_cast<float>(x))))
      fail(where.text() + ": " + p.name + " " + str(x) + " is not a finite number" + cx.opt.context);
    set_role(*v, p.meaning, static_cast<float>(x), cx.float_color);
  }
}

// The first error of a parallel pass in file order: blocks run at once, each stops at its first
// failing item; the lowest block's message is the one thrown.
class first_error {
 public:
  template <class F>
  void run(std::uint64_t block, F&& f) {
    if (block > lowest_.load()) return;  // an earlier block failed already
    try {
      f();
    } catch (const sieve::error& e) {
      std::lock_guard<std::mutex> lock(m_);
      if (block < lowest_.load()) lowest_ = block, message_ = e.what();
    }
  }
  void rethrow() const {
    if (lowest_.load() != none) throw sieve::error(message_);
  }

 private:
  static constexpr std::uint64_t none = std::numeric_limits<std::uint64_t>::max();
  std::atomic<std::uint64_t> lowest_{none};
  std::mutex m_;
  std::string message_;
};

// Where each block of block_items items of every element starts in a binary body, and where the
// body ends.
struct body_layout {
  std::vector<std::vector<std::size_t>> starts;  // per element: block b's first byte
  std::size_t end = 0;
};

// The length of every item when each of its lists has the length the first item's has, checked
// at every item in parallel; 0 when they differ (or the element is empty).
std::size_t uniform_stride(std::span<const unsigned char> body, std::size_t at, const ply_element& e, const ply_context& cx) {
  if (e.count == 0) return 0;
  const bool swap = (cx.h.format == ply_format::big) == (std::endian::native == std::endian::little);
  struct list_at {
    std::size_t offset;  // of its count, in the item
    ply_type type;
    double length;
  };
  std::vector<list_at> lists;
  binary_cursor c(body.data() + at, body.data() + body.size(), swap);
  const item_at first{&cx.file, &e.name, 0};
  for (const ply_property& p : e.properties) {
    double n = 1;
    if (p.list) {
      const auto offset = static_cast<std::size_t>(c.at() - (body.data() + at));
      n = c.count(p.count_type, first);
      if (!(n >= 0)) return 0;
      lists.push_back({offset, p.count_type, n});
    }
    c.skip(p.type, static_cast<std::uint64_t>(n), first);
  }
  const auto stride = static_cast<std::size_t>(c.at() - (body.data() + at));
  if (e.count > (body.size() - at) / stride) return 0;
  std::atomic<bool> same{true};
  tbb::parallel_for(tbb::blocked_range<std::uint64_t>(1, e.count, block_items), [&](const auto& r) {
    for (std::uint64_t k = r.begin(); k != r.end() && same.load(std::memory_order_relaxed); ++k)
      for (const list_at& l : lists) {
        binary_cursor item(body.data() + at + k * stride + l.offset, body.data() + body.size(), swap);
        if (item.count(l.type, {&cx.file, &e.name, k}) != l.length) same = false;
      }
  });
  return same.load() ? stride : 0;
}

body_layout locate(std::span<const unsigned char> body, const ply_context& cx) {
  const bool swap = (cx.h.format == ply_format::big) == (std::endian::native == std::endian::little);
  body_layout out;
  std::size_t at = 0;
  for (std::size_t ei = 0; ei < cx.h.elements.size(); ++ei) {
    const ply_element& e = cx.h.elements[ei];
    std::vector<std::size_t>& starts = out.starts.emplace_back((e.count + block_items - 1) / block_items);
    std::size_t stride = e.has_list ? uniform_stride(body, at, e, cx) : e.fixed;
    if (e.count > 0 && stride > 0) {
      if (e.count > (body.size() - at) / stride)
        fail(cx.file + ": the file ends inside " + e.name + " " + std::to_string((body.size() - at) / stride));
      for (std::size_t b = 0; b < starts.size(); ++b) starts[b] = at + b * block_items * stride;
      at += e.count * stride;
      continue;
    }
    // Lists of differing lengths: one pass over the items' lengths.
    binary_cursor c(body.data() + at, body.data() + body.size(), swap);
    for (std::uint64_t k = 0; k < e.count; ++k) {
      if (k % block_items == 0) starts[k / block_items] = static_cast<std::size_t>(c.at() - body.data());
      const item_at where{&cx.file, &e.name, k};
      for (const ply_property& p : e.properties) {
        const double n = p.list ? c.count(p.count_type, where) : 1;
        if (!(n >= 0)) fail(where.text() + " has a list of " + str(n) + " items" + cx.opt.context);
        c.skip(p.type, static_cast<std::uint64_t>(n), where);
      }
    }
    at = static_cast<std::size_t>(c.at() - body.data());
  }
  out.end = at;
  return out;
}

// The vertices, one array an attribute (the positions apart: the faces read them at random).
struct mesh_parts {
  fresh_ptr<vec3> pos, nrm, col;
  fresh_ptr<tex_coord> uv;
  std::vector<std::uint32_t> color_index;  // 3 a triangle: the vertices whose colours it takes
  bool normals = false, uvs = false, colors = false;
  void store(std::uint64_t k, const vertex& v) {
    pos[k] = v.p;
    if (normals) nrm[k] = v.n;
    if (uvs) uv[k] = v.uv;
    if (colors) col[k] = v.color;
  }
};

// The triangle t of a face whose vertices are a, b, c.
void put_triangle(std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint64_t t, mesh_parts& m, obj_mesh& out) {
  out.triangles[t] = {m.pos[a], m.pos[b], m.pos[c]};
  if (m.normals) out.normals[t] = {m.nrm[a], m.nrm[b], m.nrm[c]};
  if (m.uvs) out.uvs[t] = {m.uv[a], m.uv[b], m.uv[c]};
  if (m.colors) m.color_index[3 * t] = a, m.color_index[3 * t + 1] = b, m.color_index[3 * t + 2] = c;
}

// The triangles of one face (a fan over its vertex index list) at out[t...].
void put_face(const std::uint32_t* idx, std::uint32_t n, std::uint64_t t, mesh_parts& m, obj_mesh& out) {
  for (std::uint32_t j = 1; j + 1 < n; ++j, ++t) put_triangle(idx[0], idx[j], idx[j + 1], t, m, out);
}

std::uint64_t triangles_of(std::uint32_t n) { return n >= 3 ? n - 2 : 0; }

// Sizes the output for `triangles`, after the scene's limits have admitted them (the arrays faulted
// in by every thread, exec/fresh_memory.hpp).
void make_room(std::uint64_t triangles, const ply_context& cx, mesh_parts& m, obj_mesh& out) {
  if (triangles == 0) fail(cx.file + ": no triangles: the PLY file has no faces of 3 or more vertices" + cx.opt.context);
  if (triangles > cx.opt.max_triangles)
    fail(cx.file + ": more than " + std::to_string(cx.opt.max_triangles) + " triangles " + cx.opt.limit_text + cx.opt.context);
  if (cx.opt.admit) cx.opt.admit(triangles);
  fresh_resize(out.triangles, triangles);
  if (m.normals) fresh_resize(out.normals, triangles);
  if (m.uvs) fresh_resize(out.uvs, triangles);
  if (m.colors) fresh_resize(m.color_index, 3 * triangles);
}

// Element ei's items by blocks of block_items on every thread: f(cursor, element, first item, end
// item, block); the first failing item's error in the file is thrown.
template <class F>
void for_blocks(std::span<const unsigned char> body, const body_layout& lay, int ei, const ply_context& cx, F&& f) {
  const bool swap = (cx.h.format == ply_format::big) == (std::endian::native == std::endian::little);
  const ply_element& e = cx.h.elements[static_cast<std::size_t>(ei)];
  const std::vector<std::size_t>& starts = lay.starts[static_cast<std::size_t>(ei)];
  first_error err;
  tbb::parallel_for(std::size_t{0}, starts.size(), [&](std::size_t b) {
    err.run(b, [&] {
      binary_cursor c(body.data() + starts[b], body.data() + body.size(), swap);
      f(c, e, b * block_items, std::min<std::uint64_t>(e.count, (b + 1) * block_items), b);
    });
  });
  err.rethrow();
}

// Each face block's first triangle (the faces read and checked, none made); the last entry is the
// total.
std::vector<std::uint64_t> count_triangles(std::span<const unsigned char> body, const body_layout& lay, const ply_context& cx) {
  const std::size_t blocks = cx.h.face >= 0 ? lay.starts[static_cast<std::size_t>(cx.h.face)].size() : 0;
  std::vector<std::uint64_t> first(blocks + 1, 0);
  if (cx.h.face < 0) return first;
  for_blocks(body, lay, cx.h.face, cx, [&](binary_cursor& c, const ply_element& e, std::uint64_t k0, std::uint64_t k1, std::size_t b) {
    std::uint64_t sum = 0;
    for (std::uint64_t k = k0; k < k1; ++k) {
      std::uint32_t n = 0;
      read_item(c, e, cx.h.face, cx, k, nullptr, nullptr, n);
      sum += triangles_of(n);
    }
    first[b + 1] = sum;
  });
  for (std::size_t b = 0; b < blocks; ++b) first[b + 1] += first[b];
  return first;
}

// A binary body by every thread: located, triangles counted and admitted, vertices and faces parsed.
void read_binary(std::span<const unsigned char> body, const ply_context& cx, mesh_parts& m, obj_mesh& out) {
  const body_layout lay = locate(body, cx);
  const std::vector<std::uint64_t> first = count_triangles(body, lay, cx);
  make_room(first.back(), cx, m, out);  // no face element: no triangles, an error
  if (cx.h.vertex >= 0)
    for_blocks(body, lay, cx.h.vertex, cx, [&](binary_cursor& c, const ply_element& e, std::uint64_t k0, std::uint64_t k1, std::size_t) {
      std::uint32_t n = 0;
      for (std::uint64_t k = k0; k < k1; ++k) {
        vertex v;
        read_item(c, e, cx.h.vertex, cx, k, &v, nullptr, n);
        m.store(k, v);
      }
    });
  for_blocks(body, lay, cx.h.face, cx, [&](binary_cursor& c, const ply_element& e, std::uint64_t k0, std::uint64_t k1, std::size_t b) {
    std::uint32_t face[max_face_vertices];
    std::uint64_t t = first[b];
    for (std::uint64_t k = k0; k < k1; ++k) {
      std::uint32_t n = 0;
      read_item(c, e, cx.h.face, cx, k, nullptr, face, n);
      put_face(face, n, t, m, out);
      t += triangles_of(n);
    }
  });
}

// The common binary layouts at memory speed: a body in the machine's byte order whose elements are
// all of fixed size, but the face element, whose one property is its vertex index list of 32-bit
// integers, every list of 3 (the counts' bytes checked in bulk before anything is made). Vertex
// properties are numbers of 4 bytes or less (float or an integer type; no double). Every check of
// the general path is made, but none is reported here: on the first thing that is not as expected
// (a face of another length, an index past the vertices, a value that is not finite, a limit) this
// gives up and the general path reads the body again and reports what it finds in its words.
struct fast_layout {
  struct field {
    role meaning;
    std::uint32_t offset;
    ply_type type;
  };
  std::vector<field> fields;       // the vertex properties (with a role or of type float)
  std::size_t vertex_at = 0, vertex_stride = 0;
  std::size_t face_at = 0, count_bytes = 0;  // the face's stride: count_bytes + 12
};

std::optional<fast_layout> fast_layout_of(const ply_header& h, std::size_t body_bytes) {
  if (h.format != ply_format::little || std::endian::native != std::endian::little) return std::nullopt;
  if (h.vertex < 0 || h.face < 0 || h.index_list != 0) return std::nullopt;
  const ply_element& f = h.elements[static_cast<std::size_t>(h.face)];
  const ply_property& list = f.properties[0];
  if (f.properties.size() != 1 || (list.type != ply_type::i32 && list.type != ply_type::u32)) return std::nullopt;
  // (an int index below 0 is caught as an unsigned one past the vertices, with fewer than 2^31 of them)
  if (h.elements[static_cast<std::size_t>(h.vertex)].count > 0x7fffffffu) return std::nullopt;
  fast_layout lay;
  lay.count_bytes = size_of(list.count_type);
  std::uint64_t at = 0;
  for (std::size_t ei = 0; ei < h.elements.size(); ++ei) {
    const ply_element& e = h.elements[ei];
    const bool face = static_cast<int>(ei) == h.face;
    if (!face && e.has_list) return std::nullopt;
    const std::uint64_t stride = face ? lay.count_bytes + 12 : e.fixed;
    if (static_cast<int>(ei) == h.vertex) lay.vertex_at = at, lay.vertex_stride = stride;
    if (face) lay.face_at = at;
    if (stride != 0 && e.count > (body_bytes - at) / stride) return std::nullopt;  // truncated: the general path says where
    at += e.count * stride;
  }
  std::uint32_t offset = 0;
  for (const ply_property& p : h.elements[static_cast<std::size_t>(h.vertex)].properties) {
    if (p.type == ply_type::f64) return std::nullopt;
    if (p.meaning != role::none || p.type == ply_type::f32) lay.fields.push_back({p.meaning, offset, p.type});
    offset += static_cast<std::uint32_t>(size_of(p.type));
  }
  return lay;
}

// Every thread over [0, n) in blocks; f(first, end) returns false to give up. True when none did.
template <class F>
bool fast_blocks(std::uint64_t n, F&& f) {
  std::atomic<bool> ok{true};
  tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, n, std::uint64_t{1} << 14), [&](const auto& r) {
    if (ok.load(std::memory_order_relaxed) && !f(r.begin(), r.end())) ok = false;
  });
  return ok.load();
}

bool fast_counts(const unsigned char* faces, std::uint64_t n, std::size_t count_bytes) {
  const std::size_t stride = count_bytes + 12;
  const unsigned char three[4] = {3, 0, 0, 0};
  return fast_blocks(n, [&](std::uint64_t k0, std::uint64_t k1) {
    bool same = true;
    for (std::uint64_t k = k0; k < k1; ++k) same &= std::memcmp(faces + k * stride, three, count_bytes) == 0;
    return same;
  });
}

bool fast_vertices(const unsigned char* verts, const fast_layout& lay, const ply_context& cx, mesh_parts& m) {
  return fast_blocks(cx.vertices, [&](std::uint64_t k0, std::uint64_t k1) {
    bool finite = true;
    for (std::uint64_t k = k0; k < k1; ++k) {
      const unsigned char* item = verts + k * lay.vertex_stride;
      vertex v;
      for (const fast_layout::field& f : lay.fields) {
        // (as the general path makes it: static_cast<float>(double(value)), the same for these types)
        const float x = value_as<float>(item + f.offset, f.type);
        finite &= std::isfinite(x);
        set_role(v, f.meaning, x, cx.float_color);
      }
      m.store(k, v);
    }
    return finite;
  });
}

bool fast_faces(const unsigned char* faces, std::uint64_t n, const fast_layout& lay, const ply_context& cx, mesh_parts& m,
                obj_mesh& out) {
  const std::size_t stride = lay.count_bytes + 12;
  const auto vertices = static_cast<std::uint32_t>(std::min<std::uint64_t>(cx.vertices, 0xffffffffu));
  return fast_blocks(n, [&](std::uint64_t k0, std::uint64_t k1) {
    bool inside = true;
    for (std::uint64_t k = k0; k < k1; ++k) {
      std::uint32_t i[3];
      std::memcpy(i, faces + k * stride + lay.count_bytes, sizeof i);
      const bool in = i[0] < vertices && i[1] < vertices && i[2] < vertices;
      inside &= in;
      if (in) put_triangle(i[0], i[1], i[2], k, m, out);
    }
    return inside;
  });
}

// The fast path over a body; false (anything made discarded) where the general path must read it.
bool read_fast(std::span<const unsigned char> body, const ply_context& cx, mesh_parts& m, obj_mesh& out) {
  const std::optional<fast_layout> lay = fast_layout_of(cx.h, body.size());
  if (!lay) return false;
  const std::uint64_t faces = cx.h.elements[static_cast<std::size_t>(cx.h.face)].count;
  const unsigned char* face_bytes = body.data() + lay->face_at;
  if (!fast_counts(face_bytes, faces, lay->count_bytes)) return false;
  try {
    make_room(faces, cx, m, out);
  } catch (const sieve::error&) {
    return false;  // a limit: the general path reports it, or an error in a face before it
  }
  if (fast_vertices(body.data() + lay->vertex_at, *lay, cx, m) && fast_faces(face_bytes, faces, *lay, cx, m, out)) return true;
  out.triangles.clear(), out.normals.clear(), out.uvs.clear(), m.color_index.clear();
  return false;
}

// An ASCII body by one thread: once to count the triangles, once to make them.
void read_ascii(std::span<const unsigned char> body, const ply_context& cx, mesh_parts& m, obj_mesh& out) {
  std::uint32_t idx[max_face_vertices];
  for (const bool make : {false, true}) {
    ascii_cursor c(body.data(), body.data() + body.size());
    std::uint64_t t = 0;
    for (std::size_t ei = 0; ei < cx.h.elements.size(); ++ei) {
      const ply_element& e = cx.h.elements[ei];
      const int which = static_cast<int>(ei);
      for (std::uint64_t k = 0; k < e.count; ++k) {
        std::uint32_t n = 0;
        vertex v;
        read_item(c, e, which, cx, k, make && which == cx.h.vertex ? &v : nullptr, idx, n);
        if (make && which == cx.h.vertex) m.store(k, v);
        if (which != cx.h.face) continue;
        if (make) put_face(idx, n, t, m, out);
        t += triangles_of(n);
      }
    }
    if (!make) make_room(t, cx, m, out);
  }
}

// Vertex colours as albedo: each triangle's mean colour in a texel of its own, read at its centre.
void colour_texture(const mesh_parts& m, const ply_context& cx, registry& reg, obj_mesh& out, material& mat) {
  const std::size_t n = out.triangles.size();
  const auto side = static_cast<std::uint32_t>(std::ceil(std::sqrt(double(n))));
  image_rgb img;
  img.width = img.height = side;
  img.pixels.assign(std::size_t{side} * side, vec3{0, 0, 0});
  out.uvs.assign(n, triangle_uvs{});
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1 << 14), [&](const auto& r) {
    for (std::size_t t = r.begin(); t != r.end(); ++t) {
      vec3 c{0, 0, 0};
      for (int k = 0; k < 3; ++k) c = c + m.col[m.color_index[3 * t + k]];
      c = c / 3.0f;
      img.pixels[t] = cx.float_color ? c : vec3{srgb_to_linear(c.x), srgb_to_linear(c.y), srgb_to_linear(c.z)};
      const tex_coord uv{(float(t % side) + 0.5f) / side, 1 - (float(t / side) + 0.5f) / side};
      out.uvs[t] = {uv, uv, uv};
    }
  });
  mat.albedo_texture = reg.texture_index(cx.file + " (vertex colours)", img, wrap_mode::clamp, cx.file);
}

// What the vertex element holds, and its arrays.
mesh_parts parts_of(const ply_header& h, ply_context& cx) {
  mesh_parts m;
  if (h.vertex < 0) return m;
  const ply_element& v = h.elements[static_cast<std::size_t>(h.vertex)];
  cx.vertices = v.count;
  for (const ply_property& p : v.properties) {
    m.normals |= p.meaning == role::nx;
    m.uvs |= p.meaning == role::u;
    m.colors |= p.meaning == role::red;
    cx.float_color |= p.meaning == role::red && !integral(p.type);
  }
  m.pos = fresh_array<vec3>(v.count);
  if (m.normals) m.nrm = fresh_array<vec3>(v.count);
  if (m.uvs) m.uv = fresh_array<tex_coord>(v.count);
  if (m.colors) m.col = fresh_array<vec3>(v.count);
  return m;
}

}  // namespace

obj_mesh load_ply(const fs::path& path, const obj_options& opt, registry& reg) {
  const std::string file = path.string();
  if (!file_exists(path)) fail(file + ": PLY file not found" + opt.context);
  input_file in(path, "PLY file");
  // The header alone first: nothing of the body is read before its element table is checked.
  const input_file::block head = in.read_parallel(0, max_header_bytes);
  ply_header h = parse_header(head.bytes(), head.size == in.size(), file);
  check_elements(h, in.size() - h.body, file, opt.context);
  const input_file::block body = in.read_parallel(h.body, std::max<std::uint64_t>(body_bound(h, in.size() - h.body), 1));
  ply_context cx{h, file, opt};
  mesh_parts m = parts_of(h, cx);
  obj_mesh out;
  out.files.push_back(path);
  if (h.format == ply_format::ascii) read_ascii(body.bytes(), cx, m, out);
  else if (!read_fast(body.bytes(), cx, m, out)) read_binary(body.bytes(), cx, m, out);
  material mat;
  mat.name = path.stem().string();
  if (m.colors) colour_texture(m, cx, reg, out, mat);
  const std::uint32_t id = opt.use_materials ? reg.add(mat, file) : 0;
  fresh_resize(out.material_of, out.triangles.size());
  if (id != 0)
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, out.material_of.size(), 1 << 16), [&](const auto& r) {
      std::fill(out.material_of.begin() + static_cast<std::ptrdiff_t>(r.begin()), out.material_of.begin() + static_cast<std::ptrdiff_t>(r.end()), id);
    });
  return out;
}

}  // namespace sieve::render::detail
