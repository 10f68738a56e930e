// Stage `extend` (depth-first traversal): the closest hit of every live path's ray. The BFS form of
// this stage is the bfs_tracer (bvh/bfs.hpp), whose result is the same hit for hit.
#pragma once

#include <exec/exec.hpp>
#include <exec/walk.hpp>

#include "../bvh/traverse.hpp"
#include "../path/paths.hpp"

#include <type_traits>

namespace sieve::render {

// `live` points at the queue's length (host or device memory); slots past it are left alone, so a
// GPU launch can cover the queue's capacity without reading the count back.
//   CPU: each ray traced to its end (trace_closest: the 8-wide tree, SIMD box tests).
//   GPU: the pair-node DFS a node a step, by persistent warps that give an idle lane the next ray
//        (exec::parallel_walk; `cursor`: one word of device memory), 1.5x the one-ray-a-thread
//        kernel on diffuse rays (bench/results/h100-80gb-hbm3/dfs-designs.txt).
template <class Exec>
void extend_dfs(Exec e, std::uint32_t capacity, const std::uint32_t* live, const scene_view& s, const path_columns& p,
                const bounce_columns& b, std::uint32_t* cursor) {
  if constexpr (std::is_same_v<Exec, exec::cpu>) {
    exec::parallel_for(e, "extend", capacity, [=](std::uint32_t i) {
      if (i < *live) b.hits[i] = trace_closest(s.bvh, p.rays[b.path(i)]);
    });
  } else {
    const closest_hits_walk walk{s.bvh, [=] SIEVE_HD(std::uint32_t i) { return p.rays[b.path(i)]; },
                                 [=] SIEVE_HD { return *live; }, b.hits};
    exec::parallel_walk(e, "extend", walk, cursor);
  }
}

}  // namespace sieve::render
