// What a bare model (`sieve render model.glb`, an OBJ, glTF or PLY file alone) is given: its own
// glTF camera (with its aspect ratio), else a camera framing its bounding box from the front (+z) or,
// for an open room, from its open side; and, where it has no lights of its own, a key light.
#include "sections.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace sieve::render::detail {
namespace {

aabb box_of(const scene& sc, std::size_t count) {
  return tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, count, 1 << 14), aabb{},
      [&](const auto& r, aabb box) {
        for (std::size_t i = r.begin(); i != r.end(); ++i) {
          const triangle& t = sc.triangles[i];
          box.grow(t.v0), box.grow(t.v1), box.grow(t.v2);
        }
        return box;
      },
      [](aabb a, const aabb& b) {
        a.grow(b);
        return a;
      });
}

// Which of the box's four vertical sides (+z, -z, +x, -x) the geometry covers: for each, the area of
// the triangles that lie in that side's plane (within 1% of the box), as a fraction of the side's.
std::array<double, 4> side_cover(const scene& sc, std::size_t count, const aabb& box) {
  const vec3 e = box.extent();
  const float tol = 0.01f * max_component(e);
  using sums = std::array<double, 4>;
  // Summed by fixed blocks, then in block order: the same sums whatever the threads.
  constexpr std::size_t block = std::size_t{1} << 14;
  std::vector<sums> part((count + block - 1) / block, sums{});
  tbb::parallel_for(std::size_t{0}, part.size(), [&](std::size_t b) {
    for (std::size_t i = b * block; i < std::min(count, (b + 1) * block); ++i) {
      const triangle& t = sc.triangles[i];
      const double area = 0.5 * length(cross(t.v1 - t.v0, t.v2 - t.v0));
      auto near = [&](int axis, float plane) {
        return std::fabs(t.v0[axis] - plane) <= tol && std::fabs(t.v1[axis] - plane) <= tol && std::fabs(t.v2[axis] - plane) <= tol;
      };
      if (near(2, box.hi.z)) part[b][0] += area;
      if (near(2, box.lo.z)) part[b][1] += area;
      if (near(0, box.hi.x)) part[b][2] += area;
      if (near(0, box.lo.x)) part[b][3] += area;
    }
  });
  sums cover{};
  for (const sums& p : part)
    for (int s = 0; s < 4; ++s) cover[s] += p[s];
  const double z_side = double(e.x) * e.y, x_side = double(e.z) * e.y;
  for (int s = 0; s < 4; ++s) cover[s] /= std::max(1e-30, s < 2 ? z_side : x_side);
  return cover;
}

}  // namespace

int front_side(const scene& sc, std::size_t count, bool& room) {
  const aabb box = box_of(sc, count);
  const std::array<double, 4> cover = side_cover(sc, count, box);
  int open = -1, closed = 0;
  for (int s = 0; s < 4; ++s) {
    if (cover[s] >= 0.5) ++closed;
    else if (cover[s] < 0.05) open = s;
  }
  // An open room: three walls and one side open (as a Cornell box): seen through the open side.
  room = closed == 3 && open >= 0;
  return room ? open : 0;
}

void frame_bare_model(const reader& rd, camera_given given, scene& sc, std::size_t count, int side) {
  const aabb box = box_of(sc, count);
  const vec3 c = box.center(), half = box.extent() * 0.5f;
  const double tan_v = std::tan(sc.camera.vfov_degrees / degrees / 2);
  const double tan_h = tan_v * sc.film.width / sc.film.height;
  const double across = side < 2 ? half.x : half.z;  // the box's half width as the camera sees it
  double d = std::max(half.y / tan_v, across / tan_h);  // from the box's face on that side
  d = std::max(d * 1.05, 1e-3 * std::max(1.0, double(max_component(box.extent()))));  // a margin; never 0
  const vec3 position = side == 0   ? vec3{c.x, c.y, static_cast<float>(box.hi.z + d)}
                        : side == 1 ? vec3{c.x, c.y, static_cast<float>(box.lo.z - d)}
                        : side == 2 ? vec3{static_cast<float>(box.hi.x + d), c.y, c.z}
                                    : vec3{static_cast<float>(box.lo.x - d), c.y, c.z};
  if (!given.look_at) sc.camera.look_at = c;
  if (!given.position) sc.camera.position = position;
  if (!finite(sc.camera.look_at) || !finite(sc.camera.position)) {
    fail(rd.file + ": the mesh's bounding box " + str(box.lo) + " .. " + str(box.hi) +
         " is too large to frame: the camera's position overflows a float (give camera.position and look_at)");
  }
}

void use_bare_camera(const camera_desc& camera, camera_given given, scene& sc) {
  if (!given.position) sc.camera.position = camera.position;
  if (!given.look_at) sc.camera.look_at = camera.look_at;
  if (!given.up) sc.camera.up = camera.up;
  if (!given.lens) sc.camera.vfov_degrees = camera.vfov_degrees;
}

void add_key_light(scene& sc, std::size_t count) {
  const aabb box = box_of(sc, count);
  const vec3 c = box.center();
  const float r = std::max(0.5f * length(box.extent()), 1e-3f);
  // Above, to the left of and in front of the model as the camera sees it, facing its centre.
  const vec3 view = normalize(sc.camera.look_at - sc.camera.position);
  const vec3 right = normalize(cross(view, sc.camera.up)), up = normalize(cross(right, view));
  const vec3 dir = normalize(-view + up * 0.9f - right * 0.6f);  // from the centre towards the light
  const vec3 centre = c + dir * (3 * r);
  const vec3 e1 = normalize(cross(dir, up)) * r, e2 = normalize(cross(e1, dir)) * r;  // e1 x e2 along -dir
  const vec3 corner = centre - e1 * 0.5f - e2 * 0.5f;
  material m;
  m.name = "key-light";
  m.albedo = {0, 0, 0};
  // Radiance L over a quad of area r^2 at 3 r: irradiance about L / 9 at the centre, ~2.5 here.
  m.emission = {22, 21, 20};
  const auto mat = static_cast<std::uint32_t>(sc.materials.size());
  sc.materials.push_back(m);
  for (const triangle& t : {triangle{corner, corner + e1, corner + e1 + e2}, triangle{corner, corner + e1 + e2, corner + e2}}) {
    sc.emissive.push_back(static_cast<std::uint32_t>(sc.triangles.size()));
    sc.triangles.push_back(t);
    sc.material_of.push_back(mat);
  }
  if (!sc.normals.empty()) sc.normals.resize(sc.triangles.size(), triangle_normals{});
  if (!sc.uvs.empty()) sc.uvs.resize(sc.triangles.size(), triangle_uvs{});
  if (!sc.tangents.empty()) sc.tangents.resize(sc.triangles.size(), triangle_tangents{});
}

}  // namespace sieve::render::detail
