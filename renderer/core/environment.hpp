// An HDR environment map as the stages see it: a latitude-longitude image of radiance around the
// scene, its lookup by direction, and its importance sampling for next-event estimation (a 2D
// piecewise-constant distribution over the texels, weighted by their mean radiance times the sine
// of their polar angle, drawn by an alias table over rows and one within the row: two table reads,
// where CDFs' binary searches took log2(width) + log2(height) dependent reads).
// One copy for CPU and GPU; the tables are built on the host (environment_data.hpp).
//
// Mapping (before `rotation`): row 0 is the top of the image, +y (theta = 0); the bottom row -y.
// Column u in [0, 1) turns about +y: phi = 2 pi u, direction (sin theta sin phi, cos theta,
// -sin theta cos phi). The image's centre (u = 0.5) lies along +z, and u grows to the right as seen
// by a camera looking that way with +y up, so the image is not mirrored. Each texel is a patch of
// constant radiance (no filtering): what the sampling distribution assumes.
#pragma once

#include "alias_table.hpp"
#include "sampling.hpp"

#include <cstdint>

namespace sieve::render {

struct environment_map {
  const vec3* texels = nullptr;           // width * height, row 0 at the top; null: no map
  const float* weight = nullptr;          // per texel: mean(rgb) * sin(theta at the row's centre)
  const alias_entry* row_alias = nullptr;     // height entries, over the rows' sums
  const alias_entry* column_alias = nullptr;  // per row, width entries over its texels
  std::uint32_t width = 0, height = 0;
  float integral = 0;      // mean weight over the texels; 0: a black map, nothing to sample
  float scale = 1;         // radiance multiplier
  float cos_rotation = 1, sin_rotation = 0;  // rotation of the map about +y (right-handed)
  bool sampled = false;    // next-event estimation draws directions from it (integral > 0, not switched off)

  SIEVE_HD bool present() const { return texels != nullptr; }

  // World direction -> the map's own frame (the rotation undone), and back.
  SIEVE_HD vec3 to_local(vec3 w) const {
    return {cos_rotation * w.x - sin_rotation * w.z, w.y, sin_rotation * w.x + cos_rotation * w.z};
  }
  SIEVE_HD vec3 to_world(vec3 l) const {
    return {cos_rotation * l.x + sin_rotation * l.z, l.y, -sin_rotation * l.x + cos_rotation * l.z};
  }
};

// The texel a world direction (unit) falls in, and the sine of its polar angle in the map.
struct environment_texel {
  std::uint32_t index = 0;
  float sin_theta = 0;
};

SIEVE_HD inline environment_texel environment_texel_of(const environment_map& m, vec3 w) {
  const vec3 l = m.to_local(w);
  const float cos_theta = fminf(1.0f, fmaxf(-1.0f, l.y));
  const float theta = acosf(cos_theta);
  float phi = atan2f(l.x, -l.z);
  if (phi < 0) phi += 2 * pi;
  const auto col = static_cast<std::uint32_t>(fminf(phi * (1.0f / (2 * pi)) * m.width, m.width - 1.0f));
  const auto row = static_cast<std::uint32_t>(fminf(theta * (1.0f / pi) * m.height, m.height - 1.0f));
  return {row * m.width + col, sqrtf(l.x * l.x + l.z * l.z)};  // exact near the poles, unlike 1 - cos^2
}

// Radiance arriving from world direction w (unit), scale applied.
SIEVE_HD inline vec3 environment_radiance(const environment_map& m, vec3 w) {
  return m.texels[environment_texel_of(m, w).index] * m.scale;
}

// The solid-angle density with which sample_environment draws world direction w; 0 when the map
// is not sampled or at the poles.
SIEVE_HD inline float environment_pdf(const environment_map& m, vec3 w) {
  if (!m.sampled) return 0;
  const environment_texel t = environment_texel_of(m, w);
  if (!(t.sin_theta > 0)) return 0;
  return m.weight[t.index] / m.integral / (2 * pi * pi * t.sin_theta);
}

struct environment_sample {
  vec3 wi;         // world direction, unit
  float pdf = 0;   // solid angle; 0: nothing drawn
  vec3 radiance;   // arriving from wi, scale applied
};

// A direction drawn with density proportional to the texels' weights (per unit of the image's
// area), converted to solid angle. u1 picks the row, u2 the column; what is left of each places
// the direction inside the texel.
SIEVE_HD inline environment_sample sample_environment(const environment_map& m, float u1, float u2) {
  environment_sample s;
  if (!m.sampled) return s;
  const alias_pick row = pick_alias(m.row_alias, m.height, u1);
  const alias_pick col = pick_alias(m.column_alias + std::size_t{row.index} * m.width, m.width, u2);
  const float theta = pi * (static_cast<float>(row.index) + row.rest) / static_cast<float>(m.height);
  const float phi = 2 * pi * (static_cast<float>(col.index) + col.rest) / static_cast<float>(m.width);
  const float sin_theta = sinf(theta);
  if (!(sin_theta > 0)) return s;
  const vec3 local{sin_theta * sinf(phi), cosf(theta), -sin_theta * cosf(phi)};
  const std::uint32_t index = row.index * m.width + col.index;
  s.wi = m.to_world(local);
  s.pdf = m.weight[index] / m.integral / (2 * pi * pi * sin_theta);
  s.radiance = m.texels[index] * m.scale;
  return s;
}

// Next-event estimation picks the environment with this probability, the area lights otherwise:
// one half when both are there, all or nothing when one is.
SIEVE_HD inline float environment_pick(const environment_map& m, std::uint32_t light_count) {
  if (!m.sampled) return 0;
  return light_count > 0 ? 0.5f : 1.0f;
}

}  // namespace sieve::render
