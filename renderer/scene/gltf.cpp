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
using detail::fail;
using detail::in_quotes;
using detail::str;

constexpr double pi = 3.14159265358979323846;

std::string str3(vec3 v) { return "(" + str(v.x) + ", " + str(v.y) + ", " + str(v.z) + ")"; }

std::string idx(const char* array, std::size_t i) { return std::string(array) + "[" + std::to_string(i) + "]"; }

// ------------------------------------------------------------------------------------------------
// Accessors, checked against their view and buffer before a byte is read.

struct elements {
  const unsigned char* data = nullptr;  // the first element
  std::size_t stride = 0;               // bytes from one element to the next
  std::size_t count = 0;
  int component_type = 0;
  int components = 0;
  bool normalized = false;
};

const char* type_name(int type) {
  switch (type) {
    case TINYGLTF_TYPE_SCALAR: return "SCALAR";
    case TINYGLTF_TYPE_VEC2: return "VEC2";
    case TINYGLTF_TYPE_VEC3: return "VEC3";
    case TINYGLTF_TYPE_VEC4: return "VEC4";
    case TINYGLTF_TYPE_MAT2: return "MAT2";
    case TINYGLTF_TYPE_MAT3: return "MAT3";
    case TINYGLTF_TYPE_MAT4: return "MAT4";
    default: return "an unknown type";
  }
}

const char* component_name(int c) {
  switch (c) {
    case TINYGLTF_COMPONENT_TYPE_BYTE: return "BYTE";
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return "UNSIGNED_BYTE";
    case TINYGLTF_COMPONENT_TYPE_SHORT: return "SHORT";
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: return "UNSIGNED_SHORT";
    case TINYGLTF_COMPONENT_TYPE_INT: return "INT";
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT: return "UNSIGNED_INT";
    case TINYGLTF_COMPONENT_TYPE_FLOAT: return "FLOAT";
    case TINYGLTF_COMPONENT_TYPE_DOUBLE: return "DOUBLE";
    default: return "an unknown component type";
  }
}

struct model_reader {
  const tinygltf::Model& m;
  detail::gltf_source& src;  // the buffers, read when first used
  std::string file;
  std::string context;
  bool quantized = false;  // KHR_mesh_quantization: integer positions, normals, tangents, uvs

  // The component types each attribute may have (glTF's, and KHR_mesh_quantization's).
  std::vector<int> position_types() const {
    if (!quantized) return {TINYGLTF_COMPONENT_TYPE_FLOAT};
    return {TINYGLTF_COMPONENT_TYPE_FLOAT, TINYGLTF_COMPONENT_TYPE_BYTE, TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE,
            TINYGLTF_COMPONENT_TYPE_SHORT, TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT};
  }
  std::vector<int> unit_vector_types() const {  // NORMAL, TANGENT
    if (!quantized) return {TINYGLTF_COMPONENT_TYPE_FLOAT};
    return {TINYGLTF_COMPONENT_TYPE_FLOAT, TINYGLTF_COMPONENT_TYPE_BYTE, TINYGLTF_COMPONENT_TYPE_SHORT};
  }
  std::vector<int> texcoord_types() const {
    if (!quantized) return {TINYGLTF_COMPONENT_TYPE_FLOAT, TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE, TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT};
    return position_types();
  }
  // Integer normals and tangents must be normalized.
  void check_normalized(const elements& e, int accessor, const std::string& user) const {
    if (e.component_type != TINYGLTF_COMPONENT_TYPE_FLOAT && !e.normalized)
      error(idx("accessors", static_cast<std::size_t>(accessor)) + " (" + user + ")", "integer unit vectors must be normalized");
  }

  [[noreturn]] void error(const std::string& where, const std::string& what) const {
    fail(file + ": " + where + ": " + what + context);
  }

  // An error at `where` unless 0 <= i < count: `kind` i does not exist (the file has `count`).
  void check_index(const std::string& where, const char* kind, long long i, std::size_t count) const {
    if (i < 0 || static_cast<unsigned long long>(i) >= count)
      error(where, kind + (" " + std::to_string(i)) + " does not exist (the file has " + std::to_string(count) + ")");
  }

