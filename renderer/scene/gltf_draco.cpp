// KHR_draco_mesh_compression through libdraco: each compressed primitive's mesh decoded once, its
// attributes converted to floats (dequantised and normalised by Draco), its faces to 32-bit indices,
// all written to one new buffer behind new accessors (the file's own may be shared with other
// primitives). The counts the file declares must agree with what Draco decodes.
#include "gltf_decode.hpp"

#include <tiny_gltf.h>
#include <draco/compression/decode.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace sieve::render::detail {
namespace {

struct decoded_primitive {
  std::vector<unsigned char> bytes;  // the new buffer
  struct part {
    int accessor;          // the accessor it replaces (-1: indices the primitive lacked)
    std::string name;      // the attribute, or "" for the indices
    std::size_t offset, length;
  };
  std::vector<part> parts;
};

// `mesh`'s attribute `id` as `components` floats per point, appended to `out`.
void append_attribute(const gltf_decoder& d, const draco::Mesh& mesh, std::uint64_t id, int components,
                      std::vector<unsigned char>& out, const std::string& where) {
  const draco::PointAttribute* a = id <= UINT32_MAX ? mesh.GetAttributeByUniqueId(static_cast<std::uint32_t>(id)) : nullptr;
  if (!a) d.error(where, "attribute id " + std::to_string(id) + " does not exist in the Draco data");
  if (a->num_components() == 0) d.error(where, "attribute id " + std::to_string(id) + " has no components");
  std::vector<float> v(static_cast<std::size_t>(components));
  for (std::uint32_t p = 0; p < mesh.num_points(); ++p) {
    if (!a->ConvertValue<float>(a->mapped_index(draco::PointIndex(p)), static_cast<std::int8_t>(components), v.data())) {
      d.error(where, "point " + std::to_string(p) + " of attribute id " + std::to_string(id) + " does not convert to floats");
    }
    const auto* b = reinterpret_cast<const unsigned char*>(v.data());
    out.insert(out.end(), b, b + v.size() * sizeof(float));
  }
}

// One primitive: its Draco mesh decoded and checked against the accessors it replaces.
decoded_primitive decode_primitive(const gltf_decoder& d, const tinygltf::Primitive& p, const tinygltf::Value& ext,
                                   const std::string& where) {
  const tinygltf::Model& m = d.model;
  const std::uint64_t vi = d.count(ext, "bufferView", where);
  if (vi >= m.bufferViews.size()) {
    d.error(where, "bufferView " + std::to_string(vi) + " does not exist (the file has " + std::to_string(m.bufferViews.size()) + ")");
  }
  const tinygltf::BufferView& view = m.bufferViews[vi];
  const unsigned char* data = d.bytes(view.buffer, view.byteOffset, view.byteLength, "bufferViews[" + std::to_string(vi) + "]");
  if (p.mode != TINYGLTF_MODE_TRIANGLES) d.error(where, "mode " + std::to_string(p.mode) + " (Draco meshes are TRIANGLES)");
  // The index accessor: the primitive's, or moved into the extension (gltf_source.cpp). The declared
  // counts bound what is made before Draco runs: the faces against the scene's room.
  const long long indices = ext.Has("indices") ? static_cast<long long>(d.count(ext, "indices", where)) : p.indices;
  const bool indexed = indices >= 0;
  if (indexed && static_cast<unsigned long long>(indices) >= m.accessors.size()) {
    d.error(where, "indices " + std::to_string(indices) + " does not exist (the file has " + std::to_string(m.accessors.size()) + " accessors)");
  }
  if (indexed && m.accessors[static_cast<std::size_t>(indices)].count / 3 > d.max_triangles) {
    d.error(where, "more triangles than the scene has room for (" + std::to_string(d.max_triangles) + ")");
  }
  draco::DecoderBuffer buffer;
  buffer.Init(reinterpret_cast<const char*>(data), view.byteLength);
  draco::Decoder decoder;
  auto decoded = decoder.DecodeMeshFromBuffer(&buffer);
  if (!decoded.ok()) d.error(where, "the Draco data does not decode: " + decoded.status().error_msg_string());
  const std::unique_ptr<draco::Mesh> mesh = std::move(decoded).value();
  if (!mesh || mesh->num_faces() == 0) d.error(where, "the Draco data holds no triangles");
  const std::uint64_t faces = mesh->num_faces(), points = mesh->num_points();
  if (indexed && m.accessors[static_cast<std::size_t>(indices)].count != 3 * faces) {
    d.error(where, "Draco decodes " + std::to_string(faces) + " triangles, the indices accessor has " +
                       std::to_string(m.accessors[static_cast<std::size_t>(indices)].count) + " indices");
  }
  if (faces > d.max_triangles) d.error(where, "more triangles than the scene has room for (" + std::to_string(d.max_triangles) + ")");
  decoded_primitive out;
  std::uint64_t bytes = 12 * faces;
  const tinygltf::Value& names = ext.Get("attributes");
  if (!names.IsObject()) d.error(where, "attributes is not an object");
  for (const auto& [name, accessor] : p.attributes) {
    if (!names.Has(name) || accessor < 0 || static_cast<std::size_t>(accessor) >= m.accessors.size()) continue;
    const tinygltf::Accessor& acc = m.accessors[static_cast<std::size_t>(accessor)];
    if (acc.count != points) {
      d.error(where + ".attributes." + name, "Draco decodes " + std::to_string(points) + " points, accessors[" +
                                                 std::to_string(accessor) + "] has " + std::to_string(acc.count));
    }
    bytes += points * 4 * static_cast<std::uint64_t>(std::max(1, tinygltf::GetNumComponentsInType(static_cast<std::uint32_t>(acc.type))));
  }
  d.src.reserve(bytes, where);
  out.bytes.reserve(bytes);
  for (std::uint32_t f = 0; f < faces; ++f) {
    const auto& face = mesh->face(draco::FaceIndex(f));
    for (int k = 0; k < 3; ++k) {
      const std::uint32_t v = face[k].value();
      if (v >= points) d.error(where, "Draco face " + std::to_string(f) + " names point " + std::to_string(v) + " of " + std::to_string(points));
      const auto* b = reinterpret_cast<const unsigned char*>(&v);
      out.bytes.insert(out.bytes.end(), b, b + 4);
    }
  }
  out.parts.push_back({indexed ? static_cast<int>(indices) : -1, "", 0, out.bytes.size()});
  for (const auto& [name, accessor] : p.attributes) {
    if (!names.Has(name) || accessor < 0 || static_cast<std::size_t>(accessor) >= m.accessors.size()) continue;
    const tinygltf::Accessor& acc = m.accessors[static_cast<std::size_t>(accessor)];
    const std::size_t start = out.bytes.size();
    const int components = tinygltf::GetNumComponentsInType(static_cast<std::uint32_t>(acc.type));
    if (components < 1 || components > 4) d.error(where + ".attributes." + name, "the accessor is not SCALAR or VECn");
    append_attribute(d, *mesh, d.count(names, name.c_str(), where + ".attributes"), components, out.bytes,
                     where + ".attributes." + name);
    out.parts.push_back({accessor, name, start, out.bytes.size() - start});
  }
  return out;
}

}  // namespace

