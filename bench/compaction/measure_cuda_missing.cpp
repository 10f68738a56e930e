// The CUDA side of the compaction benchmark in a build without the CUDA backend.
#include "measure.hpp"

namespace sieve::bench {

struct cuda_bench::buffers {};

cuda_bench::cuda_bench() {
  throw error("this build of sieve has no CUDA backend (nvcc was not found, or SIEVE_CUDA=OFF)");
}
cuda_bench::~cuda_bench() = default;
void cuda_bench::load(const bench_case&, const case_inputs&) {}
measurement cuda_bench::measure(const bench_case&, const case_inputs&, timing_plan) { return {}; }
stats cuda_bench::removal_floor(const bench_case&, timing_plan) { return {}; }

double device_copy_gbps(std::size_t, timing_plan) { return 0; }

}  // namespace sieve::bench