  // Accessor `a` (named by `user`, e.g. meshes[0].primitives[1].attributes.POSITION), which must
  // have `type` and one of `components`.
  elements view(int a, const std::string& user, int type, const std::vector<int>& components) const {
    check_index(user, "accessor", a, m.accessors.size());
    const tinygltf::Accessor& acc = m.accessors[static_cast<std::size_t>(a)];
    const std::string where = idx("accessors", static_cast<std::size_t>(a)) + " (" + user + ")";
    if (acc.sparse.isSparse) error(where, "sparse accessors are not supported");
    if (acc.type != type) {
      error(where, std::string("type ") + type_name(acc.type) + ", expected " + type_name(type));
    }
    if (std::find(components.begin(), components.end(), acc.componentType) == components.end()) {
      std::string allowed;
      for (const int c : components) allowed += std::string(allowed.empty() ? "" : ", ") + component_name(c);
      error(where, std::string("component type ") + component_name(acc.componentType) + " (" +
                       std::to_string(acc.componentType) + "), expected " + allowed);
    }
    if (acc.count == 0) error(where, "count 0 (at least 1)");
    if (acc.bufferView < 0) error(where, "no bufferView (accessors without data are not supported)");
    check_index(where, "bufferView", acc.bufferView, m.bufferViews.size());
    const tinygltf::BufferView& bv = m.bufferViews[static_cast<std::size_t>(acc.bufferView)];
    const std::string vwhere = idx("bufferViews", static_cast<std::size_t>(acc.bufferView));
    check_index(vwhere, "buffer", bv.buffer, src.buffer_count());
    const std::vector<unsigned char>& data = src.buffer(static_cast<std::size_t>(bv.buffer));
    if (bv.byteOffset > data.size() || bv.byteLength > data.size() - bv.byteOffset) {
      error(vwhere, "bytes " + std::to_string(bv.byteOffset) + " + " + std::to_string(bv.byteLength) +
                        " reach past the " + std::to_string(data.size()) + " bytes of " +
                        idx("buffers", static_cast<std::size_t>(bv.buffer)));
    }
    elements e;
    e.component_type = acc.componentType;
    e.components = tinygltf::GetNumComponentsInType(static_cast<std::uint32_t>(acc.type));
    e.normalized = acc.normalized;
    e.count = acc.count;
    const std::size_t element =
        static_cast<std::size_t>(e.components) *
        static_cast<std::size_t>(tinygltf::GetComponentSizeInBytes(static_cast<std::uint32_t>(acc.componentType)));
    e.stride = bv.byteStride ? bv.byteStride : element;
    if (e.stride < element) {
      error(where, "byteStride " + std::to_string(e.stride) + " of " + vwhere + " is less than the " +
                       std::to_string(element) + "-byte element");
    }
    // offset + stride (count - 1) + element <= view length, without overflow.
    const std::size_t length = bv.byteLength;
    if (acc.byteOffset > length || element > length - acc.byteOffset ||
        (acc.count - 1) > (length - acc.byteOffset - element) / e.stride) {
      error(where, std::to_string(acc.count) + " elements of " + std::to_string(element) + " bytes (stride " +
                       std::to_string(e.stride) + ") from byte " + std::to_string(acc.byteOffset) +
                       " reach past the " + std::to_string(length) + " bytes of " + vwhere);
    }
    e.data = data.data() + bv.byteOffset + acc.byteOffset;
    return e;
  }
};

