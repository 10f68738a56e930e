// `sieve bench trace SCENE`: rays per second through the BVH, by ray kind (primary: one ray per
// pixel centre of the camera, or --spp jittered ones; diffuse: one cosine-distributed ray from each
// primary hit; shadow: one any-hit ray from each primary hit to a light) and by traversal (DFS, BFS
// with its frontier compacted by a strategy, Embree 3 as the CPU baseline). Only traced rays count. Every
// configuration is checked against DFS, hit for hit, before it is timed. Also reports the BVH build
// rate (Mtris/s).
#pragma once

#include "../options.hpp"

#include <bvh/bvh.hpp>
#include <bvh/ploc.hpp>

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace sieve::bench {

struct trace_args : scene_suite_args {
  std::vector<std::string> rays = {"primary", "diffuse"};
  std::vector<std::string> traversals = {"dfs", "wide", "bfs", "embree"};
  std::vector<std::string> strategies = {"auto"};  // for BFS ("append": producer-side, no library pass)
  std::vector<std::string> bfs_loops = {"graph"};  // GPU BFS: graph (on the device) and/or host (driven by the host)
  unsigned width = 1024, height = 768;
  unsigned spp = 1;  // primary rays per pixel
  int repeats = 5;
  unsigned threads = 0;  // CPU threads (oneTBB) for the build and the CPU traces; 0: all
  // The trees' builders, each traced in turn: sah (binned SAH, CPU), lbvh (linear: its binary tree on
  // the GPU with --backend cuda, else CPU), ploc (bvh/ploc.hpp: every layout on the GPU with --backend
  // cuda, else its CPU run).
  std::vector<std::string> builders = {"sah"};
  unsigned ploc_radius = render::ploc_default_radius;  // ploc: the clustering's search radius
  float split = 0;       // the build's split_budget (extra references per triangle); hits checked against an unsplit tree
  // The tree's build (render::bvh_build_options): SAH bins, leaf size, the binary SAH's cost of a
  // node and the collapse's cost of a wide node (0: the binary one's), in triangle tests.
  unsigned bins = render::bvh_build_options{}.bins, max_leaf = render::bvh_build_options{}.max_leaf;
  float node_cost = render::bvh_build_options{}.traversal_cost, wide_node_cost = 0.0f;
};

// The BFS traversals by name (bfs: the binary tree, wide-bfs: the 8-wide one, cw-bfs: its compressed
// layout); false for the others.
inline bool is_bfs_traversal(const std::string& t) { return t == "bfs" || t == "wide-bfs" || t == "cw-bfs"; }
// Whether a BFS traversal runs with frontier `strategy`: the tile frontier walks the compressed tree only.
inline bool bfs_runs_with(const std::string& traversal, const std::string& strategy) {
  return (strategy != "tile" && strategy != "warp-tile") || traversal == "cw-bfs";
}

// The options, declared once (bench/options.hpp): the parser and the command that repeats an args.
const option_schema<trace_args>& trace_options();
int run_trace_bench(const trace_args& args, const std::string& command_line);

// One timed configuration as the results show it.
struct trace_row {
  std::string build = "sah";  // the tree's builder
  std::string rays;       // primary, diffuse, shadow
  std::string traversal;  // dfs, wide, cwbvh, cwbvh-thread, bfs, wide-bfs, cw-bfs, embree
  std::string strategy;   // BFS: the frontier's strategy (CPU: as shown, "auto -> x"); "-" otherwise
  bool gpu = false;
  std::string bfs_loop = "-";  // GPU BFS: graph or host
  std::size_t count = 0;       // rays traced
  report::stats ms;
  double mrays = 0;       // Mrays/s over the median
  double dfs_mrays = 0;   // DFS's on the same rays (0: not measured before this row)
  double first_build_mrays = 0;  // the same rays and traversal over the first builder's tree (0: none)
  std::size_t host_syncs = 0;
  double embree_mrays = 0, embree_cpu = 0;  // CPU: Embree's Mrays/s and Mrays per CPU-second (0: not measured)
  double cpu_ms = 0, per_cpu_s = 0;         // CPU: the process's CPU time (median) and Mrays per CPU-second
  bool validated = false;
  bool counted = false;            // GPU and Embree: within the tolerance, `differing` rays counted
  std::size_t differing = 0;
  nlohmann::json profile = nullptr;  // GPU BFS: where a trace's time goes (null: none)
};
// The columns of the printed table (also the CSV) and the JSON, declared once.
report::row_schema<trace_row> trace_rows();

}  // namespace sieve::bench
