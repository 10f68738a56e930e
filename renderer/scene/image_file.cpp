// Reading image files (image_file.hpp): what every decoder shares (limits, sRGB, the checks) and
// reading a file. decode_image itself is image_decode_oiio.cpp (OpenImageIO, the default) or, in a
// build without OpenImageIO (-DSIEVE_OPENIMAGEIO=OFF), image_decode_png.cpp (PNG only).
#include "image_file.hpp"

#include "input_file.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

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

}  // namespace sieve::render
