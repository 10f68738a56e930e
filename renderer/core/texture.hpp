// Textures as the stages read them, one copy for the CPU and the GPU: texels stored at their source
// precision (8-bit sRGB or linear, 16-bit, half, float), a mipmap pyramid, trilinear filtering,
// repeat or clamp at the edges.
//
// On the GPU a texture is a CUDA texture object over a mipmapped array (the texture unit filters,
// decodes sRGB and wraps); everywhere else, and on the GPU where the scene was uploaded packed
// (texture_storage::packed), texture_lookup below reads the same stored texels and filters them as
// the texture unit does: bilinear weights in 8-bit fixed point (the CUDA programming guide's "9-bit
// fixed point with 8 bits of fraction"), sRGB decoded per texel before filtering, linear between two
// levels. What is left between the two is the hardware's rounding of those weights and of its
// internal arithmetic: docs/textures.md states the bound and gpu_texture_test measures it.
//
// Coordinates: (u, v) = (0, 0) is the image's bottom-left corner and (1, 1) its top-right (the OBJ
// and MTL convention); texel (x, y) of the image (row 0 at the top) has its centre at
// u = (x + 0.5) / width, v = 1 - (y + 0.5) / height.
#pragma once

#include "math.hpp"
#include "srgb_table.hpp"

#include <cstdint>

namespace sieve::render {

// What lies past the edges: the image repeated (the default), or its edge texels extended (MTL
// `-clamp on`).
enum class wrap_mode : std::uint8_t { repeat, clamp };

// How a texel's channels are stored: unsigned normalised 8 or 16 bit (0 .. 1), IEEE half or float.
enum class texel_format : std::uint8_t { unorm8, unorm16, half, float32 };

SIEVE_HD constexpr std::uint32_t channel_bytes(texel_format f) {
  return f == texel_format::unorm8 ? 1 : f == texel_format::unorm16 || f == texel_format::half ? 2 : 4;
}

// The most levels a pyramid has: 16384 texels on a side (image_limits::max_side) give 15.
inline constexpr std::uint32_t max_texture_levels = 15;

struct texture_view {
  const unsigned char* texels = nullptr;  // every level, level l at byte level_offset[l], rows from the top
  std::uint32_t width = 0, height = 0;    // of level 0; level l: max(1, width >> l) x max(1, height >> l)
  std::uint8_t levels = 1;
  std::uint8_t channels = 4;  // 1 (grey: read as (g, g, g)), 2 (x, y: read as (x, y, 0)) or 4 (r, g, b, a)
  texel_format format = texel_format::float32;
  bool srgb = false;  // unorm8 colour: channels 0 .. 2 hold the sRGB encoding (alpha is linear)
  wrap_mode wrap = wrap_mode::repeat;
  vec3 scale{1, 1, 1};  // multiplies what a lookup returns (a glTF base colour factor)
  std::uint64_t object = 0;  // on the GPU: the CUDA texture object that filters in hardware (RGB: over three
                             // one-channel layers, no byte added); 0: read `texels`
  std::uint64_t level_offset[max_texture_levels] = {};

