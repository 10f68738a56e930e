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

}  // namespace sieve::render
