// OBJ meshes and their MTL materials, read by tinyobjloader (checked by obj_prescan.cpp first).
#include "sections.hpp"

#include "../exec/stop.hpp"

#include <tiny_obj_loader.h>

#include <algorithm>
#include <sstream>

namespace sieve::render::detail {
namespace {


// tinyobjloader's MTL source: the files read as input_file, checked by prescan_mtl first. A missing
// file is reported the way tinyobjloader reports it (load_obj has named it already).
class mtl_reader : public tinyobj::MaterialReader {
 public:
  mtl_reader(fs::path dir, std::string context) : dir_(std::move(dir)), context_(std::move(context)) {}
  bool operator()(const std::string& name, std::vector<tinyobj::material_t>* materials,
                  std::map<std::string, int>* by_name, std::string* warn, std::string* /*err*/) override {
    const fs::path path = dir_ / name;
    if (name.empty() || !file_exists(path)) {
      if (warn) *warn += "Material file [ " + name + " ] not found\n";
      return false;
    }
    input_file f(path, "MTL file");
    std::istringstream text(prescan_mtl(f.stream(), path.string(), context_));
    std::string mtl_warn, mtl_err;
    tinyobj::LoadMtl(by_name, materials, &text, &mtl_warn, &mtl_err);
    // Its remarks name this file, not the OBJ. `d` and `Tr` together (3ds Max writes both in every
    // material): `d` wins, as tinyobjloader reads it, without a word.
    std::istringstream lines(mtl_warn + mtl_err);
    for (std::string w; std::getline(lines, w);) {
      const std::string_view t = trim(w);
      if (t.empty() || t.find("Both `d` and `Tr`") != std::string_view::npos) continue;
      print_warning(path.string() + ": " + std::string(t) + context_);
    }
    return true;
  }

