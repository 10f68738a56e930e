// OBJ meshes and their MTL materials: the common subset read in parallel chunks (obj_fast.cpp), the
// rest (and every fault) by tinyobjloader, checked by obj_prescan.cpp first.
#include "obj_fast.hpp"
#include "sections.hpp"

#include "../exec/fresh_memory.hpp"
#include "../exec/stop.hpp"

#include <tiny_obj_loader.h>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <set>
#include <sstream>

namespace sieve::render::detail {
namespace {


// tinyobjloader's MTL source: the files read as input_file, checked by prescan_mtl first. A missing
// file is reported the way tinyobjloader reports it (load_obj has named it already). Its warnings
// are printed at once, or kept in `held` (the fast path prints them once it has kept its result).
class mtl_reader : public tinyobj::MaterialReader {
 public:
  mtl_reader(fs::path dir, std::string context, std::vector<std::string>* held = nullptr)
      : dir_(std::move(dir)), context_(std::move(context)), held_(held) {}
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
      const std::string remark = path.string() + ": " + std::string(t) + context_;
      if (held_) held_->push_back(remark);
      else print_warning(remark);
    }
    return true;
  }

 private:
  fs::path dir_;
  std::string context_;
  std::vector<std::string>* held_;
};

// The MTL files an OBJ names: each found, or a missing one an error (strict) or a warning.
struct mtl_libs {
  std::string files;  // their names for messages
  bool missing = false;
};

mtl_libs check_mtl_libs(const obj_scan& scan, const fs::path& path, const obj_options& opt) {
  const std::string file = path.string();
  const fs::path dir = path.parent_path();
  mtl_libs libs;
  for (const auto& [name, line] : scan.mtllibs) {
    const fs::path mtl = dir / name;
    libs.files += (libs.files.empty() ? "" : ", ") + mtl.string();
    if (!file_exists(mtl)) {
      libs.missing = true;
      const std::string msg = file + ":" + std::to_string(line) + ": MTL file " + in_quotes(name) +
                              " not found (looked for " + mtl.string() + ")" + opt.context;
      if (opt.strict) fail(msg);
      if (opt.use_materials) print_warning(msg + "; using the grey default material");
    }
  }
  if (libs.files.empty()) libs.files = file + "'s MTL";
  return libs;
}

// tinyobjloader's result, its error an error and its warnings sorted: those that matter are errors,
// the tolerated ones (a missing MTL for a bare .obj, an unknown material where the object's
// `material =` replaces them anyway) go to stderr.
struct obj_parsed {
  tinyobj::attrib_t attrib;
  std::vector<tinyobj::shape_t> shapes;
  std::vector<tinyobj::material_t> mtl;
};

obj_parsed parse_obj(const obj_scan& scan, const fs::path& path, const obj_options& opt, const mtl_libs& libs) {
  const std::string file = path.string();
  obj_parsed o;
  std::string warn, err;
  mtl_reader mtl_source(path.parent_path(), opt.context);
  std::istringstream obj_text(scan.text);  // comments after values removed
  stop_point();
  const bool ok = tinyobj::LoadObj(&o.attrib, &o.shapes, &o.mtl, &warn, &err, &obj_text, &mtl_source, true);
  stop_point();
  if (!ok || !trim(err).empty()) fail(file + ": " + std::string(trim(err.empty() ? warn : err)) + opt.context);
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
      if (!libs.missing) print_warning(file + ": " + std::string(t));
      continue;
    }
    fail(file + ": " + std::string(t) + opt.context);
  }
  return o;
}

