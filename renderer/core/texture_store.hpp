// Textures in host memory: what a decoder hands over (an image at its source precision) and what a
// material reads (the texels kept at that precision, in the channels the material reads, with
// their mipmap pyramid). texture.hpp's texture_view looks at them; frame/device_scene.cu uploads them.
#pragma once

#include "math.hpp"
#include "texture.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sieve::render {

// An image as a decoder returns it: its channels at the precision the file stores them, row 0 at
// the top. Channels: 1 grey, 2 grey and alpha, 3 RGB, 4 RGBA (alpha last). `srgb`: the colour
// channels hold the sRGB encoding (8- and 16-bit files), else they are linear (half, float).
struct texel_image {
  std::uint32_t width = 0, height = 0;
  std::uint8_t channels = 0;
  texel_format format = texel_format::unorm8;
  bool srgb = false;
  std::vector<unsigned char> bytes;  // width * height * channels * channel_bytes(format)

  bool has_alpha() const { return channels == 2 || channels == 4; }
  std::uint32_t colour_channels() const { return channels >= 3 ? 3 : 1; }
  // Channel c of pixel i as stored, normalised (unorm: 0 .. 1), not decoded from sRGB.
  float value(std::size_t i, std::uint32_t c) const;
};

// What a material reads from an image, which decides the channels kept and their colour space:
//   color        RGB (grey: one channel), sRGB decoded where the file is sRGB (base colour, emission, map_Kd)
//   opacity      one channel: the alpha channel where there is one, else the first, as stored (MTL map_d)
//   alpha        one channel: the alpha channel, as stored; an image without one reads as 1 (a glTF base colour's alpha)
//   normal       two channels: red and green as stored, blue rebuilt as sqrt(1 - x^2 - y^2) (glTF normalTexture)
//   metal_rough  two channels: green (roughness) and blue (metallic) as stored (glTF metallicRoughnessTexture)
enum class image_use : std::uint8_t { color, opacity, alpha, normal, metal_rough };

struct texture {
  std::string name;  // the file it was read from
  std::uint32_t width = 0, height = 0;
  wrap_mode wrap = wrap_mode::repeat;
  texel_format format = texel_format::float32;
  std::uint8_t channels = 4, levels = 1;
  bool srgb = false;
  vec3 scale{1, 1, 1};
  std::vector<std::uint64_t> level_offset;  // byte offset of each level in `texels`
  std::vector<unsigned char> texels;        // every level, level 0 first
  std::uint64_t source_bytes = 0;           // the image's texels as its file holds them (channels, precision)

  texture_view view() const;
  std::uint64_t bytes() const { return texels.size(); }
  // Texel (x, y) of level l, channels 0 .. 2 as a lookup returns them (sRGB decoded, not scaled).
  vec3 texel(std::uint32_t x, std::uint32_t y, std::uint32_t l = 0) const;
};

// The levels of a w x h pyramid (down to 1 x 1), and the bytes it takes stored as `channels`
// channels of `format`.
std::uint32_t mip_levels(std::uint32_t w, std::uint32_t h);
std::uint64_t pyramid_bytes(std::uint32_t w, std::uint32_t h, std::uint32_t channels, texel_format format);

// How `use` stores `image`: channels and format (texture's fields, texels empty).
texture texture_layout(const texel_image& image, image_use use);

// The texture `use` reads from `image`, its pyramid box-filtered in linear values (each level from
// the level above in float, then stored at the level 0's precision), rows in parallel. `use`
// alpha on an image without alpha gives one texel of 1.
texture make_texture(std::string name, const texel_image& image, image_use use, wrap_mode wrap, vec3 scale = {1, 1, 1});
// From linear RGB floats (a loader-made image, tests): float texels, four channels, mipmapped or
// level 0 alone.
texture make_texture(std::string name, std::uint32_t width, std::uint32_t height, std::span<const vec3> rgb,
                     wrap_mode wrap, bool mipmaps = true);

// "8-bit sRGB RGBA, 12 levels", "16-bit XY", ...: how a texture is stored, for `sieve check`.
std::string describe_storage(const texture& t);

// The bytes texture t takes as a GPU texture object (--textures hardware): its own bytes (RGB as three
// one-channel layers: the texture unit has no three-channel formats).
std::uint64_t hardware_bytes(const texture& t);

// "4 (74.7 MiB stored with mipmaps, 1.17x the 64.0 MiB of their images' texels)": the texture
// line `sieve check` and the render's report print; where texture objects would take more
// (hardware_bytes), that figure too.
std::string texture_memory_line(std::span<const texture> textures);

}  // namespace sieve::render
