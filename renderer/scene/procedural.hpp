// Procedural scenes for performance work, selectable from TOML ([procedural]):
//   spheres      a room (floor, back and side walls) holding an n x n grid of spheres, each a
//                UV sphere of `segments` x segments/2 quads, one triangle at the poles:
//                8 + n^2 segments (segments - 2) triangles (n = 32, segments = 32: 983,048)
//   heightfield  a grid x grid terrain of value noise under a sky: 2 grid^2 triangles
//                (grid = 2048: about 8.4M triangles)
// Both add their own materials and a camera framing them; lights come from the TOML or the sky.
#pragma once

#include "scene.hpp"

namespace sieve::render {

void add_sphere_room(scene& s, std::uint32_t n, std::uint32_t segments);
void add_heightfield(scene& s, std::uint32_t grid, float height, std::uint32_t seed);

// The triangles each adds, known before anything is generated (the loader checks its limit first).
constexpr std::uint64_t sphere_room_triangles(std::uint64_t n, std::uint64_t segments) {
  return 8 + n * n * segments * (segments - 2);
}
constexpr std::uint64_t heightfield_triangles(std::uint64_t grid) { return 2 * grid * grid; }

}  // namespace sieve::render