// The MTL materials, mapped at once and registered (their textures read) when a face first uses
// them: a texture of an unused material is never opened.
class obj_materials {
 public:
  obj_materials(const std::vector<tinyobj::material_t>& mtl, const fs::path& dir, const std::string& files,
                const obj_options& opt, registry& reg)
      : mtl_(mtl), dir_(dir), files_(files), opt_(opt), reg_(reg), index_(mtl.size()) {
    std::unordered_map<std::string_view, std::size_t> first_of;  // tinyobjloader keeps the first of a name
    for (const auto& m : mtl) {
      mapped_.push_back(map_mtl(m, files));
      const auto [it, fresh] = first_of.emplace(m.name, mapped_.size() - 1);
      const tinyobj::material_t& first = mtl[it->second];
      if (!fresh && (!registry::same(mapped_[it->second], mapped_.back()) || first.diffuse_texname != m.diffuse_texname ||
                     first.alpha_texname != m.alpha_texname)) {
        fail(files + ": newmtl " + in_quotes(m.name) + " is defined twice, with different values" + opt.context);
      }
    }
    if (!opt.use_materials)  // the object's `material =` may name one of its own MTL's materials
      for (std::size_t i = 0; i < mapped_.size(); ++i) use(i);
  }

  // The registry's index of material `id` (tinyobjloader's; out of range or -1: the grey default).
  std::uint32_t of(int id) {
    if (id < 0 || static_cast<std::size_t>(id) >= mapped_.size()) return reg_.default_grey();
    return use(static_cast<std::size_t>(id));
  }

 private:
  std::uint32_t use(std::size_t i) {
    if (!index_[i]) read_textures(i), index_[i] = reg_.add(mapped_[i], files_);
    return *index_[i];
  }
  void read_textures(std::size_t i) {
    const tinyobj::material_t& m = mtl_[i];
    const std::string who = files_ + ": material " + in_quotes(m.name) + opt_.context;
    auto texture = [&](std::string name, const tinyobj::texture_option_t& o, image_use use) {
      std::replace(name.begin(), name.end(), '\\', '/');  // paths written on Windows
      return reg_.texture_index(dir_ / name, o.clamp ? wrap_mode::clamp : wrap_mode::repeat, who, use);
    };
    if (!m.diffuse_texname.empty() && mapped_[i].kind == material_kind::diffuse)
      mapped_[i].albedo_texture = texture(m.diffuse_texname, m.diffuse_texopt, image_use::color);
    if (!m.alpha_texname.empty()) mapped_[i].opacity_texture = texture(m.alpha_texname, m.alpha_texopt, image_use::opacity);
  }

  const std::vector<tinyobj::material_t>& mtl_;
  fs::path dir_;
  std::string files_;
  const obj_options& opt_;
  registry& reg_;
  std::vector<material> mapped_;
  std::vector<std::optional<std::uint32_t>> index_;
};

// One face's corners: positions, and normals and texture coordinates where every corner has one.
struct face_corners {
  vec3 p[256], n[256];
  tex_coord uv[256];
  bool smooth = true, mapped_uv = true;
};

void read_corners(const obj_parsed& o, const tinyobj::shape_t& shape, std::size_t offset, std::size_t fv,
                  const std::string& file, const obj_options& opt, face_corners& c) {
  const tinyobj::attrib_t& a = o.attrib;
  const std::size_t nv = a.vertices.size() / 3, nn = a.normals.size() / 3, nt = a.texcoords.size() / 2;
  auto past = [&](const char* what, int idx, std::size_t count) {
    fail(file + ": a face of " + in_quotes(shape.name) + " refers to " + what + " " + std::to_string(idx + 1) +
         ", past the " + std::to_string(count) + " " + what + "s" + opt.context);
  };
  if (fv < 3 || fv > 256)
    fail(file + ": a face of " + in_quotes(shape.name) + " has " + std::to_string(fv) + " vertices" + opt.context);
  for (std::size_t j = 0; j < fv; ++j) {
    const tinyobj::index_t& i = shape.mesh.indices[offset + j];
    if (i.vertex_index < 0 || static_cast<std::size_t>(i.vertex_index) >= nv)
      fail(file + ": a face of " + in_quotes(shape.name) + " refers to vertex " + std::to_string(i.vertex_index + 1) + ", past the " +
           std::to_string(nv) + " vertices" + opt.context);
    const auto v = static_cast<std::size_t>(i.vertex_index);
    c.p[j] = {static_cast<float>(a.vertices[3 * v]), static_cast<float>(a.vertices[3 * v + 1]), static_cast<float>(a.vertices[3 * v + 2])};
    if (i.normal_index >= 0 && static_cast<std::size_t>(i.normal_index) >= nn) past("normal", i.normal_index, nn);
    if (i.normal_index < 0) {
      c.smooth = false;
    } else {
      const auto n = static_cast<std::size_t>(i.normal_index);
      c.n[j] = {static_cast<float>(a.normals[3 * n]), static_cast<float>(a.normals[3 * n + 1]), static_cast<float>(a.normals[3 * n + 2])};
    }
    if (i.texcoord_index >= 0 && static_cast<std::size_t>(i.texcoord_index) >= nt) past("texture coordinate", i.texcoord_index, nt);
    if (i.texcoord_index < 0) {
      c.mapped_uv = false;
    } else {
      const auto t = static_cast<std::size_t>(i.texcoord_index);
      c.uv[j] = {static_cast<float>(a.texcoords[2 * t]), static_cast<float>(a.texcoords[2 * t + 1])};
    }
  }
}

