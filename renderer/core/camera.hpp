// A pinhole camera: the ray through a point of the film, one copy for CPU and GPU.
#pragma once

#include "math.hpp"

namespace sieve::render {

struct camera {
  vec3 origin;
  vec3 lower_left;  // the film's corner at distance 1
  vec3 horizontal;  // film width along the image's x
  vec3 vertical;    // film height along the image's y (up)

  // Image x grows to the right, y downwards (row 0 is the top row).
  static camera look_at(vec3 position, vec3 target, vec3 up, float vfov_degrees, float aspect) {
    const float h = tanf(vfov_degrees * 3.14159265358979f / 360.0f);
    const vec3 forward = normalize(target - position);
    const vec3 right = normalize(cross(forward, up));  // right-handed: looking along +z with y up, +x is on the left
    const vec3 upward = cross(right, forward);
    camera c;
    c.origin = position;
    c.horizontal = right * (2 * h * aspect);
    c.vertical = upward * (2 * h);
    c.lower_left = forward - c.horizontal * 0.5f - c.vertical * 0.5f;
    return c;
  }

  // Film coordinates (sx, sy) in [0, 1)^2, sx left to right, sy top to bottom.
  SIEVE_HD ray generate(float sx, float sy) const {
    const vec3 d = lower_left + horizontal * sx + vertical * (1.0f - sy);
    return {origin, normalize(d), 1e30f};
  }
};

}  // namespace sieve::render
