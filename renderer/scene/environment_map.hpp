// Reading an HDR environment map ([environment] map = "sky.exr"): a latitude-longitude image, EXR
// or Radiance .hdr, decoded by the one image decoder (image_file.hpp), checked texel by texel, then
// its sampling tables built.
#pragma once

#include "../core/environment_data.hpp"
#include "image_file.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace sieve::render {

// The most texels an environment map may have (2^26: 16384 x 4096, about 1.5 GiB with its tables).
inline constexpr std::uint64_t max_environment_texels = std::uint64_t{1} << 26;

// The image in `bytes` (EXR or Radiance HDR, told apart by their magic numbers; the alpha channel of
// an RGBA image is dropped, a one-channel image is grey). `name` names it in errors. Throws
// sieve::error for another format, a malformed file, more than `max_texels` texels (checked from
// the header, before the pixels are decoded), or a texel that is NaN, infinite or negative (naming
// its column, row and value).
image_rgb decode_environment_image(const std::string& name, std::string_view bytes,
                                   std::uint64_t max_texels = max_environment_texels);

// Encodes `image` as EXR (32-bit float RGB) to `path`, all or nothing (core/image_io.hpp).
void write_environment_image(const std::filesystem::path& path, const image_rgb& image);

}  // namespace sieve::render
