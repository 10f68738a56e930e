// The BFS tests' scenes (CPU and GPU). A hairball: 3000 long thin triangles across a 20-unit box, so
// every node's box overlaps the others, and 4096 rays across it: the frontier of a level-by-level
// traversal grows far past the rays' count. A random scene: triangles over a floor, rays from all over.
#pragma once

#include <core/math.hpp>
#include <core/triangle.hpp>

#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace sieve::render {

struct scene_data {
  std::vector<triangle> tris;
  std::vector<ray> rays;
};

// Random triangles over a floor of two big ones, rays from all over (one in five short): rays often
// have several candidates in depth.
inline scene_data random_scene(std::size_t triangles, std::size_t rays, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> pos(-10, 10), off(-1.5f, 1.5f), dir(-1, 1);
  scene_data s;
  for (std::size_t i = 0; i < triangles; ++i) {
    const vec3 c{pos(rng), pos(rng), pos(rng)};
    s.tris.push_back({c + vec3{off(rng), off(rng), off(rng)}, c + vec3{off(rng), off(rng), off(rng)},
                      c + vec3{off(rng), off(rng), off(rng)}});
  }
  s.tris.push_back({{-20, -11, -20}, {20, -11, -20}, {20, -11, 20}});
  s.tris.push_back({{-20, -11, -20}, {20, -11, 20}, {-20, -11, 20}});
  for (std::size_t i = 0; i < rays; ++i) {
    ray r{{pos(rng) * 1.3f, pos(rng) * 1.3f, pos(rng) * 1.3f}, normalize(vec3{dir(rng), dir(rng) - 0.3f, dir(rng)})};
    if (i % 5 == 0) r.tmax = 4.0f;
    s.rays.push_back(r);
  }
  return s;
}

// A walk's rays and count for exec::parallel_walk (the GPU tests): ray i from an array, the count
// from device memory.
struct ray_at {
  const ray* rays;
  SIEVE_HD ray operator()(std::uint32_t i) const { return rays[i]; }
};
struct count_at {
  const std::uint32_t* count;
  SIEVE_HD std::uint32_t operator()() const { return *count; }
};

inline std::pair<std::vector<triangle>, std::vector<ray>> hairball() {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> pos(-10, 10), off(-0.05f, 0.05f);
  std::vector<triangle> tris;
  for (int i = 0; i < 3000; ++i) {
    const vec3 a{pos(rng), pos(rng), pos(rng)}, b{pos(rng), pos(rng), pos(rng)};
    tris.push_back({a, b, b + vec3{off(rng), off(rng), off(rng)}});
  }
  std::vector<ray> rays;
  for (int i = 0; i < 4096; ++i) {
    const vec3 o{pos(rng), pos(rng), -30};
    rays.push_back({o, normalize(vec3{pos(rng), pos(rng), 30} - o)});
  }
  return {std::move(tris), std::move(rays)};
}

// Rays such as a path tracer casts in a scene of these triangles: even ones from a point on a
// triangle, a hair off its surface (either side), odd ones from anywhere in the scene's box; all in
// random directions, one in eight parallel to one or two of the axes (zero components: the slab
// tests' edge case).
inline std::vector<ray> rays_around(const std::vector<triangle>& tris, std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0, 1), dir(-1, 1);
  aabb box;
  for (const triangle& t : tris) box.grow(t.v0), box.grow(t.v1), box.grow(t.v2);
  std::vector<ray> out;
  for (std::size_t i = 0; i < count && !tris.empty(); ++i) {
    ray r;
    r.direction = {dir(rng), dir(rng), dir(rng)};
    if (i % 8 == 1) r.direction.x = 0;
    if (i % 16 == 3) r.direction.y = r.direction.z = 0;
    if (i % 2 == 0) {
      const triangle& t = tris[std::uniform_int_distribution<std::size_t>(0, tris.size() - 1)(rng)];
      float a = unit(rng), b = unit(rng);
      if (a + b > 1) a = 1 - a, b = 1 - b;
      const vec3 n = cross(t.v1 - t.v0, t.v2 - t.v0);
      r.origin = t.v0 + (t.v1 - t.v0) * a + (t.v2 - t.v0) * b + n * ((i % 4 == 0 ? 1e-4f : -1e-4f) / std::max(length(n), 1e-20f));
    } else {
      r.origin = {box.lo.x + (box.hi.x - box.lo.x) * unit(rng), box.lo.y + (box.hi.y - box.lo.y) * unit(rng),
                  box.lo.z + (box.hi.z - box.lo.z) * unit(rng)};
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace sieve::render
