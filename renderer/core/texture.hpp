// Textures as the stages read them, one copy for the CPU and the GPU: linear RGB texels, bilinear
// filtering, repeat or clamp at the edges.
//
// Coordinates: (u, v) = (0, 0) is the image's bottom-left corner and (1, 1) its top-right (the OBJ
// and MTL convention); texel (x, y) of the image (row 0 at the top) has its centre at
// u = (x + 0.5) / width, v = 1 - (y + 0.5) / height.
#pragma once

#include "math.hpp"

#include <cstdint>

namespace sieve::render {

// What lies past the edges: the image repeated (the default), or its edge texels extended (MTL
// `-clamp on`).
enum class wrap_mode : std::uint8_t { repeat, clamp };

struct texture_view {
  const vec3* texels = nullptr;  // width * height, row 0 at the top
  std::uint32_t width = 0, height = 0;
  wrap_mode wrap = wrap_mode::repeat;
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
};

// Texel index i along an axis of n texels under the wrap mode.
SIEVE_HD inline std::uint32_t wrap_texel(int i, std::uint32_t n, wrap_mode wrap) {
  const int m = static_cast<int>(n);
  if (wrap == wrap_mode::clamp) return static_cast<std::uint32_t>(i < 0 ? 0 : i >= m ? m - 1 : i);
  const int r = i % m;
  return static_cast<std::uint32_t>(r < 0 ? r + m : r);
}

// The texture at (u, v), bilinearly filtered between the four nearest texel centres. Non-finite
// coordinates read texel (0, 0) of the wrapped image (never out of bounds).
SIEVE_HD inline vec3 bilinear(const texture_view& t, float u, float v) {
  if (!(u == u) || !(v == v) || fabsf(u) > 1e7f || fabsf(v) > 1e7f) u = v = 0;  // NaN, Inf, or past float's integers
  const float x = u * static_cast<float>(t.width) - 0.5f;
  const float y = (1.0f - v) * static_cast<float>(t.height) - 0.5f;
  const float fx = floorf(x), fy = floorf(y);
  const float ax = x - fx, ay = y - fy;
  const int x0 = static_cast<int>(fx), y0 = static_cast<int>(fy);
  const std::uint32_t xa = wrap_texel(x0, t.width, t.wrap), xb = wrap_texel(x0 + 1, t.width, t.wrap);
  const std::uint32_t ya = wrap_texel(y0, t.height, t.wrap), yb = wrap_texel(y0 + 1, t.height, t.wrap);
  const vec3 a = t.texels[ya * t.width + xa], b = t.texels[ya * t.width + xb];
  const vec3 c = t.texels[yb * t.width + xa], d = t.texels[yb * t.width + xb];
  return (a * (1 - ax) + b * ax) * (1 - ay) + (c * (1 - ax) + d * ax) * ay;
}

}  // namespace sieve::render
