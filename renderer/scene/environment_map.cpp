// Reading HDR environment images (environment_map.hpp).
#include "environment_map.hpp"

#include "../core/image_io.hpp"
#include "input_file.hpp"

#include <sieve/compaction/error.hpp>

#include <tinyexr.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace sieve::render {
namespace {

[[noreturn]] void fail(const std::string& name, const std::string& why) { throw sieve::error(name + ": " + why); }

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
image_rgb decode_exr(const std::string& name, std::string_view bytes, const image_limits& limits) {
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
  if (w <= 0 || ht <= 0) fail(name, "image of " + std::to_string(w) + " x " + std::to_string(ht) + " texels");
  check_image_size(static_cast<std::uint64_t>(w), static_cast<std::uint64_t>(ht), name, "environment map", limits);
  int r = -1, g = -1, b = -1, y = -1;
  for (int c = 0; c < h.num_channels; ++c) {
    const std::string_view n = h.channels[c].name;
    if (n == "R") r = c;
    else if (n == "G") g = c;
    else if (n == "B") b = c;
    else if (n == "Y") y = c;
    // Half and float channels decode as float; tinyexr 1.0.1 asserts (aborts) when asked to convert
    // an integer channel, so integer channels stay integers and are refused below if they are used
    // (fuzz_envmap found the abort).
    exr.header.requested_pixel_types[c] =
        h.pixel_types[c] == TINYEXR_PIXELTYPE_UINT ? TINYEXR_PIXELTYPE_UINT : TINYEXR_PIXELTYPE_FLOAT;
  }
  if (!(r >= 0 && g >= 0 && b >= 0) && y < 0) fail(name, "the EXR image has neither R, G, B nor Y channels");
  for (const int c : {r, g, b, y})
    if (c >= 0 && h.pixel_types[c] == TINYEXR_PIXELTYPE_UINT)
      fail(name, std::string("EXR channel ") + h.channels[c].name + " holds integers; an environment map needs half or float");
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
  image_rgb out;
  out.width = static_cast<std::uint32_t>(w);
  out.height = static_cast<std::uint32_t>(ht);
  out.pixels.resize(std::size_t{out.width} * out.height);
  for (std::size_t i = 0; i < out.pixels.size(); ++i) out.pixels[i] = {pr[i], pg[i], pb[i]};
  return out;
}

}  // namespace

image_rgb decode_environment_image(const std::string& name, std::string_view bytes, std::uint64_t max_texels) {
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  image_limits limits;
  limits.max_side = static_cast<std::uint32_t>(std::min<std::uint64_t>(max_texels, UINT32_MAX));
  limits.max_pixels = max_texels;
  limits.max_bytes = ~std::uint64_t{0};
  image_rgb image;
  if (bytes.size() >= 4 && std::memcmp(data, "\x76\x2f\x31\x01", 4) == 0) image = decode_exr(name, bytes, limits);
  else if (is_radiance_hdr(data, bytes.size())) image = decode_image(data, bytes.size(), name, "environment map", limits);
  else fail(name, "not an EXR or Radiance HDR image (an environment map must be one)");
  for (std::size_t i = 0; i < image.pixels.size(); ++i) {
    const vec3 t = image.pixels[i];
    for (const float c : {t.x, t.y, t.z}) {
      if (std::isfinite(c) && c >= 0) continue;
      fail(name, "texel (" + std::to_string(i % image.width) + ", " + std::to_string(i / image.width) + ") is " +
                     detail::str(c) + " (radiance must be finite and >= 0)");
    }
  }
  return image;
}

void write_environment_image(const std::filesystem::path& path, const image_rgb& image) {
  write_exr(path, image.width, image.height, image.pixels);
}

}  // namespace sieve::render
