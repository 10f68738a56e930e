// measure_cuda in a build without the CUDA backend.
#include "measure.hpp"

namespace sieve::bench {

measurement measure_cuda(const bench_case&, const case_inputs&, timing_plan) {
  throw error("this build of sieve has no CUDA backend (nvcc was not found, or SIEVE_CUDA=OFF)");
}

}  // namespace sieve::bench
