// The common OBJ subset in parallel chunks (obj_fast.hpp). The file is cut into chunks at line ends;
// three passes run over the chunks on every thread: the first counts each chunk's vertices, texture
// coordinates, normals, lines and triangles (and keeps its usemtl and mtllib lines), an exclusive
// prefix over the chunks gives each its first index in every list, the second parses the vertex
// lists into their arrays, the third parses the faces, resolves their indices (relative ones against
// the counts at their line, as tinyobjloader does) and writes the triangles into their slice.
// Compiled without multiply-add contraction: the arithmetic is tinyobjloader's, step by step.
#include "obj_fast.hpp"

#include "../exec/fresh_memory.hpp"
#include "../exec/stop.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <array>
#include <atomic>
#include <limits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace sieve::render::detail {

bool obj_fast_enabled() {
  const char* v = std::getenv("SIEVE_OBJ_READER");
  return v == nullptr || std::string_view(v) != "general";
}

std::size_t obj_chunk_bytes() {
  const char* v = std::getenv("SIEVE_OBJ_CHUNK_BYTES");
  const unsigned long long n = v ? std::strtoull(v, nullptr, 10) : 0;
  return n > 0 ? static_cast<std::size_t>(n) : std::size_t{1} << 20;
}

namespace {
std::atomic<std::uint64_t> fast_reads{0};
}  // namespace

std::uint64_t obj_fast_reads() { return fast_reads.load(); }
void count_obj_fast_read() { ++fast_reads; }

