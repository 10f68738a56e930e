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

// tinyexr's header and image, freed whatever happens: the header also after a failed parse (what
// it read before the fault), the image only once loaded (a failed load frees it itself).
struct exr_guard {
  EXRHeader header;
  EXRImage image;
  bool loaded = false;
  exr_guard() {
    InitEXRHeader(&header);
    InitEXRImage(&image);
  }
  ~exr_guard() {
    if (loaded) FreeEXRImage(&image);
    FreeEXRHeader(&header);
  }
  exr_guard(const exr_guard&) = delete;
  exr_guard& operator=(const exr_guard&) = delete;
};

// Through tinyexr's lower-level calls (the header parsed once, its size checked before any pixel
// is decoded, channels found by name).
rgb_image decode_exr(const std::string& name, std::string_view bytes, std::uint64_t max_texels) {
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  EXRVersion version;
  if (int rc = ParseEXRVersionFromMemory(&version, data, bytes.size()); rc != TINYEXR_SUCCESS)
    fail(name, "not a readable EXR file (version: error " + std::to_string(rc) + ")");
  if (version.multipart || version.non_image) fail(name, "multi-part and deep EXR files are not supported");
  if (version.tiled) fail(name, "tiled EXR files are not supported (write it with scanlines)");
  exr_guard exr;
  const char* err = nullptr;
  if (int rc = ParseEXRHeaderFromMemory(&exr.header, &version, data, bytes.size(), &err); rc != TINYEXR_SUCCESS)
    fail(name, "malformed EXR header: " + exr_message(rc, err));
  const EXRHeader& h = exr.header;
  if (h.tiled) fail(name, "tiled EXR files are not supported (write it with scanlines)");
  const std::int64_t w = std::int64_t{h.data_window.max_x} - h.data_window.min_x + 1;
  const std::int64_t ht = std::int64_t{h.data_window.max_y} - h.data_window.min_y + 1;
  check_size(name, w, ht, max_texels);
  int r = -1, g = -1, b = -1, y = -1;
  for (int c = 0; c < h.num_channels; ++c) {
    const std::string_view n = h.channels[c].name;
    if (n == "R") r = c;
    else if (n == "G") g = c;
    else if (n == "B") b = c;
    else if (n == "Y") y = c;
    exr.header.requested_pixel_types[c] = TINYEXR_PIXELTYPE_FLOAT;
  }
  if (!(r >= 0 && g >= 0 && b >= 0) && y < 0) fail(name, "the EXR image has neither R, G, B nor Y channels");
  // A chunk that fails to decode makes tinyexr 1.0.1 free the image itself (without clearing its
  // pointers: hence `loaded`), but only the planes of image.num_channels, which it sets after
  // decoding: set before, so that a failed load frees every plane (fuzz_envmap found the leak).
  exr.image.num_channels = h.num_channels;
  if (int rc = LoadEXRImageFromMemory(&exr.image, &exr.header, data, bytes.size(), &err); rc != TINYEXR_SUCCESS)
    fail(name, "cannot decode the EXR image: " + exr_message(rc, err));
  exr.loaded = true;
  const EXRImage& im = exr.image;
  if (im.width != w || im.height != ht || !im.images) fail(name, "EXR data window and decoded image differ");
  const bool rgb = r >= 0 && g >= 0 && b >= 0;  // else grey from Y
  const auto plane = [&](int c) { return reinterpret_cast<const float*>(im.images[c]); };
  const float *pr = plane(rgb ? r : y), *pg = plane(rgb ? g : y), *pb = plane(rgb ? b : y);
  rgb_image out;
  out.width = static_cast<std::uint32_t>(w);
  out.height = static_cast<std::uint32_t>(ht);
  out.texels.resize(std::size_t{out.width} * out.height);
  for (std::size_t i = 0; i < out.texels.size(); ++i) out.texels[i] = {pr[i], pg[i], pb[i]};
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
