// Reading image files through stb_image (image_file.hpp). Only the decoders of the formats named
// there are compiled in, with static linkage, so that no other stb_image in the program clashes.
#include "image_file.hpp"

#include "input_file.hpp"

#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_NO_STDIO
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_ONLY_HDR
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#endif
#include <stb/stb_image.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#include <algorithm>
#include <climits>
#include <cmath>
#include <memory>

namespace sieve::render {

float srgb_to_linear(float c) {
  return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f);
}

void check_finite(const image_rgb& image, const std::string& name, const std::string& what) {
  for (std::size_t i = 0; i < image.pixels.size(); ++i) {
    if (!finite(image.pixels[i])) {
      detail::fail(name + ": the " + what + " has a value that is not finite at pixel (" +
                   std::to_string(i % image.width) + ", " + std::to_string(i / image.width) + ")");
    }
  }
}

image_rgb decode_image(const unsigned char* data, std::size_t size, const std::string& name, const std::string& what,
                       const image_limits& limits) {
  const std::string at = name + ": ";
  if (size > static_cast<std::size_t>(INT_MAX)) detail::fail(at + "the " + what + " file is too large to decode");
  const int bytes = static_cast<int>(size);
  auto check_dimensions = [&](std::uint64_t uw, std::uint64_t uh) {
    if (uw > limits.max_side || uh > limits.max_side) {
      detail::fail(at + "the " + what + " is " + std::to_string(uw) + " x " + std::to_string(uh) +
                   " pixels, more than the limit of " + std::to_string(limits.max_side) + " on a side");
    }
    if (uw * uh * sizeof(vec3) > limits.max_bytes) {
      detail::fail(at + "the " + what + " is " + std::to_string(uw) + " x " + std::to_string(uh) + " pixels (" +
                   std::to_string(uw * uh * sizeof(vec3) >> 20) + " MiB as floats), more than the limit of " +
                   std::to_string(limits.max_bytes >> 20) + " MiB");
    }
  };
  // A PNG's size from its header first: stb_image refuses images past 2^30 bytes with a reason
  // that its other decoders' attempts then overwrite.
  static const unsigned char png_start[16] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
  if (size >= 24 && std::equal(png_start, png_start + 16, data)) {
    auto be32 = [&](std::size_t i) {
      return std::uint64_t{data[i]} << 24 | std::uint64_t{data[i + 1]} << 16 | std::uint64_t{data[i + 2]} << 8 | data[i + 3];
    };
    check_dimensions(be32(16), be32(20));
  }
  int w = 0, h = 0, channels = 0;
  if (!stbi_info_from_memory(data, bytes, &w, &h, &channels)) {
    detail::fail(at + "cannot read the " + what + ": " + stbi_failure_reason() +
                 " (sieve reads PNG, JPEG and Radiance .hdr images)");
  }
  if (w <= 0 || h <= 0) detail::fail(at + "the " + what + " has no pixels");
  const auto uw = static_cast<std::uint64_t>(w), uh = static_cast<std::uint64_t>(h);
  check_dimensions(uw, uh);

  image_rgb out;
  out.width = static_cast<std::uint32_t>(w);
  out.height = static_cast<std::uint32_t>(h);
  out.pixels.resize(uw * uh);
  int dw = 0, dh = 0, dc = 0;
  auto check_size = [&](const void* p) {
    if (!p) detail::fail(at + "cannot decode the " + what + ": " + stbi_failure_reason());
    if (dw != w || dh != h) detail::fail(at + "the " + what + " decodes to a size other than its header's");
  };
  if (stbi_is_hdr_from_memory(data, bytes)) {
    const std::unique_ptr<float, void (*)(void*)> p(stbi_loadf_from_memory(data, bytes, &dw, &dh, &dc, 3), stbi_image_free);
    check_size(p.get());
    for (std::size_t i = 0; i < out.pixels.size(); ++i) out.pixels[i] = {p.get()[3 * i], p.get()[3 * i + 1], p.get()[3 * i + 2]};
  } else if (stbi_is_16_bit_from_memory(data, bytes)) {
    const std::unique_ptr<stbi_us, void (*)(void*)> p(stbi_load_16_from_memory(data, bytes, &dw, &dh, &dc, 3),
                                                      stbi_image_free);
    check_size(p.get());
    for (std::size_t i = 0; i < out.pixels.size(); ++i) {
      const stbi_us* q = p.get() + 3 * i;
      out.pixels[i] = {srgb_to_linear(q[0] / 65535.0f), srgb_to_linear(q[1] / 65535.0f), srgb_to_linear(q[2] / 65535.0f)};
    }
  } else {
    const std::unique_ptr<stbi_uc, void (*)(void*)> p(stbi_load_from_memory(data, bytes, &dw, &dh, &dc, 3), stbi_image_free);
    check_size(p.get());
    float table[256];
    for (int i = 0; i < 256; ++i) table[i] = srgb_to_linear(static_cast<float>(i) / 255.0f);
    for (std::size_t i = 0; i < out.pixels.size(); ++i) {
      const stbi_uc* q = p.get() + 3 * i;
      out.pixels[i] = {table[q[0]], table[q[1]], table[q[2]]};
    }
  }
  check_finite(out, name, what);
  return out;
}

image_rgb read_image(const std::filesystem::path& path, const std::string& what, const image_limits& limits) {
  detail::input_file file(path, what);
  const std::vector<unsigned char> bytes = file.bytes(limits.max_bytes);
  return decode_image(bytes.data(), bytes.size(), path.string(), what, limits);
}

}  // namespace sieve::render
