// `sieve bench trace`'s rays and the checks of their hits: the rays of each kind, the CPU's
// reference traces (the binary DFS, Embree, any traversal by its tracer) and the comparisons a
// configuration must pass before it is timed.
#pragma once

#include "embree.hpp"

#include <core/hit.hpp>
#include <core/modes.hpp>
#include <exec/exec.hpp>
#include <scene/scene.hpp>
#include <trace/tracers.hpp>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace sieve::bench::trace_parts {

using namespace sieve::render;

// CPU time of the whole process (every thread): on a machine shared with other work, rays per
// CPU-second is the per-thread rate that time-sharing does not dilute.
double process_cpu_seconds();
double seconds_since(std::chrono::steady_clock::time_point t0);

// spp rays per pixel: through the pixel centre when spp is 1, else jittered (counter RNG, so any run
// and any backend gets the same rays). Ray i belongs to pixel i / spp.
std::vector<ray> primary_rays(const scene& s, unsigned w, unsigned h, unsigned spp);
// One cosine-distributed ray from each primary hit, on the side the primary ray came from.
std::vector<ray> diffuse_rays(const scene& s, const std::vector<ray>& primary, const std::vector<hit>& hits);
// One shadow ray from each primary hit to a uniform point on a uniformly chosen emissive triangle,
// ending just before it (next-event estimation's rays): traced for any hit.
std::vector<ray> shadow_rays(const scene& s, const std::vector<ray>& primary, const std::vector<hit>& hits);

// Any-hit answers in the form of hits, so one comparison serves both: prim 0 and t 0 when blocked.
hit occlusion(bool blocked);
// The binary DFS's hits (the reference every traversal must match): closest, any.
std::vector<hit> trace_dfs(const bvh_view& v, const std::vector<ray>& rays);
std::vector<hit> trace_dfs_any(const bvh_view& v, const std::vector<ray>& rays);

// Each ray traced by closest(ray) or, for any hit, blocked(ray), on oneTBB.
template <class Closest, class Blocked>
std::vector<hit> trace_each(const std::vector<ray>& rays, bool any, Closest closest, Blocked blocked) {
  std::vector<hit> hits(rays.size());
  const ray* r = rays.data();
  hit* h = hits.data();
  if (any)
    exec::parallel_for(exec::cpu{}, "connect", rays.size(), [=](std::uint32_t i) { h[i] = occlusion(blocked(r[i])); });
  else
    exec::parallel_for(exec::cpu{}, "extend", rays.size(), [=](std::uint32_t i) { h[i] = closest(r[i]); });
  return hits;
}

// The rays traced by traversal t's tracer (trace/tracers.hpp) on the CPU, a ray to its end.
std::vector<hit> trace_with(const bvh_view& v, const traversal& t, const std::vector<ray>& rays, bool any);

// "" when got is want hit for hit, else the first ray that differs.
std::string first_difference(const std::vector<hit>& got, const std::vector<hit>& want);

// GPU hits against the CPU's: the GPU contracts multiply-adds, so t may differ in the last bits and,
// at a shared edge, rarely the primitive. Counts the rays whose t is off by more than `tolerance`
// relative, or whose primitive differs where it is no tie: coincident triangles are hit at the same
// t, and which of them comes first is the tracer's choice (sieve's tracers take the lower index,
// Embree does not), so a primitive that sieve's own test hits at that t is the closest hit too.
std::size_t gpu_mismatches(const std::vector<hit>& got, const std::vector<hit>& want, const std::vector<ray>& rays,
                           const scene& sc, float tolerance = 1e-5f);

// Embree's hits in sieve's form. Embree's watertight triangle test rounds differently from sieve's
// (Moeller-Trumbore), so t is compared within 1e-4 relative and a ray grazing a shared edge may
// name the neighbour: like the GPU, at most 1 ray in 10^4 may differ.
std::vector<hit> trace_embree(const embree_scene& e, const std::vector<ray>& rays, bool any);

}  // namespace sieve::bench::trace_parts
