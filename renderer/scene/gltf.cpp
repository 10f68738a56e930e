// glTF 2.0 meshes through tinygltf (its implementation: scene/tinygltf.cpp). sieve reads the file, the
// GLB container, buffers and images itself (gltf_source.hpp); tinygltf parses the JSON that is left
// (its depth already limited). tinygltf does not check that accessors and views stay inside their
// buffers, nor most indices between elements, so everything read here is checked first.
// Compressed geometry (Draco, meshopt) is decoded into plain buffers first (gltf_decode.hpp);
// KHR_mesh_quantization's integer attributes are read here, normalised or not, as glTF defines.
// load_gltf's phases: parse, decode, walk the node tree, check and count the primitives, map the
// materials and their images, make the triangles.
// Mapping and keys: scenes/README.md.
#include "gltf.hpp"
#include "gltf_model.hpp"
#include "tangents.hpp"

#include "gltf_decode.hpp"
#include "gltf_source.hpp"
#include "input_file.hpp"

#include <tiny_gltf.h>

#include <sieve/compaction/error.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sieve::render {
namespace {

namespace fs = std::filesystem;
using namespace gltf_detail;

// How to convert a file that needs an extension sieve does not decode (a build without the library
// that decodes it: gltf_decode.hpp).
std::string unsupported_hint(const std::string& e) {
  if (e == "KHR_draco_mesh_compression") {
    return " (Draco-compressed geometry: build sieve with libdraco-dev, or import the file into Blender and export "
           "it with compression off)";
  }
  if (e == "EXT_meshopt_compression" || e == "KHR_meshopt_compression")
    return " (meshopt-compressed geometry: build sieve with libmeshoptimizer-dev, or write it plain with `gltfpack -i in.glb -o out.glb -noq`)";
  if (e == "KHR_texture_basisu" || e == "EXT_texture_webp")
    return " (compressed textures: convert them to PNG or JPEG, e.g. `gltf-transform png in.glb out.glb`)";
  return "";
}

const std::vector<std::string_view> supported_extensions = {
    "KHR_materials_emissive_strength", "KHR_materials_ior", "KHR_materials_transmission", "KHR_materials_volume",
    "KHR_texture_transform"};

// tinygltf reads no file: sieve took the buffers and images out of the JSON it parses.
bool no_file_exists(const std::string&, void*) { return false; }
std::string no_expand(const std::string& path, void*) { return path; }
bool no_read(std::vector<unsigned char>*, std::string* err, const std::string&, void*) {
  if (err) *err += "sieve reads the glTF's files itself";
  return false;
}
bool no_write(std::string* err, const std::string&, const std::vector<unsigned char>&, void*) {
  if (err) *err += "sieve writes no glTF files";
  return false;
}

// Phase 1: the JSON sieve left (gltf_source) parsed by tinygltf; required extensions checked.
tinygltf::Model parse_model(const detail::gltf_source& src, const gltf_options& opt) {
  tinygltf::TinyGLTF parser;
  parser.SetFsCallbacks({&no_file_exists, &no_expand, &no_read, &no_write, nullptr});
  tinygltf::Model model;
  std::string err, warn;
  const std::string& json = src.json();
  const bool ok = parser.LoadASCIIFromString(&model, &err, &warn, json.data(), static_cast<unsigned int>(json.size()), "");
  if (!ok || !detail::trim(err).empty()) {
    std::string first(detail::trim(err.empty() ? warn : err));
    if (const auto nl = first.find('\n'); nl != std::string::npos) first.resize(nl);  // one line
    if (first.size() > 240) first = first.substr(0, 240) + "...";
    fail(src.file() + ": " + (first.empty() ? "not a glTF file" : std::string(detail::trim(first))) + opt.context);
  }
  for (const std::string& e : model.extensionsRequired) {
    if (std::find(supported_extensions.begin(), supported_extensions.end(), e) == supported_extensions.end() &&
        !detail::gltf_decodes(e)) {
      fail(src.file() + ": the file requires the extension " + in_quotes(e) + ", which sieve does not read" +
           unsupported_hint(e) + opt.context);
    }
  }
  return model;
}

struct instance {
  int mesh;
  mat4 world;
  std::string node;
};

// The first perspective camera's placement, from its node's world transform.
camera_desc camera_of(const tinygltf::Camera& cam, const mat4& world, const model_reader& rd, const std::string& where,
                      const std::string& cwhere) {
  const double yfov = cam.perspective.yfov * 180 / pi;
  if (!(yfov > 0 && yfov < 180)) rd.error(cwhere, "yfov " + str(cam.perspective.yfov) + " is out of range (0 < yfov < pi)");
  camera_desc c;
  c.position = {static_cast<float>(world[12]), static_cast<float>(world[13]), static_cast<float>(world[14])};
  const vec3 forward = apply_direction(world, 0, 0, -1), up = apply_direction(world, 0, 1, 0);
  if (!finite(c.position) || !finite(forward) || !finite(up) || !(length(forward) > 0) || !(length(up) > 0) ||
      !(length(cross(normalize(forward), normalize(up))) > 1e-6f)) {
    rd.error(where, "the transform of the camera is degenerate or overflows a float");
  }
  c.look_at = c.position + normalize(forward) * std::max(1.0f, length(c.position) * 1e-3f);
  c.up = normalize(up);
  c.vfov_degrees = static_cast<float>(yfov);
  const double aspect = cam.perspective.aspectRatio;
  if (aspect > 1e-3 && aspect < 1e3) c.aspect = static_cast<float>(aspect);
  if (!finite(c.look_at) || !(length(c.look_at - c.position) > 0)) {
    rd.error(where, "the camera's position " + str3(c.position) + " is too large");
  }
  return c;
}

// Phase 2: the node tree of the scene to show (`scene`, else the first, else every node that is no
// child), walked iteratively (a chain of nodes may be long), each node once: the mesh instances with
// their world transforms, and the first perspective camera into out.camera.
std::vector<instance> walk_nodes(const tinygltf::Model& model, const model_reader& rd, const gltf_options& opt,
                                 gltf_mesh& out) {
  std::vector<int> roots;
  if (!model.scenes.empty()) {
    const int s = model.defaultScene >= 0 ? model.defaultScene : 0;
    if (static_cast<std::size_t>(s) >= model.scenes.size()) {
      rd.error("scene", std::to_string(s) + " does not exist (the file has " + std::to_string(model.scenes.size()) + ")");
    }
    roots = model.scenes[static_cast<std::size_t>(s)].nodes;
  } else {
    std::vector<bool> child(model.nodes.size(), false);
    for (const auto& n : model.nodes)
      for (const int c : n.children)
        if (c >= 0 && static_cast<std::size_t>(c) < child.size()) child[static_cast<std::size_t>(c)] = true;
    for (std::size_t i = 0; i < model.nodes.size(); ++i)
      if (!child[i]) roots.push_back(static_cast<int>(i));
  }
  std::vector<instance> instances;
  std::vector<bool> seen(model.nodes.size(), false);
  std::vector<std::pair<int, mat4>> stack;
  for (auto it = roots.rbegin(); it != roots.rend(); ++it) stack.emplace_back(*it, identity);
  while (!stack.empty()) {
    const auto [n, parent] = stack.back();
    stack.pop_back();
    rd.check_index("nodes", "node", n, model.nodes.size());
    const auto ni = static_cast<std::size_t>(n);
    const std::string where = idx("nodes", ni);
    if (seen[ni]) rd.error(where, "reached twice (the node hierarchy must be a tree: a cycle or a shared child)");
    seen[ni] = true;
    const tinygltf::Node& node = model.nodes[ni];
    const mat4 local = local_transform(node, rd, where);
    const mat4 world = local == identity ? parent : parent == identity ? local : mul(parent, local);
    if (node.mesh != -1) {
      rd.check_index(where, "mesh", node.mesh, model.meshes.size());
      instances.push_back({node.mesh, world, where});
    }
    if (opt.camera && node.camera >= 0 && !out.camera) {
      rd.check_index(where, "camera", node.camera, model.cameras.size());
      const tinygltf::Camera& cam = model.cameras[static_cast<std::size_t>(node.camera)];
      const std::string cwhere = idx("cameras", static_cast<std::size_t>(node.camera));
      if (cam.type == "perspective") {
        out.camera = camera_of(cam, world, rd, where, cwhere);
      } else {
        detail::print_warning(rd.file + ": " + cwhere + ": a " + in_quotes(cam.type) +
                              " camera is not supported (only perspective); ignored" + opt.context);
      }
    }
    for (auto it = node.children.rbegin(); it != node.children.rend(); ++it) stack.emplace_back(*it, world);
  }
  return instances;
}

struct prim {
  const tinygltf::Primitive* p;
  std::string where;
  elements positions;
  std::optional<elements> indices;
  std::optional<elements> normals, uvs;
  std::uint64_t triangles;
  std::optional<elements> tangents;  // TANGENT (VEC4 float: xyz, handedness w)
};

// What phase 3 remembers across primitives: each accessor's data is scanned once, however many
// primitives share it.
struct scan_memo {
  std::vector<bool> scanned;  // POSITION, NORMAL, TEXCOORD_0 accessors checked finite
  std::vector<std::optional<std::pair<std::size_t, std::uint32_t>>> largest_index;  // (where, value)
};

// NORMAL, TEXCOORD_0 and TANGENT of a primitive: one per position, finite.
void check_attributes(const tinygltf::Primitive& p, const model_reader& rd, prim& q, scan_memo& memo) {
  if (const auto it = p.attributes.find("TANGENT"); it != p.attributes.end()) {
    const std::string w = q.where + ".attributes.TANGENT";
    q.tangents = rd.view(it->second, w, TINYGLTF_TYPE_VEC4, rd.unit_vector_types());
    rd.check_normalized(*q.tangents, it->second, w);
    if (q.tangents->count != q.positions.count) {
      rd.error(w, std::to_string(q.tangents->count) + " tangents for " + std::to_string(q.positions.count) + " positions");
    }
    for (std::size_t v = 0; v < q.tangents->count; ++v) {
      for (const float x : tangent_at(*q.tangents, v))
        if (!std::isfinite(x)) rd.error(w, "tangent " + std::to_string(v) + " is not finite");
    }
  }
  if (const auto it = p.attributes.find("NORMAL"); it != p.attributes.end()) {
    const std::string w = q.where + ".attributes.NORMAL";
    q.normals = rd.view(it->second, w, TINYGLTF_TYPE_VEC3, rd.unit_vector_types());
    rd.check_normalized(*q.normals, it->second, w);
    if (q.normals->count != q.positions.count) {
      rd.error(w, std::to_string(q.normals->count) + " normals for " + std::to_string(q.positions.count) + " positions");
    }
    if (!memo.scanned[static_cast<std::size_t>(it->second)]) {
      memo.scanned[static_cast<std::size_t>(it->second)] = true;
      for (std::size_t v = 0; v < q.normals->count; ++v) {
        const vec3 x = vec3_at(*q.normals, v);
        if (!finite(x)) rd.error(w, "normal " + std::to_string(v) + " " + str3(x) + " is not finite");
      }
    }
  }
  if (const auto it = p.attributes.find("TEXCOORD_0"); it != p.attributes.end()) {
    const std::string w = q.where + ".attributes.TEXCOORD_0";
    q.uvs = rd.view(it->second, w, TINYGLTF_TYPE_VEC2, rd.texcoord_types());
    if (q.uvs->component_type != TINYGLTF_COMPONENT_TYPE_FLOAT && !q.uvs->normalized && !rd.quantized) {
      rd.error(idx("accessors", static_cast<std::size_t>(it->second)) + " (" + w + ")",
               "integer texture coordinates must be normalized");
    }
    if (q.uvs->count != q.positions.count) {
      rd.error(w, std::to_string(q.uvs->count) + " texture coordinates for " + std::to_string(q.positions.count) + " positions");
    }
    if (!memo.scanned[static_cast<std::size_t>(it->second)]) {
      memo.scanned[static_cast<std::size_t>(it->second)] = true;
      for (std::size_t v = 0; v < q.uvs->count; ++v) {
        const tex_coord t = uv_at(*q.uvs, v);
        if (!std::isfinite(t.u) || !std::isfinite(t.v)) {
          rd.error(w, "texture coordinate " + std::to_string(v) + " (" + str(t.u) + ", " + str(t.v) + ") is not finite");
        }
      }
    }
  }
}

// One triangle primitive checked (POSITION finite, attributes, indices within the positions) and its
// triangles counted.
prim check_primitive(const tinygltf::Primitive& p, const std::string& where, const model_reader& rd, scan_memo& memo) {
  if (p.mode != TINYGLTF_MODE_TRIANGLES && p.mode != TINYGLTF_MODE_TRIANGLE_STRIP && p.mode != TINYGLTF_MODE_TRIANGLE_FAN) {
    rd.error(where, "mode " + std::to_string(p.mode) + " is not a primitive mode (0 .. 6)");
  }
  const auto pos = p.attributes.find("POSITION");
  if (pos == p.attributes.end()) rd.error(where, "no POSITION attribute");
  prim q{&p, where, rd.view(pos->second, where + ".attributes.POSITION", TINYGLTF_TYPE_VEC3, rd.position_types()),
         std::nullopt, std::nullopt, std::nullopt, 0, std::nullopt};
  if (!memo.scanned[static_cast<std::size_t>(pos->second)]) {
    memo.scanned[static_cast<std::size_t>(pos->second)] = true;
    for (std::size_t v = 0; v < q.positions.count; ++v) {
      const vec3 x = vec3_at(q.positions, v);
      if (!finite(x)) rd.error(where + ".attributes.POSITION", "vertex " + std::to_string(v) + " " + str3(x) + " is not finite");
    }
  }
  check_attributes(p, rd, q, memo);
  std::size_t n = q.positions.count;
  if (p.indices >= 0) {
    q.indices = rd.view(p.indices, where + ".indices", TINYGLTF_TYPE_SCALAR,
                        {TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE, TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT,
                         TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT});
    n = q.indices->count;
    auto& first_max = memo.largest_index[static_cast<std::size_t>(p.indices)];
    if (!first_max) {
      std::pair<std::size_t, std::uint32_t> m{0, 0};  // where the largest index is, and its value
      for (std::size_t k = 0; k < n; ++k) {
        const std::uint32_t v = index_at(*q.indices, k);
        if (v > m.second) m = {k, v};
      }
      first_max = m;
    }
    if (first_max->second >= q.positions.count) {
      rd.error(where + ".indices", "index " + std::to_string(first_max->first) + " is " + std::to_string(first_max->second) +
                                       ", past the " + std::to_string(q.positions.count) + " vertices");
    }
  } else if (p.indices < -1) {
    rd.error(where, "indices " + std::to_string(p.indices) + " does not exist");
  }
  if (p.mode == TINYGLTF_MODE_TRIANGLES) {
    if (n % 3 != 0) rd.error(where, std::to_string(n) + " vertices is not a multiple of 3 (mode TRIANGLES)");
    q.triangles = n / 3;
  } else {
    q.triangles = n >= 3 ? n - 2 : 0;
  }
  if (p.material != -1) rd.check_index(where, "material", p.material, rd.m.materials.size());
  return q;
}

// Phase 3: every primitive drawn checked and its triangles counted before any is made (points and
// lines skipped with a warning). Returns the primitives per mesh and the total.
std::uint64_t check_primitives(const tinygltf::Model& model, const std::vector<instance>& instances,
                               const model_reader& rd, const gltf_options& opt, std::vector<std::vector<prim>>& prims) {
  prims.assign(model.meshes.size(), {});
  std::vector<bool> checked(model.meshes.size(), false);
  scan_memo memo{std::vector<bool>(model.accessors.size(), false), {}};
  memo.largest_index.resize(model.accessors.size());
  std::uint64_t total = 0;
  std::size_t skipped = 0;
  for (const instance& inst : instances) {
    const auto mi = static_cast<std::size_t>(inst.mesh);
    if (!checked[mi]) {
      checked[mi] = true;
      const tinygltf::Mesh& mesh = model.meshes[mi];
      for (std::size_t k = 0; k < mesh.primitives.size(); ++k) {
        const tinygltf::Primitive& p = mesh.primitives[k];
        if (p.mode == TINYGLTF_MODE_POINTS || p.mode == TINYGLTF_MODE_LINE || p.mode == TINYGLTF_MODE_LINE_LOOP ||
            p.mode == TINYGLTF_MODE_LINE_STRIP) {
          ++skipped;
          continue;
        }
        prims[mi].push_back(check_primitive(p, idx("meshes", mi) + "." + idx("primitives", k), rd, memo));
      }
    }
    for (const prim& q : prims[mi]) {
      total += q.triangles;
      if (total > opt.max_triangles) {
        fail(rd.file + ": " + inst.node + ": more than " + std::to_string(opt.max_triangles) + " triangles " +
             opt.limit_text + opt.context);
      }
    }
  }
  if (skipped) {
    detail::print_warning(rd.file + ": " + std::to_string(skipped) +
                          " primitive(s) of points or lines skipped (sieve renders triangles)" + opt.context);
  }
  if (total == 0) fail(rd.file + ": no triangles in the scene's meshes" + opt.context);
  return total;
}

// Phase 5: the triangles of every instance in world space, with their normals and uvs.
void make_triangles(const std::vector<instance>& instances, const std::vector<std::vector<prim>>& prims,
                    std::uint64_t total, const model_reader& rd, gltf_mesh& out) {
  bool any_normals = false, any_uvs = false;
  for (const instance& inst : instances) {
    for (const prim& q : prims[static_cast<std::size_t>(inst.mesh)]) {
      any_normals = any_normals || q.normals;
      any_uvs = any_uvs || q.uvs;
    }
  }
  out.triangles.reserve(total);
  out.material_of.reserve(total);
  if (any_normals) out.normals.reserve(total);
  if (any_uvs) out.uvs.reserve(total);
  for (const instance& inst : instances) {
    const normal_transform nt = normal_transform_of(inst.world);
    for (const prim& q : prims[static_cast<std::size_t>(inst.mesh)]) {
      const std::uint32_t mat = q.p->material >= 0 ? static_cast<std::uint32_t>(q.p->material) : gltf_mesh::no_material;
      auto vertex_index = [&](std::size_t k) -> std::size_t { return q.indices ? index_at(*q.indices, k) : k; };
      auto vertex = [&](std::size_t k) { return apply_point(inst.world, vec3_at(q.positions, vertex_index(k))); };
      auto normal = [&](std::size_t k) { return apply_normal(nt, vec3_at(*q.normals, vertex_index(k))); };
      auto uv = [&](std::size_t k) {
        const tex_coord t = uv_at(*q.uvs, vertex_index(k));
        return tex_coord{t.u, 1.0f - t.v};  // glTF's v runs down the image, sieve's up
      };
      auto corners = [&](std::uint64_t t, std::size_t& a, std::size_t& b, std::size_t& c) {
        if (q.p->mode == TINYGLTF_MODE_TRIANGLES) {
          a = 3 * t, b = 3 * t + 1, c = 3 * t + 2;
        } else if (q.p->mode == TINYGLTF_MODE_TRIANGLE_STRIP) {  // keeps the winding of the first
          a = t, b = t + 1 + t % 2, c = t + 2 - t % 2;
        } else {  // fan
          a = t + 1, b = t + 2, c = 0;
        }
        if (nt.det < 0) std::swap(b, c);  // a mirroring transform: glTF's front faces run clockwise
      };
      // Tangents where the material reads a normal map and the primitive has normals and uvs.
      std::vector<vertex_tangent> tangent;
      const bool mapped = mat != gltf_mesh::no_material && out.normal_texture[mat].image >= 0;
      if (mapped && q.normals && q.tangents) {  // the file's: directions, turned like the vertices
        const vec3 origin = apply_point(inst.world, vec3{0, 0, 0});
        tangent.resize(q.positions.count);
        for (std::size_t v = 0; v < q.positions.count; ++v) {
          const std::array<float, 4> t = tangent_at(*q.tangents, v);
          const vec3 d = apply_point(inst.world, vec3{t[0], t[1], t[2]}) - origin;
          const float l = length(d);
          tangent[v] = {l > 0 && std::isfinite(l) ? d / l : vec3{0, 0, 0}, (t[3] < 0 ? -1.0f : 1.0f) * (nt.det < 0 ? -1.0f : 1.0f)};
        }
      } else if (mapped && q.normals && q.uvs) {
        const std::size_t nv = q.positions.count;
        std::vector<vec3> pw(nv), nw(nv);
        std::vector<tex_coord> tw(nv);
        for (std::size_t v = 0; v < nv; ++v) {
          pw[v] = apply_point(inst.world, vec3_at(q.positions, v));
          nw[v] = normalize(apply_normal(nt, vec3_at(*q.normals, v)));
          const tex_coord g = uv_at(*q.uvs, v);
          tw[v] = {g.u, 1.0f - g.v};
        }
        std::vector<std::uint32_t> idx;
        idx.reserve(3 * q.triangles);
        for (std::uint64_t t = 0; t < q.triangles; ++t) {
          std::size_t a, b, c;
          corners(t, a, b, c);
          for (const std::size_t k : {a, b, c}) idx.push_back(static_cast<std::uint32_t>(vertex_index(k)));
        }
        tangent = vertex_tangents(pw, nw, tw, idx);
      }
      for (std::uint64_t t = 0; t < q.triangles; ++t) {
        std::size_t a, b, c;
        corners(t, a, b, c);
        const triangle tri{vertex(a), vertex(b), vertex(c)};
        if (!finite(tri.v0) || !finite(tri.v1) || !finite(tri.v2)) {
          rd.error(inst.node, "the transformed vertices of " + q.where + " overflow a float");
        }
        out.triangles.push_back(tri);
        out.material_of.push_back(mat);
        if (any_normals) {
          triangle_normals n{};
          if (q.normals) n = {normal(a), normal(b), normal(c)};
          const auto zero = [](vec3 v) { return v.x == 0 && v.y == 0 && v.z == 0; };
          if (zero(n.n0) || zero(n.n1) || zero(n.n2)) n = {};  // one degenerate normal: the triangle is flat
          out.normals.push_back(n);
        }
        if (any_uvs) out.uvs.push_back(q.uvs ? triangle_uvs{uv(a), uv(b), uv(c)} : triangle_uvs{});
        if (!tangent.empty()) {
          if (out.tangents.empty()) out.tangents.resize(out.triangles.size() - 1);
          const vertex_tangent &ta = tangent[vertex_index(a)], &tb = tangent[vertex_index(b)], &tc = tangent[vertex_index(c)];
          out.tangents.push_back({ta.t, tb.t, tc.t, ta.sign});
        } else if (!out.tangents.empty()) {
          out.tangents.push_back({});
        }
      }
    }
  }
}

}  // namespace

