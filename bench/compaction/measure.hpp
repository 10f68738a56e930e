// Running one grid point: validate the strategy's output once, then time it (median of many runs
// after warm-up). Inputs are restored before every run, outside the timed region.
#pragma once

#include "../report_names.hpp"
#include "cases.hpp"

#include <memory>

namespace sieve::bench {

struct measurement {
  stats ms;               // whole call, phase 1 included
  std::string timing = "events";  // how: "events" (one call between two events) or "graph" (replays)
  double phase1_ms = 0;   // median marking time (removal lists), 0 otherwise
  std::size_t kept = 0;
  bool validated = false;
  std::string error;      // why validation failed or the call threw
};

struct timing_plan {
  int warmup = 2;
  int repeats = 10;
  // CUDA: each call with its counts in device memory (sieve::cuda::device_counts), captured once in
  // a CUDA graph and timed as the mean of many replays (the GPU's time, not the host's launch path).
  bool graph = false;
  // Checked mode (removal lists validated before anything moves: sieve's default). Off unless asked:
  // every result is validated against the reference anyway, and the papers' comparisons are unchecked.
  bool checked = false;
};

measurement measure_cpu(const bench_case& c, const case_inputs& in, timing_plan plan);

// The CUDA side (measure_cuda.cpp): one grid point's inputs uploaded once (load) and shared by
// every strategy measured at it, in device buffers kept from point to point (grown when a point
// needs more; the items are uploaded again only when n or the item width changes, since row i's
// bytes depend on nothing else). Each run starts from the pristine inputs: an in-place strategy works
// on a copy restored before every run, outside the timed region; an out-of-place one reads the
// pristine items themselves.
class cuda_bench {
 public:
  cuda_bench();
  ~cuda_bench();
  cuda_bench(const cuda_bench&) = delete;
  cuda_bench& operator=(const cuda_bench&) = delete;

  void load(const bench_case& c, const case_inputs& in);
  // CUDA events around each call. Validated before timing by the count and the digest of the output
  // computed on the device (16 bytes come back), and byte by byte on the host too when in.exact.
  measurement measure(const bench_case& c, const case_inputs& in, timing_plan plan);
  // The O(k) floor of the loaded removal list (floors.cu).
  stats removal_floor(const bench_case& c, timing_plan plan);

 private:
  struct buffers;
  std::unique_ptr<buffers> b_;
};

// Device-to-device copy bandwidth, GB/s counting bytes read plus bytes written.
double device_copy_gbps(std::size_t bytes, timing_plan plan);
// The O(k) floor of a removal list on the GPU (floors.cu): k indices R in device memory, n items of
// c.type.width bytes at `items` (scribbled over).
stats measure_removal_floor(const bench_case& c, void* items, const std::uint32_t* R, std::size_t k, timing_plan plan);

}  // namespace sieve::bench
