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
//   GPU: as gpu_dfs_trees (bvh/traverse.hpp) says for camera rays (`camera`: the first vertex) or
//        bounce rays: the binary or the compressed wide tree, a node a step by persistent warps that
//        give an idle lane the next ray (exec::parallel_walk; `cursor`: one word of device memory;
//        1.5x the one-ray-a-thread kernel on diffuse rays: bench/results/h100-80gb-hbm3/dfs-designs.txt),
//        or one ray a thread (the compressed tree's best on coherent camera rays).
template <class Exec>
void extend_dfs(Exec e, std::uint32_t capacity, const std::uint32_t* live, const scene_view& s, const path_columns& p,
                const bounce_columns& b, std::uint32_t* cursor, bool camera = false) {
  if constexpr (std::is_same_v<Exec, exec::cpu>) {
    (void)camera;
    exec::parallel_for(e, "extend", capacity, [=](std::uint32_t i) {
      if (i < *live) b.hits[i] = trace_closest(s.bvh, p.rays[b.path(i)]);
    });
  } else {
    const gpu_choice choice = camera ? gpu_dfs_trees.camera : gpu_dfs_trees.bounce;
    const bool compressed = walks_compressed(s.bvh, choice.tree);
    const cw_view cw = cw_of(s.bvh);
    const auto ray_of = [=] SIEVE_HD(std::uint32_t i) { return p.rays[b.path(i)]; };
    const auto count = [=] SIEVE_HD { return *live; };
    if (!choice.dynamic_fetch && compressed)  // separate kernels: each keeps only its traversal's registers
      exec::parallel_for(e, "extend", capacity, [=] SIEVE_HD(std::uint32_t i) {
        if (i < *live) b.hits[i] = cw_closest_hit(cw, ray_of(i));
      });
    else if (!choice.dynamic_fetch)
      exec::parallel_for(e, "extend", capacity, [=] SIEVE_HD(std::uint32_t i) {
        if (i < *live) b.hits[i] = closest_hit(s.bvh, ray_of(i));
      });
    else if (compressed)
      exec::parallel_walk(e, "extend", make_cw_walk<false>(cw, ray_of, count, b.hits), cursor, capacity);
    else
      exec::parallel_walk(e, "extend", closest_hits_walk{s.bvh, ray_of, count, b.hits}, cursor, capacity);
  }
}

}  // namespace sieve::render