 private:
  fs::path dir_;
  std::string context_;
};

}  // namespace

obj_mesh load_obj(const fs::path& path, const obj_options& opt, registry& reg) {
  const std::string file = path.string();
  if (!file_exists(path)) fail(file + ": OBJ file not found" + opt.context);
  input_file obj(path, "OBJ file");
  const obj_scan scan = prescan_obj(obj.stream(), file, opt);
  if (opt.admit) opt.admit(scan.triangles);

  const fs::path dir = path.parent_path();
  std::string mtl_files;
  bool mtl_missing = false;
  for (const auto& [name, line] : scan.mtllibs) {
    const fs::path mtl = dir / name;
    mtl_files += (mtl_files.empty() ? "" : ", ") + mtl.string();
    if (!file_exists(mtl)) {
      mtl_missing = true;
      const std::string msg = file + ":" + std::to_string(line) + ": MTL file " + in_quotes(name) +
                              " not found (looked for " + mtl.string() + ")" + opt.context;
      if (opt.strict) fail(msg);
      if (opt.use_materials) print_warning(msg + "; using the grey default material");
    }
  }
  if (mtl_files.empty()) mtl_files = file + "'s MTL";

  tinyobj::attrib_t attrib;
  std::vector<tinyobj::shape_t> shapes;
  std::vector<tinyobj::material_t> mtl;
  std::string warn, err;
  mtl_reader mtl_source(dir, opt.context);
  std::istringstream obj_text(scan.text);  // comments after values removed
  stop_point();
  const bool ok = tinyobj::LoadObj(&attrib, &shapes, &mtl, &warn, &err, &obj_text, &mtl_source, true);
  stop_point();
  if (!ok || !trim(err).empty()) {
    fail(file + ": " + std::string(trim(err.empty() ? warn : err)) + opt.context);
  }
  // Warnings that matter are errors; the tolerated ones (a missing MTL for a bare .obj, an unknown
  // material where the object's `material =` replaces them anyway) go to stderr.
  {
    std::istringstream lines(warn);
    for (std::string w; std::getline(lines, w);) {
      const std::string_view t = trim(w);
      if (t.empty() || t == ".") continue;
      const bool missing_mtl = t.find("Material file [") != std::string_view::npos ||
                               t.find("Failed to load material file") != std::string_view::npos ||
                               t.find("empty filename for mtllib") != std::string_view::npos;
      const bool unknown_material = t.find("not found in .mtl") != std::string_view::npos;
      if (!opt.use_materials && (missing_mtl || unknown_material)) continue;
      if (!opt.strict && (missing_mtl || unknown_material)) {
        // A missing MTL was reported above, and explains the unknown materials.
        if (!mtl_missing) print_warning(file + ": " + std::string(t));
        continue;
      }
      fail(file + ": " + std::string(t) + opt.context);
    }
  }

  // Materials are mapped now and their textures read when a face first uses them (a texture of an
  // unused material is never opened).
  std::vector<material> mapped;
  std::unordered_map<std::string_view, std::size_t> first_of;  // tinyobjloader keeps the first of a name
  for (const auto& m : mtl) {
    mapped.push_back(map_mtl(m, mtl_files));
    const auto [it, fresh] = first_of.emplace(m.name, mapped.size() - 1);
    const tinyobj::material_t& first = mtl[it->second];
    if (!fresh && (!registry::same(mapped[it->second], mapped.back()) || first.diffuse_texname != m.diffuse_texname ||
                   first.alpha_texname != m.alpha_texname)) {
      fail(mtl_files + ": newmtl " + in_quotes(m.name) + " is defined twice, with different values" + opt.context);
    }
  }
  auto read_textures = [&](std::size_t i) {
    const tinyobj::material_t& m = mtl[i];
    const std::string who = mtl_files + ": material " + in_quotes(m.name) + opt.context;
    auto texture = [&](std::string name, const tinyobj::texture_option_t& o, image_use use) {
      std::replace(name.begin(), name.end(), '\\', '/');  // paths written on Windows
      return reg.texture_index(dir / name, o.clamp ? wrap_mode::clamp : wrap_mode::repeat, who, use);
    };
    if (!m.diffuse_texname.empty() && mapped[i].kind == material_kind::diffuse)
      mapped[i].albedo_texture = texture(m.diffuse_texname, m.diffuse_texopt, image_use::color);
    if (!m.alpha_texname.empty()) mapped[i].opacity_texture = texture(m.alpha_texname, m.alpha_texopt, image_use::opacity);
  };
  std::vector<std::optional<std::uint32_t>> reg_index(mtl.size());
  auto use = [&](std::size_t i) {
    if (!reg_index[i]) read_textures(i), reg_index[i] = reg.add(mapped[i], mtl_files);
    return *reg_index[i];
  };
  if (!opt.use_materials) {  // the object's `material =` may name one of its own MTL's materials
    for (std::size_t i = 0; i < mapped.size(); ++i) use(i);
  }

  obj_mesh out;
  out.files.push_back(path);
  for (const auto& [name, line] : scan.mtllibs)
    if (file_exists(dir / name)) out.files.push_back(dir / name);
  const std::size_t nv = attrib.vertices.size() / 3;
  bool any_normals = false, any_uvs = false;  // some face so far had them (then out.normals, out.uvs follow the triangles)
  const std::size_t nn = attrib.normals.size() / 3, nt = attrib.texcoords.size() / 2;
  auto past = [&](const tinyobj::shape_t& shape, const char* what, int idx, std::size_t count) {
    fail(file + ": a face of " + in_quotes(shape.name) + " refers to " + what + " " + std::to_string(idx + 1) +
         ", past the " + std::to_string(count) + " " + what + "s" + opt.context);
  };
  for (const auto& shape : shapes) {
    std::size_t offset = 0;
    for (std::size_t f = 0; f < shape.mesh.num_face_vertices.size(); ++f) {
      const std::size_t fv = shape.mesh.num_face_vertices[f];
      vec3 p[256], n[256];
      tex_coord uv[256];
      bool smooth = true, mapped_uv = true;  // every vertex of the face has a normal; a texture coordinate
      if (fv < 3 || fv > 256)
        fail(file + ": a face of " + in_quotes(shape.name) + " has " + std::to_string(fv) + " vertices" +
             opt.context);
      for (std::size_t j = 0; j < fv; ++j) {
        const int idx = shape.mesh.indices[offset + j].vertex_index;
        if (idx < 0 || static_cast<std::size_t>(idx) >= nv) {
          fail(file + ": a face of " + in_quotes(shape.name) + " refers to vertex " +
               std::to_string(idx + 1) + ", past the " + std::to_string(nv) + " vertices" + opt.context);
        }
        p[j] = {static_cast<float>(attrib.vertices[3 * idx]),
                static_cast<float>(attrib.vertices[3 * idx + 1]),
                static_cast<float>(attrib.vertices[3 * idx + 2])};
        const int ni = shape.mesh.indices[offset + j].normal_index;
        if (ni >= 0 && static_cast<std::size_t>(ni) >= nn) past(shape, "normal", ni, nn);
        if (ni < 0) {
          smooth = false;
        } else {
          n[j] = {static_cast<float>(attrib.normals[3 * ni]), static_cast<float>(attrib.normals[3 * ni + 1]),
                  static_cast<float>(attrib.normals[3 * ni + 2])};
        }
        const int ti = shape.mesh.indices[offset + j].texcoord_index;
        if (ti >= 0 && static_cast<std::size_t>(ti) >= nt) past(shape, "texture coordinate", ti, nt);
        if (ti < 0) {
          mapped_uv = false;
        } else {
          uv[j] = {static_cast<float>(attrib.texcoords[2 * ti]), static_cast<float>(attrib.texcoords[2 * ti + 1])};
        }
      }
      if (smooth && !any_normals) out.normals.resize(out.triangles.size()), any_normals = true;
      if (mapped_uv && !any_uvs) out.uvs.resize(out.triangles.size()), any_uvs = true;
      std::uint32_t mat = 0;
      if (opt.use_materials) {
        const int id = f < shape.mesh.material_ids.size() ? shape.mesh.material_ids[f] : -1;
        if (id < 0 || static_cast<std::size_t>(id) >= mapped.size()) {
          mat = reg.default_grey();
        } else {
          mat = use(static_cast<std::size_t>(id));
        }
      }
      for (std::size_t j = 1; j + 1 < fv; ++j) {  // a fan (tinyobjloader has triangulated already)
        out.triangles.push_back({p[0], p[j], p[j + 1]});
        out.material_of.push_back(mat);
        if (any_normals) out.normals.push_back(smooth ? triangle_normals{n[0], n[j], n[j + 1]} : triangle_normals{});
        if (any_uvs) out.uvs.push_back(mapped_uv ? triangle_uvs{uv[0], uv[j], uv[j + 1]} : triangle_uvs{});
      }
      offset += fv;
    }
  }
  return out;
}

}  // namespace sieve::render::detail
