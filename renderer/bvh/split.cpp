// Reference pre-splitting (split.hpp).
#include "split.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace sieve::render {
namespace {

struct point {
  double c[3];
};

// A float at or below d (at or above when up): the nearest float, stepped once outwards if it fell inside.
float rounded(double d, bool up) {
  float f = static_cast<float>(d);
  if (up && static_cast<double>(f) < d) f = std::nextafter(f, std::numeric_limits<float>::infinity());
  if (!up && static_cast<double>(f) > d) f = std::nextafter(f, -std::numeric_limits<float>::infinity());
  return f;
}

// Keeps the part of the convex polygon `in` (n points) on one side of the plane x[axis] = at
// (below: x <= at, else x >= at); points made on the plane take `at` exactly. A triangle clipped by
// six planes has at most 9 points.
int clip_plane(const point* in, int n, int axis, double at, bool below, point* out) {
  auto inside = [&](const point& p) { return below ? p.c[axis] <= at : p.c[axis] >= at; };
  int m = 0;
  for (int i = 0; i < n; ++i) {
    const point& a = in[i];
    const point& b = in[(i + 1) % n];
    const bool ia = inside(a), ib = inside(b);
    if (ia) out[m++] = a;
    if (ia != ib) {
      const double s = (at - a.c[axis]) / (b.c[axis] - a.c[axis]);
      point p;
      for (int k = 0; k < 3; ++k) p.c[k] = a.c[k] + s * (b.c[k] - a.c[k]);
      p.c[axis] = at;
      out[m++] = p;
    }
  }
  return m;
}

// Half the surface area of the triangle's ideal boxes (infinitely split: its projections onto the
// three axis planes).
float ideal_half_area(const triangle& t) {
  const vec3 c = cross(t.v1 - t.v0, t.v2 - t.v0);
  return 0.5f * (std::fabs(c.x) + std::fabs(c.y) + std::fabs(c.z));
}

aabb box_of(const triangle& t) {
  aabb b;
  b.grow(t.v0), b.grow(t.v1), b.grow(t.v2);
  return b;
}

float axis_of(const vec3& v, int a) { return a == 0 ? v.x : a == 1 ? v.y : v.z; }

// The plane strictly inside (lo, hi) on the coarsest power-of-two grid of the scene's coordinates
// (Karras & Aila's choice: the pieces of neighbouring triangles share planes, so their boxes line
// up instead of overlapping); the middle where no grid plane is inside.
float grid_plane(float lo, float hi) {
  if (!(hi > lo)) return lo;
  for (float step = std::ldexp(1.0f, std::ilogb(hi - lo) + 1); step > 0; step *= 0.5f) {
    const float at = std::floor(hi / step) * step;
    if (at > lo && at < hi) return at;
    if (step < (hi - lo) * 1e-3f) break;
  }
  return 0.5f * (lo + hi);
}

// The coarsest power-of-two grid step that has a plane at `at` (the largest power of two dividing it).
float coarsest_step(float at) {
  if (at == 0) return std::numeric_limits<float>::max();
  int exp;
  std::frexp(at, &exp);
  float step = std::ldexp(1.0f, exp);
  while (step > 0 && std::fmod(at, step) != 0) step *= 0.5f;
  return step;
}

// Splits region (whose clipped box is `box`) into `pieces`; returns the boxes written.
std::uint32_t split_region(const triangle& t, const aabb& region, const aabb& box, std::uint32_t pieces, aabb* out) {
  const vec3 e = box.extent();
  const int axis = e.x >= e.y && e.x >= e.z ? 0 : e.y >= e.z ? 1 : 2;
  const float lo = axis_of(box.lo, axis), hi = axis_of(box.hi, axis), mid = grid_plane(lo, hi);
  if (pieces <= 1 || !(mid > lo && mid < hi)) {
    out[0] = box;
    return 1;
  }
  aabb left_region = region, right_region = region;
  (axis == 0 ? left_region.hi.x : axis == 1 ? left_region.hi.y : left_region.hi.z) = mid;
  (axis == 0 ? right_region.lo.x : axis == 1 ? right_region.lo.y : right_region.lo.z) = mid;
  const aabb l = clip_box(t, left_region), r = clip_box(t, right_region);
  if (l.empty() || r.empty()) {  // rounding left one side nothing: keep the piece whole
    out[0] = box;
    return 1;
  }
  const float size_l = std::max({l.extent().x, l.extent().y, l.extent().z});
  const float size_r = std::max({r.extent().x, r.extent().y, r.extent().z});
  const float share = size_l + size_r > 0 ? size_l / (size_l + size_r) : 0.5f;
  const auto left = std::clamp<std::uint32_t>(static_cast<std::uint32_t>(std::lround(share * static_cast<float>(pieces))), 1, pieces - 1);
  const std::uint32_t made = split_region(t, left_region, l, left, out);
  return made + split_region(t, right_region, r, pieces - left, out + made);
}

}  // namespace