  SIEVE_HD std::uint32_t texel_bytes() const { return channels * channel_bytes(format); }
  SIEVE_HD std::uint32_t level_width(std::uint32_t l) const { return width >> l > 0 ? width >> l : 1; }
  SIEVE_HD std::uint32_t level_height(std::uint32_t l) const { return height >> l > 0 ? height >> l : 1; }
};

// An affine map of texture coordinates: (u, v) -> (m[0] u + m[1] v + m[2], m[3] u + m[4] v + m[5])
// (glTF's KHR_texture_transform, turned into sieve's convention); the identity by default.
struct uv_transform {
  float m[6] = {1, 0, 0, 0, 1, 0};
  SIEVE_HD bool identity() const { return m[0] == 1 && m[1] == 0 && m[2] == 0 && m[3] == 0 && m[4] == 1 && m[5] == 0; }
  SIEVE_HD void apply(float& u, float& v) const {
    const float a = m[0] * u + m[1] * v + m[2], b = m[3] * u + m[4] * v + m[5];
    u = a;
    v = b;
  }
  // How much the map scales areas.
  SIEVE_HD float area_scale() const { return fabsf(m[0] * m[4] - m[1] * m[3]); }
};

// Texel index i along an axis of n texels under the wrap mode.
SIEVE_HD inline std::uint32_t wrap_texel(int i, std::uint32_t n, wrap_mode wrap) {
  const int m = static_cast<int>(n);
  if (wrap == wrap_mode::clamp) return static_cast<std::uint32_t>(i < 0 ? 0 : i >= m ? m - 1 : i);
  const int r = i % m;
  return static_cast<std::uint32_t>(r < 0 ? r + m : r);
}

// ------------------------------------------------------------------------------------------------
// Texel codecs, exact: the sRGB curve, IEEE half.

SIEVE_HD inline float srgb_decode(float c) { return c <= 0.04045f ? c / 12.92f : powf((c + 0.055f) / 1.055f, 2.4f); }
SIEVE_HD inline float srgb_encode(float c) {
  c = c < 0 ? 0 : c > 1 ? 1 : c;
  return c <= 0.0031308f ? c * 12.92f : 1.055f * powf(c, 1.0f / 2.4f) - 0.055f;
}

SIEVE_HD inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t{h & 0x8000u} << 16, e = (h >> 10) & 0x1f, m = h & 0x3ffu;
  if (e == 0) return (sign ? -1.0f : 1.0f) * static_cast<float>(m) * (1.0f / 16777216.0f);  // zero, subnormal: m 2^-24
  if (e == 31) return bits_float(sign | 0x7f800000u | (m << 13));                            // inf, NaN
  return bits_float(sign | ((e + 112) << 23) | (m << 13));
}

// Rounded to nearest, ties to even; past the largest half: infinity.
SIEVE_HD inline std::uint16_t float_to_half(float f) {
  const std::uint32_t x = float_bits(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0));
  if (ax >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (ax < 0x38800000u) {                                                    // below 2^-14: subnormal
    const float m = bits_float(ax) * 16777216.0f;                            // in units of 2^-24
    const float r = rintf(m);                                                // ties to even
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(r));
  }
  const std::uint32_t rounded = ax + 0xfffu + ((ax >> 13) & 1u);
  return static_cast<std::uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

// ------------------------------------------------------------------------------------------------
// The lookup.

