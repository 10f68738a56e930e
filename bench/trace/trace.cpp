#include "trace.hpp"

#include "../report_names.hpp"
#include "embree.hpp"

#include <bvh/bfs.hpp>
#include <bvh/dfs.hpp>
#include "trace_cuda.hpp"
#include <bvh/wide.hpp>
#include <bvh/cwbvh.hpp>
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

// Each ray traced by closest(ray) or, for any hit, blocked(ray), on oneTBB.
template <class Closest, class Blocked>
std::vector<hit> trace_each(const std::vector<ray>& rays, bool any, Closest closest, Blocked blocked) {
  std::vector<hit> hits(rays.size());
  const ray* r = rays.data();
  hit* h = hits.data();
  if (any)
    exec::parallel_for(exec::cpu{}, "connect", rays.size(), [=](std::uint32_t i) { h[i] = occlusion(blocked(r[i])); });
  else
    exec::parallel_for(exec::cpu{}, "extend", rays.size(), [=](std::uint32_t i) { h[i] = closest(r[i]); });
  return hits;
}

// The 8-wide tree (AVX2 box tests where the processor has them; AVX-512 when asked for).
std::vector<hit> trace_wide(const bvh_view& v, const std::vector<ray>& rays, bool any, wide_path path = wide_path::automatic) {
  const wide_view w = v.wide;
  return trace_each(rays, any, [=](const ray& r) { return wide_closest_hit_cpu(w, r, path); },
                    [=](const ray& r) { return wide_any_hit_cpu(w, r, path); });
}

// The compressed wide traversal (cwbvh.hpp: the GPU's code) run on the CPU, a ray to its end.
std::vector<hit> trace_cw(const bvh_view& v, const std::vector<ray>& rays, bool any) {
  const cw_view c = cw_of(v);
  return trace_each(rays, any, [=](const ray& r) { return cw_closest_hit(c, r); }, [=](const ray& r) { return cw_any_hit(c, r); });
}

std::string first_difference(const std::vector<hit>& got, const std::vector<hit>& want) {
  for (std::size_t i = 0; i < want.size(); ++i)
    if (got[i].prim != want[i].prim || got[i].t != want[i].t)
      return "ray " + std::to_string(i) + ": primitive " + std::to_string(got[i].prim) + " at t " +
             std::to_string(got[i].t) + ", DFS: " + std::to_string(want[i].prim) + " at t " + std::to_string(want[i].t);
  return "";
}

// Where `r` meets `tri`, in double and with a margin of 1e-5 on the barycentric coordinates (a ray
// at a shared edge is inside both triangles), or nothing.
std::optional<double> loose_hit(const triangle& tri, const ray& r) {
  using d3 = std::array<double, 3>;
  auto of = [](vec3 v) { return d3{v.x, v.y, v.z}; };
  auto sub = [](d3 a, d3 b) { return d3{a[0] - b[0], a[1] - b[1], a[2] - b[2]}; };
  auto dot = [](d3 a, d3 b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; };
  auto cross = [](d3 a, d3 b) { return d3{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}; };
  const d3 v0 = of(tri.v0), e1 = sub(of(tri.v1), v0), e2 = sub(of(tri.v2), v0), d = of(r.direction);
  const d3 p = cross(d, e2);
  const double det = dot(e1, p);
  if (!(std::fabs(det) > 0)) return std::nullopt;
  const d3 s = sub(of(r.origin), v0), q = cross(s, e1);
  const double u = dot(s, p) / det, v = dot(d, q) / det, eps = 1e-5;
  if (u < -eps || v < -eps || u + v > 1 + eps) return std::nullopt;
  return dot(e2, q) / det;
}

