// `sieve bench trace SCENE`: rays per second through the BVH, by ray kind (primary: one ray per
// pixel centre of the camera, or --spp jittered ones; diffuse: one cosine-distributed ray from each
// primary hit; shadow: one any-hit ray from each primary hit to a light) and by traversal (DFS, BFS
// with its frontier compacted by a strategy, Embree 3 as the CPU baseline). Only traced rays count. Every
// configuration is checked against DFS, hit for hit, before it is timed. Also reports the BVH build
// rate (Mtris/s).
#pragma once

#include "../options.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace sieve::bench {

struct trace_args {
  std::string scene;
  std::string backend = "auto";  // auto: the GPU when there is one
  std::vector<std::string> set;  // key=value overrides of the scene file
  std::vector<std::string> rays = {"primary", "diffuse"};
  std::vector<std::string> traversals = {"dfs", "wide", "bfs", "embree"};
  std::vector<std::string> strategies = {"auto"};  // for BFS ("append": producer-side, no library pass)
  std::vector<std::string> bfs_loops = {"graph"};  // GPU BFS: graph (on the device) and/or host (driven by the host)
  unsigned width = 1024, height = 768;
  unsigned spp = 1;  // primary rays per pixel
  int repeats = 5;
  std::string csv, json;
};

// The options, declared once (bench/options.hpp): the parser and the command that repeats an args.
const option_schema<trace_args>& trace_options();
void add_trace_options(CLI::App& cmd, trace_args& args);
std::string trace_command(const std::string& program, const trace_args& args);
int run_trace_bench(const trace_args& args, const std::string& command_line);

}  // namespace sieve::bench