namespace detail {

// Channel c of a stored texel, as the texture unit returns it (normalised, sRGB decoded).
SIEVE_HD inline float texel_channel(const texture_view& t, const unsigned char* p, std::uint32_t c) {
  switch (t.format) {
    case texel_format::unorm8: return t.srgb && c < 3 ? srgb8_decode(p[c]) : static_cast<float>(p[c]) * (1.0f / 255.0f);
    case texel_format::unorm16: {
      std::uint16_t w;
      memcpy(&w, p + 2 * c, 2);
      return static_cast<float>(w) * (1.0f / 65535.0f);
    }
    case texel_format::half: {
      std::uint16_t w;
      memcpy(&w, p + 2 * c, 2);
      return half_to_float(w);
    }
    default: {
      float f;
      memcpy(&f, p + 4 * c, 4);
      return f;
    }
  }
}

// A weight in the texture unit's fixed point: 8 bits of fraction.
SIEVE_HD inline float fixed_weight(float a) { return rintf(a * 256.0f) * (1.0f / 256.0f); }

// Level l at (u, v), bilinear between the four nearest texel centres: channels 0 .. 2 (see texture_view).
SIEVE_HD inline vec3 bilinear_level(const texture_view& t, std::uint32_t l, float u, float v) {
  const std::uint32_t w = t.level_width(l), h = t.level_height(l);
  const float x = u * static_cast<float>(w) - 0.5f;
  const float y = (1.0f - v) * static_cast<float>(h) - 0.5f;
  const float fx = floorf(x), fy = floorf(y);
  const float ax = fixed_weight(x - fx), ay = fixed_weight(y - fy);
  const int x0 = static_cast<int>(fx), y0 = static_cast<int>(fy);
  const std::uint32_t xs[2] = {wrap_texel(x0, w, t.wrap), wrap_texel(x0 + 1, w, t.wrap)};
  const std::uint32_t ys[2] = {wrap_texel(y0, h, t.wrap), wrap_texel(y0 + 1, h, t.wrap)};
  const std::uint32_t n = t.channels < 3 ? t.channels : 3, bytes = t.texel_bytes();
  const unsigned char* base = t.texels + t.level_offset[l];
  float out[3] = {0, 0, 0};
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 2; ++i) {
      const float wgt = (i ? ax : 1 - ax) * (j ? ay : 1 - ay);
      const unsigned char* p = base + (std::uint64_t{ys[j]} * w + xs[i]) * bytes;
      for (std::uint32_t c = 0; c < n; ++c) out[c] += wgt * texel_channel(t, p, c);
    }
  if (t.channels == 1) return {out[0], out[0], out[0]};
  return {out[0], out[1], out[2]};
}

}  // namespace detail

// The texture at (u, v) and mipmap level `lod` (fractional: linear between the two levels around
// it; clamped to the pyramid), times its scale. Non-finite coordinates read texel (0, 0) of the
// wrapped image (never out of bounds); a non-finite lod reads level 0.
SIEVE_HD inline vec3 texture_lookup(const texture_view& t, float u, float v, float lod = 0) {
  if (!(u == u) || !(v == v) || fabsf(u) > 1e7f || fabsf(v) > 1e7f) u = v = 0;  // NaN, Inf, or past float's integers
  const float top = static_cast<float>(t.levels - 1);
  lod = lod > 0 ? (lod < top ? lod : top) : 0;  // NaN: 0
#if defined(__CUDA_ARCH__)
  if (t.object) {
    if (t.channels == 3) {  // RGB: three one-channel layers (the texture unit has no three-channel formats)
      return vec3{tex2DLayeredLod<float>(t.object, u, 1.0f - v, 0, lod), tex2DLayeredLod<float>(t.object, u, 1.0f - v, 1, lod),
                  tex2DLayeredLod<float>(t.object, u, 1.0f - v, 2, lod)} *
             t.scale;
    }
    const float4 c = tex2DLod<float4>(t.object, u, 1.0f - v, lod);
    const vec3 r = t.channels == 1 ? vec3{c.x, c.x, c.x} : t.channels == 2 ? vec3{c.x, c.y, 0} : vec3{c.x, c.y, c.z};
    return r * t.scale;
  }
#endif
  const float fl = floorf(lod);
  const auto l = static_cast<std::uint32_t>(fl);
  const float a = detail::fixed_weight(lod - fl);
  vec3 c = detail::bilinear_level(t, l, u, v);
  if (a > 0) c = c * (1 - a) + detail::bilinear_level(t, l + 1, u, v) * a;
  return c * t.scale;
}

// Level 0 alone (what the cut-out test and the lights' mean read).
SIEVE_HD inline vec3 bilinear(const texture_view& t, float u, float v) { return texture_lookup(t, u, v, 0); }

// The mipmap level of texture t for a footprint whose level-0 term is `lod0` (ray_cone's
// footprint_lod: log2 of the footprint's side in units of the texture coordinates): lod0 plus log2
// of the texture's size (the geometric mean of its sides).
SIEVE_HD inline float texture_lod(const texture_view& t, float lod0) {
  return lod0 + 0.5f * log2f(static_cast<float>(t.width) * static_cast<float>(t.height));
}

}  // namespace sieve::render
