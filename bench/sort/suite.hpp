// `sieve bench sort`: the GPU radix sorts of (u32 key, u32 value) pairs over n and bit ranges, each
// validated against the CPU radix sort before it is timed (CUDA events, median of many runs after
// warm-up); a table on stdout, CSV and JSON on request.
#pragma once

#include "../options.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace sieve::bench {

struct sort_args : report::result_files {
  std::vector<std::string> algorithms;  // default: every one (onesweep, cub)
  std::vector<std::size_t> n;           // default: 2^20, 2^22, 2^24, 2^26
  std::vector<std::string> bits;        // "B:E" ranges; default 0:32
  std::vector<std::string> keys;        // uniform, duplicates; default uniform
  bool quick = false;
  int warmup = 3;
  int repeats = 0;  // 0: 25 (quick: 5)
  std::uint64_t seed = 1;
  std::string backend = "auto";  // as every suite's; the sorts timed here run on cuda only
};

// The options, declared once (bench/options.hpp): the parser and the command that repeats an args.
const option_schema<sort_args>& sort_options();
// Returns the process exit code: 0 when every point validated.
int run_sort_bench(const sort_args& args, const std::string& command_line);

// One algorithm at one grid point as the results show it.
struct sort_row {
  std::string algorithm;
  std::size_t n = 0;
  int begin_bit = 0, end_bit = 32;
  std::string keys;  // uniform, duplicates
  report::stats ms;
  double bytes = 0;               // nominal: n * (4 + 16 * digit passes)
  double copy_gbps = 0;           // the device copy bandwidth, measured in the same run
  double cub_ms = 0;              // cub's median at this point (0: not measured)
  std::size_t workspace_bytes = 0;
  bool validated = false;
  std::string error;

  bool ok() const { return validated && ms.median > 0; }
  double gpairs() const;          // Gpairs/s (0 when not ok)
  double gbps() const;            // bytes / median
  double of_copy() const;         // gbps / copy_gbps
  double x_cub() const;           // cub's median / this median
};
// The columns of the printed table, the CSV and the JSON, declared once.
report::row_schema<sort_row> sort_rows();

}  // namespace sieve::bench
