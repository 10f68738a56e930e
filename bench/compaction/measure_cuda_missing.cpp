// measure_cuda in a build without the CUDA backend.
#include "measure.hpp"

namespace sieve::bench {

measurement measure_cuda(const bench_case&, const case_inputs&, timing_plan) {
  throw error("this build of sieve has no CUDA backend (nvcc was not found, or SIEVE_CUDA=OFF)");
}

double device_copy_gbps(std::size_t, timing_plan) { return 0; }
stats measure_removal_floor(const bench_case&, const case_inputs&, timing_plan) { return {}; }

}  // namespace sieve::bench
