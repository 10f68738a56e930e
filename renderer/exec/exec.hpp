// The one loop every stage runs through, on the CPU and on the GPU (pbrt-v4's ParallelFor idea):
//
//   parallel_for(exec, "extend", n, [=] SIEVE_HD (std::uint32_t i) { ... });
//
// The per-item body is written once, as a SIEVE_HD lambda or function; `exec` picks where it runs:
// exec::cpu runs it on oneTBB, exec::cuda (exec/cuda.cuh, in .cu files) as a CUDA kernel. The name
// labels the loop's NVTX range (exec/nvtx.hpp) for profilers and, when the exec tag carries a loop
// clock (a profiled render: exec/loop_clock.hpp), the launch's time in that clock's table. The
// driver's stage clock (backend time(name, ...)) still names stages, not loops: a stage may be
// several loops and library calls (the compaction, the sort), and the loop table shows which loops
// make up each one.
#pragma once

#include "loop_clock.hpp"
#include "nvtx.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <sieve/compaction/error.hpp>
#include <sieve/hd.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>


namespace sieve::exec {

// clock: where a profiled render's launches are timed (null: not timed).
struct cpu {
  loop_clock* clock = nullptr;
};

// Index is the type the body receives: std::uint32_t (the default; the stages index their queues
// with it) or std::uint64_t. A loop whose last index does not fit Index is refused with a
// sieve::error naming the stage, never run with wrapped indices.
template <class Index>
void check_index_range(const char* name, std::size_t n) {
  static_assert(std::is_unsigned_v<Index>, "parallel_for: the index is an unsigned integer");
  if (n > 0 && n - 1 > std::numeric_limits<Index>::max()) {
    throw sieve::error(std::string("parallel_for '") + name + "': " + std::to_string(n) + " items do not fit a " +
                       std::to_string(8 * sizeof(Index)) + "-bit index");
  }
}

// Runs `loop` (loop `name` over n items) and, when e carries a clock, adds its time there.
template <class F>
void timed(cpu e, const char* name, std::size_t n, const F& loop) {
  if (!e.clock) return loop();
  const auto t0 = std::chrono::steady_clock::now();
  loop();
  e.clock->add(name, n, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
}

template <class Index = std::uint32_t, class F>
void parallel_for(cpu e, const char* name, std::size_t n, const F& body) {
  check_index_range<Index>(name, n);
  if (n == 0) return;  // as on the GPU: no launch, nothing timed
  const stage_range range(name);
  timed(e, name, n, [&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1024), [&](const tbb::blocked_range<std::size_t>& r) {
      for (std::size_t i = r.begin(); i != r.end(); ++i) body(static_cast<Index>(i));
    });
  });
}

// body(i) for every i < n, as parallel_for, where items of two kinds take different paths through
// `body`: on the GPU each block's items are handed to its threads with those for which first(i)
// holds first, so that a warp runs one kind (one path) and no warp pays for both (exec/cuda.cuh).
// The CPU runs parallel_for: the order of the items is not part of the result.
template <class Index = std::uint32_t, class P, class F>
void parallel_for_grouped(cpu e, const char* name, std::size_t n, const P&, const F& body) {
  parallel_for<Index>(e, name, n, body);
}

}  // namespace sieve::exec

// In CUDA code the GPU's overloads come with the CPU's: the stages call exec::parallel_for by
// qualified name, which sees only the overloads declared before them, so no includer has an order
// to keep.
#if defined(__CUDACC__)
#include "cuda.cuh"
#endif
