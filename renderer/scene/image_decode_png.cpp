// decode_texels (image_file.hpp) in a build without OpenImageIO (-DSIEVE_OPENIMAGEIO=OFF): PNG and
// JPEG only, through stb_image's decoders (PNG: 8 and 16 bit, grey, palette, alpha; JPEG: baseline
// and progressive, 8 bit), compiled in with static linkage. Meant for machines where OpenImageIO's
// libraries cannot be installed; every other format is refused with one line naming the option. The
// header is checked against the limits before a pixel is decoded.
#include "image_file.hpp"

#include "input_file.hpp"

#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_NO_STDIO
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#endif
#include <stb/stb_image.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#include <algorithm>
#include <climits>
#include <memory>

namespace sieve::render {

texel_image decode_texels(const unsigned char* data, std::size_t size, const std::string& name, const std::string& what,
                          const image_limits& limits) {
  const std::string at = name + ": ";
  static const unsigned char png_start[16] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
  static const unsigned char jpeg_start[3] = {0xff, 0xd8, 0xff};
  const bool png = size >= 24 && std::equal(png_start, png_start + 16, data);
  const bool jpeg = size >= 3 && std::equal(jpeg_start, jpeg_start + 3, data);
  if (!png && !jpeg) {
    detail::fail(at + "the " + what + " is not a PNG or JPEG image, the formats this build reads (built without "
                 "OpenImageIO: configure with -DSIEVE_OPENIMAGEIO=ON for TGA, TIFF, OpenEXR and .hdr)");
  }
  if (size > static_cast<std::size_t>(INT_MAX)) detail::fail(at + "the " + what + " file is too large to decode");
  auto be32 = [&](std::size_t i) {
    return std::uint64_t{data[i]} << 24 | std::uint64_t{data[i + 1]} << 16 | std::uint64_t{data[i + 2]} << 8 | data[i + 3];
  };
  std::uint64_t w = 0, h = 0;
  if (png) {
    w = be32(16), h = be32(20);
  } else {  // the JPEG's frame header, read by stb_image without decoding
    int iw = 0, ih = 0, ic = 0;
    if (!stbi_info_from_memory(data, static_cast<int>(size), &iw, &ih, &ic))
      detail::fail(at + "cannot read the " + what + ": " + stbi_failure_reason());
    w = static_cast<std::uint64_t>(iw), h = static_cast<std::uint64_t>(ih);
  }
  if (w == 0 || h == 0) detail::fail(at + "the " + what + " has no pixels");
  check_image_size(w, h, name, what, limits);

  const int bytes = static_cast<int>(size);
  int dw = 0, dh = 0, channels = 0;
  const bool wide = stbi_is_16_bit_from_memory(data, bytes);
  const std::unique_ptr<void, void (*)(void*)> p(
      wide ? static_cast<void*>(stbi_load_16_from_memory(data, bytes, &dw, &dh, &channels, 0))
           : static_cast<void*>(stbi_load_from_memory(data, bytes, &dw, &dh, &channels, 0)),
      stbi_image_free);
  if (!p) detail::fail(at + "cannot decode the " + what + ": " + stbi_failure_reason());
  if (static_cast<std::uint64_t>(dw) != w || static_cast<std::uint64_t>(dh) != h || channels < 1 || channels > 4)
    detail::fail(at + "the " + what + " decodes to a size other than its header's");

  texel_image out;  // stb_image's layout is texel_image's: grey, grey + alpha, RGB, RGBA; 8 or 16 bit
  out.width = static_cast<std::uint32_t>(w);
  out.height = static_cast<std::uint32_t>(h);
  out.channels = static_cast<std::uint8_t>(channels);
  out.format = wide ? texel_format::unorm16 : texel_format::unorm8;
  out.srgb = true;
  const auto* first = static_cast<const unsigned char*>(p.get());
  out.bytes.assign(first, first + w * h * static_cast<std::uint64_t>(channels) * (wide ? 2 : 1));
  return out;
}

}  // namespace sieve::render
