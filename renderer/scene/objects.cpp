// [[objects]]: OBJ or glTF files placed in the scene (translate, scale, rotate_y), with their own materials or one `material =`.
#include "sections.hpp"

#include "gltf.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include "../exec/fresh_memory.hpp"
#include "../exec/stop.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>

namespace sieve::render::detail {
namespace {

// A glTF file as an object: its materials join the registry by name (all of them, as an OBJ's MTL
// materials do under `material =`, which may name one); a primitive without one gets the grey default.
// A diffuse material's base colour texture becomes its albedo texture (times baseColorFactor); an
// emissive texture's mean multiplies the emission (sieve has no textured emission).
obj_mesh load_gltf_object(const fs::path& path, const obj_options& opt, registry& reg,
                          std::optional<camera_desc>* camera) {
  gltf_options g;
  g.camera = camera != nullptr;  // a model in a scene file: its cameras play no part
  g.context = opt.context;
  g.max_triangles = opt.max_triangles;
  g.limit_text = opt.limit_text;
  g.admit = opt.admit;
  g.used_materials_only = opt.use_materials;  // (`material =` may name any of them)
  gltf_mesh m = load_gltf(path, g);
  std::vector<std::uint32_t> index(m.materials.size());
  std::vector<std::optional<vec3>> mean_of(m.images.size());  // emissive textures' mean colours
  std::vector<bool> used(m.materials.size());  // only the textures of materials some primitive uses are read
  for (const std::uint32_t i : m.material_of)
    if (i != gltf_mesh::no_material) used[i] = true;
  for (std::size_t i = 0; i < m.materials.size(); ++i) {
    material& mat = m.materials[i];
    if (!used[i] && opt.use_materials) continue;  // (`material =` may name any of them)
    const std::string who = path.string() + ": material " + in_quotes(mat.name) + opt.context;
    auto image = [&](const gltf_mesh::texture_ref& ref) -> const gltf_mesh::image* {
      if (ref.image < 0) return nullptr;
      const gltf_mesh::image& im = m.images[static_cast<std::size_t>(ref.image)];
      if (im.missing) {
        print_warning(who + ": texture " + in_quotes(im.name) + " not found; the material keeps its constant colour");
        return nullptr;
      }
      return &im;
    };
    // One transform a material (sieve reads every texture of a material at the same coordinates):
    // the first of its textures that has one; a different one on another texture is a warning.
    bool have_uv = false;
    for (const auto* ref : {&m.base_color_texture[i], &m.metal_rough_texture[i], &m.emissive_texture[i], &m.normal_texture[i]}) {
      if (ref->image < 0) continue;
      if (!have_uv) {
        mat.uv = ref->transform;
        have_uv = true;
      } else if (!std::equal(mat.uv.m, mat.uv.m + 6, ref->transform.m)) {
        print_warning(who + ": textures with different KHR_texture_transform; the first one applies to all");
      }
    }
    const bool coloured = mat.kind == material_kind::diffuse || mat.kind == material_kind::gltf;
    if (const auto* im = image(m.base_color_texture[i]); im && coloured) {
      mat.albedo_texture = reg.texture_index(im->name, im->bytes, m.base_color_texture[i].wrap, mat.albedo, who);
    }
    // alphaMode MASK or BLEND: the base colour texture's alpha channel times the factor's (core/alpha.hpp).
    if (const auto* im = image(m.base_color_texture[i]); im && mat.alpha != alpha_mode::opaque) {
      mat.opacity_texture = reg.texture_index(im->name, im->bytes, m.base_color_texture[i].wrap, vec3{1, 1, 1}, who,
                                              image_use::alpha);
    }
    // The emission: factor x strength (the material's) times the texel at each hit (shade.hpp).
    if (const auto* im = image(m.emissive_texture[i]); im && max_component(mat.emission) > 0) {
      mat.emission_texture = reg.texture_index(im->name, im->bytes, m.emissive_texture[i].wrap, vec3{1, 1, 1}, who);
    }
    // A normal map: stored values (not sRGB), read in the tangent frame of the primitive (gltf.cpp).
    if (const auto* im = image(m.normal_texture[i])) {
      mat.normal_texture = reg.texture_index(im->name, im->bytes, m.normal_texture[i].wrap, vec3{1, 1, 1}, who,
                                             image_use::normal);
    }
    if (const auto* im = image(m.metal_rough_texture[i]); im && mat.kind == material_kind::gltf) {
      mat.metal_rough_texture = reg.texture_index(im->name, im->bytes, m.metal_rough_texture[i].wrap, vec3{1, 1, 1},
                                                  who, image_use::metal_rough);
    }
    index[i] = reg.add(mat, path.string());
  }
  obj_mesh out;
  out.files = std::move(m.files);
  out.triangles = std::move(m.triangles);
  out.normals = std::move(m.normals);
  out.uvs = std::move(m.uvs);
  out.tangents = std::move(m.tangents);
  out.material_of.reserve(m.material_of.size());
  for (const std::uint32_t i : m.material_of) {
    out.material_of.push_back(!opt.use_materials            ? 0
                              : i == gltf_mesh::no_material ? reg.default_grey()
                                                            : index[i]);
  }
  if (camera) *camera = m.camera;
  return out;
}

// An [[objects]] entry as written: its file, where it goes, its material (if one for all).
struct object_entry {
  enum class format { obj, gltf, ply } kind = format::obj;
  std::string rel;  // the path as written
  fs::path path;    // from the scene file's folder
  vec3 translate{0, 0, 0}, scale{1, 1, 1};
  double rotate = 0;  // degrees about y
  std::optional<std::string> material;
  bool identity() const {
    return rotate == 0 && scale.x == 1 && scale.y == 1 && scale.z == 1 && translate.x == 0 && translate.y == 0 &&
           translate.z == 0;
  }
};

object_entry read_entry(const toml::table& t, const toml::node* at, const std::string& key, const reader& rd,
                        const fs::path& base_dir) {
  rd.known_keys(t, key + ".", table_keys.at("objects"), "[[objects]]");
  const toml::node* obj = t.get("obj");
  const toml::node* gltf = t.get("gltf");
  const toml::node* ply = t.get("ply");
  if (!obj && !gltf && !ply) rd.fail_at(at, key, "an object needs obj = \"path.obj\" (or gltf = \"path.gltf\", ply = \"path.ply\")");
  if ((obj != nullptr) + (gltf != nullptr) + (ply != nullptr) > 1) rd.fail_at(obj ? obj : gltf, key, "give one of obj, gltf and ply");
  object_entry e;
  e.kind = obj ? object_entry::format::obj : gltf ? object_entry::format::gltf : object_entry::format::ply;
  const toml::node* file_node = obj ? obj : gltf ? gltf : ply;
  const std::string file_key = key + (obj ? ".obj" : gltf ? ".gltf" : ".ply");
  e.rel = rd.path(*file_node, file_key);
  e.path = base_dir / fs::path(e.rel);
  if (!file_exists(e.path)) {
    rd.fail_at(file_node, file_key,
               std::string(obj ? "OBJ" : gltf ? "glTF" : "PLY") + " file " + in_quotes(e.rel) + " not found (looked for " +
                   e.path.string() + ")");
  }
  if (const toml::node* v = t.get("translate")) e.translate = rd.vector(*v, key + ".translate");
  if (const toml::node* v = t.get("scale")) {
    if (v->is_array()) {
      e.scale = rd.vector(*v, key + ".scale");
    } else {
      const float s = static_cast<float>(rd.number(*v, key + ".scale"));
      e.scale = {s, s, s};
    }
    if (e.scale.x == 0 || e.scale.y == 0 || e.scale.z == 0) rd.fail_at(v, key + ".scale", "a scale of 0 flattens the object");
  }
  if (const toml::node* v = t.get("rotate_y")) e.rotate = rd.number(*v, key + ".rotate_y");
  if (const toml::node* v = t.get("material")) e.material = rd.string(*v, key + ".material");
  return e;
}

// The entry's file read, within what is left of the scene's limits.
obj_mesh load_entry(const object_entry& e, const std::string& key, const reader& rd, scene& sc, registry& reg,
                    bool model_entry, std::optional<camera_desc>& bare_camera) {
  obj_options opt;
  opt.strict = !model_entry;
  opt.use_materials = !e.material;
  if (!model_entry) opt.context = " (" + key + " in " + rd.file + ")";
  const std::uint64_t before = sc.triangles.size(), limit = rd.limits.max_triangles;
  opt.max_triangles = limit > before ? limit - before : 0;
  opt.admit = [&rd, &sc, before](std::uint64_t count) { rd.check_memory(before + count, sc.film); };
  opt.limit_text = before == 0 ? "(the scene's limit)"
                               : "(what is left of the scene's limit of " + std::to_string(limit) + " with " +
                                     std::to_string(before) + " before this object)";
  std::optional<camera_desc> camera;
  obj_mesh mesh = e.kind == object_entry::format::obj ? load_obj(e.path, opt, reg)
                  : e.kind == object_entry::format::ply ? load_ply(e.path, opt, reg)
                                                        : load_gltf_object(e.path, opt, reg, model_entry ? &camera : nullptr);
  if (model_entry) bare_camera = camera;
  sc.files.insert(sc.files.end(), mesh.files.begin(), mesh.files.end());
  rd.check_triangles(sc.triangles.size() + mesh.triangles.size(), "with " + in_quotes(e.rel));
  return mesh;
}

// The entry's placement: scale, then the rotation about y, then the translation.
struct placement {
  vec3 scale, translate;
  double c, s;
  explicit placement(const object_entry& e)
      : scale(e.scale), translate(e.translate), c(std::cos(e.rotate / degrees)), s(std::sin(e.rotate / degrees)) {}
  vec3 rotated(vec3 p) const { return {static_cast<float>(c * p.x + s * p.z), p.y, static_cast<float>(-s * p.x + c * p.z)}; }
  vec3 point(vec3 p) const { return rotated(p * scale) + translate; }
  static vec3 unit(vec3 d) {
    const float l = length(d);
    return l > 0 && std::isfinite(l) ? d / l : vec3{0, 0, 0};
  }
  // Normals by the inverse transpose: divided by the scale, rotated like the vertices.
  vec3 normal(vec3 n) const {
    if (n.x == 0 && n.y == 0 && n.z == 0) return n;
    return unit(rotated({n.x / scale.x, n.y / scale.y, n.z / scale.z}));
  }
  vec3 direction(vec3 d) const { return unit(rotated(d * scale)); }
};

// f(k) for k < n in parallel (a model's millions of triangles).
template <class F>
void each(std::size_t n, F&& f) {
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1 << 14), [&](const auto& r) {
    for (std::size_t k = r.begin(); k != r.end(); ++k) f(k);
  });
}

