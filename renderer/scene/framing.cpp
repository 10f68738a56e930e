// What a bare model (`sieve render model.glb`, an OBJ, glTF or PLY file alone) is given: its own
// glTF camera (with its aspect ratio), else a camera framing its bounding box from the front (+z);
// for an open room, from its open side; for a flat model (a floor, a terrain, a quad in the xz
// plane), from above at an angle; for an enclosed one (a building walled on every side), from inside
// its open space; and, where it has no lights of its own, a key light.
#include "sections.hpp"

#include "../core/bounds.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <vector>

namespace sieve::render::detail {
namespace {

aabb box_of(const scene& sc, std::size_t count) { return bounds_of(std::span(sc.triangles).first(count)); }

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
      auto near = [&](int axis, float plane) {
        return std::fabs(t.v0[axis] - plane) <= tol && std::fabs(t.v1[axis] - plane) <= tol && std::fabs(t.v2[axis] - plane) <= tol;
      };
      const bool in[4] = {near(2, box.hi.z), near(2, box.lo.z), near(0, box.hi.x), near(0, box.lo.x)};
      if (!(in[0] || in[1] || in[2] || in[3])) continue;  // (most triangles: no area to work out)
      const double area = 0.5 * length(cross(t.v1 - t.v0, t.v2 - t.v0));
      for (int side = 0; side < 4; ++side)
        if (in[side]) part[b][side] += area;
    }
  });
  sums cover{};
  for (const sums& p : part)
    for (int s = 0; s < 4; ++s) cover[s] += p[s];
  const double z_side = double(e.x) * e.y, x_side = double(e.z) * e.y;
  for (int s = 0; s < 4; ++s) cover[s] /= std::max(1e-30, s < 2 ? z_side : x_side);
  return cover;
}

// A float count or index made an int in [lo, hi] without undefined behaviour: NaN (a box that
// overflows a float: inf / inf) becomes lo, anything past hi becomes hi.
int clamped_int(float v, int lo, int hi) {
  if (!(v > static_cast<float>(lo))) return lo;
  return v < static_cast<float>(hi) ? static_cast<int>(v) : hi;
}

occupancy occupancy_of(const scene& sc, std::size_t count, const aabb& box) {
  occupancy g;
  g.box = box;
  const vec3 e = box.extent();
  g.cell = std::max(max_component(e) / 48.0f, 1e-30f);
  for (int a = 0; a < 3; ++a) g.n[a] = clamped_int(std::ceil(e[a] / g.cell), 1, 64);
  g.set.assign(std::size_t(g.n[0]) * g.n[1] * g.n[2], 0);
  // Every thread marks cells (a byte set to 1, relaxed: the grid is the same whoever sets a cell).
  const auto cell_of = [&](const vec3& p) {
    int c[3];
    for (int a = 0; a < 3; ++a) c[a] = clamped_int((p[a] - box.lo[a]) / g.cell, 0, g.n[a] - 1);
    return (std::size_t(c[2]) * g.n[1] + c[1]) * g.n[0] + c[0];
  };
  const auto set = [&](std::size_t c) {
    if (std::atomic_ref<std::uint8_t>(g.set[c]).load(std::memory_order_relaxed) == 0)
      std::atomic_ref<std::uint8_t>(g.set[c]).store(1, std::memory_order_relaxed);
  };
  const auto mark = [&](const vec3& p) { set(cell_of(p)); };
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, count, 1 << 14), [&](const auto& r) {
    for (std::size_t t = r.begin(); t != r.end(); ++t) {
      const triangle& tr = sc.triangles[t];
      // A triangle inside one cell (its corners' cells the same: cells are boxes) sets that cell alone.
      const std::size_t c0 = cell_of(tr.v0);
      if (c0 == cell_of(tr.v1) && c0 == cell_of(tr.v2)) {
        set(c0);
        continue;
      }
      const float edge = std::max({length(tr.v1 - tr.v0), length(tr.v2 - tr.v0), length(tr.v2 - tr.v1)});
      const int steps = clamped_int(std::ceil(edge / (0.5f * g.cell)), 1, 64);
      for (int u = 0; u <= steps; ++u)
        for (int v = 0; u + v <= steps; ++v)
          mark(tr.v0 + (tr.v1 - tr.v0) * (float(u) / steps) + (tr.v2 - tr.v0) * (float(v) / steps));
    }
  });
  return g;
}

// How much of each vertical side (+z, -z, +x, -x) is a wall: the fraction of the lines into the
// box from that side that meet geometry within its first 15 % (near 1 for a building's outer walls,
// about 0.1 .. 0.3 for an object such as the DamagedHelmet).
std::array<double, 4> side_walls(const occupancy& g) {
  std::array<double, 4> walls{};
  for (int s = 0; s < 4; ++s) {
    const int depth_axis = s < 2 ? 2 : 0, across = s < 2 ? 0 : 2;
    const int depth = g.n[depth_axis], near_cells = std::max(1, static_cast<int>(0.15 * depth));
    long hit = 0, lines = 0;
    for (int a = 0; a < g.n[across]; ++a)
      for (int j = 0; j < g.n[1]; ++j, ++lines)
        for (int d = 0; d < near_cells; ++d) {
          const int c = s % 2 == 0 ? depth - 1 - d : d;  // from the + side inwards, or from the - side
          if (depth_axis == 2 ? g.at(a, j, c) : g.at(c, j, a)) {
            ++hit;
            break;
          }
        }
    walls[s] = lines ? double(hit) / double(lines) : 0;
  }
  return walls;
}

