// PNG (8 and 16 bit, grey, palette, alpha) through stb_image's PNG decoder, compiled in with static
// linkage (the only part of stb_image used: fuzzing found faults in its JPEG and .hdr decoders, not
// in this one). The header is checked against the limits before a pixel is decoded.
#include "image_decoders.hpp"

#include "input_file.hpp"

#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_NO_STDIO
#define STBI_ONLY_PNG
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

namespace sieve::render::detail {

texel_image decode_png(const image_source& src) {
  const std::string at = src.name + ": ";
  const unsigned char* data = src.data;
  static const unsigned char png_start[16] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
  if (src.size < 24 || !std::equal(png_start, png_start + 16, data)) fail(at + "the " + src.what + " is not a valid PNG image");
  if (src.size > static_cast<std::size_t>(INT_MAX)) fail(at + "the " + src.what + " file is too large to decode");
  // The size straight from the IHDR chunk: a file that claims an absurd size is refused for that,
  // whatever else is wrong with it.
  auto be32 = [&](std::size_t i) {
    return std::uint64_t{data[i]} << 24 | std::uint64_t{data[i + 1]} << 16 | std::uint64_t{data[i + 2]} << 8 | data[i + 3];
  };
  const std::uint64_t w = be32(16), h = be32(20);
  if (w == 0 || h == 0) fail(at + "the " + src.what + " has no pixels");
  check_image_size(w, h, src.name, src.what, src.limits);
  // stb_image copies an empty IDAT chunk from a null buffer (undefined behaviour): refused here,
  // the chunks walked within the file's bytes.
  for (std::size_t at_chunk = 8; at_chunk + 12 <= src.size;) {
    const std::uint64_t length = be32(at_chunk);
    if (std::equal(data + at_chunk + 4, data + at_chunk + 8, "IDAT") && length == 0)
      fail(at + "the " + src.what + " holds an empty IDAT chunk");
    if (std::equal(data + at_chunk + 4, data + at_chunk + 8, "IEND") || length > src.size) break;
    at_chunk += 12 + static_cast<std::size_t>(length);
  }

  const int bytes = static_cast<int>(src.size);
  int dw = 0, dh = 0, channels = 0;
  const bool wide = stbi_is_16_bit_from_memory(data, bytes);
  const std::unique_ptr<void, void (*)(void*)> p(
      wide ? static_cast<void*>(stbi_load_16_from_memory(data, bytes, &dw, &dh, &channels, 0))
           : static_cast<void*>(stbi_load_from_memory(data, bytes, &dw, &dh, &channels, 0)),
      stbi_image_free);
  if (!p) fail(at + "cannot decode the " + src.what + ": the PNG is corrupt or truncated (stb_image: " + stbi_failure_reason() + ")");
  if (static_cast<std::uint64_t>(dw) != w || static_cast<std::uint64_t>(dh) != h || channels < 1 || channels > 4)
    fail(at + "the " + src.what + " decodes to a size other than its header's");

  texel_image out;  // stb_image's layout is texel_image's: grey, grey and alpha, RGB, RGBA; 8 or 16 bit
  out.width = static_cast<std::uint32_t>(w);
  out.height = static_cast<std::uint32_t>(h);
  out.channels = static_cast<std::uint8_t>(channels);
  out.format = wide ? texel_format::unorm16 : texel_format::unorm8;
  out.srgb = true;
  const auto* first = static_cast<const unsigned char*>(p.get());
  out.bytes.assign(first, first + w * h * static_cast<std::uint64_t>(channels) * (wide ? 2 : 1));
  return out;
}

}  // namespace sieve::render::detail