// The mesh's shading attributes appended to the scene's (placed), each array sized once; the first
// object's texture coordinates are moved, not copied.
void place_attributes(obj_mesh& mesh, const placement& xf, std::size_t begin, scene& sc) {
  if (!mesh.normals.empty()) {
    fresh_resize(sc.normals, begin + mesh.normals.size());  // flat for the triangles before this object
    each(mesh.normals.size(), [&](std::size_t k) {
      const triangle_normals& n = mesh.normals[k];
      triangle_normals out{xf.normal(n.n0), xf.normal(n.n1), xf.normal(n.n2)};
      const vec3 zero{0, 0, 0};
      auto is_zero = [](vec3 v) { return v.x == 0 && v.y == 0 && v.z == 0; };
      if (is_zero(out.n0) || is_zero(out.n1) || is_zero(out.n2)) out = {zero, zero, zero};  // degenerate: flat
      sc.normals[begin + k] = out;
    });
  }
  if (!mesh.uvs.empty() && begin == 0) {
    sc.uvs = std::move(mesh.uvs);
  } else if (!mesh.uvs.empty()) {
    fresh_resize(sc.uvs, begin + mesh.uvs.size());  // unmapped for the triangles before this object
    each(mesh.uvs.size(), [&](std::size_t k) { sc.uvs[begin + k] = mesh.uvs[k]; });
  }
  if (!mesh.tangents.empty()) {  // directions, like the vertices; a mirroring scale turns the handedness
    const float mirror = xf.scale.x * xf.scale.y * xf.scale.z < 0 ? -1.0f : 1.0f;
    sc.tangents.resize(begin + mesh.tangents.size());
    each(mesh.tangents.size(), [&](std::size_t k) {
      const triangle_tangents& tt = mesh.tangents[k];
      sc.tangents[begin + k] = {xf.direction(tt.t0), xf.direction(tt.t1), xf.direction(tt.t2), tt.sign * mirror};
    });
  }
}

