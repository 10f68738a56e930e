// The project's own HDR sky (scenes/sky/sky.exr is this, written by the sieve_make_sky tool): an
// analytic blue sky brightening towards the horizon, a warm glow and a sun disc, a dark ground.
// Linear radiance; latitude-longitude as core/environment.hpp maps it.
#pragma once

#include "environment_map.hpp"

#include <cstdint>

namespace sieve::render {

struct sky_desc {
  float sun_elevation_degrees = 25;  // above the horizon
  float sun_u = 0.42f;               // the image column of the sun (0 .. 1): left of the +z centre
  float sun_radius_degrees = 2.5f;
  vec3 sun_radiance{1200.0f, 1080.0f, 900.0f};
};

// A width x height sky, each texel the model's radiance at its centre direction.
image_rgb procedural_sky(std::uint32_t width, std::uint32_t height, const sky_desc& d = {});

}  // namespace sieve::render
