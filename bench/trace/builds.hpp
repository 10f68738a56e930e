// `sieve bench trace`'s trees: each builder's tree built (and timed) as the run asks, its summary,
// its phases and its row of the builds table.
#pragma once

#include "trace.hpp"

#include <bvh/bvh.hpp>
#include <bvh/lbvh.hpp>
#include <bvh/ploc.hpp>
#include <exec/loop_clock.hpp>
#include <scene/scene.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace sieve::bench::trace_parts {

using namespace sieve::render;

// The build options the run asks for (--bins, --max-leaf, --node-cost, --split).
bvh_build_options options_of(const trace_args& a);

// The compressed tree's work per ray (its walk on the CPU over every 16th ray): nodes visited and
// triangles tested, on average.
std::pair<double, double> cw_work_per_ray(const bvh_view& v, const std::vector<ray>& rays, bool any);

// The scene and its BVH: sizes, build rate, memory of each layout.
void print_bvh_summary(const scene& sc, const bvh& b, const trace_args& a, double build_s, double build_cpu_s,
                       const std::string& device, const std::string& backend);

// A builder's tree and what its build took.
struct built {
  bvh tree;
  double build_s = 0, build_cpu_s = 0;  // wall clock and the process's CPU time, the copies included
  lbvh_timing lbvh;
  ploc_timing ploc;
  std::vector<exec::loop_time> loops;  // ploc on the GPU: a profiled build's launches by loop, the longest first
};

// The tree the traces run over, built by `builder` (lbvh and ploc: on the GPU with the cuda backend,
// after one untimed build that loads their kernels; ploc's tree copied back from the device, byte
// for byte the one the renderer keeps there); sah with --wide-node-cost: the collapse at its own cost.
built build_tree(const trace_args& a, const std::string& builder, const scene& sc, bool gpu);

// A build's row: where its time went by phase (binary tree, 8-wide collapse, compressed encoding,
// the binary DFS's layout), where it ran, its rate and its trees' SAH costs.
struct build_row {
  std::string builder, where;
  double binary_ms = 0, collapse_ms = 0, encoding_ms = 0, layouts_ms = 0, total_ms = 0, with_copies_ms = 0;
  bool fused = false;  // the encoding is made with the collapse (ploc): its time is in collapse_ms
  double sah = 0, wide_sah = 0;
  std::vector<exec::loop_time> loops;
  nlohmann::json json;
};

build_row build_row_of(const std::string& builder, bool gpu, const scene& sc, const built& b);
void print_build_phases(const build_row& r);
// Every builder's row, their rates and SAH costs against the first's.
void print_builds(const std::vector<build_row>& builds, std::size_t triangles);
nlohmann::json builds_json(const std::vector<build_row>& builds);

// Where a build's CPU time went, phase by phase, and the same for the build of the CPU tracer's
// layout alone (no pair nodes, no GPU encoding), built three times. Printed, and returned for the
// JSON (ms of CPU per phase).
nlohmann::json build_phases(const scene& sc, const bvh& b, const trace_args& a);

}  // namespace sieve::bench::trace_parts
