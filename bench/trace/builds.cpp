#include "builds.hpp"

#include "../report_names.hpp"
#include "rays.hpp"

#include <trace/cwbvh.hpp>
#include <trace/wide.hpp>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_reduce.h>

#include <algorithm>
#include <chrono>
#include <iostream>

namespace sieve::bench::trace_parts {

// The build options the run asks for (--bins, --max-leaf, --node-cost, --split).
bvh_build_options options_of(const trace_args& a) {
  bvh_build_options o;
  o.bins = a.bins, o.max_leaf = a.max_leaf, o.traversal_cost = a.node_cost, o.split_budget = a.split;
  return o;
}

// The compressed tree's work per ray (its walk on the CPU over every 16th ray): nodes visited and
// triangles tested, on average.
std::pair<double, double> cw_work_per_ray(const bvh_view& v, const std::vector<ray>& rays, bool any) {
  const cw_view c = cw_of(v);
  const std::size_t stride = 16, n = (rays.size() + stride - 1) / stride;
  const auto sum = tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, n), cw_counter{},
      [&](const tbb::blocked_range<std::size_t>& r, cw_counter acc) {
        for (std::size_t i = r.begin(); i != r.end(); ++i) {
          const cw_counter w = any ? cw_count<true>(c, rays[i * stride]) : cw_count<false>(c, rays[i * stride]);
          acc.nodes += w.nodes, acc.triangles += w.triangles;
        }
        return acc;
      },
      [](cw_counter x, const cw_counter& y) {
        x.nodes += y.nodes, x.triangles += y.triangles;
        return x;
      });
  const double count = n ? static_cast<double>(n) : 1.0;
  return {static_cast<double>(sum.nodes) / count, static_cast<double>(sum.triangles) / count};
}

// The scene and its BVH: sizes, build rate, memory of each layout.
void print_bvh_summary(const scene& sc, const bvh& b, const trace_args& a, double build_s, double build_cpu_s,
                       const std::string& device, const std::string& backend) {
  const double mb = 1.0 / (1 << 20);
  const double node_mb = static_cast<double>(b.binary.nodes.size() * sizeof(bvh_node)) * mb;
  const double pair_mb = static_cast<double>(b.pairs.nodes.size() * sizeof(pair_node)) * mb;
  const double leaf_mb = static_cast<double>(b.pairs.triangles.size() * sizeof(leaf_triangle) + b.binary.prims.size() * 4) * mb;
  std::cout << "device: " << device << " (" << backend << ")\n";
  std::cout << "scene " << sc.name << ": " << sc.triangles.size() << " triangles, " << b.stats.references
            << " references; BVH " << b.binary.nodes.size()
            << " nodes, depth " << b.stats.max_depth << ", built in " << fixed(build_s * 1e3, 1) << " ms ("
            << fixed(static_cast<double>(sc.triangles.size()) / build_s / 1e6, 2) << " Mtris/s; "
            << fixed(static_cast<double>(sc.triangles.size()) / build_cpu_s / 1e6, 2) << " Mtris per CPU-second, "
            << tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism) << " threads); SAH cost "
            << fixed(sah_cost(b.binary), 2) << "; memory: binary nodes "
            << fixed(node_mb, 1) << " MiB, pair nodes " << fixed(pair_mb, 1) << " MiB (DFS, BFS), leaf triangles "
            << fixed(leaf_mb, 1) << " MiB\n";
  const double wide_mb = static_cast<double>(b.wide.nodes.size() * sizeof(wide_node)) * mb;
  const double wide_leaf_mb = static_cast<double>(b.wide.triangles.size() * sizeof(leaf_triangle) + b.wide.prims.size() * 4) * mb;
  std::cout << "wide BVH: " << b.wide.nodes.size() << " nodes of " << sizeof(wide_node) << " bytes (" << fixed(wide_mb, 1)
            << " MiB), depth " << b.wide.depth << ", collapsed in " << fixed(b.wide.seconds * 1e3, 1)
            << " ms (part of the build above), SAH cost " << fixed(sah_cost(b.wide), 2) << "; its leaf triangles " << fixed(wide_leaf_mb, 1)
            << " MiB (" << b.wide.prims.size() << " slots, padded to whole blocks), in the CPU's blocks of eight "
            << fixed(static_cast<double>(b.wide.blocks.size() * sizeof(leaf_block)) * mb, 1) << " MiB; CPU box tests: "
            << (cpu_has_avx2() ? "AVX2" : "portable") << "\n";
  const double cw_mb = static_cast<double>(b.cw.nodes.size() * sizeof(cw_node)) * mb;
  const double cw_tri_mb = static_cast<double>(b.cw.triangles.size() * sizeof(cw_triangle)) * mb;
  std::cout << "build: " << a.bins << " SAH bins, leaves split above " << a.max_leaf << " triangles, node cost "
            << a.node_cost << ", wide node cost " << (a.wide_node_cost > 0 ? a.wide_node_cost : a.node_cost)
            << " (in triangle tests; the SAH costs above count a node as 1)\n";
  std::cout << "compressed wide BVH (cwbvh): " << b.cw.nodes.size() << " nodes (" << fixed(cw_mb, 1) << " MiB), depth "
            << b.cw.depth << ", encoded in " << fixed(b.cw.seconds * 1e3, 1) << " ms (part of the build above); its triangles "
            << fixed(cw_tri_mb, 1) << " MiB (vertex and edges)\n";
}


