// EXT_meshopt_compression and KHR_meshopt_compression (the same bitstream; KHR's vertex codec version 1
// needs a newer meshoptimizer than Debian 12's 0.18, which then reports the data as undecodable)
// through libmeshoptimizer's decoders, which are safe on any input: each view's compressed range,
// stride, count and filter are checked against the extension's rules before a byte is decoded.
#include "gltf_decode.hpp"

#include <tiny_gltf.h>
#include <meshoptimizer.h>

#include <string>
#include <vector>

namespace sieve::render::detail {
namespace {

const tinygltf::Value* meshopt_extension(const tinygltf::BufferView& v) {
  for (const char* name : {"EXT_meshopt_compression", "KHR_meshopt_compression"}) {
    const auto it = v.extensions.find(name);
    if (it != v.extensions.end()) return &it->second;
  }
  return nullptr;
}

// One view: the bytes it decodes to (count x byteStride, which must be the view's byteLength).
std::vector<unsigned char> decode_view(const gltf_decoder& d, const tinygltf::BufferView& view,
                                       const tinygltf::Value& ext, const std::string& where) {
  const std::uint64_t stride = d.count(ext, "byteStride", where), count = d.count(ext, "count", where);
  const std::uint64_t length = d.count(ext, "byteLength", where);
  const std::string mode = d.text(ext, "mode", where, ""), filter = d.text(ext, "filter", where, "NONE");
  const unsigned char* in = d.bytes(static_cast<long long>(std::min<std::uint64_t>(d.count(ext, "buffer", where), INT64_MAX)),
                                    d.count(ext, "byteOffset", where, 0), length, where);
  auto bad_stride = [&](const char* allowed) {
    d.error(where, "byteStride " + std::to_string(stride) + " is not allowed for mode " + mode + " (" + allowed + ")");
  };
  if (mode == "ATTRIBUTES") {
    if (stride == 0 || stride > 256 || stride % 4 != 0) bad_stride("a multiple of 4, at most 256");
  } else if (mode == "TRIANGLES" || mode == "INDICES") {
    if (stride != 2 && stride != 4) bad_stride("2 or 4");
    if (filter != "NONE") d.error(where, "filter " + filter + " with mode " + mode + " (filters are for ATTRIBUTES)");
    if (mode == "TRIANGLES" && count % 3 != 0) d.error(where, "count " + std::to_string(count) + " is not a multiple of 3 (mode TRIANGLES)");
    if (count / 3 > d.max_triangles) {
      d.error(where, std::to_string(count) + " indices are more triangles than the scene has room for (" +
                         std::to_string(d.max_triangles) + ")");
    }
  } else {
    d.error(where, "mode \"" + mode + "\" is not ATTRIBUTES, TRIANGLES or INDICES");
  }
  if ((filter == "OCTAHEDRAL" && stride != 4 && stride != 8) || (filter == "QUATERNION" && stride != 8) ||
      (filter != "NONE" && filter != "OCTAHEDRAL" && filter != "QUATERNION" && filter != "EXPONENTIAL")) {
    d.error(where, "filter \"" + filter + "\" with byteStride " + std::to_string(stride) +
                       " is not allowed (OCTAHEDRAL: 4 or 8, QUATERNION: 8, EXPONENTIAL: a multiple of 4)");
  }
  if (count == 0 || count > view.byteLength / stride || count * stride != view.byteLength) {
    d.error(where, "count " + std::to_string(count) + " x byteStride " + std::to_string(stride) +
                       " disagrees with the view's byteLength " + std::to_string(view.byteLength));
  }
  d.src.reserve(view.byteLength, where);
  std::vector<unsigned char> out(view.byteLength);
  int rc = 0;
  if (mode == "ATTRIBUTES") {
    rc = meshopt_decodeVertexBuffer(out.data(), count, stride, in, length);
  } else if (mode == "TRIANGLES") {
    rc = meshopt_decodeIndexBuffer(out.data(), count, stride, in, length);
  } else {
    rc = meshopt_decodeIndexSequence(out.data(), count, stride, in, length);
  }
  if (rc != 0) {
    d.error(where, "the compressed " + mode + " data does not decode (truncated, corrupt, or a codec version newer than meshoptimizer " +
                       std::to_string(MESHOPTIMIZER_VERSION / 1000) + "." + std::to_string(MESHOPTIMIZER_VERSION % 1000 / 10) + " reads)");
  }
  if (filter == "OCTAHEDRAL") meshopt_decodeFilterOct(out.data(), count, stride);
  if (filter == "QUATERNION") meshopt_decodeFilterQuat(out.data(), count, stride);
  if (filter == "EXPONENTIAL") meshopt_decodeFilterExp(out.data(), count, stride);
  return out;
}

}  // namespace

void decode_meshopt(const gltf_decoder& d) {
  for (std::size_t i = 0; i < d.model.bufferViews.size(); ++i) {
    tinygltf::BufferView& view = d.model.bufferViews[i];
    const tinygltf::Value* ext = meshopt_extension(view);
    if (!ext) continue;
    const std::string where = "bufferViews[" + std::to_string(i) + "].extensions." +
                              (view.extensions.count("EXT_meshopt_compression") ? "EXT" : "KHR") + "_meshopt_compression";
    view.buffer = static_cast<int>(d.src.add_buffer(decode_view(d, view, *ext, where)));
    view.byteOffset = 0;
  }
}

}  // namespace sieve::render::detail
