// The traversals on the GPU over a device copy of the BVH, for measuring rays per second (`sieve
// bench trace --backend cuda`): DFS over the binary pair nodes as the renderer's extend stage runs
// it (closest_walk by exec::parallel_walk: persistent warps, dynamic ray fetch; any hit: one ray a
// thread), or wide_closest_hit (the 8-wide compressed nodes), or BFS
// (bfs_tracer_cuda) with its frontier compacted by `strategy`.
#pragma once

#include <bvh/bfs.hpp>
#include <bvh/bvh.hpp>
#include <bvh/dfs.hpp>

#include <span>
#include <string>
#include <vector>

namespace sieve::render {

struct gpu_trace {
  std::vector<hit> hits;       // of the first (untimed) run
  std::vector<double> ms;      // each timed run (CUDA events), rays already on the device
  std::size_t host_syncs = 0;  // host synchronisations inside one run (BFS; DFS: none)
  bfs_stats profile;           // BFS: one more run, driven by the host, each step timed by events
};

// traversal: dfs | wide (DFS over the 8-wide tree) | cwbvh (its compressed layout, cwbvh.hpp, by
// exec::parallel_walk) | cwbvh-thread (the same, one ray a thread) | bfs. BFS: `strategy` ("append" or a library
// strategy) compacts the frontier; bfs_loop: "graph" (the level loop on the device, no host
// synchronisation inside a run) or "host" (driven by the host, one synchronisation per step).
// any: any hit (dfs, wide), reported as prim 0, t 0 when blocked. Throws sieve::error without a
// CUDA device (or in builds without CUDA).
gpu_trace trace_cuda(const bvh& b, std::span<const triangle> triangles, std::span<const ray> rays,
                     const std::string& traversal, const std::string& strategy, int repeats,
                     const std::string& bfs_loop = "graph", bool any = false);

}  // namespace sieve::render
