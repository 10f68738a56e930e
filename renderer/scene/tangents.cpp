#include "tangents.hpp"

#include <cmath>

namespace sieve::render {

std::vector<vertex_tangent> vertex_tangents(std::span<const vec3> positions, std::span<const vec3> normals,
                                            std::span<const tex_coord> uvs, std::span<const std::uint32_t> corners) {
  std::vector<vec3> tu(positions.size(), vec3{0, 0, 0}), tv(positions.size(), vec3{0, 0, 0});
  for (std::size_t k = 0; k + 2 < corners.size(); k += 3) {
    const std::uint32_t a = corners[k], b = corners[k + 1], c = corners[k + 2];
    const vec3 e1 = positions[b] - positions[a], e2 = positions[c] - positions[a];
    const float du1 = uvs[b].u - uvs[a].u, dv1 = uvs[b].v - uvs[a].v;
    const float du2 = uvs[c].u - uvs[a].u, dv2 = uvs[c].v - uvs[a].v;
    const float det = du1 * dv2 - du2 * dv1;  // twice the signed uv area
    if (!(std::fabs(det) > 1e-20f)) continue;
    // dp/du and dp/dv times det (the weight: the triangle's uv area, with its orientation kept by
    // dividing by the sign alone).
    const float s = det > 0 ? 1.0f : -1.0f;
    const vec3 dpdu = (e1 * dv2 - e2 * dv1) * s, dpdv = (e2 * du1 - e1 * du2) * s;
    for (const std::uint32_t v : {a, b, c}) {
      tu[v] += dpdu;
      tv[v] += dpdv;
    }
  }
  std::vector<vertex_tangent> out(positions.size());
  for (std::size_t v = 0; v < positions.size(); ++v) {
    const vec3 n = normals[v];
    vec3 t = tu[v] - n * dot(n, tu[v]);
    const float l = length(t);
    if (!(l > 1e-20f) || !std::isfinite(l)) continue;
    t = t / l;
    out[v] = {t, dot(cross(n, t), tv[v]) < 0 ? -1.0f : 1.0f};
  }
  return out;
}

}  // namespace sieve::render
