// The OpenEXR decoder (image_decoders.hpp): tinyexr, linked in (it writes sieve's EXR output too),
// so that every build reads EXR textures and environment maps, OpenImageIO or not. Scanline images
// of one part; the colour channels (R, G, B, or Y alone) and A where there is one, kept as half
// where every one of them is half, else as float; linear, as EXR stores light.
#include "image_decoders.hpp"

#include "input_file.hpp"

#include <tinyexr.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace sieve::render::detail {
namespace {

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

// The header parsed (once; its size checked before any pixel is decoded).
void parse_header(const image_source& src, exr_guard& exr) {
  const std::string at = src.name + ": ";
  EXRVersion version;
  if (int rc = ParseEXRVersionFromMemory(&version, src.data, src.size); rc != TINYEXR_SUCCESS)
    fail(at + "not a readable EXR file (version: error " + std::to_string(rc) + ")");
  if (version.multipart || version.non_image) fail(at + "multi-part and deep EXR files are not supported");
  if (version.tiled) fail(at + "tiled EXR files are not supported (write it with scanlines)");
  const char* err = nullptr;
  if (int rc = ParseEXRHeaderFromMemory(&exr.header, &version, src.data, src.size, &err); rc != TINYEXR_SUCCESS)
    fail(at + "malformed EXR header: " + exr_message(rc, err));
  const EXRHeader& h = exr.header;
  if (h.tiled) fail(at + "tiled EXR files are not supported (write it with scanlines)");
  const std::int64_t w = std::int64_t{h.data_window.max_x} - h.data_window.min_x + 1;
  const std::int64_t ht = std::int64_t{h.data_window.max_y} - h.data_window.min_y + 1;
  if (w <= 0 || ht <= 0) fail(at + "image of " + std::to_string(w) + " x " + std::to_string(ht) + " texels");
  check_image_size(static_cast<std::uint64_t>(w), static_cast<std::uint64_t>(ht), src.name, src.what, src.limits);
}

}  // namespace

texel_image decode_exr(const image_source& src) {
  const std::string at = src.name + ": ";
  exr_guard exr;
  parse_header(src, exr);
  const EXRHeader& h = exr.header;
  int r = -1, g = -1, b = -1, y = -1, a = -1;
  for (int c = 0; c < h.num_channels; ++c) {
    const std::string_view n = h.channels[c].name;
    if (n == "R") r = c;
    else if (n == "G") g = c;
    else if (n == "B") b = c;
    else if (n == "Y") y = c;
    else if (n == "A") a = c;
  }
  const bool rgb = r >= 0 && g >= 0 && b >= 0;  // else grey from Y
  if (!rgb && y < 0) fail(at + "the EXR image has neither R, G, B nor Y channels");
  int kept[4] = {rgb ? r : y, g, b, a};
  const int colour = rgb ? 3 : 1, count = colour + (a >= 0 ? 1 : 0);
  if (!rgb) kept[1] = a;
  bool all_half = true;
  for (int k = 0; k < count; ++k) {
    const int c = kept[k];
    if (h.pixel_types[c] == TINYEXR_PIXELTYPE_UINT)
      fail(at + "EXR channel " + h.channels[c].name + " holds integers; the " + src.what + " needs half or float");
    all_half &= h.pixel_types[c] == TINYEXR_PIXELTYPE_HALF;
  }
  // The kept channels at the precision kept; the others as stored. tinyexr 1.0.1 asserts (aborts)
  // when asked to convert an integer channel, so integer channels stay integers (fuzz_envmap found
  // the abort).
  for (int c = 0; c < h.num_channels; ++c)
    exr.header.requested_pixel_types[c] = h.pixel_types[c] == TINYEXR_PIXELTYPE_UINT ? TINYEXR_PIXELTYPE_UINT
                                          : all_half ? TINYEXR_PIXELTYPE_HALF
                                                     : TINYEXR_PIXELTYPE_FLOAT;
  // A chunk that fails to decode makes tinyexr 1.0.1 free the image itself (without clearing its
  // pointers: hence `loaded`), but only the planes of image.num_channels, which it sets after
  // decoding: set before, so that a failed load frees every plane (fuzz_envmap found the leak).
  exr.image.num_channels = h.num_channels;
  const char* err = nullptr;
  if (int rc = LoadEXRImageFromMemory(&exr.image, &exr.header, src.data, src.size, &err); rc != TINYEXR_SUCCESS)
    fail(at + "cannot decode the EXR image: " + exr_message(rc, err));
  exr.loaded = true;
  const EXRImage& im = exr.image;
  const std::int64_t w = std::int64_t{h.data_window.max_x} - h.data_window.min_x + 1;
  const std::int64_t ht = std::int64_t{h.data_window.max_y} - h.data_window.min_y + 1;
  if (im.width != w || im.height != ht || !im.images) fail(at + "EXR data window and decoded image differ");
  texel_image out;
  out.format = all_half ? texel_format::half : texel_format::float32;
  out.srgb = false;
  out.width = static_cast<std::uint32_t>(w);
  out.height = static_cast<std::uint32_t>(ht);
  out.channels = static_cast<std::uint8_t>(count);
  const std::size_t cb = channel_bytes(out.format), pixels = std::size_t{out.width} * out.height;
  out.bytes.resize(pixels * count * cb);
  for (int k = 0; k < count; ++k) {
    const unsigned char* plane = im.images[kept[k]];
    for (std::size_t i = 0; i < pixels; ++i) std::memcpy(out.bytes.data() + (i * count + k) * cb, plane + i * cb, cb);
  }
  check_finite(out, src.name, src.what);
  return out;
}

}  // namespace sieve::render::detail
