// What the compressed-geometry decoders share (gltf_decode.hpp): messages, checked byte ranges and
// the extension objects' fields.
#include "gltf_decode.hpp"

#include "input_file.hpp"

#include <tiny_gltf.h>

#include <cmath>

namespace sieve::render::detail {

void gltf_decoder::error(const std::string& where, const std::string& what) const {
  fail(src.file() + ": " + where + ": " + what + context);
}

const unsigned char* gltf_decoder::bytes(long long buffer, std::uint64_t offset, std::uint64_t length,
                                         const std::string& where) const {
  if (buffer < 0 || static_cast<unsigned long long>(buffer) >= src.buffer_count()) {
    error(where, "buffer " + std::to_string(buffer) + " does not exist (the file has " + std::to_string(src.buffer_count()) + ")");
  }
  const std::vector<unsigned char>& data = src.buffer(static_cast<std::size_t>(buffer));
  if (offset > data.size() || length > data.size() - offset) {
    error(where, "bytes " + std::to_string(offset) + " + " + std::to_string(length) + " reach past the " +
                     std::to_string(data.size()) + " bytes of buffers[" + std::to_string(buffer) + "]");
  }
  return data.data() + offset;
}

std::uint64_t gltf_decoder::count(const tinygltf::Value& ext, const char* key, const std::string& where,
                                  std::optional<std::uint64_t> fallback) const {
  if (!ext.IsObject()) error(where, "the extension is not an object");
  if (!ext.Has(key)) {
    if (!fallback) error(where, std::string("no ") + key);
    return *fallback;
  }
  const tinygltf::Value& v = ext.Get(key);
  const double d = v.IsNumber() ? v.GetNumberAsDouble() : -1;
  if (!(d >= 0) || d != std::floor(d) || d > 9007199254740992.0)  // 2^53: exact in a double
    error(where, std::string(key) + " is not a non-negative integer");
  return static_cast<std::uint64_t>(d);
}

std::string gltf_decoder::text(const tinygltf::Value& ext, const char* key, const std::string& where,
                               const char* fallback) const {
  if (!ext.IsObject()) error(where, "the extension is not an object");
  if (!ext.Has(key)) return fallback;
  const tinygltf::Value& v = ext.Get(key);
  if (!v.IsString()) error(where, std::string(key) + " is not a string");
  return v.Get<std::string>();
}

bool gltf_decodes(std::string_view extension) {
  if (extension == "KHR_mesh_quantization") return true;
#ifdef SIEVE_HAVE_MESHOPT
  if (extension == "EXT_meshopt_compression" || extension == "KHR_meshopt_compression") return true;
#endif
#ifdef SIEVE_HAVE_DRACO
  if (extension == "KHR_draco_mesh_compression") return true;
#endif
  return false;
}

}  // namespace sieve::render::detail
