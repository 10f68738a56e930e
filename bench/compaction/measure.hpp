// Running one grid point: validate the strategy's output once, then time it (median of many runs
// after warm-up). Inputs are restored before every run, outside the timed region.
#pragma once

#include "../common/report.hpp"
#include "cases.hpp"

namespace sieve::bench {

struct measurement {
  stats ms;               // whole call, phase 1 included
  double phase1_ms = 0;   // median marking time (removal lists), 0 otherwise
  std::size_t kept = 0;
  bool validated = false;
  std::string error;      // why validation failed or the call threw
};

struct timing_plan {
  int warmup = 2;
  int repeats = 10;
};

measurement measure_cpu(const bench_case& c, const case_inputs& in, timing_plan plan);
// CUDA events around each call; device buffers allocated once per grid point.
measurement measure_cuda(const bench_case& c, const case_inputs& in, timing_plan plan);

// Device-to-device copy bandwidth, GB/s counting bytes read plus bytes written.
double device_copy_gbps(std::size_t bytes, timing_plan plan);
// The O(k) floor of a removal list on the GPU (floors.cu).
stats measure_removal_floor(const bench_case& c, const case_inputs& in, timing_plan plan);

}  // namespace sieve::bench
