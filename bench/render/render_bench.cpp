#include "render_bench.hpp"

#include "../report_names.hpp"

#include <core/memory.hpp>
#include <frame/waves.hpp>
#include <job/render_job.hpp>
#include <output_files.hpp>
#include <rows.hpp>
#include <scene/load.hpp>
#include <run/render.hpp>

#include <sieve/compaction.hpp>
#include <sieve/compaction/backend.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <tuple>
#include <cstring>
#include <iostream>

namespace sieve::bench {
namespace {

using namespace sieve::render;

std::vector<std::string> queue_strategies(sieve::backend b) {
  std::vector<std::string> out;
  for (const auto& s : sieve::compaction_strategies())
    for (const auto f : {sieve::form::bit_mask, sieve::form::byte_flags, sieve::form::removal_list})
      if (s.takes(b, f)) {
        out.emplace_back(s.name);
        break;
      }
  return out;
}

// One configuration of the bench: its labels, its settings, the checked warm-up's result and the
// timed renders (without and with stage times), gathered over the rounds.
struct config {
  std::string integrator, queue, routing, traversal, bvh, reorder, strategy, textures;
  render_settings settings;
  bool same = false;  // the warm-up's image equals the first configuration's (of the same texture storage)
  render_result checked;  // its image kept for the first configuration (of each texture storage) only
  std::vector<render_stats> fast, profiled;
};

// The run of median time (the warm-up when none was timed).
const render_stats& median_run(std::vector<render_stats>& runs, const render_stats& fallback) {
  if (runs.empty()) return fallback;
  std::sort(runs.begin(), runs.end(), [](const render_stats& x, const render_stats& y) { return x.seconds < y.seconds; });
  return runs[runs.size() / 2];
}

// The spectrum of compaction, one configuration each: a strategy's pass over the path state, over
// 4-byte indices, producer-side append (no pass, no strategy), the megakernel (no queue); each
// routing per queue (the routing `megakernel` is the megakernel's row, once).
std::vector<config> render_configs(const render_bench_args& a, const scene& sc, const std::vector<std::string>& strategies,
                                   bool gpu) {
  const std::uint32_t wave_paths = a.wave_paths ? a.wave_paths
                                                : default_wave_paths(gpu, gpu ? cuda_free_memory() : std::nullopt,
                                                                     memory::host_available());
  std::vector<std::tuple<std::string, std::string, std::string>> kinds;  // (integrator, queue, routing)
  const auto add_kind = [&](std::string integrator, std::string queue, std::string routing) {
    const auto k = std::tuple{std::move(integrator), std::move(queue), std::move(routing)};
    if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
  };
  for (const auto& integrator : a.integrators)
    for (const auto& queue : integrator == "megakernel" ? std::vector<std::string>{"-"} : a.queues)
      for (const auto& routing : integrator == "megakernel" ? std::vector<std::string>{"-"} : a.routings)
        if (routing == "megakernel")
          add_kind("megakernel", "-", "-");
        else
          add_kind(integrator, queue, routing);
  std::vector<config> configs;
  for (const auto& textures : gpu ? a.textures : std::vector<std::string>{"-"})
  for (const auto& [integrator, queue, routing] : kinds)
  for (const auto& launch : gpu && integrator == "wavefront" ? a.launches : std::vector<std::string>{"graph"})
  for (const auto& traversal : a.traversals)
  for (const auto& bvh : traversal == "dfs" ? a.bvhs : std::vector<std::string>{"-"})
    for (const auto& reorder : a.reorders)
      for (const auto& strategy :
           integrator == "megakernel" || queue == "append" ? std::vector<std::string>{"auto"} : strategies) {
        render_settings rs = render_settings::from(sc);
        rs.max_queue = wave_paths;
        rs.integrator = parse_mode<integrator_kind>(integrator);
        if (queue != "-") rs.queue = parse_mode<queue_mode>(queue);
        if (routing != "-") rs.routing = parse_mode<routing_kind>(routing);
        rs.wave_graph = launch == "graph";
        rs.strategy = strategy;
        rs.traversal = parse_mode<traversal_kind>(traversal);
        if (bvh != "-") rs.bvh = parse_mode<bvh_layout>(bvh);
        rs.reorder = parse_mode<reorder_key>(reorder);
        if (textures != "-") rs.textures = parse_mode<texture_storage>(textures);
        configs.push_back({integrator, queue, routing, traversal, bvh, reorder, strategy, textures, rs, false, {}, {}, {}});
      }
  return configs;
}

}  // namespace

// The table (which is also the CSV) shortens and shows "-" for what was not measured (compaction's
// times without stage times); the JSON has the numbers, the strategies that ran, the stage times
// and the bounces. Mrays/s (the table's, over s_median) and mrays_per_s (the JSON's, over seconds:
// s_profiled) are two columns.
row_schema<render_bench_row> render_bench_rows() {
  using col = field<render_bench_row>;
  using row = render_bench_row;
  // Text in the table and the CSV, `json` in the JSON.
  const auto shown = [](std::string text, nlohmann::json json) { return cell{text, text, std::move(json)}; };
  // Measured only with stage times: "-" without them.
  const auto profiled = [](const row& r, const std::string& text, nlohmann::json json) {
    return cell{r.profiled ? text : "-", r.profiled ? text : "-", std::move(json)};
  };
  const auto json_only = [](nlohmann::json json) { return cell{"", "", std::move(json)}; };
  const auto rays = [](const row& r) { return static_cast<double>(r.stats.extension_rays + r.stats.shadow_rays); };
  return row_schema<row>(std::vector<col>{
      {"integrator", "integrator", "integrator", [](const row& r) { return text_cell(r.integrator); }},
      {"queue", "queue", "queue", [](const row& r) { return text_cell(r.queue); }},
      {"routing", "routing", "routing", [](const row& r) { return text_cell(r.routing); }},
      {"strategy", "strategy", "strategy", [](const row& r) { return text_cell(r.strategy); }},
      {"", "", "strategies_ran", [=](const row& r) { return json_only(r.stats.strategies_ran); }},
      {"form", "form", "form", [](const row& r) { return text_cell(r.form); }},
      {"traversal", "traversal", "traversal", [](const row& r) { return text_cell(r.traversal); }},
      {"bvh", "bvh", "bvh", [](const row& r) { return text_cell(r.bvh); }},
      {"reorder", "reorder", "reorder", [](const row& r) { return text_cell(r.reorder); }},
      {"textures", "textures", "textures", [](const row& r) { return text_cell(r.textures); }},
      {"launch", "launch", "wave_launch", [](const row& r) { return text_cell(r.stats.wave_launch); }},
      {"", "", "waves", [=](const row& r) { return json_only(r.stats.waves); }},
      {"", "", "host_syncs", [=](const row& r) { return json_only(r.stats.host_syncs); }},
      {"syncs/wave", "syncs/wave", "host_syncs_per_wave",
       [=](const row& r) {
         const double syncs =
             r.stats.waves ? static_cast<double>(r.stats.host_syncs) / static_cast<double>(r.stats.waves) : 0.0;
         return shown(fixed(syncs, 1), syncs);
       }},
      {"s_median", "s_median", "seconds_unprofiled",
       [=](const row& r) { return shown(fixed(r.seconds_unprofiled, 3), r.seconds_unprofiled); }},
      {"s_profiled", "s_profiled", "seconds",
       [=](const row& r) { return profiled(r, fixed(r.stats.seconds, 3), r.stats.seconds); }},
      {"", "", "profile_stages", [=](const row& r) { return json_only(r.profiled); }},
      {"Mrays/s", "Mrays/s", "", [=](const row& r) { return shown(fixed(rays(r) / r.seconds_unprofiled / 1e6, 2), {}); }},
      {"", "", "mrays_per_s", [=](const row& r) { return json_only(rays(r) / r.stats.seconds / 1e6); }},
      {"", "", "extension_rays", [=](const row& r) { return json_only(r.stats.extension_rays); }},
      {"", "", "shadow_rays", [=](const row& r) { return json_only(r.stats.shadow_rays); }},
      {"compact_ms", "compact_ms", "compaction_ms",
       [=](const row& r) { return profiled(r, fixed(r.stats.compaction_ms(), 1), r.stats.compaction_ms()); }},
      {"", "", "bfs_frontier_compaction_ms", [=](const row& r) { return json_only(r.stats.bfs_compact_ms); }},
      {"route_ms", "route_ms", "route_ms",
       [=](const row& r) { return profiled(r, fixed(r.stats.stage_ms("route"), 1), r.stats.stage_ms("route")); }},
      {"queue_share", "queue_share", "queue_share",
       [=](const row& r) {
         const double share = (r.stats.compaction_ms() + r.stats.stage_ms("route")) / (r.stats.seconds * 1e3);
         return profiled(r, fixed(100 * share, 2) + " %", share);
       }},
      {"compact_share", "compact_share", "compaction_share",
       [=](const row& r) {
         const double share = r.stats.compaction_ms() / (r.stats.seconds * 1e3);
         return profiled(r, fixed(100 * share, 2) + " %", share);
       }},
      {"", "", "stages",
       [=](const row& r) {
         nlohmann::json stages;
         for (const auto& s : r.stats.stages) stages[s.name] = s.ms;
         return json_only(stages);
       }},
      {"", "", "loops", [=](const row& r) { return json_only(loops_json(r.stats)); }},
      // The bounces a path was alive in: the table their compaction ms, the JSON each one's numbers.
      {"compact_ms_per_bounce", "compact_ms_per_bounce", "bounces",
       [=](const row& r) {
         std::string per_bounce;
         nlohmann::json bounces = nlohmann::json::array();
         for (std::size_t b = 0; b < r.stats.bounces.size(); ++b) {
           if (!r.stats.bounces[b].live) continue;
           per_bounce += (per_bounce.empty() ? "" : " ") + fixed(r.stats.bounces[b].compact_ms, 2);
           bounces.push_back(
               {{"bounce", b}, {"live", r.stats.bounces[b].live}, {"compaction_ms", r.stats.bounces[b].compact_ms}});
         }
         return profiled(r, per_bounce, bounces);
       }},
      {"identical", "identical", "identical",
       [](const row& r) { return cell{r.identical ? "yes" : "NO", r.identical ? "yes" : "NO", r.identical}; }}});
}

const option_schema<render_bench_args>& render_bench_options() {
  using A = render_bench_args;
  static const option_schema<A> schema = [] {
    option_schema<A> o("bench render");
    o.scene();
    o.option(&A::width, "--width", "image width (one of --width, --height: the scene's aspect)",
             [](CLI::Option* x) { x->check(CLI::Range(1U, 16384U))->default_str("the scene's"); });
    o.option(&A::height, "--height", "image height",
             [](CLI::Option* x) { x->check(CLI::Range(1U, 16384U))->default_str("the scene's"); });
    o.option(&A::spp, "--spp", "samples per pixel",
             [](CLI::Option* x) { x->check(CLI::Range(1U, 1U << 20))->default_str("the scene's"); });
    o.option(&A::wave_paths, "--wave-paths",
             "paths in flight at once (a wave; every stage of a bounce launches over them): more keeps the GPU "
             "full at the late bounces, whose paths are few, and costs their queues' memory",
             [](CLI::Option* x) {
               x->check(CLI::Range(1U, 1U << 24))->default_str("2^20 on the CPU; on the GPU up to 2^24 as memory allows");
             });
    o.option(&A::integrators, "--integrator", "wavefront, megakernel (comma-separated)",
             [](CLI::Option* x) { x->check(CLI::IsMember(mode_name_list<integrator_kind>())); });
    o.option(&A::strategies, "--strategy", "compaction strategies (comma-separated; default: all that fit)");
    o.option(&A::queues, "--queue",
             "how the path queue shrinks: pass (the strategy compacts the path state), index (it compacts 4-byte "
             "path indices, the state stays in place), append (shade appends survivors, no pass); comma-separated",
             [](CLI::Option* x) { x->check(CLI::IsMember(mode_name_list<queue_mode>())); });
    o.option(&A::launches, "--launch",
             "GPU waves: graph (captured once, replayed: one host sync per wave where the strategy and traversal "
             "allow), stream (the same loop reading the live count back each bounce); comma-separated",
             [](CLI::Option* x) { x->check(CLI::IsMember({"graph", "stream"})); });
    o.option(&A::traversals, "--traversal", "dfs, bfs (comma-separated)",
             [](CLI::Option* x) { x->check(CLI::IsMember(mode_name_list<traversal_kind>())); });
    o.option(&A::bvhs, "--bvh",
             "the trees the GPU's depth-first rays walk: auto, binary, cwbvh, cwbvh-thread (comma-separated; "
             "the CPU walks its 8-wide tree whatever this says)",
             [](CLI::Option* x) { x->check(CLI::IsMember(mode_name_list<bvh_layout>())); });
    o.option(&A::build, "--build", "the tree's builder: auto (ploc when the GPU renders, else sah), sah, lbvh, ploc",
             [](CLI::Option* x) { x->check(CLI::IsMember(mode_name_list<bvh_builder>())); });
    o.option(&A::reorders, "--reorder", "none, morton, octant, termination (comma-separated)");
    o.option(&A::routings, "--routing",
             "how shade reaches the material families: branch (one kernel), multisplit (the queue's entries split "
             "by family, a kernel each), queues (per-family queues appended by extend), sort (radix sort by "
             "material), megakernel (its row); comma-separated",
             [](CLI::Option* x) { x->check(CLI::IsMember(mode_name_list<routing_kind>())); });
    o.option(&A::textures, "--textures",
             "how the GPU reads textures: hardware (texture objects: the texture unit's filter; RGB as three "
             "one-channel layers), rgba (texture objects, RGB widened to RGBA), packed (the CPU's texels and filter "
             "in one buffer); comma-separated (images compared within each; the CPU: packed)",
             [](CLI::Option* x) { x->check(CLI::IsMember(mode_name_list<render::texture_storage>())); });
    o.option(&A::repeats, "--repeats", "timed renders per configuration (median reported)",
             [](CLI::Option* x) { x->check(CLI::Range(1, 100)); });
    o.option(&A::profile_stages, "--profile-stages",
             "both: time the renders without stage times (s_median) and again with them (compaction's share, "
             "s_profiled); on; off (no compaction times)",
             [](CLI::Option* x) { x->check(CLI::IsMember({"both", "on", "off"})); });
    o.outputs("write the results (with per-bounce compaction), machine and command as JSON");
    return o;
  }();
  return schema;
}

namespace {
// How two images' sums differ: the pixels whose sums are not bit for bit equal, and the largest
// difference of one channel.
struct image_difference {
  std::size_t pixels = 0;
  float largest = 0;
};
image_difference difference(const std::vector<vec3>& a, const std::vector<vec3>& b) {
  image_difference d;
  if (a.size() != b.size()) return {std::max(a.size(), b.size()), 0};
  for (std::size_t i = 0; i < a.size(); ++i) {
    const float dx = std::abs(a[i].x - b[i].x), dy = std::abs(a[i].y - b[i].y), dz = std::abs(a[i].z - b[i].z);
    if (std::memcmp(&a[i], &b[i], sizeof(vec3)) != 0) ++d.pixels;
    d.largest = std::max({d.largest, dx, dy, dz});
  }
  return d;
}
}  // namespace

int run_render_bench(const render_bench_args& a, const std::string& command_line) {
  output_set outputs;  // checked before any work
  a.add_files_to(outputs);
  const bool gpu = resolve_backend(a.backend) == sieve::backend::cuda;
  const std::string backend(sieve::to_string(gpu ? sieve::backend::cuda : sieve::backend::cpu));  // for the reports
  const std::vector<std::string> strategies =
      a.strategies.empty() ? queue_strategies(gpu ? sieve::backend::cuda : sieve::backend::cpu) : a.strategies;
  auto render = [&](const prepared_scene& p, const render_settings& rs) { return gpu ? render_cuda(p, rs) : render_cpu(p, rs); };
  for (const auto& r : a.reorders) parse_mode<reorder_key>(r);  // fail before any work
  render_request rq;  // the scene as `sieve render` overrides it
  rq.scene = a.scene;
  rq.set = a.set;
  rq.spp = a.spp;
  rq.width = a.width;
  rq.height = a.height;
  const scene sc = load_requested_scene(rq);
  for (const auto& f : sc.files) outputs.add_input(f);
  const bvh_builder builder = parse_mode<bvh_builder>(a.build);
  const auto t_build = std::chrono::steady_clock::now();
  const prepared_scene ps(sc, builder, gpu);
  const double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_build).count();
  const nlohmann::json machine = machine_info(gpu);
  const std::string device = device_of(machine);
  std::cout << "device: " << device << " (" << backend << ")\n";
  std::cout << "BVH: " << builder_ran(builder, gpu, sc.triangles.size()) << ", built in " << fixed(build_s * 1e3, 1)
            << " ms (wall clock, its first build: the GPU's kernels loaded too)\n";
  std::cout << "scene " << sc.name << ": " << sc.triangles.size() << " triangles, " << sc.film.width << " x "
            << sc.film.height << ", " << sc.film.spp << " spp, " << sc.film.max_bounces << " bounces\n";