aabb clip_box(const triangle& t, const aabb& region) {
  std::array<point, 9> a, b;
  a[0] = {{t.v0.x, t.v0.y, t.v0.z}}, a[1] = {{t.v1.x, t.v1.y, t.v1.z}}, a[2] = {{t.v2.x, t.v2.y, t.v2.z}};
  int n = 3;
  for (int axis = 0; axis < 3 && n > 0; ++axis) {
    n = clip_plane(a.data(), n, axis, axis_of(region.lo, axis), false, b.data());
    n = clip_plane(b.data(), n, axis, axis_of(region.hi, axis), true, a.data());
  }
  aabb out;
  if (n == 0) return out;
  double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) lo[k] = std::min(lo[k], a[i].c[k]), hi[k] = std::max(hi[k], a[i].c[k]);
  out.lo = {rounded(lo[0], false), rounded(lo[1], false), rounded(lo[2], false)};
  out.hi = {rounded(hi[0], true), rounded(hi[1], true), rounded(hi[2], true)};
  // Outward rounding never reaches past the region or the triangle's own box.
  const aabb whole = box_of(t);
  out.lo = max(out.lo, max(region.lo, whole.lo));
  out.hi = min(out.hi, min(region.hi, whole.hi));
  return out;
}

std::vector<std::uint32_t> split_counts(std::span<const triangle> triangles, float budget) {
  std::vector<std::uint32_t> counts(triangles.size(), 1);
  if (!(budget > 0) || triangles.empty()) return counts;
  aabb scene;
  for (const triangle& t : triangles) scene.grow(box_of(t));
  const vec3 se = scene.extent();
  const float scene_size = std::max({se.x, se.y, se.z});
  std::vector<float> priority(triangles.size());
  double sum = 0;
  for (std::size_t i = 0; i < triangles.size(); ++i) {
    const aabb b = box_of(triangles[i]);
    const float excess = b.half_area() - ideal_half_area(triangles[i]);
    // Karras & Aila's weight: a cut on a coarse grid plane (one the top levels of the tree cut
    // along) counts more than one on a fine plane; a small triangle crosses fine planes only.
    float step = 0;
    for (int a = 0; a < 3; ++a) {
      const float lo = axis_of(b.lo, a), hi = axis_of(b.hi, a), at = grid_plane(lo, hi);
      if (at > lo && at < hi) step = std::max(step, coarsest_step(at));
    }
    const float weight = scene_size > 0 ? std::min(1.0f, step / scene_size) : 0.0f;
    priority[i] = excess > 0 ? std::cbrt(weight * excess) : 0.0f;
    sum += priority[i];
  }
  if (!(sum > 0)) return counts;
  // The largest scale whose extra references (floor(scale x priority) a triangle) stay within the
  // budget, by bisection.
  const double want = static_cast<double>(budget) * static_cast<double>(triangles.size());
  auto extra = [&](double scale) {
    double total = 0;
    for (float p : priority) total += std::min<double>(std::floor(scale * p), split_pieces_max - 1);
    return total;
  };
  double lo = 0, hi = want / sum * 2 + 1;
  while (extra(hi) < want && hi < 1e30) hi *= 2;
  for (int i = 0; i < 40; ++i) {
    const double mid = 0.5 * (lo + hi);
    (extra(mid) <= want ? lo : hi) = mid;
  }
  for (std::size_t i = 0; i < triangles.size(); ++i)
    counts[i] = 1 + static_cast<std::uint32_t>(std::min<double>(std::floor(lo * priority[i]), split_pieces_max - 1));
  return counts;
}

std::uint32_t split_triangle(const triangle& t, std::uint32_t pieces, aabb* out) {
  const aabb box = box_of(t);
  return split_region(t, box, box, std::max<std::uint32_t>(pieces, 1), out);
}

}  // namespace sieve::render