// Every face as a fan of triangles (tinyobjloader has triangulated already), in file order.
void add_faces(const obj_parsed& o, const std::string& file, const obj_options& opt, obj_materials& mats, obj_mesh& out) {
  bool any_normals = false, any_uvs = false;  // some face so far had them (then out.normals, out.uvs follow the triangles)
  face_corners c;
  for (const auto& shape : o.shapes) {
    std::size_t offset = 0;
    for (std::size_t f = 0; f < shape.mesh.num_face_vertices.size(); ++f) {
      const std::size_t fv = shape.mesh.num_face_vertices[f];
      c.smooth = c.mapped_uv = true;
      read_corners(o, shape, offset, fv, file, opt, c);
      if (c.smooth && !any_normals) out.normals.resize(out.triangles.size()), any_normals = true;
      if (c.mapped_uv && !any_uvs) out.uvs.resize(out.triangles.size()), any_uvs = true;
      const std::uint32_t mat = opt.use_materials ? mats.of(f < shape.mesh.material_ids.size() ? shape.mesh.material_ids[f] : -1) : 0;
      for (std::size_t j = 1; j + 1 < fv; ++j) {
        out.triangles.push_back({c.p[0], c.p[j], c.p[j + 1]});
        out.material_of.push_back(mat);
        if (any_normals) out.normals.push_back(c.smooth ? triangle_normals{c.n[0], c.n[j], c.n[j + 1]} : triangle_normals{});
        if (any_uvs) out.uvs.push_back(c.mapped_uv ? triangle_uvs{c.uv[0], c.uv[j], c.uv[j + 1]} : triangle_uvs{});
      }
      offset += fv;
    }
  }
}

// The fast path's materials: its mtllib and usemtl lines replayed in file order as tinyobjloader
// reads them (a mtllib line loads its first file that is there and not loaded yet; a usemtl takes
// the material known by that name at its line, else none), and a run (first triangle,
// tinyobjloader's material id) at each change. Nothing where a usemtl names a material unknown at
// its line and tinyobjloader's warning would be heard (the general reader reports it). The MTL
// files' warnings are printed once kept, and before an error in a later one.
struct material_runs {
  std::vector<tinyobj::material_t> mtl;
  std::vector<std::pair<std::uint64_t, int>> runs{{0, -1}};
};

