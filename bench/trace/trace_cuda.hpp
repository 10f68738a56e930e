// The traversals on the GPU over a device copy of the BVH, for measuring rays per second (`sieve
// bench trace --backend cuda`): each depth-first one by the tracer the renderer's stages use
// (trace/tracers.hpp), a ray a thread or by persistent warps (exec::parallel_walk) as the
// traversal's schedule says, or BFS (bfs_tracer_cuda) with its frontier compacted by `strategy`.
#pragma once

#include <trace/bfs.hpp>
#include <bvh/bvh.hpp>
#include <core/modes.hpp>
#include <trace/dfs.hpp>

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

// t: any traversal (core/modes.hpp), run by its tracer (trace/tracers.hpp: dfs, wide, cwbvh,
// cwbvh-thread) or by bfs_tracer_cuda over its tree, `strategy` ("append" or a library strategy)
// compacting the frontier; loop: graph (the level loop on the device, no host synchronisation inside
// a run) or host (driven by the host, one synchronisation per step). any: any hit (depth-first
// only), reported as prim 0, t 0 when blocked. Throws sieve::error without a CUDA device (or in
// builds without CUDA).
gpu_trace trace_cuda(const bvh& b, std::span<const triangle> triangles, std::span<const ray> rays, const traversal& t,
                     const std::string& strategy, int repeats, bfs_tracer_cuda::loop loop = bfs_tracer_cuda::loop::graph,
                     bool any = false);

}  // namespace sieve::render
