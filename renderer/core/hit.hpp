// What a traversal finds: the closest hit along a ray (or none), and the order that makes it one
// answer whatever the traversal (DFS, BFS, any compaction of the BFS frontier, any tree layout).
#pragma once

#include "math.hpp"

#include <cstdint>

namespace sieve::render {

struct hit {
  float t = 1e30f;
  std::uint32_t prim = ~0U;  // ~0: no hit
  float u = 0, v = 0;
  SIEVE_HD constexpr bool found() const { return prim != ~0U; }
};

// The closest hit is the least (t, primitive index): ties at equal t go to the lower index, so
// every traversal order (DFS, BFS, any compaction of the BFS frontier) finds the same one.
SIEVE_HD constexpr bool closer(float t, std::uint32_t prim, const hit& best) {
  return t < best.t || (t == best.t && prim < best.prim);
}

}  // namespace sieve::render