void decode_draco(const gltf_decoder& d) {
  tinygltf::Model& m = d.model;
  for (std::size_t mi = 0; mi < m.meshes.size(); ++mi) {
    for (std::size_t pi = 0; pi < m.meshes[mi].primitives.size(); ++pi) {
      tinygltf::Primitive& p = m.meshes[mi].primitives[pi];
      const auto ext = p.extensions.find("KHR_draco_mesh_compression");
      if (ext == p.extensions.end()) continue;
      const std::string where = "meshes[" + std::to_string(mi) + "].primitives[" + std::to_string(pi) +
                                "].extensions.KHR_draco_mesh_compression";
      decoded_primitive dp = decode_primitive(d, p, ext->second, where);
      const int buffer = static_cast<int>(d.src.add_buffer(std::move(dp.bytes)));
      for (const decoded_primitive::part& part : dp.parts) {
        tinygltf::BufferView view;
        view.buffer = buffer;
        view.byteOffset = part.offset;
        view.byteLength = part.length;
        m.bufferViews.push_back(view);
        tinygltf::Accessor acc;
        if (part.accessor >= 0) acc = m.accessors[static_cast<std::size_t>(part.accessor)];
        acc.bufferView = static_cast<int>(m.bufferViews.size() - 1);
        acc.byteOffset = 0;
        acc.normalized = false;
        acc.sparse = {};
        if (part.name.empty()) {
          acc.type = TINYGLTF_TYPE_SCALAR;
          acc.componentType = TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT;
          acc.count = part.length / 4;
        } else {
          acc.componentType = TINYGLTF_COMPONENT_TYPE_FLOAT;
        }
        m.accessors.push_back(acc);
        const int index = static_cast<int>(m.accessors.size() - 1);
        (part.name.empty() ? p.indices : p.attributes[part.name]) = index;
      }
    }
  }
}

}  // namespace sieve::render::detail