gltf_mesh load_gltf(const fs::path& path, const gltf_options& opt) {
  detail::gltf_source src(path, opt.context);
  tinygltf::Model model = parse_model(src, opt);
  [[maybe_unused]] const detail::gltf_decoder decoder{model, src, opt.context, opt.max_triangles};
#ifdef SIEVE_HAVE_MESHOPT
  detail::decode_meshopt(decoder);  // views first: a Draco primitive's data may sit in one
#endif
#ifdef SIEVE_HAVE_DRACO
  detail::decode_draco(decoder);
#endif
  const bool quantized = std::find(model.extensionsUsed.begin(), model.extensionsUsed.end(), "KHR_mesh_quantization") !=
                         model.extensionsUsed.end();
  const model_reader rd{model, src, src.file(), opt.context, quantized};
  gltf_mesh out;
  const std::vector<instance> instances = walk_nodes(model, rd, opt, out);
  std::vector<std::vector<prim>> prims;
  const std::uint64_t total = check_primitives(model, instances, rd, opt, prims);
  if (opt.admit) opt.admit(total);
  std::vector<bool> used(model.materials.size(), false);  // the materials some drawn primitive uses
  for (const instance& inst : instances)
    for (const prim& q : prims[static_cast<std::size_t>(inst.mesh)])
      if (q.p->material >= 0) used[static_cast<std::size_t>(q.p->material)] = true;
  map_materials(model, rd, opt, used, out);
  make_triangles(instances, prims, total, rd, out);
  if (!out.tangents.empty()) out.tangents.resize(out.triangles.size());
  out.files = src.files();
  return out;
}

}  // namespace sieve::render
