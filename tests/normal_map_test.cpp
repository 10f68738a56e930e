// Normal maps: a flat quad whose normal map holds the normals of a height field h(u, v) shades as
// the bumped surface does. For a quad with orthonormal dp/du = T and dp/dv = B and normal N, the
// bumped surface p + h N has the normal N - h_u T - h_v B (to first order in h, exactly for its
// direction at the point); the map holds (-h_u, -h_v, 1) normalised, encoded as (n + 1) / 2. The
// tangents come from the loader's per-vertex computation (scene/tangents.hpp), the frame and the
// texel from core/shading.hpp's normal_mapped: quads in several placements, with mirrored and
// swapped texture coordinates (the bitangent's handedness).
#include <core/shading.hpp>
#include <core/texture.hpp>
#include <core/texture_store.hpp>
#include <scene/tangents.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace sieve::render {
namespace {

constexpr float amplitude = 0.04f;
constexpr float two_pi = 6.2831853f;

// h(u, v) = A sin(2 pi u) sin(2 pi v) and its derivatives.
float h_u(float u, float v) { return amplitude * two_pi * std::cos(two_pi * u) * std::sin(two_pi * v); }
float h_v(float u, float v) { return amplitude * two_pi * std::sin(two_pi * u) * std::cos(two_pi * v); }

// The map: n x n texels at their centres (u, v) = ((x + 0.5) / n, 1 - (y + 0.5) / n).
std::vector<vec3> bake(int n) {
  std::vector<vec3> texels;
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) {
      const float u = (x + 0.5f) / n, v = 1 - (y + 0.5f) / n;
      const vec3 t = normalize(vec3{-h_u(u, v), -h_v(u, v), 1});
      texels.push_back((t + vec3{1, 1, 1}) * 0.5f);
    }
  return texels;
}

// A unit square placed at `origin` with edges e1, e2 (orthonormal), its uv at each corner given by
// uv_of(s, t) for corner (s, t) in {0, 1}^2 (an affine map with orthonormal derivatives).
struct placed_quad {
  vec3 origin, e1, e2;
  tex_coord (*uv_of)(float s, float t);
};

void check_quad(const placed_quad& q, const texture_view& map) {
  const vec3 n = cross(q.e1, q.e2);
  const std::vector<vec3> positions = {q.origin, q.origin + q.e1, q.origin + q.e1 + q.e2, q.origin + q.e2};
  const std::vector<vec3> normals(4, n);
  const std::vector<tex_coord> uvs = {q.uv_of(0, 0), q.uv_of(1, 0), q.uv_of(1, 1), q.uv_of(0, 1)};
  const std::vector<std::uint32_t> corners = {0, 1, 2, 0, 2, 3};
  const std::vector<vertex_tangent> vt = vertex_tangents(positions, normals, uvs, corners);
  // The analytic T = dp/du, B = dp/dv from the uv map's inverse.
  const tex_coord o = q.uv_of(0, 0), a = q.uv_of(1, 0), b = q.uv_of(0, 1);
  const float du_ds = a.u - o.u, dv_ds = a.v - o.v, du_dt = b.u - o.u, dv_dt = b.v - o.v;
  const float det = du_ds * dv_dt - du_dt * dv_ds;
  const vec3 t_axis = (q.e1 * dv_dt - q.e2 * dv_ds) / det, b_axis = (q.e2 * du_ds - q.e1 * du_dt) / det;
  for (int tri = 0; tri < 2; ++tri) {
    const std::uint32_t* c = &corners[static_cast<std::size_t>(3 * tri)];
    const triangle_normals tn{normals[c[0]], normals[c[1]], normals[c[2]]};
    const triangle_tangents tt{vt[c[0]].t, vt[c[1]].t, vt[c[2]].t, vt[c[0]].sign};
    const triangle_uvs tu{uvs[c[0]], uvs[c[1]], uvs[c[2]]};
    for (int i = 1; i < 8; ++i)
      for (int j = 1; j < 8 - i; ++j) {
        const float b1 = i / 8.0f, b2 = j / 8.0f;
        const tex_coord uv = interpolate(tu, b1, b2);
        const vec3 got = normal_mapped(tn, tt, b1, b2, n, bilinear(map, uv.u, uv.v), 1.0f);
        const vec3 want = normalize(n - t_axis * h_u(uv.u, uv.v) - b_axis * h_v(uv.u, uv.v));
        ASSERT_NEAR(got.x, want.x, 2e-3f) << "triangle " << tri << " at uv " << uv.u << ", " << uv.v;
        ASSERT_NEAR(got.y, want.y, 2e-3f) << "triangle " << tri << " at uv " << uv.u << ", " << uv.v;
        ASSERT_NEAR(got.z, want.z, 2e-3f) << "triangle " << tri << " at uv " << uv.u << ", " << uv.v;
        // The map bends the normal (else the test would pass on the plain normal).
        if (std::fabs(h_u(uv.u, uv.v)) + std::fabs(h_v(uv.u, uv.v)) > 0.05f) ASSERT_LT(dot(got, n), 0.9995f);
      }
  }
}

