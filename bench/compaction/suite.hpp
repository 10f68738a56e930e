// `sieve bench compaction`: a grid over n, fraction, distribution, type, form and strategy; every
// point validated against a reference before it is timed; a table on stdout, CSV and JSON on request.
#pragma once

#include "../options.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace sieve::bench {

struct compaction_args : report::result_files {
  std::string backend = "auto";  // auto: the GPU when there is one
  std::vector<std::string> suites;  // redzone, select (default: both)
  std::vector<std::string> strategies, types, forms, distributions;
  std::vector<std::size_t> n;
  std::vector<double> fractions;
  bool quick = false;
  int repeats = 0;  // 0: the suite's default
  std::uint64_t seed = 1;
  std::string crossover;  // write the measured crossover table (what `auto` reads) here
  bool graph = false;     // CUDA: counts on the device, each call timed as CUDA-graph replays
  bool checked = false;   // time the calls in checked mode (removal lists validated first)
};

// The options, declared once (bench/options.hpp): the subcommand's parser, and the command line
// that repeats a filled args (`sieve bench all` records it).
const option_schema<compaction_args>& compaction_options();
// Returns the process exit code: 0 when every point validated.
int run_compaction_bench(const compaction_args& args, const std::string& command_line);

}  // namespace sieve::bench
