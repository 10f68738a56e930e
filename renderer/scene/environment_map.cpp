// Reading HDR environment images (environment_map.hpp): EXR and Radiance .hdr by the one image
// decoder (image_file.hpp), then checked texel by texel.
#include "environment_map.hpp"

#include "../core/image_io.hpp"
#include "input_file.hpp"

#include <sieve/compaction/error.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace sieve::render {
namespace {

[[noreturn]] void fail(const std::string& name, const std::string& why) { throw sieve::error(name + ": " + why); }

}  // namespace

image_rgb decode_environment_image(const std::string& name, std::string_view bytes, std::uint64_t max_texels) {
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  image_limits limits;
  limits.max_side = static_cast<std::uint32_t>(std::min<std::uint64_t>(max_texels, UINT32_MAX));
  limits.max_pixels = max_texels;
  limits.max_bytes = ~std::uint64_t{0};
  const bool exr = bytes.size() >= 4 && std::memcmp(data, "\x76\x2f\x31\x01", 4) == 0;
  if (!exr && !is_radiance_hdr(data, bytes.size())) fail(name, "not an EXR or Radiance HDR image (an environment map must be one)");
  const image_rgb image = decode_image(data, bytes.size(), name, "environment map", limits);  // non-finite refused
  // (a float channel's NaN or infinity, by the decoder); a negative radiance here.
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
