// glTF's reading, shared by the loader's phases (gltf.cpp: parse, walk the nodes, check the
// primitives, make the triangles; gltf_reader.cpp: the accessors and the node transforms;
// gltf_materials.cpp: the materials and their images): the model reader with its checked
// accessors, the transforms in double, and the helpers of the messages.
#pragma once

#include "gltf.hpp"
#include "gltf_source.hpp"
#include "input_file.hpp"

#include <tiny_gltf.h>

#include <sieve/compaction/error.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace sieve::render::gltf_detail {

using detail::fail;
using detail::in_quotes;
using detail::str;

constexpr double pi = 3.14159265358979323846;

inline std::string str3(vec3 v) { return "(" + str(v.x) + ", " + str(v.y) + ", " + str(v.z) + ")"; }

inline std::string idx(const char* array, std::size_t i) { return std::string(array) + "[" + std::to_string(i) + "]"; }

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

const char* type_name(int type);

const char* component_name(int c);

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

// ------------------------------------------------------------------------------------------------
// Accessors (gltf_reader.cpp).

std::uint32_t index_at(const elements& e, std::size_t i);

// Component c of element i as a float: FLOAT as stored; an integer as its value, or normalised as
// glTF defines (unsigned: c / max; signed: max(c / max, -1)).
float component_at(const elements& e, std::size_t i, int c);

vec3 vec3_at(const elements& e, std::size_t i);

// TEXCOORD_0 as glTF stores it (FLOAT, normalized UNSIGNED_BYTE / UNSIGNED_SHORT, or with
// KHR_mesh_quantization any integer, normalised or not), v down.
tex_coord uv_at(const elements& e, std::size_t i);

// TANGENT: xyz and the handedness w.
std::array<float, 4> tangent_at(const elements& e, std::size_t i);

// ------------------------------------------------------------------------------------------------
// Node transforms (column-major 4x4, as glTF stores them), in double (gltf_reader.cpp).

using mat4 = std::array<double, 16>;
constexpr mat4 identity = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

// Normals go by the inverse transpose of the upper 3x3: its cofactor matrix times the sign of its
// determinant (the length is normalised away). A negative determinant (a mirroring transform) also
// turns the triangles' winding, which glTF says then runs clockwise: the loader swaps two vertices.
struct normal_transform {
  std::array<double, 9> cof{};  // column-major
  double det = 1;
  bool identity = true;
};

mat4 mul(const mat4& a, const mat4& b);

mat4 local_transform(const tinygltf::Node& n, const model_reader& rd, const std::string& where);

vec3 apply_point(const mat4& m, vec3 p);

normal_transform normal_transform_of(const mat4& m);

// The normal in world space, unit length; zero where it is zero, degenerate or not finite (flat).
vec3 apply_normal(const normal_transform& t, vec3 n);

vec3 apply_direction(const mat4& m, double x, double y, double z);

// ------------------------------------------------------------------------------------------------
// Materials (gltf_materials.cpp).

// Phase 4: materials mapped, names unique within the file ("material<i>" for an unnamed one; a
// repeated name gets "#<i>"), with their base colour, metallic-roughness and emissive textures'
// images, each read once (and only those: an image no material uses is never read; with
// opt.used_materials_only, neither is one that only materials no primitive uses name, though their
// textures are still checked).
void map_materials(const tinygltf::Model& model, const model_reader& rd, const gltf_options& opt,
                   const std::vector<bool>& used, gltf_mesh& out);

}  // namespace sieve::render::gltf_detail
