// The box of a triangle list, reduced on every thread (oneTBB): host code.
#pragma once

#include "triangle.hpp"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_reduce.h>

#include <cstddef>
#include <span>

namespace sieve::render {

// The box of every vertex of `triangles` (empty: the empty box).
inline aabb bounds_of(std::span<const triangle> triangles) {
  return tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, triangles.size(), 1 << 14), aabb{},
      [&](const tbb::blocked_range<std::size_t>& r, aabb box) {
        for (std::size_t i = r.begin(); i != r.end(); ++i) {
          const triangle& t = triangles[i];
          box.grow(t.v0), box.grow(t.v1), box.grow(t.v2);
        }
        return box;
      },
      [](aabb a, const aabb& b) {
        a.grow(b);
        return a;
      });
}

}  // namespace sieve::render