// Free cells from (i, j, k) along (di, dk) before a set cell; -1 when the line leaves the box first.
int free_run(const occupancy& g, int i, int j, int k, int di, int dk) {
  for (int n = 0;; ++n) {
    i += di, k += dk;
    if (!g.inside(i, j, k)) return -1;
    if (g.at(i, j, k)) return n;
  }
}

}  // namespace

bare_model::bare_model(const scene& s, std::size_t n) : sc(s), count(n), box(box_of(s, n)) {}

const occupancy& bare_model::grid() const {
  if (!grid_) grid_ = occupancy_of(sc, count, box);
  return *grid_;
}

int front_side(const bare_model& model, bool& room) {
  const aabb& box = model.box;
  const std::array<double, 4> cover = side_cover(model.sc, model.count, box);
  int open = -1, closed = 0;
  for (int s = 0; s < 4; ++s) {
    if (cover[s] >= 0.5) ++closed;
    else if (cover[s] < 0.05) open = s;
  }
  // An open room: three walls and one side open (as a Cornell box): seen through the open side.
  room = closed == 3 && open >= 0;
  if (room) return open;
  // Flat (its height under 5 % of its width and depth): from above at an angle. Flat across z (a
  // picture in the xy plane) is seen from the front already; flat across x from its +x side.
  const vec3 e = box.extent();
  if (e.y <= 0.05f * std::min(e.x, e.z)) return above;
  if (e.x <= 0.05f * std::min(e.y, e.z)) return 2;
  // Walled on all four sides (a building): from inside.
  const std::array<double, 4> walls = side_walls(model.grid());
  if (*std::min_element(walls.begin(), walls.end()) >= 0.8) return inside;
  return 0;
}

bool inside_view(const bare_model& model, vec3& position, vec3& look_at) {
  const aabb& box = model.box;
  const occupancy& g = model.grid();
  // The floor under the box's centre, the eye 15 % of the box's height above it.
  const int ic = g.n[0] / 2, kc = g.n[2] / 2;
  int floor = -1;
  for (int j = g.n[1] / 2; j >= 0 && floor < 0; --j)
    if (g.at(ic, j, kc)) floor = j;
  const int eye = std::min(g.n[1] - 1, std::max(floor, 0) + 1 + static_cast<int>(0.15 * g.n[1]));
  // The free cell at that height nearest the centre from which every line along x and z meets a wall.
  int best_i = -1, best_k = -1, best_d = 1 << 30;
  for (int i = 0; i < g.n[0]; ++i)
    for (int k = 0; k < g.n[2]; ++k) {
      const int d = (i - ic) * (i - ic) + (k - kc) * (k - kc);
      if (d >= best_d || g.at(i, eye, k)) continue;
      if (free_run(g, i, eye, k, 1, 0) < 0 || free_run(g, i, eye, k, -1, 0) < 0 || free_run(g, i, eye, k, 0, 1) < 0 ||
          free_run(g, i, eye, k, 0, -1) < 0)
        continue;
      best_d = d, best_i = i, best_k = k;
    }
  if (best_i < 0) return false;
  // Along the axis with the longer free run through that cell, from near its one end towards the other.
  const int xp = free_run(g, best_i, eye, best_k, 1, 0), xm = free_run(g, best_i, eye, best_k, -1, 0);
  const int zp = free_run(g, best_i, eye, best_k, 0, 1), zm = free_run(g, best_i, eye, best_k, 0, -1);
  const bool along_x = xp + xm >= zp + zm;
  const int ahead = along_x ? std::max(xp, xm) : std::max(zp, zm), behind = along_x ? std::min(xp, xm) : std::min(zp, zm);
  const float sign = along_x ? (xp >= xm ? 1.0f : -1.0f) : (zp >= zm ? 1.0f : -1.0f);
  const vec3 dir = along_x ? vec3{sign, 0, 0} : vec3{0, 0, sign};
  const vec3 p = g.centre(best_i, eye, best_k);
  position = p - dir * (0.8f * behind * g.cell);
  look_at = p + dir * (std::max(ahead, 1) * g.cell) + vec3{0, 0.1f * box.extent().y, 0};
  return true;
}

void frame_bare_model(const reader& rd, camera_given given, scene& sc, const bare_model& model, int side) {
  const aabb box = model.box;
  const vec3 c = box.center(), half = box.extent() * 0.5f;
  const double tan_v = std::tan(sc.camera.vfov_degrees / degrees / 2);
  const double tan_h = tan_v * sc.film.width / sc.film.height;
  if (side == above) {  // 35 degrees above the +z side, near enough that the box's corners just fit
    const vec3 dir = normalize(vec3{0, 0.574f, 0.819f});  // from the centre towards the camera
    const vec3 right = normalize(cross(sc.camera.up, dir)), up = cross(dir, right);
    double d = 1e-3 * std::max(1.0, double(max_component(box.extent())));
    for (int corner = 0; corner < 8; ++corner) {
      const vec3 o = vec3{corner & 1 ? half.x : -half.x, corner & 2 ? half.y : -half.y, corner & 4 ? half.z : -half.z};
      const double toward = dot(o, dir);  // the corner's depth is d - toward
      d = std::max({d, toward + std::fabs(dot(o, right)) / tan_h, toward + std::fabs(dot(o, up)) / tan_v});
    }
    if (!given.look_at) sc.camera.look_at = c;
    if (!given.position) sc.camera.position = c + dir * static_cast<float>(1.05 * d);
    return;
  }
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

void add_key_light(scene& sc, const bare_model& model) {
  const aabb box = model.box;  // (the model's: the light's triangles join the scene below)
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
