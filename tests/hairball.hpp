// A hairball for the BFS tests (CPU and GPU): 3000 long thin triangles across a 20-unit box, so
// every node's box overlaps the others, and 4096 rays across it: the frontier of a level-by-level
// traversal grows far past the rays' count.
#pragma once

#include <core/math.hpp>
#include <core/triangle.hpp>

#include <random>
#include <utility>
#include <vector>

namespace sieve::render {

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