// The tree the traces run over, built by `builder` (lbvh and ploc: on the GPU with the cuda backend,
// after one untimed build that loads their kernels; ploc's tree copied back from the device, byte
// for byte the one the renderer keeps there); sah with --wide-node-cost: the collapse at its own cost.
built build_tree(const trace_args& a, const std::string& builder, const scene& sc, bool gpu) {
  bvh_build_options options = options_of(a);
  if (gpu && builder == "lbvh") (void)build_lbvh(sc.triangles, {}, lbvh_device::cuda);
  if (gpu && builder == "ploc" && sc.triangles.size() > 1) (void)device_tree(sc.triangles, options, nullptr, a.ploc_radius);
  built out;
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = process_cpu_seconds();
  if (builder == "lbvh") {
    out.tree = build_lbvh(sc.triangles, {}, gpu ? lbvh_device::cuda : lbvh_device::cpu, &out.lbvh);
  } else if (builder == "ploc") {
    out.tree = build_ploc(sc.triangles, options, gpu ? lbvh_device::cuda : lbvh_device::cpu, &out.ploc, a.ploc_radius);
  } else {
    const float wide_cost = a.wide_node_cost > 0 ? a.wide_node_cost : a.node_cost;
    const bool own_collapse = wide_cost != a.node_cost;
    options.wide = !own_collapse;
    out.tree = build_bvh(sc.triangles, options);
    if (own_collapse) {
      out.tree.wide = collapse_wide(out.tree.binary, sc.triangles, wide_cost);
      out.tree.cw = encode_cw(out.tree.wide);
    }
  }
  out.build_s = seconds_since(t0), out.build_cpu_s = process_cpu_seconds() - c0;
  if (gpu && builder == "ploc" && sc.triangles.size() > 1) {  // once more, every launch timed: where the time goes
    ploc_timing p;
    p.profile = true;
    (void)device_tree(sc.triangles, options, &p, a.ploc_radius);
    out.loops = std::move(p.loops);
    std::sort(out.loops.begin(), out.loops.end(), [](const exec::loop_time& x, const exec::loop_time& y) { return x.ms > y.ms; });
  }
  return out;
}