  const bool fast = a.profile_stages != "on", profiled = a.profile_stages != "off";
  row_schema<render_bench_row> rows = render_bench_rows();
  std::vector<config> configs = render_configs(a, sc, strategies, gpu);
  // Each configuration once, checked against the first one's image (the warm-up).
  int failed = 0;
  for (config& c : configs) {
    c.settings.profile_stages = profiled && !fast;
    c.checked = render(ps, c.settings);
    // The reference: the first configuration of the same texture storage (the texture unit's filter
    // and the packed texels' agree within a bound, not to the bit).
    const config& first = *std::find_if(configs.begin(), configs.end(), [&](const config& x) { return x.textures == c.textures; });
    const auto& img = c.checked.sum, &reference = first.checked.sum;
    c.same = img.size() == reference.size() && std::memcmp(img.data(), reference.data(), img.size() * sizeof(vec3)) == 0;
    if (!c.same) {
      ++failed;
      const image_difference d = difference(img, reference);
      std::cerr << "sieve bench render: " << c.integrator << " / " << c.queue << " / " << c.routing << " / "
                << c.strategy << " / " << c.traversal << " / " << c.bvh << " / " << c.reorder << " / " << c.textures
                << ": the image differs from the first configuration's in " << d.pixels << " of " << img.size()
                << " pixels (largest difference " << d.largest << " of a channel's sum)\n";
    }
    if (&c != &first) c.checked.sum = {};
  }
  // The timed renders in rounds, each round every configuration once, so that a drift of the
  // machine (clocks, another process) falls on every configuration alike, not on the first ones.
  for (int r = 0; r < a.repeats; ++r)
    for (config& c : configs) {
      if (!c.same) continue;
      for (const bool profile : {false, true}) {
        if (profile ? !profiled : !fast) continue;
        c.settings.profile_stages = profile;
        (profile ? c.profiled : c.fast).push_back(render(ps, c.settings).stats);
      }
    }
  for (config& c : configs) {
    const render_stats& m = median_run(profiled ? c.profiled : c.fast, c.checked.stats);
    const double seconds_fast = fast && profiled ? median_run(c.fast, c.checked.stats).seconds : m.seconds;
    const bool passless = c.integrator == "megakernel" || c.queue == "append";
    rows.add({c.integrator, c.queue, passless ? "-" : strategy_shown(c.strategy, m.strategies_ran),
              passless ? "-" : std::string(sieve::to_string(m.form)), c.routing, c.traversal, c.bvh, c.reorder, m,
              seconds_fast, profiled, c.same, c.textures});
  }
  rows.printed().print(std::cout);
  std::cout << "\nMrays/s counts extension and shadow rays (over s_median); compact_ms is the path queue's compaction "
               "(plus the BFS frontier's with bfs); compact_share = compact_ms / s_profiled; route_ms: routing paths to "
               "the material families' kernels; queue_share = (compact_ms + route_ms) / s_profiled; medians of "
            << a.repeats << " renders after one checked warm-up, in rounds of every configuration, wall time of the render: s_median without stage times, "
               "s_profiled with them ("
            << (gpu ? "CUDA events inside one wave's graph in every " + std::to_string(render_settings{}.profile_every) +
                          ", scaled to all"
                    : std::string("CPU clock"))
            << "); launch: graph (a wave captured once, replayed), stream (per-bounce syncs: thrust, a profiled bfs) or cpu; "
               "syncs/wave: host synchronisations per wave.\n";
  // The table is also the CSV.
  a.stage(outputs, rows,
          {{"benchmark", "render"},
           {"scene", a.scene},
           {"triangles", sc.triangles.size()},
           {"bvh", {{"builder", builder_ran(builder, gpu, sc.triangles.size())}, {"build_ms", build_s * 1e3}}},
           {"film", {{"width", sc.film.width}, {"height", sc.film.height}, {"spp", sc.film.spp},
                     {"max_bounces", sc.film.max_bounces}}},
           {"backend", backend},
           {"device", device},
           {"machine", machine},
           {"run", run_info(command_line)}});
  outputs.commit();
  return failed ? 1 : 0;
}

}  // namespace sieve::bench
