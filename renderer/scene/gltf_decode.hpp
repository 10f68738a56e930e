// Compressed glTF geometry decoded before the reader checks it (renderer/scene/gltf.cpp): the
// decoders write plain little-endian arrays into new buffers of the source and point the model's
// views and accessors at them, so everything after reads an ordinary file. Each decoder is a thin
// wrapper around the library made for its format:
//   gltf_meshopt.cpp  EXT_meshopt_compression / KHR_meshopt_compression (libmeshoptimizer)
//   gltf_draco.cpp    KHR_draco_mesh_compression (libdraco)
// Each is compiled only where CMake found its library (SIEVE_HAVE_MESHOPT, SIEVE_HAVE_DRACO); without
// it the reader refuses a file that requires the extension with one line naming it.
// Everything a decoder reads is checked first: the compressed range inside its buffer, the counts
// and strides against the extension's rules and the accessors, the decoded size against the byte
// budget (gltf_source.hpp) and the triangle limit, before anything is allocated.
// Internal to the glTF reader.
#pragma once

#include "gltf_source.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace tinygltf {
class Model;
class Value;
}  // namespace tinygltf

namespace sieve::render::detail {

struct gltf_decoder {
  tinygltf::Model& model;
  gltf_source& src;
  std::string context;         // appended to every message
  std::uint64_t max_triangles;  // room left in the scene

  [[noreturn]] void error(const std::string& where, const std::string& what) const;
  // The bytes [offset, offset + length) of buffers[buffer], checked inside it.
  const unsigned char* bytes(long long buffer, std::uint64_t offset, std::uint64_t length, const std::string& where) const;
  // A non-negative integer `key` of an extension object (absent: `fallback`, or an error when none).
  std::uint64_t count(const tinygltf::Value& ext, const char* key, const std::string& where,
                      std::optional<std::uint64_t> fallback = std::nullopt) const;
  // A string `key` of an extension object (absent: `fallback`).
  std::string text(const tinygltf::Value& ext, const char* key, const std::string& where, const char* fallback) const;
};

// Whether this build decodes `extension` (the three above and KHR_mesh_quantization, which needs no
// decoding: the reader takes its integer attributes directly).
bool gltf_decodes(std::string_view extension);

// Every buffer view carrying EXT_meshopt_compression or KHR_meshopt_compression decoded (vertex
// codec, index codecs, the octahedral, quaternion and exponential filters).
void decode_meshopt(const gltf_decoder& d);

// Every primitive carrying KHR_draco_mesh_compression decoded: new float accessors for the
// attributes it names and a 32-bit index accessor, counts checked against the accessors it replaces.
void decode_draco(const gltf_decoder& d);

}  // namespace sieve::render::detail
