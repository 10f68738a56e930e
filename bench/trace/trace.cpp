#include "trace.hpp"

#include "../common/report.hpp"
#include "embree.hpp"

#include <bvh/bfs.hpp>
#include <bvh/dfs.hpp>
#include <bvh/trace_cuda.hpp>
#include <bvh/wide.hpp>
#include <core/camera.hpp>
#include <core/lights.hpp>
#include <core/output_files.hpp>
#include <core/rng.hpp>
#include <core/sampling.hpp>
#include <scene/load.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <iostream>

namespace sieve::bench {
namespace {

using namespace sieve::render;

// CPU time of the whole process (every thread): on a machine shared with other work, rays per
// CPU-second is the per-thread rate that time-sharing does not dilute.
double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// spp rays per pixel: through the pixel centre when spp is 1, else jittered (counter RNG, so any run
// and any backend gets the same rays). Ray i belongs to pixel i / spp.
std::vector<ray> primary_rays(const scene& s, unsigned w, unsigned h, unsigned spp) {
  const camera cam = camera::look_at(s.camera.position, s.camera.look_at, s.camera.up, s.camera.vfov_degrees,
                                     static_cast<float>(w) / static_cast<float>(h));
  std::vector<ray> rays(std::size_t{w} * h * spp);
  ray* out = rays.data();
  exec::parallel_for(exec::cpu{}, "primary", rays.size(), [=](std::uint32_t i) {
    const std::uint32_t pixel = i / spp, sample = i % spp;
    const rng_key key{pixel, sample, 0, 11};
    const float jx = spp == 1 ? 0.5f : uniform(key, 0), jy = spp == 1 ? 0.5f : uniform(key, 1);
    out[i] = cam.generate((static_cast<float>(pixel % w) + jx) / static_cast<float>(w),
                          (static_cast<float>(pixel / w) + jy) / static_cast<float>(h));
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

// One shadow ray from each primary hit to a uniform point on a uniformly chosen emissive triangle,
// ending just before it (next-event estimation's rays): traced for any hit.
std::vector<ray> shadow_rays(const scene& s, const std::vector<ray>& primary, const std::vector<hit>& hits) {
  if (s.emissive.empty()) throw sieve::error("bench trace: shadow rays need a light (the scene has no emissive triangles)");
  std::vector<ray> rays;
  rays.reserve(primary.size());
  const auto lights = static_cast<float>(s.emissive.size());
  for (std::size_t i = 0; i < primary.size(); ++i) {
    if (!hits[i].found()) continue;
    vec3 n = geometric_normal(s.triangles[hits[i].prim]);
    if (dot(n, primary[i].direction) > 0) n = -n;
    const vec3 p = primary[i].origin + primary[i].direction * hits[i].t;
    const rng_key key{static_cast<std::uint32_t>(i), 0, 1, 13};
    const std::size_t k = std::min(static_cast<std::size_t>(uniform(key, 0) * lights), s.emissive.size() - 1);
    const triangle& l = s.triangles[s.emissive[k]];
    float b1, b2;
    uniform_triangle(uniform(key, 1), uniform(key, 2), b1, b2);
    const vec3 q = l.v0 * (1.0f - b1 - b2) + l.v1 * b1 + l.v2 * b2;
    ray r = spawn_ray(p, n, q - p);
    r.direction = q - r.origin;
    r.tmax = 1.0f - 1e-3f;  // stop short of the light itself
    rays.push_back(r);
  }
  return rays;
}

// Any-hit answers in the form of hits, so one comparison serves both: prim 0 and t 0 when blocked.
hit occlusion(bool blocked) { return blocked ? hit{0, 0, 0, 0} : hit{}; }

std::vector<hit> trace_dfs_any(const bvh_view& v, const std::vector<ray>& rays) {
  std::vector<hit> hits(rays.size());
  const ray* r = rays.data();
  hit* h = hits.data();
  exec::parallel_for(exec::cpu{}, "connect", rays.size(), [=](std::uint32_t i) { h[i] = occlusion(any_hit(v, r[i])); });
  return hits;
}

std::vector<hit> trace_dfs(const bvh_view& v, const std::vector<ray>& rays) {
  std::vector<hit> hits(rays.size());
  const ray* r = rays.data();
  hit* h = hits.data();
  exec::parallel_for(exec::cpu{}, "extend", rays.size(), [=](std::uint32_t i) { h[i] = closest_hit(v, r[i]); });
  return hits;
}

// The 8-wide tree (AVX2 box tests where the processor has them).
std::vector<hit> trace_wide(const bvh_view& v, const std::vector<ray>& rays, bool any) {
  std::vector<hit> hits(rays.size());
  const ray* r = rays.data();
  hit* h = hits.data();
  const wide_view w = v.wide;
  if (any)
    exec::parallel_for(exec::cpu{}, "connect", rays.size(), [=](std::uint32_t i) { h[i] = occlusion(wide_any_hit_cpu(w, r[i])); });
  else
    exec::parallel_for(exec::cpu{}, "extend", rays.size(), [=](std::uint32_t i) { h[i] = wide_closest_hit_cpu(w, r[i]); });
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
std::size_t gpu_mismatches(const std::vector<hit>& got, const std::vector<hit>& want, float tolerance = 1e-5f) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    bad += got[i].prim != want[i].prim || std::fabs(got[i].t - want[i].t) > tolerance * std::fabs(want[i].t);
  return bad;
}

// Embree's hits in sieve's form. Embree's watertight triangle test rounds differently from sieve's
// (Moeller-Trumbore), so t is compared within 1e-4 relative and a ray grazing a shared edge may
// name the neighbour: like the GPU, at most 1 ray in 10^4 may differ.
std::vector<hit> trace_embree(const embree_scene& e, const std::vector<ray>& rays, bool any) {
  std::vector<hit> hits(rays.size());
  if (any) {
    std::vector<std::uint8_t> blocked(rays.size());
    e.occluded(rays, blocked);
    for (std::size_t i = 0; i < rays.size(); ++i) hits[i] = occlusion(blocked[i] != 0);
    return hits;
  }
  std::vector<float> t(rays.size());
  std::vector<std::uint32_t> prim(rays.size());
  e.closest(rays, t, prim);
  for (std::size_t i = 0; i < rays.size(); ++i) hits[i] = {t[i], prim[i], 0, 0};
  return hits;
}

}  // namespace

void add_trace_options(CLI::App& cmd, trace_args& a) {
  cmd.add_option("scene", a.scene, "scene file (.toml or .obj)")->required();
  cmd.add_option("--backend", a.backend, "auto (the GPU when there is one), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  cmd.add_option("--set", a.set, "override a scene key, key=value (repeatable)");
  cmd.add_option("--rays", a.rays, "primary, diffuse, shadow (comma-separated; shadow: any hit)")
      ->delimiter(',')
      ->check(CLI::IsMember({"primary", "diffuse", "shadow"}));
  cmd.add_option("--traversal", a.traversals,
                 "dfs, wide, bfs, wide-bfs, embree (comma-separated; wide: DFS over the 8-wide tree; wide-bfs: BFS over "
                 "it; embree: CPU only, when built with it)")
      ->delimiter(',')
      ->check(CLI::IsMember({"dfs", "wide", "bfs", "wide-bfs", "embree"}));
  cmd.add_option("--strategy", a.strategies,
                 "compaction strategies for the BFS frontier, or append (producer-side, no pass) (comma-separated)")
      ->delimiter(',');
  cmd.add_option("--bfs-loop", a.bfs_loops, "GPU BFS level loop: graph (on the device), host (one sync a step) (comma-separated)")
      ->delimiter(',')
      ->check(CLI::IsMember({"graph", "host"}));
  cmd.add_option("--width", a.width, "camera width in pixels")->check(CLI::Range(1U, 16384U));
  cmd.add_option("--height", a.height, "camera height in pixels")->check(CLI::Range(1U, 16384U));
  cmd.add_option("--spp", a.spp, "primary rays per pixel (1: the pixel centre; more: jittered)")->check(CLI::Range(1U, 256U));
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
  if (std::uint64_t{a.width} * a.height * a.spp >= (std::uint64_t{1} << 31))
    throw sieve::error("bench trace: width x height x spp must stay below 2^31 rays");
  std::vector<std::string> traversals;
  for (const auto& t : a.traversals) {
    if (t != "embree") traversals.push_back(t);
    else if (gpu) std::cout << "note: embree is a CPU baseline; skipped with --backend cuda\n";
    else if (!embree_available()) std::cout << "note: this build has no Embree (libembree-dev); its baseline is skipped\n";
    else traversals.insert(traversals.begin(), t);  // first, so the others can be given as ratios to it
  }
  for (const auto& s : a.strategies) {  // an unknown or unfit strategy fails here, before any work
    if (gpu && s != bfs_append) marks_form_for(s, sieve::backend::cuda, "BFS traversal (cuda)");
    if (!gpu) bfs_tracer probe(s);
  }
  const scene sc = load_scene(a.scene, a.set);
  for (const auto& f : sc.files) outputs.add_input(f);
  const auto t0 = std::chrono::steady_clock::now();
  const double build_c0 = process_cpu_seconds();
  const bvh b = build_bvh(sc.triangles);
  const double build_s = seconds_since(t0), build_cpu_s = process_cpu_seconds() - build_c0;
  const bvh_view v = view_of(b, sc.triangles);
  const nlohmann::json machine = machine_info(gpu);
  const std::string device = device_of(machine);
  const double mb = 1.0 / (1 << 20);
  const double node_mb = static_cast<double>(b.nodes.size() * sizeof(bvh_node)) * mb;
  const double pair_mb = static_cast<double>(b.pairs.size() * sizeof(pair_node)) * mb;
  const double leaf_mb = static_cast<double>(b.leaf_triangles.size() * sizeof(leaf_triangle) + b.prims.size() * 4) * mb;
  std::cout << "device: " << device << " (" << backend << ")\n";
  std::cout << "scene " << sc.name << ": " << sc.triangles.size() << " triangles; BVH " << b.nodes.size()
            << " nodes, depth " << b.stats.max_depth << ", built in " << fixed(build_s * 1e3, 1) << " ms ("
            << fixed(static_cast<double>(sc.triangles.size()) / build_s / 1e6, 2) << " Mtris/s; "
            << fixed(static_cast<double>(sc.triangles.size()) / build_cpu_s / 1e6, 2) << " Mtris per CPU-second); memory: binary nodes "
            << fixed(node_mb, 1) << " MiB (BFS), pair nodes " << fixed(pair_mb, 1) << " MiB (DFS), leaf triangles "
            << fixed(leaf_mb, 1) << " MiB\n";
  const double wide_mb = static_cast<double>(b.wide.nodes.size() * sizeof(wide_node)) * mb;
  const double wide_leaf_mb = static_cast<double>(b.wide.triangles.size() * sizeof(leaf_triangle) + b.wide.prims.size() * 4) * mb;
  std::cout << "wide BVH: " << b.wide.nodes.size() << " nodes of " << sizeof(wide_node) << " bytes (" << fixed(wide_mb, 1)
            << " MiB), depth " << b.wide.depth << ", collapsed in " << fixed(b.wide.seconds * 1e3, 1)
            << " ms (part of the build above); its leaf triangles " << fixed(wide_leaf_mb, 1) << " MiB; CPU box tests: "
            << (cpu_has_avx2() ? "AVX2" : "portable") << "\n";
  std::unique_ptr<embree_scene> embree;
  if (!traversals.empty() && traversals.front() == "embree") {
    embree = std::make_unique<embree_scene>(sc.triangles);
    std::cout << "Embree " << "3: scene built in " << fixed(embree->build_seconds() * 1e3, 1) << " ms ("
              << fixed(static_cast<double>(sc.triangles.size()) / embree->build_seconds() / 1e6, 2) << " Mtris/s)\n";
  }

  const std::vector<ray> primary = primary_rays(sc, a.width, a.height, a.spp);
  const std::vector<hit> primary_hits = trace_dfs(v, primary);
  table t({"rays", "traversal", "strategy", "count", "ms_median", "ms_min", "ms_max", "Mrays/s", "x_dfs", "syncs", "x_embree",
           "Mrays/cpu-s", "x_embree_cpu", "validated"});
  // BFS and the wide DFS against DFS on the same rays in the same run (DFS runs first when asked for).
  double dfs_mrays = 0;
  std::vector<std::string> profiles;  // GPU BFS: where a trace's time goes
  auto versus_dfs = [&](const std::string& traversal, double mrays) {
    if (traversal == "dfs") dfs_mrays = mrays;
    return dfs_mrays > 0 && mrays > 0 ? fixed(mrays / dfs_mrays, 2) : std::string("-");
  };
  nlohmann::json results = nlohmann::json::array();
  int failed = 0;
  for (const auto& kind : a.rays) {
    const bool any = kind == "shadow";
    const std::vector<ray> rays = kind == "primary" ? primary
                                  : any             ? shadow_rays(sc, primary, primary_hits)
                                                    : diffuse_rays(sc, primary, primary_hits);
    const std::vector<hit> reference = kind == "primary" ? primary_hits : any ? trace_dfs_any(v, rays) : trace_dfs(v, rays);
    dfs_mrays = 0;
    double embree_mrays = 0, embree_cpu = 0;  // of this ray kind, when Embree ran
    auto versus = [](double x, double base) { return base > 0 ? fixed(x / base, 2) : std::string("-"); };
    for (const auto& traversal : traversals) {
      const bool breadth = traversal == "bfs" || traversal == "wide-bfs";
      if (any && breadth) continue;  // the BFS traversal finds closest hits only
      std::vector<std::pair<std::string, std::string>> runs;  // (strategy, GPU BFS loop)
      for (const auto& s : breadth ? a.strategies : std::vector<std::string>{"-"})
        for (const auto& l : gpu && breadth ? a.bfs_loops : std::vector<std::string>{"-"}) runs.emplace_back(s, l);
      for (const auto& [strategy, loop] : runs) {
        if (gpu) {
          const gpu_trace g = trace_cuda(b, sc.triangles, rays, traversal, strategy, a.repeats, loop == "-" ? "graph" : loop, any);
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
                 fixed(st.max, 3), fixed(mrays, 1), ratio, std::to_string(g.host_syncs), "-", "-", "-",
                 ok ? "yes (" + std::to_string(bad) + " differ)" : "NO"});
          results.push_back({{"rays", kind}, {"traversal", traversal}, {"strategy", strategy}, {"backend", "cuda"}, {"count", rays.size()},
                             {"ms_median", st.median}, {"ms_min", st.min}, {"ms_max", st.max}, {"mrays_per_s", mrays},
                             {"vs_dfs", dfs_mrays > 0 ? mrays / dfs_mrays : 0.0}, {"bfs_loop", loop}, {"host_syncs", g.host_syncs},
                             {"validated", ok}, {"differing_rays", bad}});
          if (breadth) {
            const bfs_stats& p = g.profile;
            if (loop == a.bfs_loops.front())  // the profile runs the same whatever the loop: once a strategy
              profiles.push_back(kind + " " + traversal + " " + strategy + ": " + std::to_string(p.levels.size()) + " steps, expand " +
                                 fixed(p.expand_ms, 3) + " ms, compaction " + fixed(p.compact_ms, 3) +
                                 " ms, host-driven total " + fixed(p.total_ms, 3) + " ms, peak " +
                                 std::to_string(p.peak_pairs) + " pairs");
            results.back()["profile"] = {{"steps", p.levels.size()}, {"expand_ms", p.expand_ms}, {"compact_ms", p.compact_ms},
                                         {"host_loop_total_ms", p.total_ms}, {"peak_pairs", p.peak_pairs}};
          }
          continue;
        }
        std::vector<hit> got(rays.size());
        std::unique_ptr<bfs_tracer> bfs;
        if (breadth)
          bfs = std::make_unique<bfs_tracer>(strategy, traversal == "wide-bfs" ? bfs_tree::wide : bfs_tree::binary);
        auto run = [&] {
          if (bfs)
            bfs->closest(v, rays, got);
          else if (traversal == "embree")
            got = trace_embree(*embree, rays, any);
          else if (traversal == "wide")
            got = trace_wide(v, rays, any);
          else
            got = any ? trace_dfs_any(v, rays) : trace_dfs(v, rays);
        };
        run();
        std::string diff;
        std::size_t bad = 0;
        if (traversal == "embree") {
          bad = gpu_mismatches(got, reference, 1e-4f);
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
          ++failed;
          std::cerr << "sieve bench trace: " << kind << " " << traversal << " " << strategy << " differs from DFS: " << diff << "\n";
        }
        const stats st = summarize(ms);
        const double mrays = st.median > 0 ? static_cast<double>(rays.size()) / (st.median * 1e3) : 0;
        const stats cpu = summarize(cpu_ms);
        const double per_cpu_s = cpu.median > 0 ? static_cast<double>(rays.size()) / (cpu.median * 1e3) : 0;
        if (traversal == "embree") embree_mrays = mrays, embree_cpu = per_cpu_s;
        const std::string shown = bfs ? strategy_shown(strategy, {std::string(bfs->resolved_strategy(rays.size()))}) : strategy;
        const std::string valid = !diff.empty() ? "NO" : traversal == "embree" ? "yes (" + std::to_string(bad) + " differ)" : "yes";
        t.add({kind, traversal, shown, std::to_string(rays.size()), fixed(st.median, 2), fixed(st.min, 2),
               fixed(st.max, 2), fixed(mrays, 2), versus_dfs(traversal, mrays), "0", versus(mrays, embree_mrays),
               fixed(per_cpu_s, 2), versus(per_cpu_s, embree_cpu), valid});
        results.push_back({{"rays", kind}, {"traversal", traversal}, {"strategy", shown}, {"count", rays.size()},
                           {"ms_median", st.median}, {"ms_min", st.min}, {"ms_max", st.max}, {"mrays_per_s", mrays},
                           {"vs_dfs", dfs_mrays > 0 ? mrays / dfs_mrays : 0.0}, {"host_syncs", 0},
                           {"versus_embree", embree_mrays > 0 ? mrays / embree_mrays : 0.0},
                           {"cpu_ms_median", cpu.median}, {"mrays_per_cpu_s", per_cpu_s},
                           {"versus_embree_cpu", embree_cpu > 0 ? per_cpu_s / embree_cpu : 0.0},
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
            << "Every configuration matched the CPU's DFS before timing"
            << (gpu ? " (GPU: t within 1e-5 relative, the same primitive; at most 1 ray in 10^4 may differ).\n"
                    : ", hit for hit (Embree: t within 1e-4 relative, at most 1 ray in 10^4 may differ).\n");
  outputs.stage(a.csv, t.csv());
  if (!a.json.empty())
    outputs.stage(a.json, json_text(nlohmann::json{{"benchmark", "trace"},
                                      {"scene", a.scene},
                                      {"triangles", sc.triangles.size()},
                                      {"spp", a.spp},
                                      {"bvh", {{"nodes", b.nodes.size()}, {"depth", b.stats.max_depth}, {"build_ms", build_s * 1e3},
                                               {"mtris_per_s", static_cast<double>(sc.triangles.size()) / build_s / 1e6},
                                               {"build_cpu_ms", build_cpu_s * 1e3},
                                               {"node_bytes", b.nodes.size() * sizeof(bvh_node)},
                                               {"pair_bytes", b.pairs.size() * sizeof(pair_node)},
                                               {"wide_nodes", b.wide.nodes.size()},
                                               {"wide_bytes", b.wide.nodes.size() * sizeof(wide_node)},
                                               {"wide_depth", b.wide.depth},
                                               {"collapse_ms", b.wide.seconds * 1e3}}},
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
