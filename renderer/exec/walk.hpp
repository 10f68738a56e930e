// parallel_walk: the loop for items that each take a varying number of steps (a ray's traversal of
// the BVH, a node a step), on the CPU and on the GPU:
//
//   parallel_walk(exec, "extend", walk, cursor);
//
// The walk says how one item goes (one copy for both backends, SIEVE_HD members):
//   W::state, W::scratch             an item's state (small: registers) and its scratch memory (a
//                                    traversal stack, indexed dynamically: local memory on the GPU),
//                                    kept apart so that the state stays in registers
//   count() -> std::uint32_t         how many items; read where the loop runs (on the GPU it may be a
//                                    queue's length in device memory, never read back)
//   start(i, state&) -> bool         item i begins; false: it is done already
//   step(state&, scratch&) -> bool   one step; false: done
//   finish(i, const state&)          item i's result
//
// exec::cpu runs each item to its end on oneTBB, where a walk's steps cost nothing to resume.
// exec::cuda (walk_cuda.cuh) runs persistent warps that take new items from `cursor` (one 32-bit word
// of device memory, zeroed by the call) between steps, as soon as half a warp's lanes are idle: the
// dynamic ray fetch of Aila and Laine ("Understanding the efficiency of ray traversal on GPUs", HPG
// 2009). On incoherent rays a warp whose rays take 10 or 200 steps otherwise idles most of its lanes
// until its longest ray ends (ncu: 8 of 32 lanes active, sphere room diffuse rays, H100).
#pragma once

#include "exec.hpp"

#include <cstdint>

namespace sieve::exec {

// Timed like parallel_for when e carries a loop clock (over count() items).
template <class W>
void parallel_walk(cpu e, const char* name, const W& w, std::uint32_t* /*cursor: the GPU's*/) {
  const stage_range range(name);
  const std::uint32_t n = w.count();
  if (n == 0) return;  // as parallel_for: no launch
  timed(e, name, n, [&] {
    tbb::parallel_for(tbb::blocked_range<std::uint32_t>(0, n, 256), [&](const tbb::blocked_range<std::uint32_t>& r) {
      typename W::scratch scratch;
      for (std::uint32_t i = r.begin(); i != r.end(); ++i) {
        typename W::state s;
        if (w.start(i, s))
          while (w.step(s, scratch)) {
          }
        w.finish(i, s);
      }
    });
  });
}

}  // namespace sieve::exec

// In CUDA code the GPU's overload comes with the CPU's (see the end of exec.hpp).
#if defined(__CUDACC__)
#include "walk_cuda.cuh"
#endif
