// The procedural sky (sky.hpp).
#include "sky.hpp"

#include <sieve/compaction/error.hpp>

#include <cmath>

namespace sieve::render {

image_rgb procedural_sky(std::uint32_t width, std::uint32_t height, const sky_desc& d) {
  if (width == 0 || height == 0 || std::uint64_t{width} * height > max_environment_texels)
    throw sieve::error("procedural sky: " + std::to_string(width) + " x " + std::to_string(height) + " texels");
  constexpr double pi_d = 3.14159265358979323846;
  auto direction = [](double u, double v) {  // core/environment.hpp's mapping
    const double theta = pi_d * v, phi = 2 * pi_d * u;
    return vec3{static_cast<float>(std::sin(theta) * std::sin(phi)), static_cast<float>(std::cos(theta)),
                static_cast<float>(-std::sin(theta) * std::cos(phi))};
  };
  const vec3 sun = direction(d.sun_u, 0.5 - d.sun_elevation_degrees / 180.0);
  const float cos_sun = static_cast<float>(std::cos(d.sun_radius_degrees * pi_d / 180.0));
  const vec3 zenith{0.10f, 0.22f, 0.60f}, horizon{0.70f, 0.76f, 0.85f}, ground{0.10f, 0.09f, 0.08f};
  const vec3 glow{0.9f, 0.7f, 0.45f};
  image_rgb image;
  image.width = width;
  image.height = height;
  image.pixels.resize(std::size_t{width} * height);
  for (std::uint32_t r = 0; r < height; ++r)
    for (std::uint32_t c = 0; c < width; ++c) {
      const vec3 l = direction((c + 0.5) / width, (r + 0.5) / height);
      const float cos_to_sun = dot(l, sun);
      vec3 radiance;
      if (l.y >= 0) {
        const float t = std::pow(1.0f - l.y, 3.0f);
        radiance = zenith * (1 - t) + horizon * t + glow * (0.5f * std::pow(std::fmax(0.0f, cos_to_sun), 48.0f));
        if (cos_to_sun >= cos_sun) radiance = d.sun_radiance;
      } else {
        const float t = std::fmin(1.0f, -l.y * 20.0f);  // a thin haze below the horizon
        radiance = horizon * (0.5f * (1 - t)) + ground * t;
      }
      image.pixels[std::size_t{r} * width + c] = radiance;
    }
  return image;
}

}  // namespace sieve::render