build_row build_row_of(const std::string& builder, bool gpu, const scene& sc, const built& b) {
  build_row r;
  r.builder = builder;
  const bvh_phases& cpu = b.tree.stats.cpu;
  if (builder == "ploc") {
    r.where = gpu ? "GPU (CUDA events)" : "CPU (wall clock)";
    r.binary_ms = b.ploc.morton_ms + b.ploc.binary_ms, r.collapse_ms = b.ploc.collapse_ms, r.fused = true;
    r.layouts_ms = b.ploc.layout_ms, r.total_ms = b.ploc.device_ms, r.with_copies_ms = b.ploc.with_copies_ms;
  } else if (builder == "lbvh") {
    r.where = gpu ? "binary tree on the GPU, the rest on the host" : "CPU";
    r.binary_ms = b.lbvh.device_ms, r.collapse_ms = cpu.collapse * 1e3, r.encoding_ms = cpu.cw * 1e3, r.layouts_ms = cpu.pairs * 1e3;
    r.total_ms = b.build_s * 1e3, r.with_copies_ms = b.build_s * 1e3;
  } else {
    r.where = "CPU (phases in CPU seconds, total wall clock)";
    r.binary_ms = (cpu.refs + cpu.binary) * 1e3, r.collapse_ms = cpu.collapse * 1e3, r.encoding_ms = cpu.cw * 1e3;
    r.layouts_ms = cpu.pairs * 1e3, r.total_ms = b.build_s * 1e3, r.with_copies_ms = b.build_s * 1e3;
  }
  r.sah = sah_cost(b.tree.binary), r.wide_sah = sah_cost(b.tree.wide);
  r.loops = b.loops;
  const double n = static_cast<double>(sc.triangles.size());
  const bvh& t = b.tree;
  r.json = {{"builder", builder}, {"where", r.where}, {"binary_ms", r.binary_ms}, {"collapse_ms", r.collapse_ms},
            {"encoding_ms", r.fused ? nlohmann::json("with the collapse") : nlohmann::json(r.encoding_ms)},
            {"layouts_ms", r.layouts_ms}, {"total_ms", r.total_ms}, {"with_copies_ms", r.with_copies_ms},
            {"mtris_per_s", r.total_ms > 0 ? n / r.total_ms / 1e3 : 0}, {"wall_ms", b.build_s * 1e3},
            {"build_cpu_ms", b.build_cpu_s * 1e3}, {"rounds", b.ploc.rounds},
            {"nodes", t.binary.nodes.size()}, {"depth", t.stats.max_depth}, {"references", t.stats.references},
            {"node_bytes", t.binary.nodes.size() * sizeof(bvh_node)}, {"pair_bytes", t.pairs.nodes.size() * sizeof(pair_node)},
            {"wide_nodes", t.wide.nodes.size()}, {"wide_bytes", t.wide.nodes.size() * sizeof(wide_node)},
            {"wide_depth", t.wide.depth}, {"cw_nodes", t.cw.nodes.size()}, {"sah_cost", r.sah}, {"wide_sah_cost", r.wide_sah}};
  r.json["profiled_loops"] = nlohmann::json::array();
  for (const exec::loop_time& l : r.loops)
    r.json["profiled_loops"].push_back({{"name", l.name}, {"launches", l.launches}, {"items", l.items}, {"ms", l.ms}});
  return r;
}

void print_build_phases(const build_row& r) {
  std::cout << r.builder << " build on the " << r.where << ": binary tree " << fixed(r.binary_ms, 2) << " ms, 8-wide collapse "
            << fixed(r.collapse_ms, 2) << " ms, compressed encoding "
            << (r.fused ? std::string("(made with the collapse)") : fixed(r.encoding_ms, 2) + " ms") << ", binary DFS layout "
            << fixed(r.layouts_ms, 2) << " ms; " << fixed(r.total_ms, 2) << " ms in all, " << fixed(r.with_copies_ms, 2)
            << " ms with the copies; SAH cost " << fixed(r.sah, 2) << " (8-wide " << fixed(r.wide_sah, 2) << ")\n";
  if (r.loops.empty()) return;
  double all = 0;
  for (const exec::loop_time& l : r.loops) all += l.ms;
  std::cout << "  a profiled build (every launch between CUDA events, " << fixed(all, 2) << " ms in them), by loop: launches, items, ms\n";
  for (const exec::loop_time& l : r.loops)
    std::cout << "    " << l.name << ": " << l.launches << ", " << l.items << ", " << fixed(l.ms, 3) << "\n";
}

