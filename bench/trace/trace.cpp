#include "trace.hpp"

#include "../common/report.hpp"

#include <bvh/bfs.hpp>
#include <bvh/dfs.hpp>
#include <bvh/trace_cuda.hpp>
#include <core/camera.hpp>
#include <core/output_files.hpp>
#include <core/rng.hpp>
#include <core/sampling.hpp>
#include <scene/load.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>

namespace sieve::bench {
namespace {

using namespace sieve::render;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<ray> primary_rays(const scene& s, unsigned w, unsigned h) {
  const camera cam = camera::look_at(s.camera.position, s.camera.look_at, s.camera.up, s.camera.vfov_degrees,
                                     static_cast<float>(w) / static_cast<float>(h));
  std::vector<ray> rays(std::size_t{w} * h);
  ray* out = rays.data();
  exec::parallel_for(exec::cpu{}, "primary", rays.size(), [=](std::uint32_t i) {
    out[i] = cam.generate((static_cast<float>(i % w) + 0.5f) / static_cast<float>(w),
                          (static_cast<float>(i / w) + 0.5f) / static_cast<float>(h));
  });
  return rays;
}

// One cosine-distributed ray from each primary hit, on the side the primary ray came from.
std::vector<ray> diffuse_rays(const scene& s, const std::vector<ray>& primary, const std::vector<hit>& hits) {
  std::vector<ray> rays;
  rays.reserve(primary.size());
  for (std::size_t i = 0; i < primary.size(); ++i) {
    if (!hits[i].found()) continue;
    const triangle& t = s.triangles[hits[i].prim];
    vec3 n = geometric_normal(t);
    if (dot(n, primary[i].direction) > 0) n = -n;
    const vec3 p = primary[i].origin + primary[i].direction * hits[i].t;
    const rng_key key{static_cast<std::uint32_t>(i), 0, 1, 7};
    const vec3 d = frame::around(n).to_world(cosine_hemisphere(uniform(key, 0), uniform(key, 1)));
    rays.push_back(spawn_ray(p, n, d));
  }
  return rays;
}

std::vector<hit> trace_dfs(const bvh_view& v, const std::vector<ray>& rays) {
  std::vector<hit> hits(rays.size());
  const ray* r = rays.data();
  hit* h = hits.data();
  exec::parallel_for(exec::cpu{}, "extend", rays.size(), [=](std::uint32_t i) { h[i] = closest_hit(v, r[i]); });
  return hits;
}

std::string first_difference(const std::vector<hit>& got, const std::vector<hit>& want) {
  for (std::size_t i = 0; i < want.size(); ++i)
    if (got[i].prim != want[i].prim || got[i].t != want[i].t)
      return "ray " + std::to_string(i) + ": primitive " + std::to_string(got[i].prim) + " at t " +
             std::to_string(got[i].t) + ", DFS: " + std::to_string(want[i].prim) + " at t " + std::to_string(want[i].t);
  return "";
}

// GPU hits against the CPU's: the GPU contracts multiply-adds, so t may differ in the last bits and,
// at a shared edge, rarely the primitive. Counts the rays whose primitive differs or whose t is off
// by more than 1e-5 relative.
std::size_t gpu_mismatches(const std::vector<hit>& got, const std::vector<hit>& want) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    bad += got[i].prim != want[i].prim || std::fabs(got[i].t - want[i].t) > 1e-5f * std::fabs(want[i].t);
  return bad;
}

}  // namespace

