// The one loop every stage runs through, on the CPU and on the GPU (pbrt-v4's ParallelFor idea):
//
//   parallel_for(exec, "extend", n, [=] SIEVE_HD (std::uint32_t i) { ... });
//
// The per-item body is written once, as a SIEVE_HD lambda or function; `exec` picks where it runs:
// exec::cpu runs it on oneTBB, exec::cuda (exec/cuda.cuh, in .cu files) as a CUDA kernel. The name
// labels the loop's NVTX range (exec/nvtx.hpp) for profilers; the driver's stage clock keeps its own
// names (backend time(name, ...)), since a stage may be several loops or a library call.
#pragma once

#include "nvtx.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <sieve/compaction/error.hpp>
#include <sieve/hd.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>


namespace sieve::exec {

struct cpu {};

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

template <class Index = std::uint32_t, class F>
void parallel_for(cpu, const char* name, std::size_t n, const F& body) {
  check_index_range<Index>(name, n);
  const stage_range range(name);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1024), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) body(static_cast<Index>(i));
  });
}

}  // namespace sieve::exec