TEST(NormalMap, FlatQuadShadesAsTheBumpedSurface) {
  constexpr int n = 256;
  const std::vector<vec3> texels = bake(n);
  const texture stored = make_texture("bumps", n, n, texels, wrap_mode::repeat);
  const texture_view map = stored.view();
  const float r = std::sqrt(0.5f);
  const placed_quad quads[] = {
      {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, [](float s, float t) { return tex_coord{s, t}; }},
      {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, [](float s, float t) { return tex_coord{1 - s, t}; }},  // mirrored u
      {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, [](float s, float t) { return tex_coord{t, s}; }},      // swapped: left-handed
      {{1, 2, 3}, {r, 0, -r}, {0, 1, 0}, [](float s, float t) { return tex_coord{s, t}; }},     // turned about y
      {{0, 0, 1}, {0, r, r}, {1, 0, 0}, [](float s, float t) { return tex_coord{t, 1 - s}; }},  // tilted, uv turned
  };
  int k = 0;
  for (const placed_quad& q : quads) {
    SCOPED_TRACE("quad " + std::to_string(k++));
    check_quad(q, map);
  }
}

// A flat map (0.5, 0.5, 1) leaves the normal; scale multiplies the tilt; no tangents (sign 0) or a
// degenerate tangent falls back to the interpolated normal; vertex normals facing away from the
// geometric normal turn the mapped normal with them.
TEST(NormalMap, FlatTexelScaleAndFallbacks) {
  const vec3 n{0, 0, 1};
  const triangle_normals tn{n, n, n};
  const triangle_tangents tt{{1, 0, 0}, {1, 0, 0}, {1, 0, 0}, 1};
  const vec3 flat = normal_mapped(tn, tt, 0.3f, 0.3f, n, {0.5f, 0.5f, 1}, 1);
  EXPECT_NEAR(flat.z, 1, 1e-6f);
  const vec3 tilted = normal_mapped(tn, tt, 0.3f, 0.3f, n, {0.75f, 0.5f, 1}, 1);   // (0.5, 0, 1)
  const vec3 doubled = normal_mapped(tn, tt, 0.3f, 0.3f, n, {0.75f, 0.5f, 1}, 2);  // (1, 0, 1)
  EXPECT_NEAR(tilted.x / tilted.z, 0.5f, 1e-5f);
  EXPECT_NEAR(doubled.x / doubled.z, 1.0f, 1e-5f);
  EXPECT_EQ(normal_mapped(tn, triangle_tangents{}, 0.3f, 0.3f, n, {0.75f, 0.5f, 1}, 1).x, 0.0f);
  const triangle_tangents along_n{n, n, n, 1};
  EXPECT_EQ(normal_mapped(tn, along_n, 0.3f, 0.3f, n, {0.75f, 0.5f, 1}, 1).x, 0.0f);
  const vec3 turned = normal_mapped(tn, tt, 0.3f, 0.3f, -n, {0.75f, 0.5f, 1}, 1);
  EXPECT_NEAR(turned.x, -tilted.x, 1e-6f);
  EXPECT_NEAR(turned.z, -tilted.z, 1e-6f);
  // Degenerate uvs: no tangent.
  const std::vector<vec3> p = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  const std::vector<vertex_tangent> none =
      vertex_tangents(p, std::vector<vec3>(3, n), std::vector<tex_coord>(3, tex_coord{0.5f, 0.5f}), std::vector<std::uint32_t>{0, 1, 2});
  for (const vertex_tangent& v : none) EXPECT_EQ(length(v.t), 0.0f);
}

