// The one loop every stage runs through, on the CPU and on the GPU (pbrt-v4's ParallelFor idea):
//
//   parallel_for(exec, "extend", n, [=] SIEVE_HD (std::uint32_t i) { ... });
//
// The per-item body is written once, as a SIEVE_HD lambda or function; `exec` picks where it runs:
// exec::cpu runs it on oneTBB, exec::cuda (exec/cuda.cuh, in .cu files) as a CUDA kernel. The name
// labels the stage's timing.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define SIEVE_HD __host__ __device__
#else
#define SIEVE_HD
#endif

namespace sieve::exec {

struct cpu {};

template <class F>
void parallel_for(cpu, const char* /*name*/, std::size_t n, const F& body) {
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1024), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) body(static_cast<std::uint32_t>(i));
  });
}

}  // namespace sieve::exec
