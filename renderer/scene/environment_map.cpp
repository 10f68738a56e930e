// Reading HDR environment images (environment_map.hpp).
#include "environment_map.hpp"

#include "../core/image_io.hpp"

#include <sieve/compaction/error.hpp>

#include <tinyexr.h>

// Radiance HDR only, private to this file (no symbols that could meet another stb_image's).
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_HDR
#define STBI_NO_STDIO
#include <stb/stb_image.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>

namespace sieve::render {
namespace {

[[noreturn]] void fail(const std::string& name, const std::string& why) { throw sieve::error(name + ": " + why); }

void check_size(const std::string& name, std::int64_t w, std::int64_t h, std::uint64_t max_texels) {
  if (w <= 0 || h <= 0) fail(name, "image of " + std::to_string(w) + " x " + std::to_string(h) + " texels");
  if (static_cast<std::uint64_t>(w) * static_cast<std::uint64_t>(h) > max_texels)
    fail(name, std::to_string(w) + " x " + std::to_string(h) + " texels is more than the limit of " +
                   std::to_string(max_texels) + " texels");
}

std::string exr_message(int code, const char* err) {
  std::string why = err ? err : "error " + std::to_string(code);
  if (err) FreeEXRErrorMessage(err);
  while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
  return why;
}

rgb_image decode_exr(const std::string& name, std::string_view bytes, std::uint64_t max_texels) {
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  EXRVersion version;
  if (int rc = ParseEXRVersionFromMemory(&version, data, bytes.size()); rc != TINYEXR_SUCCESS)
    fail(name, "not a readable EXR file (version: error " + std::to_string(rc) + ")");
  if (version.multipart || version.non_image) fail(name, "multi-part and deep EXR files are not supported");
  EXRHeader header;
  InitEXRHeader(&header);
  const char* err = nullptr;
  if (int rc = ParseEXRHeaderFromMemory(&header, &version, data, bytes.size(), &err); rc != TINYEXR_SUCCESS)
    fail(name, "malformed EXR header: " + exr_message(rc, err));
  const std::int64_t w = std::int64_t{header.data_window.max_x} - header.data_window.min_x + 1;
  const std::int64_t h = std::int64_t{header.data_window.max_y} - header.data_window.min_y + 1;
  FreeEXRHeader(&header);
  check_size(name, w, h, max_texels);
  float* rgba = nullptr;
  int width = 0, height = 0;
  if (int rc = LoadEXRFromMemory(&rgba, &width, &height, data, bytes.size(), &err); rc != TINYEXR_SUCCESS)
    fail(name, "cannot decode the EXR image: " + exr_message(rc, err));
  const std::unique_ptr<float, decltype(&std::free)> owned(rgba, &std::free);
  if (width != w || height != h) fail(name, "EXR data window and decoded size differ");
  rgb_image out;
  out.width = static_cast<std::uint32_t>(width);
  out.height = static_cast<std::uint32_t>(height);
  out.texels.resize(std::size_t{out.width} * out.height);
  for (std::size_t i = 0; i < out.texels.size(); ++i) out.texels[i] = {rgba[4 * i], rgba[4 * i + 1], rgba[4 * i + 2]};
  return out;
}

rgb_image decode_hdr(const std::string& name, std::string_view bytes, std::uint64_t max_texels) {
  if (bytes.size() > 0x7fffffff) fail(name, "file of more than 2 GiB");
  const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  const int size = static_cast<int>(bytes.size());
  int w = 0, h = 0, channels = 0;
  if (!stbi_info_from_memory(data, size, &w, &h, &channels))
    fail(name, std::string("malformed Radiance HDR header: ") + stbi_failure_reason());
  check_size(name, w, h, max_texels);
  // stb_image reads zeros past the end of the data: a truncated file would decode as black. The
  // texels take at least 4 bytes each (flat), or per scanline a 4-byte start and per channel two
  // bytes for each run of up to 127 (run-length encoded scanlines, 8 .. 32767 wide).
  const std::size_t blank = bytes.find("\n\n");
  const std::size_t data_at = blank == std::string_view::npos ? bytes.size() : bytes.find('\n', blank + 2);
  const std::uint64_t have = data_at == std::string_view::npos ? 0 : bytes.size() - data_at - 1;
  const std::uint64_t runs = (static_cast<std::uint64_t>(w) + 126) / 127;
  const std::uint64_t least = w >= 8 && w < 32768 ? static_cast<std::uint64_t>(h) * (4 + 8 * runs)
                                                   : static_cast<std::uint64_t>(w) * static_cast<std::uint64_t>(h) * 4;
  if (have < least)
    fail(name, "truncated Radiance HDR image: " + std::to_string(have) + " bytes of texels for " + std::to_string(w) +
                   " x " + std::to_string(h) + " (at least " + std::to_string(least) + ")");
  float* rgb = stbi_loadf_from_memory(data, size, &w, &h, &channels, 3);
  if (!rgb) fail(name, std::string("cannot decode the Radiance HDR image: ") + stbi_failure_reason());
  const std::unique_ptr<float, decltype(&stbi_image_free)> owned(rgb, &stbi_image_free);
  rgb_image out;
  out.width = static_cast<std::uint32_t>(w);
  out.height = static_cast<std::uint32_t>(h);
  out.texels.resize(std::size_t{out.width} * out.height);
  for (std::size_t i = 0; i < out.texels.size(); ++i) out.texels[i] = {rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]};
  return out;
}

std::string number(float v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

}  // namespace

rgb_image decode_environment_image(const std::string& name, std::string_view bytes, std::uint64_t max_texels) {
  rgb_image image;
  const bool exr = bytes.size() >= 4 && std::memcmp(bytes.data(), "\x76\x2f\x31\x01", 4) == 0;
  const bool hdr = bytes.substr(0, 10) == "#?RADIANCE" || bytes.substr(0, 6) == "#?RGBE";
  if (exr) image = decode_exr(name, bytes, max_texels);
  else if (hdr) image = decode_hdr(name, bytes, max_texels);
  else fail(name, "not an EXR or Radiance HDR image (an environment map must be one)");
  for (std::size_t i = 0; i < image.texels.size(); ++i) {
    const vec3 t = image.texels[i];
    for (const float c : {t.x, t.y, t.z}) {
      if (std::isfinite(c) && c >= 0) continue;
      fail(name, "texel (" + std::to_string(i % image.width) + ", " + std::to_string(i / image.width) + ") is " +
                     number(c) + " (radiance must be finite and >= 0)");
    }
  }
  return image;
}

void write_environment_image(const std::filesystem::path& path, const rgb_image& image) {
  write_exr(path, image.width, image.height, image.texels);
}

}  // namespace sieve::render
