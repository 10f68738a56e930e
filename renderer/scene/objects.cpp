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

}  // namespace

std::vector<material_override> read_objects(const toml::table& doc, const reader& rd, scene& sc, registry& reg,
                                            const fs::path& base_dir, bool model_entry,
                                            std::optional<camera_desc>& bare_camera) {
  const toml::array* objects = array_of_tables(doc, "objects", rd);
  std::vector<material_override> material_overrides;
  if (objects) {
    for (std::size_t i = 0; i < objects->size(); ++i) {
      stop_point();
      const std::string key = "objects[" + std::to_string(i) + "]";
      const toml::table& t = *(*objects)[i].as_table();
      rd.known_keys(t, key + ".", table_keys.at("objects"), "[[objects]]");
      const toml::node* obj = t.get("obj");
      const toml::node* gltf = t.get("gltf");
      const toml::node* ply = t.get("ply");
      if (!obj && !gltf && !ply)
        rd.fail_at(&(*objects)[i], key, "an object needs obj = \"path.obj\" (or gltf = \"path.gltf\", ply = \"path.ply\")");
      if ((obj != nullptr) + (gltf != nullptr) + (ply != nullptr) > 1)
        rd.fail_at(obj ? obj : gltf, key, "give one of obj, gltf and ply");
      const toml::node* file_node = obj ? obj : gltf ? gltf : ply;
      const std::string file_key = key + (obj ? ".obj" : gltf ? ".gltf" : ".ply");
      const std::string rel = rd.path(*file_node, file_key);
      const fs::path obj_path = base_dir / fs::path(rel);
      if (!file_exists(obj_path)) {
        rd.fail_at(file_node, file_key,
                   std::string(obj ? "OBJ" : gltf ? "glTF" : "PLY") + " file " + in_quotes(rel) + " not found (looked for " +
                       obj_path.string() + ")");
      }
      vec3 translate{0, 0, 0}, scale{1, 1, 1};
      double rotate = 0;
      if (const toml::node* v = t.get("translate")) translate = rd.vector(*v, key + ".translate");
      if (const toml::node* v = t.get("scale")) {
        if (v->is_array()) {
          scale = rd.vector(*v, key + ".scale");
        } else {
          const float s = static_cast<float>(rd.number(*v, key + ".scale"));
          scale = {s, s, s};
        }
        if (scale.x == 0 || scale.y == 0 || scale.z == 0)
          rd.fail_at(v, key + ".scale", "a scale of 0 flattens the object");
      }
      if (const toml::node* v = t.get("rotate_y")) rotate = rd.number(*v, key + ".rotate_y");
      std::optional<std::string> material_name;
      if (const toml::node* v = t.get("material")) material_name = rd.string(*v, key + ".material");

      obj_options opt;
      opt.strict = !model_entry;
      opt.use_materials = !material_name;
      if (!model_entry) opt.context = " (" + key + " in " + rd.file + ")";
      const std::uint64_t before = sc.triangles.size(), limit = rd.limits.max_triangles;
      opt.max_triangles = limit > before ? limit - before : 0;
      opt.admit = [&](std::uint64_t count) { rd.check_memory(before + count, sc.film); };
      opt.limit_text = before == 0 ? "(the scene's limit)"
                                   : "(what is left of the scene's limit of " + std::to_string(limit) + " with " +
                                         std::to_string(before) + " before this object)";
      std::optional<camera_desc> camera;
      obj_mesh mesh = obj    ? load_obj(obj_path, opt, reg)
                      : ply ? load_ply(obj_path, opt, reg)
                            : load_gltf_object(obj_path, opt, reg, model_entry ? &camera : nullptr);
      if (model_entry) bare_camera = camera;
      sc.files.insert(sc.files.end(), mesh.files.begin(), mesh.files.end());
      rd.check_triangles(sc.triangles.size() + mesh.triangles.size(), "with " + in_quotes(rel));

      const double c = std::cos(rotate / degrees), s = std::sin(rotate / degrees);
      auto xf = [&](vec3 p) {
        p = p * scale;
        p = {static_cast<float>(c * p.x + s * p.z), p.y, static_cast<float>(-s * p.x + c * p.z)};
        return p + translate;
      };
      // Normals by the inverse transpose: divided by the scale, rotated like the vertices.
      auto xf_normal = [&](vec3 n) {
        if (n.x == 0 && n.y == 0 && n.z == 0) return n;
        n = {n.x / scale.x, n.y / scale.y, n.z / scale.z};
        n = {static_cast<float>(c * n.x + s * n.z), n.y, static_cast<float>(-s * n.x + c * n.z)};
        const float l = length(n);
        return l > 0 && std::isfinite(l) ? n / l : vec3{0, 0, 0};
      };
      const std::size_t begin = sc.triangles.size();
      // Each array sized once, then transformed in parallel (a model's millions of triangles).
      auto each = [](std::size_t n, auto&& f) {
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1 << 14), [&](const auto& r) {
          for (std::size_t k = r.begin(); k != r.end(); ++k) f(k);
        });
      };
      if (!mesh.normals.empty()) {
        fresh_resize(sc.normals, begin + mesh.normals.size());  // flat for the triangles before this object
        each(mesh.normals.size(), [&](std::size_t k) {
          const triangle_normals& n = mesh.normals[k];
          triangle_normals out{xf_normal(n.n0), xf_normal(n.n1), xf_normal(n.n2)};
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
        const float mirror = scale.x * scale.y * scale.z < 0 ? -1.0f : 1.0f;
        auto xf_dir = [&](vec3 d) {
          d = d * scale;
          d = {static_cast<float>(c * d.x + s * d.z), d.y, static_cast<float>(-s * d.x + c * d.z)};
          const float l = length(d);
          return l > 0 && std::isfinite(l) ? d / l : vec3{0, 0, 0};
        };
        sc.tangents.resize(begin + mesh.tangents.size());
        each(mesh.tangents.size(), [&](std::size_t k) {
          const triangle_tangents& tt = mesh.tangents[k];
          sc.tangents[begin + k] = {xf_dir(tt.t0), xf_dir(tt.t1), xf_dir(tt.t2), tt.sign * mirror};
        });
      }
      const bool identity = rotate == 0 && scale.x == 1 && scale.y == 1 && scale.z == 1 && translate.x == 0 &&
                            translate.y == 0 && translate.z == 0;
      if (begin == 0 && identity && !material_name) {  // the first object, as it was read: moved, not copied
        sc.triangles = std::move(mesh.triangles);
        sc.material_of = std::move(mesh.material_of);
      } else {
        sc.triangles.resize(begin + mesh.triangles.size());
        sc.material_of.resize(begin + mesh.triangles.size());
        std::atomic<bool> overflow{false};
        each(mesh.triangles.size(), [&](std::size_t k) {
          const triangle& tri = mesh.triangles[k];
          const triangle out{xf(tri.v0), xf(tri.v1), xf(tri.v2)};
          if (!finite(out.v0) || !finite(out.v1) || !finite(out.v2)) overflow = true;
          sc.triangles[begin + k] = out;
          sc.material_of[begin + k] = material_name ? 0 : mesh.material_of[k];
        });
        if (overflow) rd.fail_at(&(*objects)[i], key, "the transformed vertices of " + in_quotes(rel) + " overflow a float");
      }
      if (material_name) {
        material_overrides.push_back(
            {begin, sc.triangles.size(), *material_name, t.get("material"), key + ".material"});
      }
    }
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
