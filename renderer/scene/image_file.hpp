// Reading image files (textures; EXR and Radiance .hdr environment maps): the one place that decodes
// images. Formats: PNG (8 and 16 bit), JPEG (baseline and progressive) and OpenEXR (scanline) by
// decoders linked in; TGA, TIFF and Radiance .hdr through OpenImageIO, loaded on first use (docs/images.md). A
// decoder returns the texels at the file's precision (decode_texels: 8-bit, 16-bit, half or float,
// with the colour space: 8- and 16-bit colour is sRGB, float and half linear); decode_image turns
// them into linear RGB floats (grey images become RGB; the alpha channel is dropped unless opacity
// is asked for).
#pragma once

#include "../core/math.hpp"
#include "../core/texture_store.hpp"

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
// Throws sieve::error naming the file: not found, not a regular file, not an image sieve reads,
// corrupt, larger than `limits` (checked from the header, before a pixel is decoded), or holding a
// value that is not finite.
image_rgb read_image(const std::filesystem::path& path, const std::string& what, const image_limits& limits = {},
                     image_use use = image_use::color);

// The same at the file's precision (decode_texels).
texel_image read_texels(const std::filesystem::path& path, const std::string& what, const image_limits& limits = {});

// The texels of an image in memory at the file's precision (texel_image): the decoders' one entry
// point (image_decode.cpp: the header checked, then the format's decoder). `name` names the bytes in
// messages (and its extension tells a TGA file, the one format without a signature). Errors as
// read_image's; half and float texels are checked finite.
texel_image decode_texels(const unsigned char* data, std::size_t size, const std::string& name, const std::string& what,
                          const image_limits& limits = {});

// The same as linear RGB floats, read as `use` (texture_store.hpp): colour (sRGB decoded where the
// file is sRGB), an opacity or alpha (in all three components), or data (normal, metal_rough: the
// stored values of red, green, blue).
image_rgb decode_image(const unsigned char* data, std::size_t size, const std::string& name, const std::string& what,
                       const image_limits& limits = {}, image_use use = image_use::color);

// Throws sieve::error naming `name` and the first pixel with a NaN or infinite component.
void check_finite(const image_rgb& image, const std::string& name, const std::string& what);
void check_finite(const texel_image& image, const std::string& name, const std::string& what);

// The linear value of an sRGB-encoded one in [0, 1].
float srgb_to_linear(float encoded);

}  // namespace sieve::render
