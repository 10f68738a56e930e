// Reading image files (textures; environment maps) into linear RGB floats: the one place that
// decodes images. PNG (stb_image; 8-bit: sRGB decoded to linear; 16-bit: the same curve at 16 bits;
// grey, grey+alpha and palette images become RGB, alpha is dropped) and Radiance .hdr (RGBE, flat
// or run-length encoded scanlines; linear, as stored). JPEG is not read (image_file.cpp says why).
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

// Throws sieve::error naming `name` where a width x height image is past `limits`.
void check_image_size(std::uint64_t width, std::uint64_t height, const std::string& name, const std::string& what,
                      const image_limits& limits);

// Whether `data` starts as a Radiance .hdr file does ("#?RADIANCE" or "#?RGBE" and a newline).
bool is_radiance_hdr(const unsigned char* data, std::size_t size);

// The image in `path`. `what` names it in messages ("texture", "environment map").
// Throws sieve::error naming the file: not found, not a regular file, not an image stb_image reads
// (the reason it gives), corrupt, larger than `limits` (checked from the header, before decoding),
// or holding a value that is not finite.
image_rgb read_image(const std::filesystem::path& path, const std::string& what, const image_limits& limits = {});

// The same from bytes already in memory; `name` names them in messages.
image_rgb decode_image(const unsigned char* data, std::size_t size, const std::string& name, const std::string& what,
                       const image_limits& limits = {});

// Throws sieve::error naming `name` and the first pixel with a NaN or infinite component.
void check_finite(const image_rgb& image, const std::string& name, const std::string& what);

// The linear value of an sRGB-encoded one in [0, 1].
float srgb_to_linear(float encoded);

}  // namespace sieve::render