// GPU hits against the CPU's: the GPU contracts multiply-adds, so t may differ in the last bits and,
// at a shared edge, rarely the primitive. Counts the rays whose t is off by more than `tolerance`
// relative, or whose primitive differs where it is no tie: coincident triangles are hit at the same
// t, and which of them comes first is the tracer's choice (sieve's tracers take the lower index,
// Embree does not), so a primitive that sieve's own test hits at that t is the closest hit too.
std::size_t gpu_mismatches(const std::vector<hit>& got, const std::vector<hit>& want, const std::vector<ray>& rays,
                           const scene& sc, float tolerance = 1e-5f) {
  auto near = [&](float t, float ref) { return std::fabs(t - ref) <= tolerance * std::fabs(ref); };
  auto tie = [&](std::size_t i) {
    if (!got[i].found() || !want[i].found() || got[i].prim >= sc.triangles.size()) return false;
    const std::optional<double> t = loose_hit(sc.triangles[got[i].prim], rays[i]);
    return t && near(static_cast<float>(*t), want[i].t);
  };
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    bad += !near(got[i].t, want[i].t) || (got[i].prim != want[i].prim && !tie(i));
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
  const double node_mb = static_cast<double>(b.nodes.size() * sizeof(bvh_node)) * mb;
  const double pair_mb = static_cast<double>(b.pairs.size() * sizeof(pair_node)) * mb;
  const double leaf_mb = static_cast<double>(b.leaf_triangles.size() * sizeof(leaf_triangle) + b.prims.size() * 4) * mb;
  std::cout << "device: " << device << " (" << backend << ")\n";
  std::cout << "scene " << sc.name << ": " << sc.triangles.size() << " triangles, " << b.stats.references
            << " references; BVH " << b.nodes.size()
            << " nodes, depth " << b.stats.max_depth << ", built in " << fixed(build_s * 1e3, 1) << " ms ("
            << fixed(static_cast<double>(sc.triangles.size()) / build_s / 1e6, 2) << " Mtris/s; "
            << fixed(static_cast<double>(sc.triangles.size()) / build_cpu_s / 1e6, 2) << " Mtris per CPU-second, "
            << tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism) << " threads); SAH cost "
            << fixed(sah_cost(b), 2) << "; memory: binary nodes "
            << fixed(node_mb, 1) << " MiB (BFS), pair nodes " << fixed(pair_mb, 1) << " MiB (DFS), leaf triangles "
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
      out.tree.wide = collapse_wide(out.tree, sc.triangles, wide_cost);
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
  r.sah = sah_cost(b.tree), r.wide_sah = sah_cost(b.tree.wide);
  r.loops = b.loops;
  const double n = static_cast<double>(sc.triangles.size());
  const bvh& t = b.tree;
  r.json = {{"builder", builder}, {"where", r.where}, {"binary_ms", r.binary_ms}, {"collapse_ms", r.collapse_ms},
            {"encoding_ms", r.fused ? nlohmann::json("with the collapse") : nlohmann::json(r.encoding_ms)},
            {"layouts_ms", r.layouts_ms}, {"total_ms", r.total_ms}, {"with_copies_ms", r.with_copies_ms},
            {"mtris_per_s", r.total_ms > 0 ? n / r.total_ms / 1e3 : 0}, {"wall_ms", b.build_s * 1e3},
            {"build_cpu_ms", b.build_cpu_s * 1e3}, {"rounds", b.ploc.rounds},
            {"nodes", t.nodes.size()}, {"depth", t.stats.max_depth}, {"references", t.stats.references},
            {"node_bytes", t.nodes.size() * sizeof(bvh_node)}, {"pair_bytes", t.pairs.size() * sizeof(pair_node)},
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
    if (i == 0) first = best = cpu_only.stats.cpu, sah = sah_cost(cpu_only), wide_sah = sah_cost(cpu_only.wide);
    else if (cpu_only.stats.cpu.total() < best.total()) best = cpu_only.stats.cpu;
  }
  report("cpu_tracer_first", "build for the CPU tracer (the 8-wide tree alone), first of 3", first);
  report("cpu_tracer_fastest", "build for the CPU tracer, fastest of 3", best);
  std::cout << "  its SAH cost: binary " << fixed(sah, 2) << ", wide " << fixed(wide_sah, 2) << "\n";
  return out;
}

