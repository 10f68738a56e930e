#include "render_bench.hpp"

#include "../report_names.hpp"

#include <output_files.hpp>
#include <scene/load.hpp>
#include <job/render_job.hpp>
#include <wavefront/integrator.hpp>

#include <sieve/compaction.hpp>

#include <algorithm>
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

struct timed {
  render_result result;  // of the median run
  std::vector<double> seconds;
};

}  // namespace

const option_schema<render_bench_args>& render_bench_options() {
  using A = render_bench_args;
  static const option_schema<A> schema = [] {
    option_schema<A> o;
    o.positional(&A::scene, "scene", "scene file (.toml or .obj)", [](CLI::Option* x) { x->required(); });
    o.option(&A::backend, "--backend", "auto (the GPU when there is one), cpu or cuda",
             [](CLI::Option* x) { x->check(CLI::IsMember({"auto", "cpu", "cuda"})); });
    o.repeated(&A::set, "--set", "override a scene key, key=value (repeatable)");
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
    o.option(&A::reorders, "--reorder", "none, morton, octant, termination (comma-separated)");
    o.option(&A::repeats, "--repeats", "timed renders per configuration (median reported)",
             [](CLI::Option* x) { x->check(CLI::Range(1, 100)); });
    o.option(&A::profile_stages, "--profile-stages",
             "both: time the renders without stage times (s_median) and again with them (compaction's share, "
             "s_profiled); on; off (no compaction times)",
             [](CLI::Option* x) { x->check(CLI::IsMember({"both", "on", "off"})); });
    o.option(&A::csv, "--csv", "write the results as CSV");
    o.option(&A::json, "--json", "write the results (with per-bounce compaction), machine and command as JSON");
    return o;
  }();
  return schema;
}

void add_render_bench_options(CLI::App& cmd, render_bench_args& a) { render_bench_options().add(cmd, a); }

std::string render_bench_command(const std::string& program, const render_bench_args& a) {
  return render_bench_options().command(program + " bench render", a);
}

