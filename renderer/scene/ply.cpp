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
#include "ply_cursor.hpp"
#include "ply_header.hpp"
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

constexpr std::uint64_t block_items = 1 << 12;  // items a block of a parallel pass

using namespace ply;

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
