// What tinyobjloader does not check in OBJ and MTL files, checked before it reads them.
#include "sections.hpp"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>

namespace sieve::render::detail {

std::vector<std::string_view> tokens(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t b = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > b) out.push_back(line.substr(b, i - b));
  }
  return out;
}

std::string_view uncommented(std::string_view line) {
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) return line.substr(0, i);
  }
  return line;
}

std::optional<double> number_token(std::string_view s, bool& finite) {
  const std::string t(s);
  char* end = nullptr;
  const double d = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || *end != '\0') return std::nullopt;
  finite = std::isfinite(d) && std::isfinite(static_cast<float>(d));
  return d;
}


obj_scan prescan_obj(std::istream& in, const std::string& file, const obj_options& opt) {
  obj_scan out;
  std::string line;
  std::size_t line_no = 0;
  // Per list (vertices, texture coordinates, normals): how many so far, the largest index a face gives.
  static constexpr const char* list_name[3] = {"vertex", "texture coordinate", "normal"};
  long long count[3] = {0, 0, 0}, max_index[3] = {0, 0, 0};
  std::size_t max_index_line[3] = {0, 0, 0};
  long long& vertices = count[0];
  auto at = [&](std::size_t l) { return file + ":" + std::to_string(l) + ": "; };
  while (next_line(in, line, file, line_no + 1)) {
    ++line_no;
    const std::string_view kept = uncommented(line);
    out.text.append(kept).push_back('\n');
    const std::vector<std::string_view> tok = tokens(trim(kept));
    if (tok.empty()) continue;
    if (tok[0] == "v") {
      ++vertices;
      if (tok.size() < 4) {
        fail(at(line_no) + "vertex " + std::to_string(vertices) + " has fewer than 3 coordinates" +
             opt.context);
      }
      for (std::size_t i = 1; i <= 3; ++i) {
        bool finite = false;
        if (!number_token(tok[i], finite)) {
          fail(at(line_no) + "vertex " + std::to_string(vertices) + ": coordinate " + in_quotes(tok[i]) +
               " is not a number" + opt.context);
        }
        if (!finite) {
          fail(at(line_no) + "vertex " + std::to_string(vertices) + " has a non-finite coordinate " +
               in_quotes(tok[i]) + opt.context);
        }
      }
    } else if (tok[0] == "vn" || tok[0] == "vt") {
      // Vertex normals (3 numbers) and texture coordinates (1 to 3): finite numbers.
      const bool normal = tok[0] == "vn";
      ++count[normal ? 2 : 1];
      const std::string what = normal ? "vertex normal" : "texture coordinate";
      if (tok.size() < (normal ? 4u : 2u)) {
        fail(at(line_no) + "a " + what + " needs " + (normal ? "3 numbers" : "a number") + opt.context);
      }
      for (std::size_t i = 1; i < tok.size() && i <= 3; ++i) {
        bool finite = false;
        if (!number_token(tok[i], finite)) fail(at(line_no) + what + ": " + in_quotes(tok[i]) + " is not a number" + opt.context);
        if (!finite) fail(at(line_no) + what + ": " + in_quotes(tok[i]) + " is not a finite number" + opt.context);
      }
    } else if (tok[0] == "f") {
      if (tok.size() < 4) fail(at(line_no) + "a face needs at least 3 vertices" + opt.context);
      if (tok.size() - 1 > max_face_vertices) {
        fail(at(line_no) + "a face of " + std::to_string(tok.size() - 1) + " vertices (at most " +
             std::to_string(max_face_vertices) + " are read; split the polygon)" + opt.context);
      }
      out.triangles += tok.size() - 3;
      if (out.triangles > opt.max_triangles) {
        fail(at(line_no) + "more than " + std::to_string(opt.max_triangles) + " triangles " + opt.limit_text +
             opt.context);
      }
      for (std::size_t i = 1; i < tok.size(); ++i) {
        // v, v/vt, v//vn or v/vt/vn: each index given is checked against its own list.
        std::string_view rest = tok[i];
        for (int k = 0; k < 3 && !rest.empty(); ++k) {
          const std::size_t slash = rest.find('/');
          const std::string s(rest.substr(0, slash));
          rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
          if (k > 0 && s.empty()) continue;  // v//vn: no texture coordinate
          char* end = nullptr;
          errno = 0;
          const long long idx = std::strtoll(s.c_str(), &end, 10);
          if (end == s.c_str() || *end != '\0' || errno != 0 || idx > INT_MAX || idx < -INT_MAX) {
            fail(at(line_no) + "face vertex " + in_quotes(tok[i]) + ": " + in_quotes(s) + " is not a " + list_name[k] +
                 " index" + opt.context);
          }
          const std::string face_index = k ? "face " + std::string(list_name[k]) + " index " : "face index ";
          if (idx == 0) fail(at(line_no) + face_index + "0 (OBJ indices start at 1)" + opt.context);
          if (idx < 0 && count[k] + idx < 0) {
            fail(at(line_no) + face_index + std::to_string(idx) + " reaches before the first " +
                 list_name[k] + " (" + std::to_string(count[k]) + " so far)" + opt.context);
          }
          if (idx > max_index[k]) max_index[k] = idx, max_index_line[k] = line_no;
        }
      }
    } else if (tok[0] == "mtllib") {
      for (std::size_t i = 1; i < tok.size(); ++i) out.mtllibs.emplace_back(std::string(tok[i]), line_no);
    }
  }
  for (int k = 0; k < 3; ++k) {
    if (max_index[k] > count[k]) {
      fail(at(max_index_line[k]) + "face " + (k ? std::string(list_name[k]) + " " : std::string()) + "index " +
           std::to_string(max_index[k]) + " is past the " + std::to_string(count[k]) + " " + (k == 0 ? "vertices" : k == 1 ? "texture coordinates" : "normals") +
           " of the file" + opt.context);
    }
  }
  if (out.triangles == 0) {
    fail(file + ": no triangles: no face in its " + std::to_string(line_no) + " lines (" +
         std::to_string(vertices) + " vertices); is it an OBJ file?" + opt.context);
  }
  return out;
}