int run_render_bench(const render_bench_args& a, const std::string& command_line) {
  output_set outputs;  // checked before any work
  outputs.add_input(a.scene);
  outputs.add_output(a.csv, "--csv");
  outputs.add_output(a.json, "--json");
  const std::string backend = resolve_backend(a.backend);
  const bool gpu = backend == "cuda";
  const std::vector<std::string> strategies =
      a.strategies.empty() ? queue_strategies(gpu ? sieve::backend::cuda : sieve::backend::cpu) : a.strategies;
  auto render = [&](const prepared_scene& p, const render_settings& rs) { return gpu ? render_cuda(p, rs) : render_cpu(p, rs); };
  for (const auto& r : a.reorders) parse_mode<reorder_key>(r);  // fail before any work
  const scene sc = load_scene(a.scene, a.set);
  for (const auto& f : sc.files) outputs.add_input(f);
  const prepared_scene ps(sc);
  const nlohmann::json machine = machine_info(gpu);
  const std::string device = device_of(machine);
  std::cout << "device: " << device << " (" << backend << ")\n";
  std::cout << "scene " << sc.name << ": " << sc.triangles.size() << " triangles, " << sc.film.width << " x "
            << sc.film.height << ", " << sc.film.spp << " spp, " << sc.film.max_bounces << " bounces\n";

  const bool fast = a.profile_stages != "on", profiled = a.profile_stages != "off";
  table t({"integrator", "queue", "strategy", "form", "traversal", "reorder", "launch", "syncs/wave", "s_median", "s_profiled",
           "Mrays/s", "compact_ms", "compact_share", "compact_ms_per_bounce", "identical"});
  nlohmann::json results = nlohmann::json::array();
  std::vector<vec3> reference;
  int failed = 0;
  // The spectrum of compaction, one row each: a strategy's pass over the path state, over 4-byte
  // indices, producer-side append (no pass, no strategy), the megakernel (no queue).
  std::vector<std::pair<std::string, std::string>> kinds;  // (integrator, queue)
  for (const auto& integrator : a.integrators)
    for (const auto& queue : integrator == "megakernel" ? std::vector<std::string>{"-"} : a.queues)
      kinds.emplace_back(integrator, queue);
  for (const auto& [integrator, queue] : kinds)
  for (const auto& launch : gpu && integrator == "wavefront" ? a.launches : std::vector<std::string>{"graph"})
  for (const auto& traversal : a.traversals)
    for (const auto& reorder : a.reorders)
      for (const auto& strategy :
           integrator == "megakernel" || queue == "append" ? std::vector<std::string>{"auto"} : strategies) {
        render_settings rs = render_settings::from(sc);
        rs.integrator = parse_mode<integrator_kind>(integrator);
        if (queue != "-") rs.queue = parse_mode<queue_mode>(queue);
        rs.wave_graph = launch == "graph";
        rs.strategy = strategy;
        rs.traversal = parse_mode<traversal_kind>(traversal);
        rs.reorder = parse_mode<reorder_key>(reorder);
        rs.profile_stages = profiled && !fast;
        const render_result checked = render(ps, rs);  // the warm-up, also the one checked
        const auto& img = checked.sum;
        if (reference.empty()) reference = img;
        const bool same = img.size() == reference.size() &&
                          std::memcmp(img.data(), reference.data(), img.size() * sizeof(vec3)) == 0;
        if (!same) {
          ++failed;
          std::cerr << "sieve bench render: " << strategy << " / " << traversal << " / " << reorder
                    << ": the image differs from the first configuration's\n";
        }
        // The median of `repeats` renders with stage times on or off (the warm-up when the image differs).
        auto median = [&](bool profile) {
          rs.profile_stages = profile;
          std::vector<render_result> runs;
          for (int r = 0; same && r < a.repeats; ++r) runs.push_back(render(ps, rs));
          if (runs.empty()) return checked;
          std::sort(runs.begin(), runs.end(),
                    [](const render_result& x, const render_result& y) { return x.stats.seconds < y.stats.seconds; });
          return runs[runs.size() / 2];
        };
        const render_result m = profiled ? median(true) : median(false);
        const double seconds_fast = fast && profiled ? median(false).stats.seconds : m.stats.seconds;
        const render_stats& st = m.stats;
        const double rays = static_cast<double>(st.extension_rays + st.shadow_rays);
        const double share = st.compaction_ms() / (st.seconds * 1e3);
        std::string per_bounce;
        nlohmann::json bounces = nlohmann::json::array();
        for (std::size_t b = 0; b < st.bounces.size(); ++b) {
          if (!st.bounces[b].live) continue;
          per_bounce += (per_bounce.empty() ? "" : " ") + fixed(st.bounces[b].compact_ms, 2);
          bounces.push_back({{"bounce", b}, {"live", st.bounces[b].live}, {"compaction_ms", st.bounces[b].compact_ms}});
        }
        nlohmann::json stages;
        for (const auto& s : st.stages) stages[s.name] = s.ms;
        const double syncs = st.waves ? static_cast<double>(st.host_syncs) / static_cast<double>(st.waves) : 0.0;
        const bool mega = integrator == "megakernel", passless = mega || queue == "append";
        const std::string form = passless ? "-" : std::string(sieve::to_string(st.form));
        const std::string shown = passless ? "-" : strategy_shown(strategy, st.strategies_ran);
        t.add({integrator, queue, shown, form, traversal, reorder, st.wave_launch, fixed(syncs, 1), fixed(seconds_fast, 3),
               profiled ? fixed(st.seconds, 3) : "-", fixed(rays / seconds_fast / 1e6, 2),
               profiled ? fixed(st.compaction_ms(), 1) : "-", profiled ? fixed(100 * share, 2) + " %" : "-",
               profiled ? per_bounce : "-", same ? "yes" : "NO"});
        results.push_back({{"integrator", integrator}, {"queue", queue}, {"strategy", shown}, {"strategies_ran", st.strategies_ran},
                           {"form", form}, {"traversal", traversal},
                           {"reorder", reorder}, {"seconds", st.seconds}, {"mrays_per_s", rays / st.seconds / 1e6},
                           {"profile_stages", profiled}, {"seconds_unprofiled", seconds_fast},
                           {"wave_launch", st.wave_launch}, {"waves", st.waves}, {"host_syncs", st.host_syncs},
                           {"host_syncs_per_wave", syncs},
                           {"extension_rays", st.extension_rays}, {"shadow_rays", st.shadow_rays},
                           {"compaction_ms", st.compaction_ms()}, {"bfs_frontier_compaction_ms", st.bfs_compact_ms},
                           {"compaction_share", share}, {"stages", stages}, {"loops", loops_json(st)}, {"bounces", bounces},
                           {"identical", same}});
      }
  t.print(std::cout);
  std::cout << "\nMrays/s counts extension and shadow rays (over s_median); compact_ms is the path queue's compaction "
               "(plus the BFS frontier's with bfs); compact_share = compact_ms / s_profiled; medians of "
            << a.repeats << " renders after one checked warm-up, wall time of the render: s_median without stage times, "
               "s_profiled with them ("
            << (gpu ? "CUDA events inside the wave's graph" : "CPU clock")
            << "); launch: graph (a wave captured once, replayed), stream (per-bounce syncs: thrust, a profiled bfs) or cpu; "
               "syncs/wave: host synchronisations per wave.\n";
  outputs.stage(a.csv, t.csv());
  if (!a.json.empty())
    outputs.stage(a.json, json_text(nlohmann::json{{"benchmark", "render"},
                                      {"scene", a.scene},
                                      {"triangles", sc.triangles.size()},
                                      {"film", {{"width", sc.film.width}, {"height", sc.film.height}, {"spp", sc.film.spp},
                                                {"max_bounces", sc.film.max_bounces}}},
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
