// Stage `extend` (depth-first traversal): the closest hit of every live path's ray. The BFS form of
// this stage is the bfs_tracer (bvh/bfs.hpp), whose result is the same hit for hit.
#pragma once

#include <exec/exec.hpp>

#include "../bvh/traverse.hpp"
#include "../path/paths.hpp"

namespace sieve::render {

// `live` points at the queue's length (host or device memory); slots past it are left alone, so a
// GPU launch can cover the queue's capacity without reading the count back.
template <class Exec>
void extend_dfs(Exec e, std::uint32_t capacity, const std::uint32_t* live, const scene_view& s, const path_columns& p,
                const bounce_columns& b) {
  exec::parallel_for(e, "extend", capacity, [=] SIEVE_HD(std::uint32_t i) {
    if (i < *live) b.hits[i] = trace_closest(s.bvh, p.rays[b.path(i)]);
  });
}

}  // namespace sieve::render
