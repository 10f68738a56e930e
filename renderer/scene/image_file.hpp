// Reading image files (textures; Radiance .hdr environment maps) into linear RGB floats: the one
// place that decodes images, through OpenImageIO (docs/images.md says why that library). Formats:
// PNG (8 and 16 bit), JPEG (baseline and progressive), TGA, TIFF, OpenEXR and Radiance .hdr. 8- and
// 16-bit colour is decoded from sRGB to linear; float and half images are linear as stored. Grey
// images become RGB; the alpha channel is dropped unless opacity is asked for.
#pragma once

#include "../core/math.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace sieve::render {

struct image_rgb {
  std::uint32_t width = 0, height = 0;
  std::vector<vec3> pixels;  // width * height, row 0 at the top, linear RGB
};

struct image_limits {
  std::uint32_t max_side = 16384;                    // pixels, width and height each
  std::uint64_t max_pixels = ~std::uint64_t{0};      // width * height
  std::uint64_t max_bytes = std::uint64_t{1} << 31;  // of decoded floats (12 bytes a pixel); also the file's size
};

// What an image is read as: its colour (RGB, linear), or an opacity (the alpha channel where the
// image has one, else its first channel, as stored: 0 transparent .. 1 opaque, in all three
// components: MTL's map_d), or its alpha (likewise, but 1 where the image has no alpha channel: a
// glTF base colour's alpha), or data (its colour channels as stored, never decoded from sRGB,
// whatever the file's precision: normal and metallic-roughness maps).
enum class image_use : std::uint8_t { color, opacity, alpha, data };

// Throws sieve::error naming `name` where a width x height image is past `limits`.
void check_image_size(std::uint64_t width, std::uint64_t height, const std::string& name, const std::string& what,
                      const image_limits& limits);

// Whether `data` starts as a Radiance .hdr file does ("#?RADIANCE" or "#?RGBE" and a newline).
bool is_radiance_hdr(const unsigned char* data, std::size_t size);

// The image in `path`. `what` names it in messages ("texture", "environment map").
// Throws sieve::error naming the file: not found, not a regular file, not an image sieve reads,
// corrupt, larger than `limits` (checked from the header, before a pixel is decoded), or holding a
// value that is not finite.
image_rgb read_image(const std::filesystem::path& path, const std::string& what, const image_limits& limits = {},
                     image_use use = image_use::color);

// The same from bytes already in memory; `name` names them in messages (and its extension tells a
// TGA file, the one format without a signature).
image_rgb decode_image(const unsigned char* data, std::size_t size, const std::string& name, const std::string& what,
                       const image_limits& limits = {}, image_use use = image_use::color);

// Throws sieve::error naming `name` and the first pixel with a NaN or infinite component.
void check_finite(const image_rgb& image, const std::string& name, const std::string& what);

// The linear value of an sRGB-encoded one in [0, 1].
float srgb_to_linear(float encoded);

}  // namespace sieve::render
