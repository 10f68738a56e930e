// Reading image files (image_file.hpp): what every decoder shares (limits, sRGB, the checks),
// reading a file, and the texels as linear floats (decode_image). decode_texels itself, the format
// told and its decoder asked, is image_decode.cpp.
#include "image_file.hpp"

#include "input_file.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

namespace sieve::render {

float srgb_to_linear(float c) { return srgb_decode(c); }

image_rgb decode_image(const unsigned char* data, std::size_t size, const std::string& name, const std::string& what,
                       const image_limits& limits, image_use use) {
  const texel_image t = decode_texels(data, size, name, what, limits);
  if (use == image_use::alpha && !t.has_alpha()) return image_rgb{1, 1, {vec3{1, 1, 1}}};  // opaque throughout: one texel
  image_rgb out;
  out.width = t.width;
  out.height = t.height;
  out.pixels.resize(std::size_t{t.width} * t.height);
  const std::uint32_t a = t.has_alpha() ? t.channels - 1U : 0U, grey = t.colour_channels() == 1;
  for (std::size_t i = 0; i < out.pixels.size(); ++i) {
    if (use == image_use::opacity || use == image_use::alpha) {
      const float v = t.value(i, a);
      out.pixels[i] = {v, v, v};
      continue;
    }
    float c[3];
    for (std::uint32_t k = 0; k < 3; ++k) c[k] = t.value(i, grey ? 0 : k);
    if (use == image_use::color && t.srgb)
      for (float& v : c) v = srgb_decode(v);
    out.pixels[i] = {c[0], c[1], c[2]};
  }
  return out;
}

void check_finite(const texel_image& image, const std::string& name, const std::string& what) {
  if (image.format != texel_format::half && image.format != texel_format::float32) return;
  const std::size_t n = std::size_t{image.width} * image.height;
  for (std::size_t i = 0; i < n; ++i)
    for (std::uint32_t c = 0; c < image.channels; ++c)
      if (!std::isfinite(image.value(i, c))) {
        detail::fail(name + ": the " + what + " has a value that is not finite at pixel (" +
                     std::to_string(i % image.width) + ", " + std::to_string(i / image.width) + ")");
      }
}

void check_finite(const image_rgb& image, const std::string& name, const std::string& what) {
  for (std::size_t i = 0; i < image.pixels.size(); ++i) {
    if (!finite(image.pixels[i])) {
      detail::fail(name + ": the " + what + " has a value that is not finite at pixel (" +
                   std::to_string(i % image.width) + ", " + std::to_string(i / image.width) + ")");
    }
  }
}

void check_image_size(std::uint64_t uw, std::uint64_t uh, const std::string& name, const std::string& what,
                      const image_limits& limits) {
  const std::string at = name + ": the " + what + " is " + std::to_string(uw) + " x " + std::to_string(uh) + " pixels";
  if (uw > limits.max_side || uh > limits.max_side)
    detail::fail(at + ", more than the limit of " + std::to_string(limits.max_side) + " on a side");
  const std::uint64_t pixels = uw * uh;  // both below 2^32: no overflow
  if (pixels > limits.max_pixels)
    detail::fail(at + ", more than the limit of " + std::to_string(limits.max_pixels) + " pixels");
  if (pixels > limits.max_bytes / sizeof(vec3)) {
    detail::fail(at + " (" + std::to_string((pixels >> 8) * sizeof(vec3) >> 12) + " MiB as floats), more than the limit of " +
                 std::to_string(limits.max_bytes >> 20) + " MiB");
  }
}

bool is_radiance_hdr(const unsigned char* data, std::size_t size) {
  auto starts = [&](std::string_view s) { return size >= s.size() && std::equal(s.begin(), s.end(), data); };
  return starts("#?RADIANCE\n") || starts("#?RGBE\n");
}

image_rgb read_image(const std::filesystem::path& path, const std::string& what, const image_limits& limits,
                     image_use use) {
  detail::input_file file(path, what);
  const std::vector<unsigned char> bytes = file.bytes(limits.max_bytes);
  return decode_image(bytes.data(), bytes.size(), path.string(), what, limits, use);
}

texel_image read_texels(const std::filesystem::path& path, const std::string& what, const image_limits& limits) {
  detail::input_file file(path, what);
  const std::vector<unsigned char> bytes = file.bytes(limits.max_bytes);
  return decode_texels(bytes.data(), bytes.size(), path.string(), what, limits);
}

}  // namespace sieve::render
