// Per-vertex tangents for normal maps, where a glTF primitive has none (no TANGENT): computed as
// MikkTSpace's convention asks (the tangent along increasing u, the bitangent along increasing v,
// both from the texture coordinates' derivatives over each triangle, summed at the shared vertices
// weighted by the triangles' uv areas, then made orthogonal to the vertex normal; the handedness
// the sign of the bitangent against cross(normal, tangent)). Not MikkTSpace's library (Debian has
// none): per vertex of an indexed mesh, without its splitting of vertices at seams.
#pragma once

#include "../core/triangle.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace sieve::render {

struct vertex_tangent {
  vec3 t{0, 0, 0};  // unit, orthogonal to the vertex normal; zero where undefined
  float sign = 1;   // the bitangent is sign x cross(normal, t)
};

// positions, normals (unit) and uvs (sieve's convention: v up the image) per vertex; `corners`:
// three vertex indices per triangle, each below positions.size(). A vertex whose triangles have
// degenerate uvs gets t = 0.
std::vector<vertex_tangent> vertex_tangents(std::span<const vec3> positions, std::span<const vec3> normals,
                                            std::span<const tex_coord> uvs, std::span<const std::uint32_t> corners);

}  // namespace sieve::render
