#include "rays.hpp"

#include <core/camera.hpp>
#include <core/lights.hpp>
#include <core/rng.hpp>
#include <core/sampling.hpp>
#include <trace/dfs.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <ctime>
#include <optional>

namespace sieve::bench::trace_parts {

using namespace sieve::render;

// CPU time of the whole process (every thread): on a machine shared with other work, rays per
// CPU-second is the per-thread rate that time-sharing does not dilute.
double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// spp rays per pixel: through the pixel centre when spp is 1, else jittered (counter RNG, so any run
// and any backend gets the same rays). Ray i belongs to pixel i / spp.
std::vector<ray> primary_rays(const scene& s, unsigned w, unsigned h, unsigned spp) {
  const camera cam = camera::look_at(s.camera.position, s.camera.look_at, s.camera.up, s.camera.vfov_degrees,
                                     static_cast<float>(w) / static_cast<float>(h));
  std::vector<ray> rays(std::size_t{w} * h * spp);
  ray* out = rays.data();
  exec::parallel_for(exec::cpu{}, "primary", rays.size(), [=](std::uint32_t i) {
    const std::uint32_t pixel = i / spp, sample = i % spp;
    const rng_key key{pixel, sample, 0, 11};
    const float jx = spp == 1 ? 0.5f : uniform(key, 0), jy = spp == 1 ? 0.5f : uniform(key, 1);
    out[i] = cam.generate((static_cast<float>(pixel % w) + jx) / static_cast<float>(w),
                          (static_cast<float>(pixel / w) + jy) / static_cast<float>(h));
  });
  return rays;
}

// One cosine-distributed ray from each primary hit, on the side the primary ray came from.
std::vector<ray> diffuse_rays(const scene& s, const std::vector<ray>& primary, const std::vector<hit>& hits) {
  std::vector<ray> rays;
  rays.reserve(primary.size());
  for (std::size_t i = 0; i < primary.size(); ++i) {
    if (!hits[i].found()) continue;
    const triangle& t = s.triangles[hits[i].prim];
    vec3 n = geometric_normal(t);
    if (dot(n, primary[i].direction) > 0) n = -n;
    const vec3 p = primary[i].origin + primary[i].direction * hits[i].t;
    const rng_key key{static_cast<std::uint32_t>(i), 0, 1, 7};
    const vec3 d = frame::around(n).to_world(cosine_hemisphere(uniform(key, 0), uniform(key, 1)));
    rays.push_back(spawn_ray(p, n, d));
  }
  return rays;
}

// One shadow ray from each primary hit to a uniform point on a uniformly chosen emissive triangle,
// ending just before it (next-event estimation's rays): traced for any hit.
std::vector<ray> shadow_rays(const scene& s, const std::vector<ray>& primary, const std::vector<hit>& hits) {
  if (s.emissive.empty()) throw sieve::error("bench trace: shadow rays need a light (the scene has no emissive triangles)");
  std::vector<ray> rays;
  rays.reserve(primary.size());
  const auto lights = static_cast<float>(s.emissive.size());
  for (std::size_t i = 0; i < primary.size(); ++i) {
    if (!hits[i].found()) continue;
    vec3 n = geometric_normal(s.triangles[hits[i].prim]);
    if (dot(n, primary[i].direction) > 0) n = -n;
    const vec3 p = primary[i].origin + primary[i].direction * hits[i].t;
    const rng_key key{static_cast<std::uint32_t>(i), 0, 1, 13};
    const std::size_t k = std::min(static_cast<std::size_t>(uniform(key, 0) * lights), s.emissive.size() - 1);
    const triangle& l = s.triangles[s.emissive[k]];
    float b1, b2;
    uniform_triangle(uniform(key, 1), uniform(key, 2), b1, b2);
    const vec3 q = l.v0 * (1.0f - b1 - b2) + l.v1 * b1 + l.v2 * b2;
    ray r = spawn_ray(p, n, q - p);
    r.direction = q - r.origin;
    r.tmax = 1.0f - 1e-3f;  // stop short of the light itself
    rays.push_back(r);
  }
  return rays;
}

// Any-hit answers in the form of hits, so one comparison serves both: prim 0 and t 0 when blocked.
hit occlusion(bool blocked) { return blocked ? hit{0, 0, 0, 0} : hit{}; }

std::vector<hit> trace_dfs_any(const bvh_view& b, const std::vector<ray>& rays) {
  const pair_view v = pairs_of(b);
  std::vector<hit> hits(rays.size());
  const ray* r = rays.data();
  hit* h = hits.data();
  exec::parallel_for(exec::cpu{}, "connect", rays.size(), [=](std::uint32_t i) { h[i] = occlusion(any_hit(v, r[i])); });
  return hits;
}

std::vector<hit> trace_dfs(const bvh_view& b, const std::vector<ray>& rays) {
  const pair_view v = pairs_of(b);
  std::vector<hit> hits(rays.size());
  const ray* r = rays.data();
  hit* h = hits.data();
  exec::parallel_for(exec::cpu{}, "extend", rays.size(), [=](std::uint32_t i) { h[i] = closest_hit(v, r[i]); });
  return hits;
}


// The rays traced by traversal t's tracer (trace/tracers.hpp) on the CPU, a ray to its end.
std::vector<hit> trace_with(const bvh_view& v, const traversal& t, const std::vector<ray>& rays, bool any) {
  return visit_tracer(v, t, [&](const auto& tracer) {
    return trace_each(rays, any, [=](const ray& r) { return tracer.closest(r); }, [=](const ray& r) { return tracer.any(r); });
  });
}

std::string first_difference(const std::vector<hit>& got, const std::vector<hit>& want) {
  for (std::size_t i = 0; i < want.size(); ++i)
    if (got[i].prim != want[i].prim || got[i].t != want[i].t)
      return "ray " + std::to_string(i) + ": primitive " + std::to_string(got[i].prim) + " at t " +
             std::to_string(got[i].t) + ", DFS: " + std::to_string(want[i].prim) + " at t " + std::to_string(want[i].t);
  return "";
}

// Where `r` meets `tri`, in double and with a margin of 1e-5 on the barycentric coordinates (a ray
// at a shared edge is inside both triangles), or nothing.
namespace {

std::optional<double> loose_hit(const triangle& tri, const ray& r) {
  using d3 = std::array<double, 3>;
  auto of = [](vec3 v) { return d3{v.x, v.y, v.z}; };
  auto sub = [](d3 a, d3 b) { return d3{a[0] - b[0], a[1] - b[1], a[2] - b[2]}; };
  auto dot = [](d3 a, d3 b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; };
  auto cross = [](d3 a, d3 b) { return d3{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}; };
  const d3 v0 = of(tri.v0), e1 = sub(of(tri.v1), v0), e2 = sub(of(tri.v2), v0), d = of(r.direction);
  const d3 p = cross(d, e2);
  const double det = dot(e1, p);
  if (!(std::fabs(det) > 0)) return std::nullopt;
  const d3 s = sub(of(r.origin), v0), q = cross(s, e1);
  const double u = dot(s, p) / det, v = dot(d, q) / det, eps = 1e-5;
  if (u < -eps || v < -eps || u + v > 1 + eps) return std::nullopt;
  return dot(e2, q) / det;
}

}  // namespace

// GPU hits against the CPU's: the GPU contracts multiply-adds, so t may differ in the last bits and,
// at a shared edge, rarely the primitive. Counts the rays whose t is off by more than `tolerance`
// relative, or whose primitive differs where it is no tie: coincident triangles are hit at the same
// t, and which of them comes first is the tracer's choice (sieve's tracers take the lower index,
// Embree does not), so a primitive that sieve's own test hits at that t is the closest hit too.
std::size_t gpu_mismatches(const std::vector<hit>& got, const std::vector<hit>& want, const std::vector<ray>& rays,
                           const scene& sc, float tolerance) {
  auto near = [&](float t, float ref) { return std::fabs(t - ref) <= tolerance * std::fabs(ref); };
  auto tie = [&](std::size_t i) {
    if (!got[i].found() || !want[i].found() || got[i].prim >= sc.triangles.size()) return false;
    const std::optional<double> t = loose_hit(sc.triangles[got[i].prim], rays[i]);
    return t && near(static_cast<float>(*t), want[i].t);
  };
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    bad += !near(got[i].t, want[i].t) || (got[i].prim != want[i].prim && !tie(i));
  return bad;
}

// Embree's hits in sieve's form. Embree's watertight triangle test rounds differently from sieve's
// (Moeller-Trumbore), so t is compared within 1e-4 relative and a ray grazing a shared edge may
// name the neighbour: like the GPU, at most 1 ray in 10^4 may differ.
std::vector<hit> trace_embree(const embree_scene& e, const std::vector<ray>& rays, bool any) {
  std::vector<hit> hits(rays.size());
  if (any) {
    std::vector<std::uint8_t> blocked(rays.size());
    e.occluded(rays, blocked);
    for (std::size_t i = 0; i < rays.size(); ++i) hits[i] = occlusion(blocked[i] != 0);
    return hits;
  }
  std::vector<float> t(rays.size());
  std::vector<std::uint32_t> prim(rays.size());
  e.closest(rays, t, prim);
  for (std::size_t i = 0; i < rays.size(); ++i) hits[i] = {t[i], prim[i], 0, 0};
  return hits;
}

}  // namespace sieve::bench::trace_parts