std::optional<material_runs> replay_materials(const std::vector<obj_directive>& directives, const fs::path& path,
                                              const obj_options& opt, const mtl_libs& libs) {
  material_runs r;
  std::map<std::string, int> by_name;
  std::set<std::string> loaded;
  std::vector<std::string> held;
  mtl_reader reader(path.parent_path(), opt.context, &held);
  auto print_held = [&] {
    for (const std::string& w : held) print_warning(w);
  };
  try {
    for (const obj_directive& d : directives) {
      std::string warn, err;  // (a missing file's: reported by check_mtl_libs)
      if (d.mtllib) {
        for (const std::string& name : d.names)
          if (!loaded.count(name) && reader(name, &r.mtl, &by_name, &warn, &err)) {
            loaded.insert(name);
            break;
          }
        continue;
      }
      const auto it = by_name.find(d.names[0]);
      if (it == by_name.end() && opt.use_materials && !libs.missing) return std::nullopt;
      const int id = it == by_name.end() ? -1 : it->second;
      if (id != r.runs.back().second) r.runs.emplace_back(d.triangle, id);
    }
  } catch (...) {
    print_held();
    throw;
  }
  print_held();
  return r;
}

// The common subset read in parallel (obj_fast.hpp), or nothing where the general reader must read
// the file (from the start: nothing was reported or registered).
std::optional<obj_mesh> read_fast(input_file& in, const fs::path& path, const obj_options& opt, registry& reg) {
  if (!obj_fast_enabled()) return std::nullopt;
  const input_file::block text = in.read_parallel(0);
  std::optional<obj_geometry> g = read_obj_geometry(text.bytes(), opt);
  if (!g) return std::nullopt;
  const fs::path dir = path.parent_path();
  obj_scan scan;  // the MTL files named, as the prescan lists them
  for (const obj_directive& d : g->directives)
    for (const std::string& name : d.names)
      if (d.mtllib) scan.mtllibs.emplace_back(name, d.line);
  const mtl_libs libs = check_mtl_libs(scan, path, opt);
  const std::optional<material_runs> m = replay_materials(g->directives, path, opt, libs);
  if (!m) return std::nullopt;
  obj_materials mats(m->mtl, dir, libs.files, opt, reg);
  obj_mesh& out = g->mesh;
  out.files.push_back(path);
  for (const auto& lib : scan.mtllibs)
    if (file_exists(dir / lib.first)) out.files.push_back(dir / lib.first);
  fresh_resize(out.material_of, out.triangles.size());
  for (std::size_t k = 0; k < m->runs.size() && opt.use_materials; ++k) {
    const std::uint64_t b = m->runs[k].first, e = k + 1 < m->runs.size() ? m->runs[k + 1].first : out.triangles.size();
    if (b == e) continue;
    const std::uint32_t id = mats.of(m->runs[k].second);  // registered in the order the triangles first use them
    tbb::parallel_for(tbb::blocked_range<std::uint64_t>(b, e, 1 << 16), [&](const auto& r) {
      std::fill(out.material_of.begin() + static_cast<std::ptrdiff_t>(r.begin()), out.material_of.begin() + static_cast<std::ptrdiff_t>(r.end()), id);
    });
  }
  count_obj_fast_read();
  return std::move(out);
}

}  // namespace

obj_mesh load_obj(const fs::path& path, const obj_options& opt, registry& reg) {
  const std::string file = path.string();
  if (!file_exists(path)) fail(file + ": OBJ file not found" + opt.context);
  input_file obj(path, "OBJ file");
  if (std::optional<obj_mesh> fast = read_fast(obj, path, opt, reg)) return std::move(*fast);
  const obj_scan scan = prescan_obj(obj.stream(), file, opt);
  if (opt.admit) opt.admit(scan.triangles);
  const mtl_libs libs = check_mtl_libs(scan, path, opt);
  const obj_parsed parsed = parse_obj(scan, path, opt, libs);
  obj_materials mats(parsed.mtl, path.parent_path(), libs.files, opt, reg);
  obj_mesh out;
  out.files.push_back(path);
  for (const auto& [name, line] : scan.mtllibs)
    if (file_exists(path.parent_path() / name)) out.files.push_back(path.parent_path() / name);
  add_faces(parsed, file, opt, mats, out);
  return out;
}

}  // namespace sieve::render::detail
