// The DFS traversal as a CUDA kernel over a device copy of the BVH, for measuring rays per second
// (`sieve bench trace --backend cuda`). The kernel calls the same closest_hit as the CPU.
#pragma once

#include "bvh.hpp"
#include "dfs.hpp"

#include <span>
#include <vector>

namespace sieve::render {

struct gpu_trace {
  std::vector<hit> hits;   // of the first (untimed) run
  std::vector<double> ms;  // each timed run: the kernel alone (CUDA events), rays already on the device
};

// Throws sieve::error without a CUDA device (or in builds without CUDA).
gpu_trace trace_dfs_cuda(const bvh& b, std::span<const triangle> triangles, std::span<const ray> rays, int repeats);

}  // namespace sieve::render
