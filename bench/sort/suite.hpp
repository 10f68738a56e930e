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

struct sort_args {
  std::vector<std::string> algorithms;  // default: every one (onesweep, cub)
  std::vector<std::size_t> n;           // default: 2^20, 2^22, 2^24, 2^26
  std::vector<std::string> bits;        // "B:E" ranges; default 0:32
  std::vector<std::string> keys;        // uniform, duplicates; default uniform
  bool quick = false;
  int warmup = 3;
  int repeats = 0;  // 0: 25 (quick: 5)
  std::uint64_t seed = 1;
  std::string csv, json;
};

// The options, declared once (bench/options.hpp): the parser and the command that repeats an args.
const option_schema<sort_args>& sort_options();
void add_sort_options(CLI::App& cmd, sort_args& args);
std::string sort_command(const std::string& program, const sort_args& args);
// Returns the process exit code: 0 when every point validated.
int run_sort_bench(const sort_args& args, const std::string& command_line);

}  // namespace sieve::bench