void add_trace_options(CLI::App& cmd, trace_args& a) {
  cmd.add_option("scene", a.scene, "scene file (.toml or .obj)")->required();
  cmd.add_option("--backend", a.backend, "auto (the GPU when there is one), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  cmd.add_option("--set", a.set, "override a scene key, key=value (repeatable)");
  cmd.add_option("--rays", a.rays, "primary, diffuse (comma-separated)")->delimiter(',')->check(CLI::IsMember({"primary", "diffuse"}));
  cmd.add_option("--traversal", a.traversals, "dfs, bfs (comma-separated)")->delimiter(',')->check(CLI::IsMember({"dfs", "bfs"}));
  cmd.add_option("--strategy", a.strategies,
                 "compaction strategies for the BFS frontier, or append (producer-side, no pass) (comma-separated)")
      ->delimiter(',');
  cmd.add_option("--bfs-loop", a.bfs_loops, "GPU BFS level loop: graph (on the device), host (one sync a step) (comma-separated)")
      ->delimiter(',')
      ->check(CLI::IsMember({"graph", "host"}));
  cmd.add_option("--width", a.width, "camera width in pixels (primary rays: one per pixel)")->check(CLI::Range(1U, 16384U));
  cmd.add_option("--height", a.height, "camera height in pixels")->check(CLI::Range(1U, 16384U));
  cmd.add_option("--repeats", a.repeats, "timed runs per configuration (median reported)")->check(CLI::Range(1, 1000));
  cmd.add_option("--csv", a.csv, "write the results as CSV");
  cmd.add_option("--json", a.json, "write the results, machine and command as JSON");
}

int run_trace_bench(const trace_args& a, const std::string& command_line) {
  output_set outputs;  // checked before any work
  outputs.add_input(a.scene);
  outputs.add_output(a.csv, "--csv");
  outputs.add_output(a.json, "--json");
  const std::string backend = resolve_backend(a.backend);
  const bool gpu = backend == "cuda";
  const std::vector<std::string>& traversals = a.traversals;
  for (const auto& s : a.strategies) {  // an unknown or unfit strategy fails here, before any work
    if (gpu && s != bfs_append) marks_form_for(s, sieve::backend::cuda, "BFS traversal (cuda)");
    if (!gpu) bfs_tracer probe(s);
  }
  const scene sc = load_scene(a.scene, a.set);
  for (const auto& f : sc.files) outputs.add_input(f);
  const auto t0 = std::chrono::steady_clock::now();
  const bvh b = build_bvh(sc.triangles);
  const double build_s = seconds_since(t0);
  const bvh_view v = view_of(b, sc.triangles);
  const nlohmann::json machine = machine_info(gpu);
  const std::string device = device_of(machine);
  std::cout << "device: " << device << " (" << backend << ")\n";
  std::cout << "scene " << sc.name << ": " << sc.triangles.size() << " triangles; BVH " << b.nodes.size()
            << " nodes, depth " << b.stats.max_depth << ", built in " << fixed(build_s * 1e3, 1) << " ms ("
            << fixed(static_cast<double>(sc.triangles.size()) / build_s / 1e6, 2) << " Mtris/s)\n";

  const std::vector<ray> primary = primary_rays(sc, a.width, a.height);
  const std::vector<hit> primary_hits = trace_dfs(v, primary);
  table t({"rays", "traversal", "strategy", "count", "ms_median", "ms_min", "ms_max", "Mrays/s", "x_dfs", "syncs", "validated"});
  // BFS against DFS on the same rays in the same run (DFS runs first when both are asked for).
  double dfs_mrays = 0;
  std::vector<std::string> profiles;  // GPU BFS: where a trace's time goes
  auto versus_dfs = [&](const std::string& traversal, double mrays) {
    if (traversal == "dfs") dfs_mrays = mrays;
    return dfs_mrays > 0 && mrays > 0 ? fixed(mrays / dfs_mrays, 2) : std::string("-");
  };
  nlohmann::json results = nlohmann::json::array();
  int failed = 0;
  for (const auto& kind : a.rays) {
    const std::vector<ray> rays = kind == "primary" ? primary : diffuse_rays(sc, primary, primary_hits);
    const std::vector<hit> reference = kind == "primary" ? primary_hits : trace_dfs(v, rays);
    dfs_mrays = 0;
    for (const auto& traversal : traversals) {
      std::vector<std::pair<std::string, std::string>> runs;  // (strategy, GPU BFS loop)
      for (const auto& s : traversal == "bfs" ? a.strategies : std::vector<std::string>{"-"})
        for (const auto& l : gpu && traversal == "bfs" ? a.bfs_loops : std::vector<std::string>{"-"}) runs.emplace_back(s, l);
      for (const auto& [strategy, loop] : runs) {
        if (gpu) {
          const gpu_trace g = trace_cuda(b, sc.triangles, rays, traversal, strategy, a.repeats, loop == "-" ? "graph" : loop);
          const std::size_t bad = gpu_mismatches(g.hits, reference);
          const bool ok = bad * 10000 <= rays.size();  // at most 1 in 10^4 rays may part at an edge
          if (!ok) {
            ++failed;
            std::cerr << "sieve bench trace: cuda " << kind << ": " << bad << " of " << rays.size()
                      << " rays differ from the CPU's DFS\n";
          }
          const stats st = summarize(ok ? g.ms : std::vector<double>{});
          const double mrays = st.median > 0 ? static_cast<double>(rays.size()) / (st.median * 1e3) : 0;
          const std::string shown_traversal = traversal + (loop == "-" ? "" : " " + loop) + " (cuda)";
          const std::string ratio = versus_dfs(traversal, mrays);
          t.add({kind, shown_traversal, strategy, std::to_string(rays.size()), fixed(st.median, 3), fixed(st.min, 3),
                 fixed(st.max, 3), fixed(mrays, 1), ratio, std::to_string(g.host_syncs),
                 ok ? "yes (" + std::to_string(bad) + " differ)" : "NO"});
          results.push_back({{"rays", kind}, {"traversal", traversal}, {"strategy", strategy}, {"backend", "cuda"}, {"count", rays.size()},
                             {"ms_median", st.median}, {"ms_min", st.min}, {"ms_max", st.max}, {"mrays_per_s", mrays},
                             {"vs_dfs", dfs_mrays > 0 ? mrays / dfs_mrays : 0.0}, {"bfs_loop", loop}, {"host_syncs", g.host_syncs},
                             {"validated", ok}, {"differing_rays", bad}});
          if (traversal == "bfs") {
            const bfs_stats& p = g.profile;
            profiles.push_back(kind + " " + strategy + ": " + std::to_string(p.levels.size()) + " steps, expand " +
                               fixed(p.expand_ms, 3) + " ms, compaction " + fixed(p.compact_ms, 3) + " ms, host-driven total " +
                               fixed(p.total_ms, 3) + " ms, peak " + std::to_string(p.peak_pairs) + " pairs");
            results.back()["profile"] = {{"steps", p.levels.size()}, {"expand_ms", p.expand_ms}, {"compact_ms", p.compact_ms},
                                         {"host_loop_total_ms", p.total_ms}, {"peak_pairs", p.peak_pairs}};
          }
          continue;
        }
        std::vector<hit> got(rays.size());
        std::unique_ptr<bfs_tracer> bfs;
        if (traversal == "bfs") bfs = std::make_unique<bfs_tracer>(strategy);
        auto run = [&] {
          if (bfs)
            bfs->closest(v, rays, got);
          else
            got = trace_dfs(v, rays);
        };
        run();
        const std::string diff = first_difference(got, reference);
        std::vector<double> ms;
        if (diff.empty()) {
          for (int r = 0; r < a.repeats; ++r) {
            const auto s0 = std::chrono::steady_clock::now();
            run();
            ms.push_back(seconds_since(s0) * 1e3);
          }
        } else {
          ++failed;
          std::cerr << "sieve bench trace: " << kind << " " << traversal << " " << strategy << " differs from DFS: " << diff << "\n";
        }
        const stats st = summarize(ms);
        const double mrays = st.median > 0 ? static_cast<double>(rays.size()) / (st.median * 1e3) : 0;
        const std::string shown = bfs ? strategy_shown(strategy, {std::string(bfs->resolved_strategy(rays.size()))}) : strategy;
        t.add({kind, traversal, shown, std::to_string(rays.size()), fixed(st.median, 2), fixed(st.min, 2),
               fixed(st.max, 2), fixed(mrays, 2), versus_dfs(traversal, mrays), "0", diff.empty() ? "yes" : "NO"});
        results.push_back({{"rays", kind}, {"traversal", traversal}, {"strategy", shown}, {"count", rays.size()},
                           {"ms_median", st.median}, {"ms_min", st.min}, {"ms_max", st.max}, {"mrays_per_s", mrays},
                           {"vs_dfs", dfs_mrays > 0 ? mrays / dfs_mrays : 0.0}, {"host_syncs", 0},
                           {"validated", diff.empty()}});
      }
    }
  }
  t.print(std::cout);
  if (!profiles.empty()) {
    std::cout << "\nGPU BFS profile (one more run, the loop driven by the host, each step bracketed by CUDA events: "
                 "expand = planning + expanding + marking or appending; the rest of the host-driven total is launch "
                 "and synchronisation):\n";
    for (const auto& line : profiles) std::cout << "  " << line << "\n";
  }
  std::cout << "\nrays: primary = one per pixel centre of a " << a.width << " x " << a.height
            << " camera; diffuse = one cosine ray from each primary hit. Mrays/s = count / ms_median; "
            << (gpu ? "GPU: the traversal alone (CUDA events, rays on the device), median of "
                    : "CPU, median of ")
            << a.repeats << " runs. x_dfs = Mrays/s over DFS's on the same rays; syncs = host synchronisations "
            << "inside one trace (GPU BFS: graph = the level loop on the device, one at the end; host = one a step). "
            << "Every configuration matched the CPU's DFS before timing"
            << (gpu ? " (GPU: t within 1e-5 relative, the same primitive; at most 1 ray in 10^4 may differ).\n"
                    : ", hit for hit.\n");
  outputs.stage(a.csv, t.csv());
  if (!a.json.empty())
    outputs.stage(a.json, json_text(nlohmann::json{{"benchmark", "trace"},
                                      {"scene", a.scene},
                                      {"triangles", sc.triangles.size()},
                                      {"bvh", {{"nodes", b.nodes.size()}, {"depth", b.stats.max_depth}, {"build_ms", build_s * 1e3},
                                               {"mtris_per_s", static_cast<double>(sc.triangles.size()) / build_s / 1e6}}},
                                      {"backend", backend},
                                      {"device", device},
                                      {"machine", machine},
                                      {"run", run_info(command_line)},
                                      {"results", results}},
                           1));
  outputs.commit();
  return failed ? 1 : 0;
}

}  // namespace sieve::bench