// film.tangents "uv": the tangent is the triangle's dp/du, the bitangent n x t whatever the
// mapping's handedness (Mitsuba 3's normalmap frame). On a mirrored mapping the vertex frame (sign
// -1) and the uv frame bend the normal opposite ways along the bitangent, and alike along the tangent.
TEST(NormalMap, UvFrameIsTheTrianglesDpDu) {
  const triangle tri{{0, 0, 0}, {2, 0, 0}, {0, 3, 0}};
  const vec3 straight = triangle_dp_du(tri, triangle_uvs{{0, 0}, {1, 0}, {0, 1}});
  EXPECT_EQ(straight.x, 2.0f);
  EXPECT_EQ(straight.y, 0.0f);
  EXPECT_EQ(straight.z, 0.0f);
  const vec3 mirrored = triangle_dp_du(tri, triangle_uvs{{1, 0}, {0, 0}, {1, 1}});
  EXPECT_EQ(mirrored.x, -2.0f);
  EXPECT_EQ(mirrored.y, 0.0f);
  const vec3 skewed = triangle_dp_du(tri, triangle_uvs{{0, 0}, {1, 1}, {0, 1}});  // u = x / 2, v = y / 3 + x / 2
  EXPECT_NEAR(skewed.x, 2.0f, 1e-6f);
  EXPECT_NEAR(skewed.y, -3.0f, 1e-6f);
  const vec3 none = triangle_dp_du(tri, triangle_uvs{{0.5f, 0.5f}, {0.5f, 0.5f}, {0.5f, 0.5f}});
  EXPECT_EQ(length(none), 0.0f);

  const vec3 n{0, 0, 1};
  const triangle_normals tn{n, n, n};
  const vec3 up = {0.5f, 0.75f, 1}, along = {0.75f, 0.5f, 1};  // (0, 0.5, 1) and (0.5, 0, 1)
  const triangle_tangents vertex_frame{mirrored, mirrored, mirrored, -1};
  const vec3 uv_up = normal_mapped(tn, mirrored, 1.0f, 0.3f, 0.3f, n, up, 1);
  const vec3 vertex_up = normal_mapped(tn, vertex_frame, 0.3f, 0.3f, n, up, 1);
  EXPECT_NEAR(uv_up.y / uv_up.z, -0.5f, 1e-5f);  // n x t = z x -x = -y
  EXPECT_NEAR(vertex_up.y / vertex_up.z, 0.5f, 1e-5f);
  const vec3 uv_along = normal_mapped(tn, mirrored, 1.0f, 0.3f, 0.3f, n, along, 1);
  EXPECT_NEAR(uv_along.x / uv_along.z, -0.5f, 1e-5f);
  EXPECT_NEAR(normal_mapped(tn, vertex_frame, 0.3f, 0.3f, n, along, 1).x, uv_along.x, 1e-6f);
  // A degenerate dp/du: the interpolated normal.
  EXPECT_EQ(normal_mapped(tn, none, 1.0f, 0.3f, 0.3f, n, up, 1).y, 0.0f);
}

}  // namespace
}  // namespace sieve::render
