// Stage `extend` (depth-first traversal): the closest hit of every live path's ray. The BFS form of
// this stage is the bfs_tracer (bvh/bfs.hpp), whose result is the same hit for hit.
#pragma once

#include <exec/exec.hpp>
#include <exec/walk.hpp>

#include "../bvh/traverse.hpp"
#include "../path/paths.hpp"
#include "route.hpp"

#include <type_traits>

namespace sieve::render {

// `live` points at the queue's length (host or device memory); slots past it are left alone, so a
// GPU launch can cover the queue's capacity without reading the count back. With `route` (the queues
// routing, route.hpp), each entry is appended to its family's queue as its hit is found.
//   CPU: each ray traced to its end (trace_closest: the 8-wide tree, SIMD box tests).
//   GPU: the pair-node DFS a node a step, by persistent warps that give an idle lane the next ray
//        (exec::parallel_walk; `cursor`: one word of device memory), 1.5x the one-ray-a-thread
//        kernel on diffuse rays (bench/results/h100-80gb-hbm3/dfs-designs.txt).
template <class Walk>
struct routed_walk : Walk {
  family_queues route;
  SIEVE_HD void finish(std::uint32_t i, const typename Walk::state& s) const {
    Walk::finish(i, s);
    route.append(i, s.result());
  }
};

template <class Exec>
void extend_dfs(Exec e, std::uint32_t capacity, const std::uint32_t* live, const scene_view& s, const path_columns& p,
                const bounce_columns& b, std::uint32_t* cursor, const family_queues& route = {}) {
  if constexpr (std::is_same_v<Exec, exec::cpu>) {
    exec::parallel_for(e, "extend", capacity, [=](std::uint32_t i) {
      if (i >= *live) return;
      b.hits[i] = trace_closest(s.bvh, p.rays[b.path(i)]);
      if (route) route.append(i, b.hits[i]);
    });
  } else {
    const closest_hits_walk walk{s.bvh, [=] SIEVE_HD(std::uint32_t i) { return p.rays[b.path(i)]; },
                                 [=] SIEVE_HD { return *live; }, b.hits};
    if (route) return exec::parallel_walk(e, "extend", routed_walk<decltype(walk)>{walk, route}, cursor, capacity);
    exec::parallel_walk(e, "extend", walk, cursor, capacity);
  }
}

}  // namespace sieve::render