// One GPU trace of `rays`, validated against the CPU's DFS hits and timed; dfs_mrays is the DFS
// rate of this ray kind so far (set when this is the DFS), profiles gathers the BFS's breakdowns.
trace_row gpu_row(const bvh& b, const scene& sc, const std::vector<ray>& rays, const std::vector<hit>& reference,
                  const std::string& kind, const std::string& traversal, const std::string& strategy,
                  const std::string& loop, const trace_args& a, double& dfs_mrays, std::vector<std::string>& profiles) {
  const bool any = kind == "shadow";
  const bool breadth = is_bfs_traversal(traversal);
  const gpu_trace g = trace_cuda(b, sc.triangles, rays, traversal, strategy, a.repeats, loop == "-" ? "graph" : loop, any);
  const std::size_t bad = gpu_mismatches(g.hits, reference, rays, sc);
  const bool ok = bad * 10000 <= rays.size();  // at most 1 in 10^4 rays may part at an edge
  if (!ok) {
    std::cerr << "sieve bench trace: cuda " << kind << ": " << bad << " of " << rays.size()
              << " rays differ from the CPU's DFS\n";
  }
  trace_row row{.rays = kind, .traversal = traversal, .strategy = strategy, .gpu = true, .bfs_loop = loop,
                .count = rays.size(), .ms = summarize(ok ? g.ms : std::vector<double>{})};
  row.mrays = row.ms.median > 0 ? static_cast<double>(rays.size()) / (row.ms.median * 1e3) : 0;
  if (traversal == "dfs") dfs_mrays = row.mrays;
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
                  const std::vector<hit>& reference, const std::string& kind, const std::string& traversal,
                  const std::string& strategy, const trace_args& a, double& dfs_mrays, double& embree_mrays,
                  double& embree_cpu) {
  const bool any = kind == "shadow";
  const bool breadth = is_bfs_traversal(traversal);
  std::vector<hit> got(rays.size());
  std::unique_ptr<bfs_tracer> bfs;
  if (breadth)
    bfs = std::make_unique<bfs_tracer>(strategy, traversal == "wide-bfs" ? bfs_tree::wide
                                                 : traversal == "cw-bfs"  ? bfs_tree::compressed
                                                                          : bfs_tree::binary);
  auto run = [&] {
    if (bfs)
      bfs->closest(v, rays, got);
    else if (traversal == "embree")
      got = trace_embree(*embree, rays, any);
    else if (traversal == "wide")
      got = trace_wide(v, rays, any);
    else if (traversal == "wide-avx512")
      got = trace_wide(v, rays, any, wide_path::avx512);
    else if (traversal == "cwbvh" || traversal == "cwbvh-thread")  // one code on the CPU: a ray to its end
      got = trace_cw(v, rays, any);
    else
      got = any ? trace_dfs_any(v, rays) : trace_dfs(v, rays);
  };
  run();
  std::string diff;
  std::size_t bad = 0;
  if (traversal == "embree") {
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
  if (traversal == "dfs") dfs_mrays = row.mrays;
  if (traversal == "embree") embree_mrays = row.mrays, embree_cpu = row.per_cpu_s;
  row.dfs_mrays = dfs_mrays;
  row.embree_mrays = embree_mrays;
  row.embree_cpu = embree_cpu;
  row.validated = diff.empty();
  row.counted = traversal == "embree";
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
  const std::vector<std::string>& traversals;
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
    for (const auto& traversal : c.traversals) {
      const bool breadth = is_bfs_traversal(traversal);
      if (any && breadth) continue;  // the BFS traversal finds closest hits only
      std::vector<std::pair<std::string, std::string>> runs;  // (strategy, GPU BFS loop)
      for (const auto& s : breadth ? a.strategies : std::vector<std::string>{"-"})
        if (s == "-" || bfs_runs_with(traversal, s))
          for (const auto& l : gpu && breadth ? a.bfs_loops : std::vector<std::string>{"-"}) runs.emplace_back(s, l);
      for (const auto& [strategy, loop] : runs) {
        trace_row row = gpu ? gpu_row(tree, sc, rays, reference, kind, traversal, strategy, loop, a, dfs_mrays, c.profiles)
                            : cpu_row(v, embree, sc, rays, reference, kind, traversal, strategy, a, dfs_mrays,
                                      embree_mrays, embree_cpu);
        row.build = builder;
        const std::string key = kind + " " + traversal + " " + strategy + " " + loop;
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
  const std::string backend = resolve_backend(a.backend);
  const bool gpu = backend == "cuda";
  if (std::uint64_t{a.width} * a.height * a.spp >= (std::uint64_t{1} << 31))
    throw sieve::error("bench trace: width x height x spp must stay below 2^31 rays");
  for (const auto& builder : a.builders)
    if (a.split > 0 && builder != "sah") throw sieve::error("bench trace: --split applies to the sah builder only");
  std::vector<std::string> traversals;
  for (const auto& t : a.traversals) {
    if (t == "wide-avx512" && (gpu || !cpu_has_avx512()))
      throw sieve::error("bench trace: wide-avx512 needs the CPU backend on a processor with AVX-512 (F, VL, BW, DQ)");
    if (t != "embree") traversals.push_back(t);
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
    if (!embree && !traversals.empty() && traversals.front() == "embree") {
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