// Every builder's row, their rates and SAH costs against the first's.
void print_builds(const std::vector<build_row>& builds, std::size_t triangles) {
  if (builds.empty()) return;
  const double n = static_cast<double>(triangles);
  std::cout << "\nbuilds (" << triangles << " triangles): builder, binary ms, collapse ms, encoding ms, layouts ms, total ms, "
               "Mtris/s (total), Mtris/s (with copies), SAH cost, x first, 8-wide SAH cost, x first\n";
  for (const build_row& r : builds)
    std::cout << "  " << r.builder << " | " << fixed(r.binary_ms, 2) << " | " << fixed(r.collapse_ms, 2) << " | "
              << (r.fused ? std::string("fused") : fixed(r.encoding_ms, 2)) << " | " << fixed(r.layouts_ms, 2) << " | "
              << fixed(r.total_ms, 2) << " | " << fixed(n / r.total_ms / 1e3, 1) << " | " << fixed(n / r.with_copies_ms / 1e3, 1)
              << " | " << fixed(r.sah, 2) << " | " << fixed(r.sah / builds.front().sah, 3) << " | " << fixed(r.wide_sah, 2) << " | "
              << fixed(r.wide_sah / builds.front().wide_sah, 3) << "   (" << r.where << ")\n";
}

nlohmann::json builds_json(const std::vector<build_row>& builds) {
  nlohmann::json out = nlohmann::json::array();
  for (const build_row& r : builds) out.push_back(r.json);
  return out;
}

// Where a build's CPU time went, phase by phase, and the same for the build of the CPU tracer's
// layout alone (no pair nodes, no GPU encoding), built here three times: the first build writes
// memory the process never had (a page fault a page), later ones may reuse what the allocator kept.
// The run's tree options (--bins, --max-leaf, --node-cost, --split). Printed, and returned for the JSON
// (ms of CPU per phase).
nlohmann::json build_phases(const scene& sc, const bvh& b, const trace_args& a) {
  const double tris = static_cast<double>(sc.triangles.size());
  nlohmann::json out;
  auto report = [&](const std::string& key, const std::string& what, const bvh_phases& p) {
    std::cout << what << ": " << fixed(tris / p.total() / 1e6, 2) << " Mtris per CPU-second (" << fixed(p.total() * 1e3, 1)
              << " ms: references " << fixed(p.refs * 1e3, 1) << ", binary tree " << fixed(p.binary * 1e3, 1)
              << ", pair nodes and leaf triangles " << fixed(p.pairs * 1e3, 1) << ", 8-wide collapse " << fixed(p.collapse * 1e3, 1)
              << ", GPU encoding " << fixed(p.cw * 1e3, 1) << ")\n";
    out[key] = {{"references", p.refs * 1e3}, {"binary", p.binary * 1e3},   {"pairs", p.pairs * 1e3},
                {"collapse", p.collapse * 1e3}, {"cw", p.cw * 1e3},         {"total", p.total() * 1e3},
                {"mtris_per_cpu_s", tris / p.total() / 1e6}};
  };
  report("every_layout", "build, every layout", b.stats.cpu);
  bvh_phases first, best;
  double sah = 0, wide_sah = 0;
  bvh_build_options options = options_of(a);
  options.pairs = false, options.cw = false;  // the CPU tracer's layout alone, as cpu_wide_only()
  for (int i = 0; i < 3; ++i) {
    const bvh cpu_only = build_bvh(sc.triangles, options);
    if (i == 0) first = best = cpu_only.stats.cpu, sah = sah_cost(cpu_only.binary), wide_sah = sah_cost(cpu_only.wide);
    else if (cpu_only.stats.cpu.total() < best.total()) best = cpu_only.stats.cpu;
  }
  report("cpu_tracer_first", "build for the CPU tracer (the 8-wide tree alone), first of 3", first);
  report("cpu_tracer_fastest", "build for the CPU tracer, fastest of 3", best);
  std::cout << "  its SAH cost: binary " << fixed(sah, 2) << ", wide " << fixed(wide_sah, 2) << "\n";
  return out;
}

}  // namespace sieve::bench::trace_parts