namespace {

bool blank(char c) { return c == ' ' || c == '\t'; }
bool digit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

// Calls f(first, end) for each line of [b, e) (end before its LF or CR LF); false as soon as f is.
// `cr`: the text holds a CR somewhere, so each line is checked for one before its end (a CR alone
// ends a line for the general reader: not in the subset).
template <class F>
bool each_line(const char* b, const char* e, bool cr, F&& f) {
  while (b < e) {
    const char* nl = static_cast<const char*>(std::memchr(b, '\n', static_cast<std::size_t>(e - b)));
    const char* end = nl ? nl : e;
    if (end > b && end[-1] == '\r') --end;
    if (cr && std::memchr(b, '\r', static_cast<std::size_t>(end - b)) != nullptr) return false;
    if (static_cast<std::size_t>(end - b) > max_line_bytes || !f(b, end)) return false;
    b = nl ? nl + 1 : e;
  }
  return true;
}

// What a line (from its first non-blank) is, told apart as tinyobjloader tells them; `other` is
// outside the subset (points, lines, tags, skin weights, a group without a name).
enum class kind { skip, v, vt, vn, f, usemtl, mtllib, other };

kind kind_of(const char* p, const char* e) {
  const auto n = static_cast<std::size_t>(e - p);
  auto at = [&](std::size_t i) { return i < n ? p[i] : '\0'; };
  if (n == 0) return kind::skip;
  // "v", "vt", "vn" or "f" alone: the prescan refuses the line, tinyobjloader passes over it
  if ((n == 1 && (p[0] == 'v' || p[0] == 'f')) || (n == 2 && p[0] == 'v' && (p[1] == 't' || p[1] == 'n')))
    return kind::other;
  switch (p[0]) {
    case 'v':
      if (blank(at(1))) return kind::v;
      if (!blank(at(2))) return kind::skip;
      return at(1) == 'n' ? kind::vn : at(1) == 't' ? kind::vt : at(1) == 'w' ? kind::other : kind::skip;
    case 'f': return blank(at(1)) ? kind::f : kind::skip;
    case 'l': case 'p': case 't': return blank(at(1)) ? kind::other : kind::skip;
    case 'u': return n >= 6 && std::memcmp(p, "usemtl", 6) == 0 ? kind::usemtl : kind::skip;
    case 'm': return n > 6 && std::memcmp(p, "mtllib", 6) == 0 && blank(p[6]) ? kind::mtllib : kind::skip;
    case 'g': {
      if (!blank(at(1))) return kind::skip;
      const char* q = p + 1;
      while (q < e && blank(*q)) ++q;
      return q == e || *q == '#' ? kind::other : kind::skip;  // "g" alone: tinyobjloader warns
    }
    default: return kind::skip;  // comments, o, s and what both readers pass over
  }
}

// The next number of a vertex line as tinyobjloader's tryParseDouble computes it (its arithmetic in
// its order), in the forms strtod reads whole: [sign] (digits [. [digits]] | . digits) [e [sign]
// digits]. 1: read; 0: no more numbers (the line or its comment ends); -1: anything else, or a value
// that is not finite as a float (the general reader decides about it).
int number(const char*& p, const char* e, double& out) {
  while (p < e && blank(*p)) ++p;
  if (p == e || *p == '#') return 0;
  bool negative = false;
  if (*p == '+' || *p == '-') negative = *p++ == '-';
  double mantissa = 0.0;
  int digits = 0, exponent = 0;
  for (; p < e && digit(*p); ++p, ++digits) {
    mantissa *= 10;
    mantissa += static_cast<int>(*p - '0');
  }
  if (p < e && *p == '.') {
    static constexpr double pow_lut[] = {1.0, 0.1, 0.01, 0.001, 0.0001, 0.00001, 0.000001, 0.0000001};
    int read = 1;
    for (++p; p < e && digit(*p); ++p, ++read, ++digits)
      mantissa += static_cast<int>(*p - '0') * (read < 8 ? pow_lut[read] : std::pow(10.0, -read));
  }
  if (digits == 0) return -1;
  if (p < e && (*p == 'e' || *p == 'E')) {
    bool minus = false;
    if (++p < e && (*p == '+' || *p == '-')) minus = *p++ == '-';
    int n = 0;
    for (; p < e && digit(*p); ++p)
      if (++n > 4) return -1;
      else exponent = exponent * 10 + (*p - '0');
    if (n == 0) return -1;
    if (minus) exponent = -exponent;
  }
  if (p < e && !blank(*p)) return -1;
  out = (negative ? -1 : 1) * (exponent ? std::ldexp(mantissa * std::pow(5.0, exponent), exponent) : mantissa);
  return std::isfinite(out) && std::fabs(out) <= 1e38 ? 1 : -1;  // (strtod's value is within a few ulps)
}

// The numbers of a v, vt or vn line after its keyword: at least `least`, the first `most` checked
// (the prescan checks no more), the rest passed over as both readers do. False: give up.
bool numbers(const char* p, const char* e, std::size_t least, std::size_t most, double* out) {
  std::size_t n = 0;
  for (int r; n < most && (r = number(p, e, out[n])) != 0; ++n)
    if (r < 0) return false;
  return n >= least;
}

// A face index as written: [-] 1 to 9 digits, not 0 (atoi's and strtoll's value alike).
bool index_of(const char*& p, const char* e, int& out) {
  const bool negative = p < e && *p == '-';
  if (negative) ++p;
  int v = 0, n = 0;
  for (; p < e && digit(*p); ++p)
    if (++n > 9) return false;
    else v = v * 10 + (*p - '0');
  out = negative ? -v : v;
  return v != 0;
}

struct corner {
  int v = 0, t = 0, n = 0;  // as written; 0: none given
};

using face_corners = corner[max_face_vertices];

// A face's corners after its `f`: 3 to max_face_vertices in the forms v, v/t, v//n, v/t/n; 0 for
// anything else.
int corners_of(const char* p, const char* e, face_corners& c) {
  int k = 0;
  for (;;) {
    while (p < e && blank(*p)) ++p;
    if (p == e || *p == '#') break;
    if (k == static_cast<int>(max_face_vertices)) return 0;
    corner& x = c[k++] = corner{};
    if (!index_of(p, e, x.v)) return 0;
    if (p < e && *p == '/') {
      if (++p < e && *p == '/') {
        if (!index_of(++p, e, x.n)) return 0;
      } else if (!index_of(p, e, x.t) || (p < e && *p == '/' && !index_of(++p, e, x.n))) {
        return 0;
      }
    }
    if (p < e && !blank(*p)) return 0;
  }
  return k >= 3 ? k : 0;
}

// The first word of a usemtl line (tinyobjloader reads no more), or empty: give up.
std::string usemtl_name(const char* p, const char* e) {
  if (e - p < 7 || !blank(p[6])) return {};
  p += 6;
  while (p < e && blank(*p)) ++p;
  const char* b = p;
  for (; p < e && !blank(*p); ++p)
    if (static_cast<unsigned char>(*p) < 0x21) return {};
  return b == p || *b == '#' ? std::string{} : std::string(b, p);
}

// mtllib's files, in the one form both readers split alike: single spaces between names without
// blanks, backslashes or control bytes, nothing after the last. Empty: give up.
std::vector<std::string> mtllib_names(const char* p, const char* e) {
  std::vector<std::string> names;
  for (p += 7; p <= e; ++p) {
    const char* b = p;
    while (p < e && *p != ' ') {
      if (static_cast<unsigned char>(*p) < 0x21 || *p == '\\') return {};
      ++p;
    }
    if (p == b || *b == '#') return {};
    names.emplace_back(b, p);
  }
  return names;
}

// One chunk of the text: its counts (pass 1), then its first index in every list (the prefix).
struct chunk {
  const char* begin = nullptr;
  const char* end = nullptr;
  std::uint64_t lines = 0, v = 0, vt = 0, vn = 0, triangles = 0;
  bool normals = false, uvs = false;    // a corner with a normal, with a texture coordinate
  bool smooth = false, mapped = false;  // a triangle whose three corners have them (pass 3)
  std::vector<obj_directive> directives;  // line and triangle counted in the chunk
  std::uint64_t line0 = 0, v0 = 0, vt0 = 0, vn0 = 0, t0 = 0;
  std::size_t d0 = 0, d1 = 0;  // its directives among the file's
  std::uint64_t made = 0;      // its triangles made (pass 3): fewer where an ear clipping fell short
};

std::vector<chunk> chunks_of(const char* b, const char* e, std::size_t bytes) {
  std::vector<chunk> out;
  while (b < e) {
    const char* cut = static_cast<std::size_t>(e - b) > bytes ? b + bytes : e;
    if (cut < e) {
      const char* nl = static_cast<const char*>(std::memchr(cut - 1, '\n', static_cast<std::size_t>(e - cut + 1)));
      cut = nl ? nl + 1 : e;
    }
    out.emplace_back();
    out.back().begin = b, out.back().end = cut;
    b = cut;
  }
  return out;
}

// Pass 1 over one chunk; false: outside the subset.
bool count(chunk& c) {
  const bool cr = std::memchr(c.begin, '\r', static_cast<std::size_t>(c.end - c.begin)) != nullptr;
  return each_line(c.begin, c.end, cr, [&](const char* p, const char* e) {
    ++c.lines;
    while (p < e && blank(*p)) ++p;
    switch (kind_of(p, e)) {
      case kind::skip: return true;
      case kind::v: return ++c.v, true;
      case kind::vt: return ++c.vt, true;
      case kind::vn: return ++c.vn, true;
      case kind::f: {
        face_corners k;
        const int n = corners_of(p + 2, e, k);
        for (int i = 0; i < n; ++i) c.normals |= k[i].n != 0, c.uvs |= k[i].t != 0;
        c.triangles += n > 2 ? n - 2 : 0;
        return n != 0;
      }
      case kind::usemtl: {
        std::string name = usemtl_name(p, e);
        if (name.empty()) return false;
        c.directives.push_back({false, {std::move(name)}, c.lines, c.triangles});
        return true;
      }
      case kind::mtllib: {
        std::vector<std::string> names = mtllib_names(p, e);
        if (names.empty()) return false;
        c.directives.push_back({true, std::move(names), c.lines, c.triangles});
        return true;
      }
      case kind::other: return false;
    }
    return false;
  });
}

// The output's arrays: vertex lists by attribute, in float as tinyobjloader keeps them (its real_t).
struct lists {
  fresh_ptr<vec3> pos;
  fresh_ptr<vec3> nrm;
  fresh_ptr<tex_coord> uv;
};

// Pass 2 over one chunk: its vertex lists into their slices (texture coordinates and normals checked
// and passed over where no face uses any).
bool read_lists(const chunk& c, lists& l) {
  std::uint64_t v = c.v0, t = c.vt0, n = c.vn0;
  return each_line(c.begin, c.end, false, [&](const char* p, const char* e) {
    while (p < e && blank(*p)) ++p;
    double x[3] = {0, 0, 0};
    switch (kind_of(p, e)) {
      case kind::v:
        if (!numbers(p + 1, e, 3, 3, x)) return false;
        l.pos[v++] = {static_cast<float>(x[0]), static_cast<float>(x[1]), static_cast<float>(x[2])};
        return true;
      case kind::vt:
        if (!numbers(p + 2, e, 1, 3, x)) return false;
        if (l.uv) l.uv[t] = {static_cast<float>(x[0]), static_cast<float>(x[1])};
        ++t;
        return true;
      case kind::vn:
        if (!numbers(p + 2, e, 3, 3, x)) return false;
        if (l.nrm) l.nrm[n] = {static_cast<float>(x[0]), static_cast<float>(x[1]), static_cast<float>(x[2])};
        ++n;
        return true;
      default: return true;
    }
  });
}

// A corner's index into a list of `count` so far (tinyobjloader's fixIndex), -1 where none is given;
// false where it is past the list or before its start.
bool resolve(int written, std::uint64_t count, std::int64_t& out) {
  out = written > 0 ? written - 1 : written < 0 ? static_cast<std::int64_t>(count) + written : -1;
  return written == 0 || (out >= 0 && static_cast<std::uint64_t>(out) < count);
}

// One face's corners, resolved.
struct face {
  std::int64_t v[max_face_vertices], t[max_face_vertices], n[max_face_vertices];
};

// Triangle `tri` of corners a, b, c, as the general reader stores it.
void put(const face& f, int a, int b, int c, std::uint64_t tri, const lists& l, chunk& ch, obj_mesh& out) {
  out.triangles[tri] = {l.pos[f.v[a]], l.pos[f.v[b]], l.pos[f.v[c]]};
  if (!out.normals.empty()) {
    const bool smooth = f.n[a] >= 0 && f.n[b] >= 0 && f.n[c] >= 0;
    out.normals[tri] = smooth ? triangle_normals{l.nrm[f.n[a]], l.nrm[f.n[b]], l.nrm[f.n[c]]} : triangle_normals{};
    ch.smooth |= smooth;
  }
  if (!out.uvs.empty()) {
    const bool mapped = f.t[a] >= 0 && f.t[b] >= 0 && f.t[c] >= 0;
    out.uvs[tri] = mapped ? triangle_uvs{l.uv[f.t[a]], l.uv[f.t[b]], l.uv[f.t[c]]} : triangle_uvs{};
    ch.mapped |= mapped;
  }
}

// A quad split as tinyobjloader splits it: along the shorter diagonal (in float, its real_t), 1-3
// on a tie.
void put_quad(const face& f, std::uint64_t tri, const lists& l, chunk& ch, obj_mesh& out) {
  const vec3 &p0 = l.pos[f.v[0]], &p1 = l.pos[f.v[1]], &p2 = l.pos[f.v[2]], &p3 = l.pos[f.v[3]];
  const float e02x = p2.x - p0.x, e02y = p2.y - p0.y, e02z = p2.z - p0.z;
  const float e13x = p3.x - p1.x, e13y = p3.y - p1.y, e13z = p3.z - p1.z;
  const float sqr02 = e02x * e02x + e02y * e02y + e02z * e02z;
  const float sqr13 = e13x * e13x + e13y * e13y + e13z * e13z;
  if (sqr02 < sqr13) {
    put(f, 0, 1, 2, tri, l, ch, out), put(f, 0, 2, 3, tri + 1, l, ch, out);
  } else {
    put(f, 0, 1, 3, tri, l, ch, out), put(f, 1, 2, 3, tri + 1, l, ch, out);
  }
}

// tinyobjloader's pnpoly: whether (tx, ty) is inside the polygon (vx, vy) of n corners.
bool inside(int n, const float* vx, const float* vy, float tx, float ty) {
  bool c = false;
  for (int i = 0, j = n - 1; i < n; j = i++)
    if (((vy[i] > ty) != (vy[j] > ty)) && (tx < (vx[j] - vx[i]) * (ty - vy[i]) / (vy[j] - vy[i]) + vx[i])) c = !c;
  return c;
}

// The two axes tinyobjloader projects a polygon on: those of the first corner's plane that is not
// degenerate (its normal's largest component left out).
std::array<int, 2> polygon_axes(const face& f, int n, const vec3* pos) {
  std::array<int, 2> axes = {1, 2};
  for (int k = 0; k < n; ++k) {
    const vec3 &v0 = pos[f.v[k % n]], &v1 = pos[f.v[(k + 1) % n]], &v2 = pos[f.v[(k + 2) % n]];
    const float e0x = v1.x - v0.x, e0y = v1.y - v0.y, e0z = v1.z - v0.z;
    const float e1x = v2.x - v1.x, e1y = v2.y - v1.y, e1z = v2.z - v1.z;
    const float cx = std::fabs(e0y * e1z - e0z * e1y), cy = std::fabs(e0z * e1x - e0x * e1z), cz = std::fabs(e0x * e1y - e0y * e1x);
    const float eps = std::numeric_limits<float>::epsilon();
    if (cx > eps || cy > eps || cz > eps) {
      if (!(cx > cy && cx > cz)) {
        axes[0] = 0;
        if (cz > cx && cz > cy) axes[1] = 1;
      }
      break;
    }
  }
  return axes;
}

// A polygon of 5 or more corners triangulated as tinyobjloader's built-in ear clipping does it (its
// steps, in float): the triangles as corner triples in `ears`, fewer than n - 2 where it leaves
// corners unclipped (as it does: its `area` is a cross product of positions, not of edges).
void clip_ears(const face& f, int n, const vec3* pos, std::vector<std::array<int, 3>>& ears) {
  const std::array<int, 2> axes = polygon_axes(f, n, pos);
  auto coord = [&](int corner, int axis) { return pos[f.v[corner]][axes[static_cast<std::size_t>(axis)]]; };
  int left[max_face_vertices];
  for (int k = 0; k < n; ++k) left[k] = k;
  ears.clear();
  std::size_t size = static_cast<std::size_t>(n), guess = 0, tries = size, previous = size;
  while (size > 3 && tries > 0) {
    const std::size_t m = size;
    if (guess >= m) guess -= m;
    if (previous != m) previous = m, tries = m;
    else --tries;
    int ind[3];
    float vx[3], vy[3];
    for (std::size_t k = 0; k < 3; ++k) {
      ind[k] = left[(guess + k) % m];
      vx[k] = coord(ind[k], 0), vy[k] = coord(ind[k], 1);
    }
    const float e0x = vx[1] - vx[0], e0y = vy[1] - vy[0], e1x = vx[2] - vx[1], e1y = vy[2] - vy[1];
    const float cross = e0x * e1y - e0y * e1x;
    const float area = (vx[0] * vy[1] - vy[0] * vx[1]) * 0.5f;
    if (cross * area < 0.0f) {
      ++guess;
      continue;
    }
    bool overlap = false;
    for (std::size_t other = 3; other < m && !overlap; ++other) {
      const int o = left[(guess + other) % m];
      overlap = inside(3, vx, vy, coord(o, 0), coord(o, 1));
    }
    if (overlap) {
      ++guess;
      continue;
    }
    ears.push_back({ind[0], ind[1], ind[2]});
    for (std::size_t r = (guess + 1) % m; r + 1 < m; ++r) left[r] = left[r + 1];
    --size;
  }
  if (size == 3) ears.push_back({left[0], left[1], left[2]});
}

// Pass 3 over one chunk: its faces' triangles into their slice, from its start (a slice counted n - 2
// triangles a polygon: its end is left unwritten where an ear clipping made fewer), and each of its
// usemtl and mtllib lines given the triangles made before it.
bool make_faces(chunk& c, const lists& l, obj_mesh& out, std::vector<obj_directive>& directives) {
  std::uint64_t v = c.v0, t = c.vt0, n = c.vn0, tri = c.t0;
  std::size_t d = c.d0;
  face_corners w;
  face f;
  std::vector<std::array<int, 3>> ears;
  const bool ok = each_line(c.begin, c.end, false, [&](const char* p, const char* e) {
    while (p < e && blank(*p)) ++p;
    const kind k = kind_of(p, e);
    v += k == kind::v, t += k == kind::vt, n += k == kind::vn;
    if (k == kind::usemtl || k == kind::mtllib) directives[d++].triangle = tri;
    if (k != kind::f) return true;
    const int corners = corners_of(p + 2, e, w);
    if (corners < 3) return false;
    for (int i = 0; i < corners; ++i)
      if (!resolve(w[i].v, v, f.v[i]) || !resolve(w[i].t, t, f.t[i]) || !resolve(w[i].n, n, f.n[i])) return false;
    if (corners == 3) {
      put(f, 0, 1, 2, tri++, l, c, out);
    } else if (corners == 4) {
      put_quad(f, tri, l, c, out), tri += 2;
    } else {
      clip_ears(f, corners, l.pos.get(), ears);
      for (const auto& [a, b, x] : ears) put(f, a, b, x, tri++, l, c, out);
    }
    return true;
  });
  c.made = tri - c.t0;
  return ok && d == c.d1;
}

template <class T>
void shift(std::vector<T>& v, std::uint64_t from, std::uint64_t to, std::uint64_t n) {
  if (!v.empty() && n > 0) std::memmove(v.data() + to, v.data() + from, n * sizeof(T));
}

// Where ear clippings made fewer triangles than counted, the chunks' triangles closed up in file order
// (each slice moves towards the start; one thread) and the directives' triangle numbers with them.
void close_up(const std::vector<chunk>& chunks, std::vector<obj_directive>& directives, obj_mesh& out) {
  std::uint64_t at = 0;
  for (const chunk& c : chunks) {
    if (at != c.t0) {
      shift(out.triangles, c.t0, at, c.made), shift(out.normals, c.t0, at, c.made), shift(out.uvs, c.t0, at, c.made);
      for (std::size_t d = c.d0; d < c.d1; ++d) directives[d].triangle -= c.t0 - at;
    }
    at += c.made;
  }
  out.triangles.resize(at);
  if (!out.normals.empty()) out.normals.resize(at);
  if (!out.uvs.empty()) out.uvs.resize(at);
}

// f(chunk) on every thread, one chunk a task; false where any call was.
template <class F>
bool every_chunk(std::vector<chunk>& chunks, F&& f) {
  std::atomic<bool> ok{true};
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, chunks.size(), 1), [&](const auto& r) {
    for (std::size_t i = r.begin(); i != r.end() && ok.load(std::memory_order_relaxed); ++i)
      if (!f(chunks[i])) ok = false;
  });
  return ok.load();
}

