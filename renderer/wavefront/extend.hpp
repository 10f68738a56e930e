// Stage `extend` (depth-first traversal): the closest hit of every live path's ray. The BFS form of
// this stage is the bfs_tracer (trace/bfs.hpp), whose result is the same hit for hit.
#pragma once

#include <exec/exec.hpp>
#include <exec/walk.hpp>

#include <type_traits>

#include "../path/paths.hpp"
#include "../trace/tracers.hpp"
#include "route.hpp"

namespace sieve::render {

// `live` points at the queue's length (host or device memory); slots past it are left alone, so a
// GPU launch can cover the queue's capacity without reading the count back. With `route` (the queues
// routing, route.hpp), each entry is appended to its family's queue as its hit is found.
//   CPU: each ray traced to its end (scene_view::trace: the 8-wide tree, SIMD box tests).
//   GPU: as `choice` says (trace/tracers.hpp: gpu_traversals_for, per ray kind): the binary or the
//        compressed wide tree, a node a step by persistent warps that give an idle lane the next ray (exec::parallel_walk; `cursor`: one word of device memory;
//        1.5x the one-ray-a-thread kernel on diffuse rays: bench/results/h100-80gb-hbm3/dfs-designs.txt),
//        or one ray a thread (the compressed tree's best on coherent camera rays).
template <class Walk>
struct routed_walk : Walk {
  family_queues route;
  SIEVE_HD void finish(std::uint32_t i, const typename Walk::state& s) const {
    Walk::finish(i, s);
    route.append(i, s.result());
  }
};

// One ray a thread: hits[i] = trace.closest(ray), routed when `route` is set.
template <class Exec, class Trace>
void extend_each(Exec e, std::uint32_t capacity, const std::uint32_t* live, const path_columns& p, const bounce_columns& b,
                 const family_queues& route, Trace trace) {
  exec::parallel_for(e, "extend", capacity, [=] SIEVE_HD(std::uint32_t i) {
    if (i >= *live) return;
    b.hits[i] = trace.closest(p.rays[b.path(i)]);
    if (route) route.append(i, b.hits[i]);
  });
}

// By persistent warps (exec::parallel_walk), routed when `route` is set.
template <class Exec, class Walk>
void extend_walk(Exec e, std::uint32_t capacity, const Walk& walk, const family_queues& route, std::uint32_t* cursor) {
  if (route) return exec::parallel_walk(e, "extend", routed_walk<Walk>{walk, route}, cursor, capacity);
  exec::parallel_walk(e, "extend", walk, cursor, capacity);
}

template <class Exec>
void extend_dfs(Exec e, std::uint32_t capacity, const std::uint32_t* live, const scene_view& s, const path_columns& p,
                const bounce_columns& b, std::uint32_t* cursor, const family_queues& route, const traversal& choice) {
  const auto ray_of = [=] SIEVE_HD(std::uint32_t i) { return p.rays[b.path(i)]; };
  const auto count = [=] SIEVE_HD { return *live; };
  // Separate kernels per tree and schedule: each keeps only its traversal's registers.
  visit_tracer(s.bvh, choice, [&](auto tracer) {
    using tracer_t = decltype(tracer);
    if constexpr (tracer_t::walks_closest && !std::is_same_v<Exec, exec::cpu>)
      if (walks<tracer_t>(choice, false))
        return extend_walk(e, capacity, tracer.template walk<false>(ray_of, count, b.hits), route, cursor);
    extend_each(e, capacity, live, p, b, route, tracer);
  });
}

}  // namespace sieve::render
