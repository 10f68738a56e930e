// `sieve bench all`: every suite of the backends present, in one process, then the report.
//
// Runs the compaction grids of the three papers (Redzone's removal lists, SPACE's selections,
// Billeter's Table 3), the crossover grid `auto` is tuned from, the GPU radix sort, traversal
// Mrays/s and the render workload (compaction's share per strategy, scene and bounce), renders the
// shipped scenes, and writes everything under fixed names into bench/results/<device>/ (quick:
// .../quick/, smoke: .../smoke/), where bench/report.py turns it into report.md with plots. Prints
// its plan with the expected duration first and a line per step as it goes; each step's printed
// tables go to <step>.txt beside its JSON.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace sieve::bench {

struct all_args {
  std::string backend;  // cpu, cuda or both; empty: cuda when a GPU is present, else cpu
  bool quick = false;   // small grids, a few minutes
  bool smoke = false;   // tiny grids, seconds (CI)
  std::string out;      // the results folder; default a fresh out/bench-<device>[-quick|-smoke]-<UTC stamp> in the working directory
  std::vector<std::string> only;  // run only the steps whose names start with one of these
  bool plan_only = false;         // print the plan and stop
  bool report = true;             // run bench/report.py at the end
};

// One image for the report, rendered as `sieve render` renders it (renderer/job: render_to_files).
struct image_request {
  std::string scene, backend, png, json;
  std::uint32_t spp = 0;
  std::vector<std::string> set;  // key=value scene overrides
};

void add_all_options(CLI::App& cmd, all_args& args);
// Returns the exit code: 0 when every step ran and validated, 1 otherwise (the other steps still run).
int run_bench_all(const all_args& args, const std::string& command_line);

}  // namespace sieve::bench
