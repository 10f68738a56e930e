// PLY meshes (Stanford polygon files): ASCII and binary, little and big endian. Read here (Debian 12
// packages no PLY library): the header first, every count checked against the file's size and the
// scene's limits before anything is allocated, every index against the vertex list.
#include "sections.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <sstream>

namespace sieve::render::detail {
namespace {

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

struct ply_property {
  std::string name;
  ply_type type = ply_type::f32;
  bool list = false;
  ply_type count_type = ply_type::u8;
};

struct ply_element {
  std::string name;
  std::uint64_t count = 0;
  std::vector<ply_property> properties;
};

enum class ply_format : std::uint8_t { ascii, little, big };

// Values one at a time from the body, whatever its format; an error names the file and element.
class ply_body {
 public:
  ply_body(const std::vector<unsigned char>& bytes, std::size_t at, ply_format f, std::string file)
      : b_(bytes), i_(at), f_(f), file_(std::move(file)) {}
  double read(ply_type t, const std::string& what) {
    if (f_ == ply_format::ascii) return word(what);
    const std::size_t n = size_of(t);
    if (i_ + n > b_.size()) fail(file_ + ": the file ends inside " + what);
    unsigned char v[8];
    std::memcpy(v, b_.data() + i_, n);
    i_ += n;
    if ((f_ == ply_format::big) == (std::endian::native == std::endian::little)) std::reverse(v, v + n);
    auto as = [&](auto x) { std::memcpy(&x, v, sizeof x); return static_cast<double>(x); };
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

 private:
  // The next word of an ASCII body; a line starting "comment" is skipped (hand-edited files have them).
  double word(const std::string& what) {
    std::string_view w;
    for (;;) {
      while (i_ < b_.size() && std::isspace(b_[i_])) ++i_;
      const std::size_t start = i_;
      while (i_ < b_.size() && !std::isspace(b_[i_]) && i_ - start < 64) ++i_;
      if (i_ == start) fail(file_ + ": the file ends inside " + what);
      w = std::string_view(reinterpret_cast<const char*>(b_.data() + start), i_ - start);
      if (w != "comment") break;
      while (i_ < b_.size() && b_[i_] != '\n') ++i_;
    }
    bool finite = false;
    const std::optional<double> v = number_token(w, finite);
    if (!v) fail(file_ + ": " + what + ": " + in_quotes(w) + " is not a number");
    return *v;
  }
  const std::vector<unsigned char>& b_;
  std::size_t i_;
  ply_format f_;
  std::string file_;
};

struct ply_header {
  ply_format format = ply_format::ascii;
  std::vector<ply_element> elements;
  std::size_t body = 0;  // where the data begins
};

ply_header read_header(const std::vector<unsigned char>& bytes, const std::string& file) {
  ply_header h;
  std::size_t i = 0, line_no = 0;
  bool format_seen = false;
  for (;;) {
    const std::size_t start = i;
    while (i < bytes.size() && bytes[i] != '\n' && i - start < 4096) ++i;
    if (i >= bytes.size() || bytes[i] != '\n') fail(file + ": the PLY header does not end (no end_header line)");
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
      bool finite = false;
      const std::optional<double> n = tok.size() == 3 ? number_token(tok[2], finite) : std::nullopt;
      if (!n || *n < 0 || *n != std::floor(*n) || *n > 1e15) fail(at + "element needs a name and a count");
      h.elements.push_back({std::string(tok[1]), static_cast<std::uint64_t>(*n), {}});
    } else if (tok[0] == "property") {
      if (h.elements.empty()) fail(at + "a property before any element");
      if (tok.size() != 3 && tok.size() != 5) fail(at + "cannot read the property " + in_quotes(line));
      ply_property p;
      const bool list = tok.size() == 5 && tok[1] == "list";
      const auto t = type_of(tok[list ? 3 : 1]);
      const auto c = list ? type_of(tok[2]) : std::optional<ply_type>(ply_type::u8);
      if ((!list && tok.size() != 3) || !t || !c) fail(at + "cannot read the property " + in_quotes(line));
      p = {std::string(tok.back()), *t, list, *c};
      h.elements.back().properties.push_back(p);
    } else {
      fail(at + "unknown PLY header line " + in_quotes(line));
    }
  }
  if (!format_seen) fail(file + ": the PLY header has no format line");
  h.body = i;
  return h;
}

}  // namespace

obj_mesh load_ply(const fs::path& path, const obj_options& opt, registry& reg) {
  const std::string file = path.string();
  if (!file_exists(path)) fail(file + ": PLY file not found" + opt.context);
  const std::vector<unsigned char> bytes = input_file(path, "PLY file").bytes(std::uint64_t{1} << 34);
  const ply_header h = read_header(bytes, file);
  const std::size_t left = bytes.size() - h.body;
  // Every item of an element takes at least its fixed part of the body (ASCII: two bytes a value).
  for (const ply_element& e : h.elements) {
    std::size_t least = 0;  // ASCII: a digit and a separator a value
    for (const ply_property& p : e.properties) least += h.format == ply_format::ascii ? 2 : size_of(p.list ? p.count_type : p.type);
    if (e.count > left / std::max<std::size_t>(least, 1))
      fail(file + ": element " + in_quotes(e.name) + " claims " + std::to_string(e.count) + " items, more than the file holds" + opt.context);
  }
  ply_body body(bytes, h.body, h.format, file);
  struct vertex { vec3 p, n, color; tex_coord uv; };
  std::vector<vertex> verts;
  bool normals = false, uvs = false, colors = false, float_color = false;
  obj_mesh out;
  out.files.push_back(path);
  std::vector<std::uint32_t> face_color_index;
  for (const ply_element& e : h.elements) {
    const bool is_vertex = e.name == "vertex", is_face = e.name == "face";
    if (is_vertex) {
      verts.resize(e.count);
      for (const ply_property& p : e.properties) {
        normals |= p.name == "nx";
        uvs |= p.name == "u" || p.name == "s" || p.name == "texture_u";
        colors |= p.name == "red" || p.name == "diffuse_red";
        float_color |= (p.name == "red" || p.name == "diffuse_red") && (p.type == ply_type::f32 || p.type == ply_type::f64);
      }
    }
    for (std::uint64_t k = 0; k < e.count; ++k) {
      const std::string what = e.name + " " + std::to_string(k);
      for (const ply_property& p : e.properties) {
        if (p.list) {
          const double n = body.read(p.count_type, what);
          if (!(n >= 0 && n <= double(max_face_vertices)))
            fail(file + ": " + what + " has a list of " + str(n) + " items (at most " + std::to_string(max_face_vertices) + ")" + opt.context);
          std::uint32_t idx[256];
          for (std::size_t j = 0; j < n; ++j) {
            const double v = body.read(p.type, what);
            if (is_face && !(v >= 0 && v < double(verts.size())))
              fail(file + ": " + what + " refers to vertex " + str(v) + ", past the " + std::to_string(verts.size()) + " vertices" + opt.context);
            idx[j] = is_face ? static_cast<std::uint32_t>(v) : 0;
          }
          if (!is_face || (p.name != "vertex_indices" && p.name != "vertex_index")) continue;
          if (n < 3) continue;  // a point or an edge: nothing to render
          if (out.triangles.size() + std::size_t(n) - 2 > opt.max_triangles)
            fail(file + ": more than " + std::to_string(opt.max_triangles) + " triangles " + opt.limit_text + opt.context);
          for (std::size_t j = 1; j + 1 < n; ++j) {
            const vertex &a = verts[idx[0]], &b = verts[idx[j]], &c = verts[idx[j + 1]];
            out.triangles.push_back({a.p, b.p, c.p});
            if (normals) out.normals.push_back({a.n, b.n, c.n});
            if (uvs) out.uvs.push_back({a.uv, b.uv, c.uv});
            if (colors) face_color_index.push_back(idx[0]), face_color_index.push_back(idx[j]), face_color_index.push_back(idx[j + 1]);
          }
          continue;
        }
        const double v = body.read(p.type, what);
        if (!is_vertex) continue;
        bool finite = std::isfinite(v) && std::isfinite(static_cast<float>(v));
        if (!finite) fail(file + ": " + what + ": " + p.name + " " + str(v) + " is not a finite number" + opt.context);
        vertex& vx = verts[k];
        const auto f = static_cast<float>(v);
        const float c = float_color ? f : f / 255.0f;
        const std::string& n = p.name;
        if (n == "x") vx.p.x = f; else if (n == "y") vx.p.y = f; else if (n == "z") vx.p.z = f;
        else if (n == "nx") vx.n.x = f; else if (n == "ny") vx.n.y = f; else if (n == "nz") vx.n.z = f;
        else if (n == "u" || n == "s" || n == "texture_u") vx.uv.u = f;
        else if (n == "v" || n == "t" || n == "texture_v") vx.uv.v = f;
        else if (n == "red" || n == "diffuse_red") vx.color.x = c;
        else if (n == "green" || n == "diffuse_green") vx.color.y = c;
        else if (n == "blue" || n == "diffuse_blue") vx.color.z = c;
      }
    }
  }
  if (out.triangles.empty()) fail(file + ": no triangles: the PLY file has no faces of 3 or more vertices" + opt.context);
  if (opt.admit) opt.admit(out.triangles.size());
  material m;
  m.name = path.stem().string();
  if (colors) {
    // Vertex colours as albedo: each triangle's mean colour in a texel of its own, read at its centre.
    const std::size_t n = out.triangles.size();
    const auto side = static_cast<std::uint32_t>(std::ceil(std::sqrt(double(n))));
    image_rgb img;
    img.width = img.height = side;
    img.pixels.assign(std::size_t{side} * side, vec3{0, 0, 0});
    out.uvs.assign(n, triangle_uvs{});
    for (std::size_t t = 0; t < n; ++t) {
      vec3 c{0, 0, 0};
      for (int k = 0; k < 3; ++k) c = c + verts[face_color_index[3 * t + k]].color;
      c = c / 3.0f;
      img.pixels[t] = float_color ? c : vec3{srgb_to_linear(c.x), srgb_to_linear(c.y), srgb_to_linear(c.z)};
      const tex_coord uv{(float(t % side) + 0.5f) / side, 1 - (float(t / side) + 0.5f) / side};
      out.uvs[t] = {uv, uv, uv};
    }
    m.albedo_texture = reg.texture_index(file + " (vertex colours)", img, wrap_mode::clamp, file);
  }
  const std::uint32_t mat = opt.use_materials ? reg.add(m, file) : 0;
  out.material_of.assign(out.triangles.size(), mat);
  return out;
}

}  // namespace sieve::render::detail