// The mesh's triangles and materials appended to the scene's (placed); false when a placed vertex
// overflows a float.
bool place_triangles(obj_mesh& mesh, const object_entry& e, std::size_t begin, scene& sc) {
  if (begin == 0 && e.identity() && !e.material) {  // the first object, as it was read: moved, not copied
    sc.triangles = std::move(mesh.triangles);
    sc.material_of = std::move(mesh.material_of);
    return true;
  }
  const placement xf(e);
  const bool one_material = e.material.has_value();
  sc.triangles.resize(begin + mesh.triangles.size());
  sc.material_of.resize(begin + mesh.triangles.size());
  std::atomic<bool> overflow{false};
  each(mesh.triangles.size(), [&](std::size_t k) {
    const triangle& tri = mesh.triangles[k];
    const triangle out{xf.point(tri.v0), xf.point(tri.v1), xf.point(tri.v2)};
    if (!finite(out.v0) || !finite(out.v1) || !finite(out.v2)) overflow = true;
    sc.triangles[begin + k] = out;
    sc.material_of[begin + k] = one_material ? 0 : mesh.material_of[k];
  });
  return !overflow;
}

}  // namespace

std::vector<material_override> read_objects(const toml::table& doc, const reader& rd, scene& sc, registry& reg,
                                            const fs::path& base_dir, bool model_entry,
                                            std::optional<camera_desc>& bare_camera) {
  const toml::array* objects = array_of_tables(doc, "objects", rd);
  std::vector<material_override> material_overrides;
  for (std::size_t i = 0; objects && i < objects->size(); ++i) {
    stop_point();
    const std::string key = "objects[" + std::to_string(i) + "]";
    const toml::table& t = *(*objects)[i].as_table();
    const object_entry e = read_entry(t, &(*objects)[i], key, rd, base_dir);
    obj_mesh mesh = load_entry(e, key, rd, sc, reg, model_entry, bare_camera);
    const std::size_t begin = sc.triangles.size();
    place_attributes(mesh, placement(e), begin, sc);
    if (!place_triangles(mesh, e, begin, sc))
      rd.fail_at(&(*objects)[i], key, "the transformed vertices of " + in_quotes(e.rel) + " overflow a float");
    if (e.material) material_overrides.push_back({begin, sc.triangles.size(), *e.material, t.get("material"), key + ".material"});
  }
  return material_overrides;
}

void apply_material_overrides(const std::vector<material_override>& material_overrides, const reader& rd,
                              const registry& reg, scene& sc) {
  for (const auto& p : material_overrides) {
    const auto i = reg.find(p.material);
    if (!i) {
      std::vector<std::string_view> names;
      for (const auto& m : reg.list) names.push_back(m.name);
      rd.fail_at(p.node, p.key,
                 "no material named " + in_quotes(p.material) +
                     " (known: " + (names.empty() ? "none" : join(names)) + "; [[materials]] can define it)");
    }
    std::fill(sc.material_of.begin() + static_cast<std::ptrdiff_t>(p.begin),
              sc.material_of.begin() + static_cast<std::ptrdiff_t>(p.end), *i);
  }
}

}  // namespace sieve::render::detail
