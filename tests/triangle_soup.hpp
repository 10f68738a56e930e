// Random triangles for the BVH tests: n triangles of corners within `size` of a centre in [-10, 10]^3.
#pragma once

#include <core/triangle.hpp>

#include <random>
#include <vector>

namespace sieve::render {

inline std::vector<triangle> soup(std::size_t n, unsigned seed, float size) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> pos(-10, 10), off(-size, size);
  std::vector<triangle> tris(n);
  for (auto& t : tris) {
    const vec3 c{pos(rng), pos(rng), pos(rng)};
    t = {c + vec3{off(rng), off(rng), off(rng)}, c + vec3{off(rng), off(rng), off(rng)},
         c + vec3{off(rng), off(rng), off(rng)}};
  }
  return tris;
}

}  // namespace sieve::render