// The exclusive prefix over the chunks; the directives with their lines and triangles in the file.
std::vector<obj_directive> prefix(std::vector<chunk>& chunks, chunk& total) {
  std::vector<obj_directive> all;
  for (chunk& c : chunks) {
    c.line0 = total.lines, c.v0 = total.v, c.vt0 = total.vt, c.vn0 = total.vn, c.t0 = total.triangles;
    c.d0 = all.size(), c.d1 = all.size() + c.directives.size();
    for (obj_directive& d : c.directives) {
      d.line += c.line0, d.triangle += c.t0;
      all.push_back(std::move(d));
    }
    total.lines += c.lines, total.v += c.v, total.vt += c.vt, total.vn += c.vn, total.triangles += c.triangles;
    total.normals |= c.normals, total.uvs |= c.uvs;
  }
  return all;
}

}  // namespace

std::optional<obj_geometry> read_obj_geometry(std::span<const unsigned char> text, const obj_options& opt) {
  const char* b = reinterpret_cast<const char*>(text.data());
  std::vector<chunk> chunks = chunks_of(b, b + text.size(), obj_chunk_bytes());
  if (!every_chunk(chunks, count)) return std::nullopt;
  stop_point();
  obj_geometry g;
  chunk total;
  g.directives = prefix(chunks, total);
  if (total.triangles == 0 || total.triangles > opt.max_triangles) return std::nullopt;  // the general reader says so
  try {
    if (opt.admit) opt.admit(total.triangles);
  } catch (const sieve::error&) {
    return std::nullopt;  // or an error in a line before it: the general reader reports the first
  }
  lists l;
  l.pos = fresh_array<vec3>(total.v);
  if (total.normals) l.nrm = fresh_array<vec3>(total.vn);
  if (total.uvs) l.uv = fresh_array<tex_coord>(total.vt);
  if (!every_chunk(chunks, [&](const chunk& c) { return read_lists(c, l); })) return std::nullopt;
  stop_point();
  obj_mesh& out = g.mesh;
  fresh_resize(out.triangles, total.triangles);
  if (total.normals) fresh_resize(out.normals, total.triangles);
  if (total.uvs) fresh_resize(out.uvs, total.triangles);
  if (!every_chunk(chunks, [&](chunk& c) { return make_faces(c, l, out, g.directives); })) return std::nullopt;
  bool smooth = false, mapped = false, short_of = false;
  for (const chunk& c : chunks) smooth |= c.smooth, mapped |= c.mapped, short_of |= c.made != c.triangles;
  if (short_of) close_up(chunks, g.directives, out);
  if (!smooth) out.normals = {};  // no triangle has three normals: none kept, as the general reader keeps none
  if (!mapped) out.uvs = {};
  return g;
}

}  // namespace sieve::render::detail
