#include "procedural.hpp"

#include "../core/rng.hpp"
#include "../core/sampling.hpp"
#include "../exec/stop.hpp"

#include <sieve/compaction/error.hpp>

#include <tbb/parallel_for.h>

#include <cmath>
#include <string>

namespace sieve::render {
namespace {

std::uint32_t add_material(scene& s, material m) {
  s.materials.push_back(std::move(m));
  return static_cast<std::uint32_t>(s.materials.size() - 1);
}

void add_triangle(scene& s, vec3 a, vec3 b, vec3 c, std::uint32_t mat) {
  s.triangles.push_back({a, b, c});
  s.material_of.push_back(mat);
}

void add_quad(scene& s, vec3 a, vec3 b, vec3 c, vec3 d, std::uint32_t mat) {
  add_triangle(s, a, b, c, mat);
  add_triangle(s, a, c, d, mat);
}

}  // namespace

void add_sphere_room(scene& s, std::uint32_t n, std::uint32_t segments) {
  if (n < 1 || n > 256) throw error("procedural spheres: n = " + std::to_string(n) + " is out of range (1 .. 256)");
  if (segments < 4 || segments > 512)
    throw error("procedural spheres: segments = " + std::to_string(segments) + " is out of range (4 .. 512)");
  const float spacing = 2.5f, radius = 1.0f, size = spacing * static_cast<float>(n);
  const std::uint32_t wall = add_material(s, {"room-white", material_kind::diffuse, {0.75f, 0.75f, 0.75f}});
  const std::uint32_t tints[3] = {add_material(s, {"sphere-red", material_kind::diffuse, {0.7f, 0.2f, 0.15f}}),
                                  add_material(s, {"sphere-mirror", material_kind::mirror, {0.9f, 0.9f, 0.9f}}),
                                  add_material(s, {"sphere-glass", material_kind::dielectric, {1, 1, 1}, {}, 1.5f})};
  const float h = 2.0f * size;  // room height
  add_quad(s, {0, 0, 0}, {size, 0, 0}, {size, 0, size}, {0, 0, size}, wall);          // floor
  add_quad(s, {0, 0, size}, {size, 0, size}, {size, h, size}, {0, h, size}, wall);    // back wall
  add_quad(s, {0, 0, 0}, {0, 0, size}, {0, h, size}, {0, h, 0}, wall);                // left wall
  add_quad(s, {size, 0, size}, {size, 0, 0}, {size, h, 0}, {size, h, size}, wall);    // right wall
  const std::uint32_t rings = segments / 2;
  auto point = [&](vec3 c, std::uint32_t i, std::uint32_t j) {
    const float theta = pi * static_cast<float>(j) / static_cast<float>(rings);
    const float phi = 2 * pi * static_cast<float>(i) / static_cast<float>(segments);
    return c + vec3{std::sin(theta) * std::cos(phi), std::cos(theta), std::sin(theta) * std::sin(phi)} * radius;
  };
  for (std::uint32_t gy = 0; gy < n; ++gy, stop_point())
    for (std::uint32_t gx = 0; gx < n; ++gx) {
      const vec3 c{spacing * (static_cast<float>(gx) + 0.5f), radius, spacing * (static_cast<float>(gy) + 0.5f)};
      const std::uint32_t mat = tints[(gx + 2 * gy) % 3];
      for (std::uint32_t j = 0; j < rings; ++j)
        for (std::uint32_t i = 0; i < segments; ++i) {
          const vec3 a = point(c, i, j), b = point(c, i + 1, j), d = point(c, i, j + 1), e = point(c, i + 1, j + 1);
          if (j > 0) add_triangle(s, a, e, b, mat);          // the poles need one triangle per quad
          if (j + 1 < rings) add_triangle(s, a, d, e, mat);
        }
    }
  s.camera = {{size * 0.5f, size * 0.45f, -size * 0.35f}, {size * 0.5f, radius, size * 0.55f}, {0, 1, 0}, 50};
}

void add_heightfield(scene& s, std::uint32_t grid, float height, std::uint32_t seed) {
  if (grid < 2 || grid > 8192) throw error("procedural heightfield: grid = " + std::to_string(grid) + " is out of range (2 .. 8192)");
  if (!(height >= 0) || height > 1e6f) throw error("procedural heightfield: height out of range");
  const std::uint32_t ground = add_material(s, {"terrain", material_kind::diffuse, {0.45f, 0.4f, 0.3f}});
  // Value noise, four octaves, from the counter-based hash: the same terrain on every machine.
  auto lattice = [&](std::int64_t x, std::int64_t y, std::uint32_t octave) {
    const std::uint64_t key = mix64((static_cast<std::uint64_t>(x) << 32) ^ static_cast<std::uint64_t>(y) ^ (std::uint64_t{seed} << 48) ^ octave);
    return static_cast<float>(key >> 40) / 16777216.0f;
  };
  auto noise = [&](float x, float y) {
    float sum = 0, amp = 0.5f, freq = 1.0f / 64.0f;
    for (std::uint32_t o = 0; o < 4; ++o, amp *= 0.5f, freq *= 2) {
      const float fx = x * freq, fy = y * freq;
      const auto ix = static_cast<std::int64_t>(std::floor(fx)), iy = static_cast<std::int64_t>(std::floor(fy));
      const float tx = fx - static_cast<float>(ix), ty = fy - static_cast<float>(iy);
      const float a = lattice(ix, iy, o), b = lattice(ix + 1, iy, o), c = lattice(ix, iy + 1, o), d = lattice(ix + 1, iy + 1, o);
      sum += amp * ((a * (1 - tx) + b * tx) * (1 - ty) + (c * (1 - tx) + d * tx) * ty);
    }
    return sum * height;
  };
  // Row by row in parallel: the heights, then each row's quads in their place (the same order as
  // one thread would add them).
  std::vector<float> z(static_cast<std::size_t>(grid + 1) * (grid + 1));
  tbb::parallel_for(std::uint32_t{0}, grid + 1, [&](std::uint32_t y) {
    stop_point();
    for (std::uint32_t x = 0; x <= grid; ++x) z[std::size_t{y} * (grid + 1) + x] = noise(static_cast<float>(x), static_cast<float>(y));
  });
  auto p = [&](std::uint32_t x, std::uint32_t y) {
    return vec3{static_cast<float>(x), z[std::size_t{y} * (grid + 1) + x], static_cast<float>(y)};
  };
  const std::size_t first = s.triangles.size();
  s.triangles.resize(first + 2 * std::size_t{grid} * grid);
  s.material_of.resize(s.triangles.size(), ground);
  tbb::parallel_for(std::uint32_t{0}, grid, [&](std::uint32_t y) {
    stop_point();
    triangle* out = &s.triangles[first + 2 * std::size_t{y} * grid];
    for (std::uint32_t x = 0; x < grid; ++x) {
      const vec3 a = p(x, y), b = p(x, y + 1), c = p(x + 1, y + 1), d = p(x + 1, y);
      *out++ = {a, b, c};  // add_quad's two triangles
      *out++ = {a, c, d};
    }
  });
  const float g = static_cast<float>(grid);
  s.camera = {{g * 0.5f, height * 1.6f + g * 0.05f, -g * 0.15f}, {g * 0.5f, 0, g * 0.6f}, {0, 1, 0}, 45};
  if (s.environment.x == 0 && s.environment.y == 0 && s.environment.z == 0) s.environment = {0.6f, 0.7f, 0.9f};
}

}  // namespace sieve::render
