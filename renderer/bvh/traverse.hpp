// The depth-first traversal the renderer's stages call (extend, connect, the megakernel).
// CPU: DFS over the 8-wide tree (wide_cpu.cpp: AVX2 box tests where the processor has them) when
// the view carries one, else over the binary pair nodes. The two give the same hits bit for bit
// (the least (t, primitive), the same triangle test: tests/bvh_test.cpp WideBvh.*), so images do not change.
// GPU: the binary pair nodes. The wide GPU traversal (wide.hpp, `sieve bench trace --backend cuda
// --traversal wide`) takes over here once the device measurements show it faster and the CUDA
// driver's device view carries the wide tree.
#pragma once

#include "dfs.hpp"
#include "wide.hpp"

namespace sieve::render {

SIEVE_HD inline hit trace_closest(const bvh_view& v, const ray& r) {
#if !defined(__CUDA_ARCH__)
  if (v.wide.node_count != 0) return wide_closest_hit_cpu(v.wide, r, wide_path::automatic, v.alpha);
#endif
  return closest_hit(v, r);
}

SIEVE_HD inline bool trace_any(const bvh_view& v, const ray& r) {
#if !defined(__CUDA_ARCH__)
  if (v.wide.node_count != 0) return wide_any_hit_cpu(v.wide, r, wide_path::automatic, v.alpha);
#endif
  return any_hit(v, r);
}

}  // namespace sieve::render
