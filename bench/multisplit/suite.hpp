// `sieve bench multisplit`: the N-way split by bucket id over n, bucket counts, id distributions and
// item types (u32, the 48-byte path record). On the GPU the library's designs against CUB's radix
// sort over the bucket bits and three-way partition; on the CPU the library's oneTBB split against
// std::stable_partition. Every point is validated against the reference split before it is timed;
// small n is timed as CUDA-graph replays. A table on stdout, CSV and JSON on request.
#pragma once

#include "../options.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace sieve::bench {

struct multisplit_args : report::result_files {
  std::string backend = "auto";         // auto: cuda when there is a device, else cpu
  std::vector<std::string> algorithms;  // default: every one of the backend
  std::vector<std::size_t> n;           // default: 2^14, 2^16, 2^20, 2^24, 2^26, 2^28 (cpu: up to 2^24)
  std::vector<unsigned> buckets;        // default: 2, 3, 8, 32, 256
  std::vector<std::string> dist;        // uniform, zipf, dominant, runs; default uniform
  std::vector<std::string> items;       // u32, path; default both
  std::size_t graph_below = std::size_t{1} << 20;  // n at or below: CUDA-graph timing
  bool quick = false;
  int warmup = 3;
  int repeats = 0;  // 0: 25 (quick: 5)
  std::uint64_t seed = 1;
};

const option_schema<multisplit_args>& multisplit_options();
// Returns the process exit code: 0 when every point validated.
int run_multisplit_bench(const multisplit_args& args, const std::string& command_line);

// One algorithm at one grid point as the results show it.
struct multisplit_row {
  std::string backend, algorithm, items, dist, timing;
  std::size_t n = 0;
  unsigned buckets = 0;
  report::stats ms;
  double item_bytes = 0;
  double copy_gbps = 0;  // the device copy bandwidth measured in the same run (0 on the CPU)
  double sort_ms = 0;    // cub_sort's median at this point (0: not measured)
  std::size_t workspace_bytes = 0;
  bool validated = false;
  std::string error;

  bool ok() const { return validated && ms.median > 0; }
  double gitems() const;    // G items/s
  double floor_ms() const;  // copying the ids and the items (read + write) at copy_gbps
  double of_copy() const;   // floor_ms / median
  double x_sort() const;    // sort_ms / median
};
report::row_schema<multisplit_row> multisplit_rows();

}  // namespace sieve::bench