std::string prescan_mtl(std::istream& in, const std::string& file, const std::string& context) {
  static const std::vector<std::string_view> numeric = {"Ka", "Kd", "Ks", "Ke", "Tf", "Ni", "Ns", "d", "Tr", "Pr", "Pm"};
  static const std::vector<std::string_view> unit = {"Kd", "Ks", "Tf", "d", "Tr", "Pr", "Pm"};  // each in 0 .. 1
  std::string text, line;
  for (std::size_t line_no = 1; next_line(in, line, file, line_no); ++line_no) {
    const std::string_view kept = uncommented(line);
    text.append(kept).push_back('\n');
    const std::vector<std::string_view> tok = tokens(trim(kept));
    if (tok.empty() || !contains(numeric, tok[0])) continue;
    const std::string at = file + ":" + std::to_string(line_no) + ": " + std::string(tok[0]) + " ";
    for (std::size_t i = 1; i < tok.size(); ++i) {
      if (tok[i] == "xyz" || tok[i] == "spectral") break;        // colour forms tinyobjloader skips
      bool finite = false;
      const std::optional<double> v = number_token(tok[i], finite);
      // An option with its value (d -halo 0.5); -inf and -nan are numbers, checked below.
      if (!v && tok[i].size() > 1 && tok[i][0] == '-' && std::isalpha(static_cast<unsigned char>(tok[i][1]))) {
        ++i;
        continue;
      }
      if (!v) fail(at + in_quotes(tok[i]) + " is not a number" + context);
      if (!finite) fail(at + in_quotes(tok[i]) + " is not a finite number" + context);
      if (contains(unit, tok[0]) && (*v < 0 || *v > 1)) fail(at + str(*v) + " is out of range (0 .. 1)" + context);
      if (tok[0] == "Ke" && *v < 0) fail(at + str(*v) + " is out of range (>= 0)" + context);
    }
  }
  return text;
}


}  // namespace sieve::render::detail