std::uint32_t index_at(const elements& e, std::size_t i) {
  const unsigned char* p = e.data + i * e.stride;
  switch (e.component_type) {
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return *p;
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    default: {
      std::uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
  }
}

// Component c of element i as a float: FLOAT as stored; an integer as its value, or normalised as
// glTF defines (unsigned: c / max; signed: max(c / max, -1)).
float component_at(const elements& e, std::size_t i, int c) {
  const unsigned char* p = e.data + i * e.stride;
  switch (e.component_type) {
    case TINYGLTF_COMPONENT_TYPE_BYTE: {
      const auto v = static_cast<std::int8_t>(p[c]);
      return e.normalized ? std::max(v / 127.0f, -1.0f) : v;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return e.normalized ? p[c] / 255.0f : p[c];
    case TINYGLTF_COMPONENT_TYPE_SHORT: {
      std::int16_t v;
      std::memcpy(&v, p + 2 * c, 2);
      return e.normalized ? std::max(v / 32767.0f, -1.0f) : v;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: {
      std::uint16_t v;
      std::memcpy(&v, p + 2 * c, 2);
      return e.normalized ? v / 65535.0f : v;
    }
    default: {
      float v;
      std::memcpy(&v, p + 4 * c, 4);
      return v;
    }
  }
}

vec3 vec3_at(const elements& e, std::size_t i) {
  if (e.component_type == TINYGLTF_COMPONENT_TYPE_FLOAT) {
    float v[3];
    std::memcpy(v, e.data + i * e.stride, sizeof v);
    return {v[0], v[1], v[2]};
  }
  return {component_at(e, i, 0), component_at(e, i, 1), component_at(e, i, 2)};
}

// TEXCOORD_0 as glTF stores it (FLOAT, normalized UNSIGNED_BYTE / UNSIGNED_SHORT, or with
// KHR_mesh_quantization any integer, normalised or not), v down.
tex_coord uv_at(const elements& e, std::size_t i) { return {component_at(e, i, 0), component_at(e, i, 1)}; }

// TANGENT: xyz and the handedness w.
std::array<float, 4> tangent_at(const elements& e, std::size_t i) {
  return {component_at(e, i, 0), component_at(e, i, 1), component_at(e, i, 2), component_at(e, i, 3)};
}

// ------------------------------------------------------------------------------------------------
// Node transforms (column-major 4x4, as glTF stores them), in double.

using mat4 = std::array<double, 16>;
constexpr mat4 identity = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

mat4 mul(const mat4& a, const mat4& b) {
  mat4 r{};
  for (int c = 0; c < 4; ++c)
    for (int row = 0; row < 4; ++row) {
      double s = 0;
      for (int k = 0; k < 4; ++k) s += a[k * 4 + row] * b[c * 4 + k];
      r[c * 4 + row] = s;
    }
  return r;
}

mat4 local_transform(const tinygltf::Node& n, const model_reader& rd, const std::string& where) {
  auto check = [&](const std::vector<double>& v, std::size_t size, const char* key) {
    if (!v.empty() && v.size() != size) {
      rd.error(where, std::string(key) + " has " + std::to_string(v.size()) + " numbers, expected " +
                          std::to_string(size));
    }
    for (const double d : v)
      if (!std::isfinite(d)) rd.error(where, std::string(key) + " holds the non-finite number " + str(d));
  };
  check(n.matrix, 16, "matrix");
  check(n.translation, 3, "translation");
  check(n.rotation, 4, "rotation");
  check(n.scale, 3, "scale");
  if (!n.matrix.empty()) {
    mat4 m;
    std::copy(n.matrix.begin(), n.matrix.end(), m.begin());
    return m;
  }
  mat4 m = identity;
  if (!n.rotation.empty()) {  // a unit quaternion (x, y, z, w); normalised here
    double x = n.rotation[0], y = n.rotation[1], z = n.rotation[2], w = n.rotation[3];
    const double len = std::sqrt(x * x + y * y + z * z + w * w);
    if (!(len > 0) || !std::isfinite(len)) rd.error(where, "rotation is not a quaternion of non-zero length");
    x /= len, y /= len, z /= len, w /= len;
    m = {1 - 2 * (y * y + z * z), 2 * (x * y + z * w),     2 * (x * z - y * w),     0,
         2 * (x * y - z * w),     1 - 2 * (x * x + z * z), 2 * (y * z + x * w),     0,
         2 * (x * z + y * w),     2 * (y * z - x * w),     1 - 2 * (x * x + y * y), 0,
         0,                       0,                       0,                       1};
  }
  if (!n.scale.empty()) {
    for (int c = 0; c < 3; ++c)
      for (int row = 0; row < 3; ++row) m[c * 4 + row] *= n.scale[c];
  }
  if (!n.translation.empty()) {
    m[12] = n.translation[0], m[13] = n.translation[1], m[14] = n.translation[2];
  }
  return m;
}

vec3 apply_point(const mat4& m, vec3 p) {
  if (m == identity) return p;  // bit for bit what the file holds
  const double x = p.x, y = p.y, z = p.z;
  return {static_cast<float>(m[0] * x + m[4] * y + m[8] * z + m[12]),
          static_cast<float>(m[1] * x + m[5] * y + m[9] * z + m[13]),
          static_cast<float>(m[2] * x + m[6] * y + m[10] * z + m[14])};
}

// Normals go by the inverse transpose of the upper 3x3: its cofactor matrix times the sign of its
// determinant (the length is normalised away). A negative determinant (a mirroring transform) also
// turns the triangles' winding, which glTF says then runs clockwise: the loader swaps two vertices.
struct normal_transform {
  std::array<double, 9> cof{};  // column-major
  double det = 1;
  bool identity = true;
};

normal_transform normal_transform_of(const mat4& m) {
  normal_transform n;
  if (m == identity) return n;
  n.identity = false;
  auto a = [&](int r, int c) { return m[c * 4 + r]; };
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      const int r1 = (r + 1) % 3, r2 = (r + 2) % 3, c1 = (c + 1) % 3, c2 = (c + 2) % 3;
      n.cof[c * 3 + r] = a(r1, c1) * a(r2, c2) - a(r1, c2) * a(r2, c1);
    }
  n.det = a(0, 0) * n.cof[0] + a(0, 1) * n.cof[3] + a(0, 2) * n.cof[6];
  return n;
}

// The normal in world space, unit length; zero where it is zero, degenerate or not finite (flat).
vec3 apply_normal(const normal_transform& t, vec3 n) {
  double x = n.x, y = n.y, z = n.z;
  if (!t.identity) {
    const double s = t.det < 0 ? -1 : 1;
    const double nx = s * (t.cof[0] * x + t.cof[3] * y + t.cof[6] * z);
    const double ny = s * (t.cof[1] * x + t.cof[4] * y + t.cof[7] * z);
    const double nz = s * (t.cof[2] * x + t.cof[5] * y + t.cof[8] * z);
    x = nx, y = ny, z = nz;
  }
  const double len = std::sqrt(x * x + y * y + z * z);
  if (!(len > 0) || !std::isfinite(len)) return {0, 0, 0};
  const vec3 out{static_cast<float>(x / len), static_cast<float>(y / len), static_cast<float>(z / len)};
  return finite(out) ? out : vec3{0, 0, 0};
}

vec3 apply_direction(const mat4& m, double x, double y, double z) {
  return {static_cast<float>(m[0] * x + m[4] * y + m[8] * z), static_cast<float>(m[1] * x + m[5] * y + m[9] * z),
          static_cast<float>(m[2] * x + m[6] * y + m[10] * z)};
}

// ------------------------------------------------------------------------------------------------
// Materials: glTF's metallic-roughness model, sieve's `gltf` kind (core/pbr.hpp, scenes/README.md).

// An extension's number `key` (absent: `fallback`); anything but a number there is an error.
double number_in(const tinygltf::Value& ext, const char* key, double fallback, const model_reader& rd,
                 const std::string& where) {
  if (!ext.IsObject()) rd.error(where, "the extension is not an object");
  if (!ext.Has(key)) return fallback;
  const tinygltf::Value& v = ext.Get(key);
  if (!v.IsNumber()) rd.error(where, std::string(key) + " is not a number");
  return v.GetNumberAsDouble();
}

const tinygltf::Value* extension(const tinygltf::Material& m, const char* name) {
  const auto it = m.extensions.find(name);
  return it == m.extensions.end() ? nullptr : &it->second;
}

material map_material(const tinygltf::Material& g, const model_reader& rd, const std::string& where) {
  auto in_range = [&](double v, double lo, double hi, const std::string& key) {
    if (!std::isfinite(v) || v < lo || v > hi) {
      rd.error(where, key + " " + str(v) + " is out of range (" + str(lo) + " .. " + (std::isinf(hi) ? "inf" : str(hi)) + ")");
    }
    return v;
  };
  const auto& pbr = g.pbrMetallicRoughness;
  if (pbr.baseColorFactor.size() != 4) {
    rd.error(where, "baseColorFactor has " + std::to_string(pbr.baseColorFactor.size()) + " numbers, expected 4");
  }
  if (g.emissiveFactor.size() != 3 && !g.emissiveFactor.empty()) {
    rd.error(where, "emissiveFactor has " + std::to_string(g.emissiveFactor.size()) + " numbers, expected 3");
  }
  material out;
  float base[3], emissive[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    base[i] = static_cast<float>(in_range(pbr.baseColorFactor[i], 0, 1, "baseColorFactor"));
    if (!g.emissiveFactor.empty()) emissive[i] = static_cast<float>(in_range(g.emissiveFactor[i], 0, 1, "emissiveFactor"));
  }
  in_range(pbr.baseColorFactor[3], 0, 1, "baseColorFactor");
  const double metallic = in_range(pbr.metallicFactor, 0, 1, "metallicFactor");
  const double roughness = in_range(pbr.roughnessFactor, 0, 1, "roughnessFactor");
  double strength = 1;
  if (const tinygltf::Value* e = extension(g, "KHR_materials_emissive_strength")) {
    strength = in_range(number_in(*e, "emissiveStrength", 1, rd, where + ".extensions.KHR_materials_emissive_strength"), 0, HUGE_VAL, "KHR_materials_emissive_strength.emissiveStrength");
  }
  double transmission = 0, ior = 1.5;
  if (const tinygltf::Value* e = extension(g, "KHR_materials_transmission")) {
    transmission = in_range(number_in(*e, "transmissionFactor", 0, rd, where + ".extensions.KHR_materials_transmission"), 0, 1, "KHR_materials_transmission.transmissionFactor");
  }
  if (const tinygltf::Value* e = extension(g, "KHR_materials_ior")) {
    ior = in_range(number_in(*e, "ior", 1.5, rd, where + ".extensions.KHR_materials_ior"), 0, HUGE_VAL, "KHR_materials_ior.ior");
  }

  out.albedo = {base[0], base[1], base[2]};
  out.emission = vec3{emissive[0], emissive[1], emissive[2]} * static_cast<float>(strength);
  if (!finite(out.emission)) rd.error(where, "the emission overflows a float");
  out.ior = ior > 1 ? static_cast<float>(ior) : 1.5f;
  out.kind = material_kind::gltf;
  out.metallic = static_cast<float>(metallic);
  out.roughness = static_cast<float>(roughness);
  out.transmission = static_cast<float>(transmission);
  // alphaMode: OPAQUE ignores alpha; MASK and BLEND read baseColorFactor's alpha times the base
  // colour texture's (objects.cpp) as a hard cut-out at alphaCutoff or a stochastic opacity.
  if (g.alphaMode == "MASK" || g.alphaMode == "BLEND") {
    out.opacity = static_cast<float>(pbr.baseColorFactor[3]);
    out.alpha = g.alphaMode == "MASK" ? alpha_mode::mask : alpha_mode::blend;
    out.alpha_cutoff = static_cast<float>(in_range(g.alphaCutoff, 0, HUGE_VAL, "alphaCutoff"));
  } else if (g.alphaMode != "OPAQUE") {
    rd.error(where, "alphaMode \"" + g.alphaMode + "\" is not OPAQUE, MASK or BLEND");
  }
  out.normal_scale = static_cast<float>(g.normalTexture.scale);
  if (!std::isfinite(out.normal_scale) || std::fabs(out.normal_scale) > 1e6f) rd.error(where, "normalTexture.scale is not finite or past 1e6");
  // Without KHR_materials_volume (or with thickness 0) a transmissive surface is thin-walled.
  const tinygltf::Value* volume = extension(g, "KHR_materials_volume");
  out.thin = !volume || !(number_in(*volume, "thicknessFactor", 0, rd, where + ".extensions.KHR_materials_volume") > 0);
  return out;
}

// KHR_texture_transform's offset, rotation and scale as the affine map T R S of glTF's (u, v), turned
// into sieve's convention (v' = 1 - v): [a, -b, b + c; -d, e, 1 - e - f] for glTF's [a, b, c; d, e, f].
uv_transform texture_transform(const tinygltf::Value& ext, const model_reader& rd, const std::string& where) {
  auto pair = [&](const char* key, double fallback, double out[2]) {
    out[0] = out[1] = fallback;
    if (!ext.IsObject() || !ext.Has(key)) return;
    const tinygltf::Value& v = ext.Get(key);
    if (!v.IsArray() || v.ArrayLen() != 2 || !v.Get(0).IsNumber() || !v.Get(1).IsNumber())
      rd.error(where, std::string(key) + " is not an array of 2 numbers");
    out[0] = v.Get(0).GetNumberAsDouble();
    out[1] = v.Get(1).GetNumberAsDouble();
  };
  double offset[2], scale[2];
  pair("offset", 0, offset);
  pair("scale", 1, scale);
  const double rotation = number_in(ext, "rotation", 0, rd, where);
  for (const double x : {offset[0], offset[1], scale[0], scale[1], rotation})
    if (!std::isfinite(x) || std::fabs(x) > 1e6) rd.error(where, "a value (" + str(x) + ") is not finite or past 1e6");
  const double c = std::cos(rotation), s = std::sin(rotation);
  const double a = c * scale[0], b = -s * scale[1], t = offset[0], d = s * scale[0], e = c * scale[1], f = offset[1];
  uv_transform out;
  const double m[6] = {a, -b, b + t, -d, e, 1 - e - f};
  for (int i = 0; i < 6; ++i) out.m[i] = static_cast<float>(m[i]);
  return out;
}

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

// Phase 4: materials mapped, names unique within the file ("material<i>" for an unnamed one; a
// repeated name gets "#<i>"), with their base colour, metallic-roughness and emissive textures'
// images, each read once (and only those: an image no material uses is never read; with
// opt.used_materials_only, neither is one that only materials no primitive uses name, though their
// textures are still checked).
void map_materials(const tinygltf::Model& model, const model_reader& rd, const gltf_options& opt,
                   const std::vector<bool>& used, gltf_mesh& out) {
  std::vector<detail::gltf_source::view_span> views;
  for (const auto& v : model.bufferViews)
    views.push_back({v.buffer >= 0 ? static_cast<std::size_t>(v.buffer) : ~std::size_t{0}, v.byteOffset, v.byteLength});
  std::vector<std::int32_t> image_of(rd.src.image_count(), -1);  // the file's image -> out.images
  auto texture = [&](const tinygltf::TextureInfo& info, const std::string& where, bool read) {
    gltf_mesh::texture_ref ref;
    if (info.index < 0) return ref;
    if (const auto it = info.extensions.find("KHR_texture_transform"); it != info.extensions.end())
      ref.transform = texture_transform(it->second, rd, where + ".extensions.KHR_texture_transform");
    rd.check_index(where, "texture", info.index, model.textures.size());
    const tinygltf::Texture& tex = model.textures[static_cast<std::size_t>(info.index)];
    const std::string twhere = idx("textures", static_cast<std::size_t>(info.index));
    if (tex.source < 0) {
      detail::print_warning(rd.file + ": " + twhere + ": no source image sieve reads (an extension's format?); " + where +
                            " keeps its factor" + opt.context);
      return ref;
    }
    if (static_cast<std::size_t>(tex.source) >= image_of.size()) {
      rd.error(twhere, "source " + std::to_string(tex.source) + " does not exist (the file has " +
                           std::to_string(image_of.size()) + " images)");
    }
    if (tex.sampler >= 0) {
      rd.check_index(twhere, "sampler", tex.sampler, model.samplers.size());
      // wrapS decides (sieve has one mode a texture); MIRRORED_REPEAT is read as REPEAT.
      if (model.samplers[static_cast<std::size_t>(tex.sampler)].wrapS == TINYGLTF_TEXTURE_WRAP_CLAMP_TO_EDGE)
        ref.wrap = wrap_mode::clamp;
    }
    if (info.texCoord != 0) {
      detail::print_warning(rd.file + ": " + where + ": texCoord " + std::to_string(info.texCoord) +
                            " is not read; TEXCOORD_0 is used" + opt.context);
    }
    const auto src = static_cast<std::size_t>(tex.source);
    if (!read) return ref;
    if (image_of[src] < 0) {
      detail::gltf_source::image im = rd.src.read_image(src, views);
      image_of[src] = static_cast<std::int32_t>(out.images.size());
      out.images.push_back({std::move(im.name), std::move(im.bytes), im.missing});
    }
    ref.image = image_of[src];
    return ref;
  };
  std::set<std::string> names;
  out.materials.reserve(model.materials.size());
  for (std::size_t i = 0; i < model.materials.size(); ++i) {
    const std::string where = idx("materials", i);
    const bool read = !opt.used_materials_only || used[i];
    out.base_color_texture.push_back(texture(model.materials[i].pbrMetallicRoughness.baseColorTexture,
                                             where + ".pbrMetallicRoughness.baseColorTexture", read));
    out.emissive_texture.push_back(texture(model.materials[i].emissiveTexture, where + ".emissiveTexture", read));
    out.metal_rough_texture.push_back(texture(model.materials[i].pbrMetallicRoughness.metallicRoughnessTexture,
                                              where + ".pbrMetallicRoughness.metallicRoughnessTexture", read));
    const tinygltf::NormalTextureInfo& nti = model.materials[i].normalTexture;
    tinygltf::TextureInfo info;
    info.index = nti.index;
    info.texCoord = nti.texCoord;
    info.extensions = nti.extensions;
    out.normal_texture.push_back(texture(info, where + ".normalTexture", read));
  }
  for (std::size_t i = 0; i < model.materials.size(); ++i) {
    material m = map_material(model.materials[i], rd, idx("materials", i));
    m.name = model.materials[i].name.empty() ? "material" + std::to_string(i) : model.materials[i].name;
    if (!names.insert(m.name).second) {
      m.name += "#" + std::to_string(i);
      names.insert(m.name);
    }
    out.materials.push_back(std::move(m));
  }
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
