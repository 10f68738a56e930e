#include "trace.hpp"

#include "../report_names.hpp"
#include "builds.hpp"
#include "embree.hpp"
#include "rays.hpp"

#include <trace/bfs.hpp>
#include <trace/dfs.hpp>
#include "trace_cuda.hpp"
#include <trace/tracers.hpp>
#include <trace/wide.hpp>
#include <trace/cwbvh.hpp>
#include <bvh/lbvh.hpp>
#include <bvh/ploc.hpp>
#include <core/camera.hpp>
#include <core/lights.hpp>
#include <output_files.hpp>
#include <rows.hpp>
#include <core/rng.hpp>
#include <core/sampling.hpp>
#include <scene/load.hpp>

#include <sieve/compaction/backend.hpp>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_reduce.h>

#include <algorithm>
#include <optional>
#include <array>
#include <chrono>
#include <cmath>
#include <ctime>
#include <iostream>
#include <limits>
#include <map>

namespace sieve::bench {

using namespace trace_parts;

// The table (which is also the CSV) shortens: GPU rows 3 decimals for ms and 1 for Mrays/s, CPU rows
// 2; "-" where a ratio has no base. The JSON has the numbers, and leaves out the keys that mean
// nothing for the row's backend (Embree and CPU time for the GPU; the loop and the differing rays'
// count for the CPU).
row_schema<trace_row> trace_rows() {
  using col = field<trace_row>;
  using row = trace_row;
  // The same text in the table and the CSV, the number in the JSON.
  const auto number = [](double x, int digits) { return cell{fixed(x, digits), fixed(x, digits), x}; };
  // A CPU-only column: "-" and no JSON key on GPU rows.
  const auto cpu_only = [](const row& r, cell c) { return r.gpu ? cell{"-", "-", omitted()} : c; };
  // x over Embree's (CPU): "-" without Embree, 0 in the JSON.
  const auto versus_embree = [](double x, double embree) {
    const std::string text = embree > 0 ? fixed(x / embree, 2) : "-";
    return cell{text, text, embree > 0 ? x / embree : 0.0};
  };
  return row_schema<row>(std::vector<col>{
      {"build", "build", "build", [](const row& r) { return text_cell(r.build); }},
      {"rays", "rays", "rays", [](const row& r) { return text_cell(r.rays); }},
      {"traversal", "traversal", "traversal",
       [](const row& r) {
         const std::string shown = r.gpu ? r.traversal + (r.bfs_loop == "-" ? "" : " " + r.bfs_loop) + " (cuda)" : r.traversal;
         return cell{shown, shown, r.traversal};
       }},
      {"strategy", "strategy", "strategy", [](const row& r) { return text_cell(r.strategy); }},
      {"", "", "backend", [](const row& r) { return cell{"", "", r.gpu ? nlohmann::json("cuda") : omitted()}; }},
      {"count", "count", "count", [](const row& r) { return count_cell(r.count); }},
      {"ms_median", "ms_median", "ms_median", [=](const row& r) { return number(r.ms.median, r.gpu ? 3 : 2); }},
      {"ms_min", "ms_min", "ms_min", [=](const row& r) { return number(r.ms.min, r.gpu ? 3 : 2); }},
      {"ms_max", "ms_max", "ms_max", [=](const row& r) { return number(r.ms.max, r.gpu ? 3 : 2); }},
      {"Mrays/s", "Mrays/s", "mrays_per_s", [=](const row& r) { return number(r.mrays, r.gpu ? 1 : 2); }},
      {"x_dfs", "x_dfs", "vs_dfs",
       [](const row& r) {
         const std::string text = r.dfs_mrays > 0 && r.mrays > 0 ? fixed(r.mrays / r.dfs_mrays, 2) : "-";
         return cell{text, text, r.dfs_mrays > 0 ? r.mrays / r.dfs_mrays : 0.0};
       }},
      {"x_build0", "x_build0", "vs_first_build",
       [](const row& r) {
         const std::string text = r.first_build_mrays > 0 && r.mrays > 0 ? fixed(r.mrays / r.first_build_mrays, 3) : "-";
         return cell{text, text, r.first_build_mrays > 0 ? r.mrays / r.first_build_mrays : 0.0};
       }},
      {"", "", "bfs_loop", [](const row& r) { return cell{"", "", r.gpu ? nlohmann::json(r.bfs_loop) : omitted()}; }},
      {"syncs", "syncs", "host_syncs", [](const row& r) { return count_cell(r.host_syncs); }},
      {"x_embree", "x_embree", "versus_embree",
       [=](const row& r) { return cpu_only(r, versus_embree(r.mrays, r.embree_mrays)); }},
      {"", "", "cpu_ms_median", [=](const row& r) { return cpu_only(r, {"", "", r.cpu_ms}); }},
      {"Mrays/cpu-s", "Mrays/cpu-s", "mrays_per_cpu_s", [=](const row& r) { return cpu_only(r, number(r.per_cpu_s, 2)); }},
      {"x_embree_cpu", "x_embree_cpu", "versus_embree_cpu",
       [=](const row& r) { return cpu_only(r, versus_embree(r.per_cpu_s, r.embree_cpu)); }},
      {"validated", "validated", "validated",
       [](const row& r) {
         const std::string text = !r.validated ? "NO" : r.counted ? "yes (" + std::to_string(r.differing) + " differ)" : "yes";
         return cell{text, text, r.validated};
       }},
      {"", "", "differing_rays", [](const row& r) { return cell{"", "", r.gpu ? nlohmann::json(r.differing) : omitted()}; }},
      {"", "", "profile", [](const row& r) { return cell{"", "", r.profile.is_null() ? omitted() : r.profile}; }}});
}

const option_schema<trace_args>& trace_options() {
  using A = trace_args;
  static const option_schema<A> schema = [] {
    option_schema<A> o("bench trace");
    o.scene();
    o.option(&A::rays, "--rays", "primary, diffuse, shadow (comma-separated; shadow: any hit)",
             [](CLI::Option* x) { x->check(CLI::IsMember({"primary", "diffuse", "shadow"})); });
    o.option(&A::traversals, "--traversal",
             "dfs, wide, wide-avx512, cwbvh, cwbvh-thread, bfs, wide-bfs, cw-bfs, embree (comma-separated; wide: DFS over "
             "the 8-wide tree; wide-avx512: the same with AVX-512 (CPU only); cwbvh: over its compressed GPU layout by persistent warps with dynamic ray fetch, cwbvh-thread: one ray "
             "a thread (the same on the CPU); wide-bfs: BFS over the 8-wide tree; cw-bfs: BFS over the compressed one; "
             "embree: CPU only, when built with it)",
             [](CLI::Option* x) {
               x->check(CLI::IsMember({"dfs", "wide", "wide-avx512", "cwbvh", "cwbvh-thread", "bfs", "wide-bfs", "cw-bfs", "embree"}));
             });
    o.option(&A::strategies, "--strategy",
             "compaction strategies for the BFS frontier, or append (producer-side, no pass), or tile / warp-tile (GPU, "
             "cw-bfs: a block's or a warp's rays and pairs in shared memory) (comma-separated)");
    o.option(&A::bfs_loops, "--bfs-loop", "GPU BFS level loop: graph (on the device), host (one sync a step) (comma-separated)",
             [](CLI::Option* x) { x->check(CLI::IsMember({"graph", "host"})); });
    o.option(&A::width, "--width", "camera width in pixels", [](CLI::Option* x) { x->check(CLI::Range(1U, 16384U)); });
    o.option(&A::height, "--height", "camera height in pixels", [](CLI::Option* x) { x->check(CLI::Range(1U, 16384U)); });
    o.option(&A::spp, "--spp", "primary rays per pixel (1: the pixel centre; more: jittered)",
             [](CLI::Option* x) { x->check(CLI::Range(1U, 256U)); });
    o.option(&A::repeats, "--repeats", "timed runs per configuration (median reported)",
             [](CLI::Option* x) { x->check(CLI::Range(1, 1000)); });
    o.option(&A::threads, "--threads", "CPU threads (oneTBB) for the build and the CPU traces; 0: all (1: the per-core rates)",
             [](CLI::Option* x) { x->check(CLI::Range(0U, 4096U)); });
    o.option(&A::builders, "--build",
             "the trees' builders, each traced (comma-separated): sah (binned SAH on the CPU), lbvh (linear BVH from "
             "Morton codes: its binary tree on the GPU with --backend cuda, the rest on the host), ploc (clustering, the "
             "8-wide collapse and the compressed encoding all on the GPU with --backend cuda; else its CPU run); "
             "x_build0 = Mrays/s over the first builder's tree on the same rays",
             [](CLI::Option* x) { x->check(CLI::IsMember({"sah", "lbvh", "ploc"})); });
    o.option(&A::ploc_radius, "--ploc-radius", "ploc: the clusters each cluster searches for its nearest on either side",
             [](CLI::Option* x) { x->check(CLI::Range(1U, 256U)); });
    o.option(&A::split, "--split",
             "split large triangles into references before the build, this many extra references per triangle "
             "(0: none); every traversal is then checked against the binary DFS of the unsplit tree",
             [](CLI::Option* x) { x->check(CLI::Range(0.0f, 4.0f)); });
    o.option(&A::bins, "--bins", "SAH bins per axis of the binned build", [](CLI::Option* x) { x->check(CLI::Range(2U, 32U)); });
    o.option(&A::max_leaf, "--max-leaf", "the build splits any node of more triangles (unless their centroids coincide)",
             [](CLI::Option* x) { x->check(CLI::Range(1U, 31U)); });
    o.option(&A::node_cost, "--node-cost", "the binary SAH's cost of visiting a node, in triangle tests",
             [](CLI::Option* x) { x->check(CLI::Range(0.01f, 100.0f)); });
    o.option(&A::wide_node_cost, "--wide-node-cost",
             "the collapse's cost of visiting an 8-wide node, in triangle tests (0: --node-cost)",
             [](CLI::Option* x) { x->check(CLI::Range(0.0f, 100.0f)); });
    o.outputs();
    return o;
  }();
  return schema;
}

namespace {
// One GPU trace of `rays`, validated against the CPU's DFS hits and timed; dfs_mrays is the DFS
// rate of this ray kind so far (set when this is the DFS), profiles gathers the BFS's breakdowns.
trace_row gpu_row(const bvh& b, const scene& sc, const std::vector<ray>& rays, const std::vector<hit>& reference,
                  const std::string& kind, const traversal& t, const std::string& strategy,
                  const std::string& loop, const trace_args& a, double& dfs_mrays, std::vector<std::string>& profiles) {
  const bool any = kind == "shadow";
  const bool breadth = t.breadth_first();
  const std::string traversal(to_string(t));
  const gpu_trace g = trace_cuda(b, sc.triangles, rays, t, strategy, a.repeats,
                                 loop == "host" ? bfs_tracer_cuda::loop::host : bfs_tracer_cuda::loop::graph, any);
  const std::size_t bad = gpu_mismatches(g.hits, reference, rays, sc);
  const bool ok = bad * 10000 <= rays.size();  // at most 1 in 10^4 rays may part at an edge
  if (!ok) {
    std::cerr << "sieve bench trace: cuda " << kind << ": " << bad << " of " << rays.size()
              << " rays differ from the CPU's DFS\n";
  }
  trace_row row{.rays = kind, .traversal = traversal, .strategy = strategy, .gpu = true, .bfs_loop = loop,
                .count = rays.size(), .ms = summarize(ok ? g.ms : std::vector<double>{})};
  row.mrays = row.ms.median > 0 ? static_cast<double>(rays.size()) / (row.ms.median * 1e3) : 0;
  if (t == dfs_baseline) dfs_mrays = row.mrays;
  row.dfs_mrays = dfs_mrays;
  row.host_syncs = g.host_syncs;
  row.validated = row.counted = ok;
  row.differing = bad;
  if (breadth) {
    const bfs_stats& p = g.profile;
    const double per_ray = rays.empty() ? 0 : static_cast<double>(p.pairs) / static_cast<double>(rays.size());
    const bool tile = strategy == bfs_tile || strategy == bfs_warp_tile;
    if (loop == a.bfs_loops.front()) {  // the profile runs the same whatever the loop: once a strategy
      if (tile)
        profiles.push_back(kind + " " + traversal + " " + strategy + ": one launch, " + std::to_string(p.tile.tiles) +
                           " tiles, " + std::to_string(p.tile.steps) + " steps (" +
                           fixed(static_cast<double>(p.tile.pairs) / static_cast<double>(std::max(p.tile.steps, 1ULL)), 1) +
                           " pairs a step), " + fixed(per_ray, 2) + " pairs per ray, " + std::to_string(p.tile.handed) +
                           " pairs handed to a thread's depth-first walk");
      else
        profiles.push_back(kind + " " + traversal + " " + strategy + ": " + std::to_string(p.levels.size()) +
                           " steps, expand " + fixed(p.expand_ms, 3) + " ms, compaction " + fixed(p.compact_ms, 3) +
                           " ms, host-driven total " + fixed(p.total_ms, 3) + " ms, peak " + std::to_string(p.peak_pairs) +
                           " pairs, " + fixed(per_ray, 2) + " pairs per ray");
    }
    row.profile = {{"steps", tile ? p.tile.steps : p.levels.size()}, {"expand_ms", p.expand_ms}, {"compact_ms", p.compact_ms},
                   {"host_loop_total_ms", p.total_ms}, {"peak_pairs", p.peak_pairs}, {"pairs_per_ray", per_ray}};
    if (tile) row.profile["handed"] = p.tile.handed;
  }
  return row;
}

// What the table's columns and rays mean, under it.
void print_trace_notes(const trace_args& a, bool gpu) {
  std::cout << "\nrays: primary = " << a.spp << " per pixel of a " << a.width << " x " << a.height
            << " camera (" << (a.spp == 1 ? "pixel centres" : "jittered")
            << "); diffuse = one cosine ray from each primary hit; shadow = one ray from each primary hit to a "
               "point on a light, any hit. Mrays/s = count / ms_median; "
            << (gpu ? "GPU: the traversal alone (CUDA events, rays on the device), median of "
                    : "CPU (all threads; Embree traces the same rays one by one, rtcIntersect1 / rtcOccluded1, on "
                      "the same threads, so x_embree is also the per-thread ratio; Mrays/cpu-s = count / the process's "
                      "CPU time, median: the per-thread rate, not diluted when other work shares the cores), median of ")
            << a.repeats << " runs. x_dfs = Mrays/s over DFS's on the same rays; syncs = host synchronisations "
            << "inside one trace (GPU BFS: graph = the level loop on the device, one at the end; host = one a step). "
            << "Every configuration matched the CPU's DFS" << (a.split > 0 ? " over the tree without splits" : "")
            << " before timing"
            << (gpu ? " (GPU: t within 1e-5 relative, the same primitive; at most 1 ray in 10^4 may differ).\n"
                    : ", hit for hit (Embree: t within 1e-4 relative, at most 1 ray in 10^4 may differ).\n");
}

// One CPU trace of `rays` (DFS, wide DFS, BFS with `strategy`, or Embree), checked against the DFS
// hits and timed; the DFS and Embree rates of this ray kind so far are kept for the ratios.
trace_row cpu_row(const bvh_view& v, const embree_scene* embree, const scene& sc, const std::vector<ray>& rays,
                  const std::vector<hit>& reference, const std::string& kind, const trace_method& m,
                  const std::string& strategy, const trace_args& a, double& dfs_mrays, double& embree_mrays,
                  double& embree_cpu) {
  const bool any = kind == "shadow";
  const std::string traversal = m.name();
  std::vector<hit> got(rays.size());
  std::unique_ptr<bfs_tracer> bfs;
  if (m.breadth_first()) bfs = std::make_unique<bfs_tracer>(strategy, m.sieve->tree);
  auto run = [&] {
    if (bfs) bfs->closest(v, rays, got);
    else if (m.embree()) got = trace_embree(*embree, rays, any);
    else got = trace_with(v, *m.sieve, rays, any);  // cwbvh and cwbvh-thread: one code on the CPU, a ray to its end
  };
  run();
  std::string diff;
  std::size_t bad = 0;
  if (m.embree()) {
    bad = gpu_mismatches(got, reference, rays, sc, 1e-4f);
    if (bad * 10000 > rays.size())
      diff = std::to_string(bad) + " of " + std::to_string(rays.size()) + " rays differ";
  } else {
    diff = first_difference(got, reference);
  }
  std::vector<double> ms, cpu_ms;
  if (diff.empty()) {
    for (int r = 0; r < a.repeats; ++r) {
      const auto s0 = std::chrono::steady_clock::now();
      const double c0 = process_cpu_seconds();
      run();
      cpu_ms.push_back((process_cpu_seconds() - c0) * 1e3);
      ms.push_back(seconds_since(s0) * 1e3);
    }
  } else {
    std::cerr << "sieve bench trace: " << kind << " " << traversal << " " << strategy << " differs from DFS: " << diff << "\n";
  }
  const std::string shown = bfs ? strategy_shown(strategy, {std::string(bfs->resolved_strategy(rays.size()))}) : strategy;
  trace_row row{.rays = kind, .traversal = traversal, .strategy = shown, .count = rays.size(), .ms = summarize(ms)};
  row.mrays = row.ms.median > 0 ? static_cast<double>(rays.size()) / (row.ms.median * 1e3) : 0;
  row.cpu_ms = summarize(cpu_ms).median;
  row.per_cpu_s = row.cpu_ms > 0 ? static_cast<double>(rays.size()) / (row.cpu_ms * 1e3) : 0;
  if (m.sieve == dfs_baseline) dfs_mrays = row.mrays;
  if (m.embree()) embree_mrays = row.mrays, embree_cpu = row.per_cpu_s;
  row.dfs_mrays = dfs_mrays;
  row.embree_mrays = embree_mrays;
  row.embree_cpu = embree_cpu;
  row.validated = diff.empty();
  row.counted = m.embree();
  row.differing = bad;
  return row;
}

// Every ray kind and traversal over one builder's tree: its rows added (named after the builder, with
// the first builder's rate on the same rays), the compressed tree's work per ray into `work`; returns
// the number of rows that failed their validation.
struct trace_context {
  const trace_args& a;
  const scene& sc;
  bool gpu;
  const std::vector<trace_method>& traversals;
  row_schema<trace_row>& rows;
  std::vector<std::string>& profiles;           // GPU BFS: where a trace's time goes
  std::map<std::string, double>& first_build;   // (rays, traversal, strategy, loop) -> Mrays/s over the first tree
  nlohmann::json& work;
};

int trace_tree(trace_context& c, const std::string& builder, const bvh& tree, const bvh_view& v, const bvh_view& reference_view,
               const embree_scene* embree) {
  const trace_args& a = c.a;
  const scene& sc = c.sc;
  const bool gpu = c.gpu;
  int failed = 0;
  const std::vector<ray> primary = primary_rays(sc, a.width, a.height, a.spp);
  const std::vector<hit> primary_hits = trace_dfs(reference_view, primary);
  // BFS and the wide DFS against DFS on the same rays in the same run (DFS runs first when asked for).
  double dfs_mrays = 0;
  for (const auto& kind : a.rays) {
    const bool any = kind == "shadow";
    const std::vector<ray> rays = kind == "primary" ? primary
                                  : any             ? shadow_rays(sc, primary, primary_hits)
                                                    : diffuse_rays(sc, primary, primary_hits);
    const std::vector<hit> reference = kind == "primary" ? primary_hits
                                       : any             ? trace_dfs_any(reference_view, rays)
                                                         : trace_dfs(reference_view, rays);
    const auto [cw_nodes, cw_tris] = cw_work_per_ray(v, rays, any);
    std::cout << kind << " rays, the compressed tree's work per ray (every 16th ray): " << fixed(cw_nodes, 2) << " nodes, "
              << fixed(cw_tris, 2) << " triangle tests\n";
    c.work[builder][kind] = {{"cw_nodes_per_ray", cw_nodes}, {"cw_triangles_per_ray", cw_tris}};
    dfs_mrays = 0;
    double embree_mrays = 0, embree_cpu = 0;  // of this ray kind, when Embree ran
    for (const trace_method& m : c.traversals) {
      const bool breadth = m.breadth_first();
      if (any && breadth) continue;  // the BFS traversal finds closest hits only
      std::vector<std::pair<std::string, std::string>> runs;  // (strategy, GPU BFS loop)
      for (const auto& s : breadth ? a.strategies : std::vector<std::string>{"-"})
        if (s == "-" || bfs_runs_with(*m.sieve, s))
          for (const auto& l : gpu && breadth ? a.bfs_loops : std::vector<std::string>{"-"}) runs.emplace_back(s, l);
      for (const auto& [strategy, loop] : runs) {
        trace_row row = gpu ? gpu_row(tree, sc, rays, reference, kind, *m.sieve, strategy, loop, a, dfs_mrays, c.profiles)
                            : cpu_row(v, embree, sc, rays, reference, kind, m, strategy, a, dfs_mrays,
                                      embree_mrays, embree_cpu);
        row.build = builder;
        const std::string key = kind + " " + m.name() + " " + strategy + " " + loop;
        if (builder == a.builders.front()) c.first_build[key] = row.mrays;
        row.first_build_mrays = c.first_build[key];
        if (!row.validated) ++failed;
        c.rows.add(row);
      }
    }
  }
  return failed;
}

}  // namespace

int run_trace_bench(const trace_args& a, const std::string& command_line) {
  output_set outputs;  // checked before any work
  a.add_files_to(outputs);
  const bool gpu = resolve_backend(a.backend) == sieve::backend::cuda;
  const std::string backend(sieve::to_string(gpu ? sieve::backend::cuda : sieve::backend::cpu));  // for the reports
  if (std::uint64_t{a.width} * a.height * a.spp >= (std::uint64_t{1} << 31))
    throw sieve::error("bench trace: width x height x spp must stay below 2^31 rays");
  for (const auto& builder : a.builders)
    if (a.split > 0 && builder != "sah") throw sieve::error("bench trace: --split applies to the sah builder only");
  std::vector<trace_method> traversals;  // the names parsed once
  for (const auto& name : a.traversals) {
    const trace_method t = parse_trace_method(name);
    if (t.sieve && t.sieve->boxes == wide_path::avx512 && (gpu || !cpu_has_avx512()))
      throw sieve::error("bench trace: wide-avx512 needs the CPU backend on a processor with AVX-512 (F, VL, BW, DQ)");
    if (!t.embree()) traversals.push_back(t);
    else if (gpu) std::cout << "note: embree is a CPU baseline; skipped with --backend cuda\n";
    else if (!embree_available()) std::cout << "note: this build has no Embree (libembree-dev); its baseline is skipped\n";
    else traversals.insert(traversals.begin(), t);  // first, so the others can be given as ratios to it
  }
  for (const auto& s : a.strategies) {  // an unknown or unfit strategy fails here, before any work
    if (gpu && s != bfs_append && s != bfs_tile && s != bfs_warp_tile) marks_form_for(s, sieve::backend::cuda, "BFS traversal (cuda)");
    if (!gpu) bfs_tracer probe(s);
  }
  std::optional<tbb::global_control> thread_limit;
  if (a.threads) thread_limit.emplace(tbb::global_control::max_allowed_parallelism, a.threads);
  const scene sc = load_scene(a.scene, a.set);
  for (const auto& f : sc.files) outputs.add_input(f);
  // The rays and their hits (primary and secondary rays, a set of hits per traversal, the BFS
  // frontier) and the scene with its BVH.
  const double rays = static_cast<double>(a.width) * a.height * a.spp;
  admit_memory(rays * (2.0 * sizeof(ray) + 4.0 * sizeof(hit) + render::memory::bfs_per_ray) +
                   static_cast<double>(sc.triangles.size()) * render::memory::host_per_triangle,
               "bench trace: " + std::to_string(static_cast<std::uint64_t>(rays)) + " rays through " +
                   std::to_string(sc.triangles.size()) + " triangles");
  const nlohmann::json machine = machine_info(gpu);
  const std::string device = device_of(machine);
  row_schema<trace_row> rows = trace_rows();
  std::vector<std::string> profiles;  // GPU BFS: where a trace's time goes
  std::vector<build_row> builds;
  std::unique_ptr<embree_scene> embree;
  std::map<std::string, double> first_build;  // (rays, traversal, strategy, loop) -> Mrays/s over the first builder's tree
  nlohmann::json work = nlohmann::json::object();  // per builder and ray kind: the compressed tree's work per ray
  int failed = 0;
  for (const auto& builder : a.builders) {
    const built b = build_tree(a, builder, sc, gpu);
    const bvh_view v = view_of(b.tree, sc.triangles);
    // The hits every traversal must match: the binary DFS of the tree without splits (its own tree
    // when there are none), so a split tree is checked against the tree it replaces.
    std::optional<bvh> unsplit;
    if (a.split > 0) {
      bvh_build_options plain = options_of(a);
      plain.split_budget = 0, plain.wide = false;
      unsplit = build_bvh(sc.triangles, plain);
    }
    const bvh_view reference_view = unsplit ? view_of(*unsplit, sc.triangles) : v;
    std::cout << "\n== " << builder << " ==\n";
    print_bvh_summary(sc, b.tree, a, b.build_s, b.build_cpu_s, device, backend);
    builds.push_back(build_row_of(builder, gpu, sc, b));
    print_build_phases(builds.back());
    const nlohmann::json phases = builder == "sah" ? build_phases(sc, b.tree, a) : nlohmann::json(nullptr);
    builds.back().json["build_phases_cpu_ms"] = phases;
    if (!embree && !traversals.empty() && traversals.front().embree()) {
      embree = std::make_unique<embree_scene>(sc.triangles);
      std::cout << "Embree " << "3: scene built in " << fixed(embree->build_seconds() * 1e3, 1) << " ms ("
                << fixed(static_cast<double>(sc.triangles.size()) / embree->build_seconds() / 1e6, 2) << " Mtris/s)\n";
    }

    trace_context context{a, sc, gpu, traversals, rows, profiles, first_build, work};
    failed += trace_tree(context, builder, b.tree, v, reference_view, embree.get());
  }
  rows.printed().print(std::cout);
  if (!profiles.empty()) {
    std::cout << "\nGPU BFS profile (one more run, the loop driven by the host, each step bracketed by CUDA events: "
                 "expand = planning + expanding + marking or appending; the rest of the host-driven total is launch "
                 "and synchronisation):\n";
    for (const auto& line : profiles) std::cout << "  " << line << "\n";
  }
  print_builds(builds, sc.triangles.size());
  print_trace_notes(a, gpu);
  // The table is also the CSV.
  a.stage(outputs, rows,
          {{"benchmark", "trace"},
           {"scene", a.scene},
           {"triangles", sc.triangles.size()},
           {"spp", a.spp},
           {"bvh", {{"builds", builds_json(builds)},
                    {"split_budget", a.split},
                    {"ploc_radius", a.ploc_radius},
                    {"bins", a.bins},
                    {"max_leaf", a.max_leaf},
                    {"node_cost", a.node_cost},
                    {"wide_node_cost", a.wide_node_cost > 0 ? a.wide_node_cost : a.node_cost},
                    {"work_per_ray", work},
                    {"threads", tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)}}},
           {"backend", backend},
           {"device", device},
           {"machine", machine},
           {"run", run_info(command_line)}});
  outputs.commit();
  return failed ? 1 : 0;
}

}  // namespace sieve::bench
