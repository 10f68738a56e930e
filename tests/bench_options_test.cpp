// Each suite's options are declared once (bench/options.hpp): the command line `sieve bench all`
// records for a filled args, parsed back by the suite's own parser, gives the same args, every
// option included (the hand-built copy this replaced dropped --queue, --launch, --reorder and
// --profile-stages from `bench render`'s commands). Each suite's result rows come from one schema
// (report/rows.hpp): its printed table, CSV and JSON hold the same rows and agree with each other.
#include "compaction/suite.hpp"
#include "render/render_bench.hpp"
#include "sort/suite.hpp"
#include "trace/trace.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace sieve::bench;

// The words a POSIX shell makes of `line` (plain words, '...' quotes, \x outside them).
std::vector<std::string> shell_words(const std::string& line) {
  std::vector<std::string> words;
  std::string w;
  bool in_word = false, quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '\'') quoted = false;
      else w += c;
    } else if (c == '\'') {
      quoted = in_word = true;
    } else if (c == '\\' && i + 1 < line.size()) {
      w += line[++i];
      in_word = true;
    } else if (c == ' ') {
      if (in_word) words.push_back(w);
      w.clear();
      in_word = false;
    } else {
      w += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(w);
  return words;
}

// Parses `command` (which must start with `prefix`) with the suite's own options.
template <class Args>
Args parse_back(const std::string& command, const std::string& prefix, const option_schema<Args>& options) {
  EXPECT_EQ(command.rfind(prefix, 0), 0U) << command;
  std::vector<std::string> words = shell_words(command.substr(prefix.size()));
  std::reverse(words.begin(), words.end());  // CLI11 takes them last first
  CLI::App app;
  Args parsed;
  options.add(app, parsed);
  app.parse(words);
  return parsed;
}

TEST(BenchOptions, CompactionCommandParsesBackToTheSameArgs) {
  compaction_args a;
  a.backend = "cpu";
  a.suites = {"select", "redzone"};
  a.strategies = {"redzone", "std"};
  a.n = {4096, std::size_t{1} << 26};
  a.fractions = {0.02, 1e-05, 0.5};
  a.distributions = {"uniform"};
  a.types = {"u32"};
  a.forms = {"removal"};
  a.quick = true;
  a.checked = true;
  a.repeats = 7;
  a.seed = 42;
  a.csv = "out dir/c.csv";
  a.json = "it's.json";
  a.crossover = "x.json";
  const std::string cmd = compaction_options().command("sieve", a);
  const compaction_args b = parse_back<compaction_args>(cmd, "sieve bench compaction", compaction_options());
  EXPECT_EQ(b.backend, a.backend);
  EXPECT_EQ(b.suites, a.suites);
  EXPECT_EQ(b.strategies, a.strategies);
  EXPECT_EQ(b.n, a.n);
  EXPECT_EQ(b.fractions, a.fractions) << cmd;
  EXPECT_EQ(b.distributions, a.distributions);
  EXPECT_EQ(b.types, a.types);
  EXPECT_EQ(b.forms, a.forms);
  EXPECT_EQ(b.quick, a.quick);
  EXPECT_EQ(b.checked, a.checked);
  EXPECT_EQ(b.graph, a.graph);
  EXPECT_EQ(b.repeats, a.repeats);
  EXPECT_EQ(b.seed, a.seed);
  EXPECT_EQ(b.csv, a.csv);
  EXPECT_EQ(b.json, a.json);
  EXPECT_EQ(b.crossover, a.crossover);
  EXPECT_EQ(compaction_options().command("sieve", b), cmd);
}

TEST(BenchOptions, DefaultsAreLeftOut) {
  EXPECT_EQ(compaction_options().command("sieve", compaction_args{}), "sieve bench compaction");
  EXPECT_EQ(sort_options().command("sieve", sort_args{}), "sieve bench sort");
  trace_args t;
  t.scene = "room.toml";
  EXPECT_EQ(trace_options().command("sieve", t), "sieve bench trace room.toml");
}

TEST(BenchOptions, RenderBenchCommandRepeatsEveryOption) {
  render_bench_args a;
  a.scene = "scenes/cornell box.toml";
  a.backend = "cuda";
  a.set = {"film.spp=4", "name=\"a b\""};
  a.integrators = {"wavefront", "megakernel"};
  a.strategies = {"atomic", "cub"};
  a.queues = {"index", "append"};
  a.launches = {"stream"};
  a.traversals = {"bfs"};
  a.reorders = {"morton", "none"};
  a.textures = {"packed", "hardware"};
  a.repeats = 2;
  a.wave_paths = 1U << 22;
  a.profile_stages = "on";
  a.csv = "r.csv";
  a.json = "r.json";
  const std::string cmd = render_bench_options().command("sieve", a);
  const render_bench_args b = parse_back<render_bench_args>(cmd, "sieve bench render", render_bench_options());
  EXPECT_EQ(b.scene, a.scene);
  EXPECT_EQ(b.backend, a.backend);
  EXPECT_EQ(b.set, a.set);
  EXPECT_EQ(b.integrators, a.integrators);
  EXPECT_EQ(b.strategies, a.strategies);
  EXPECT_EQ(b.queues, a.queues) << cmd;
  EXPECT_EQ(b.launches, a.launches) << cmd;
  EXPECT_EQ(b.traversals, a.traversals);
  EXPECT_EQ(b.textures, a.textures) << cmd;
  EXPECT_EQ(b.reorders, a.reorders) << cmd;
  EXPECT_EQ(b.repeats, a.repeats);
  EXPECT_EQ(b.wave_paths, a.wave_paths) << cmd;
  EXPECT_EQ(b.profile_stages, a.profile_stages) << cmd;
  EXPECT_EQ(b.csv, a.csv);
  EXPECT_EQ(b.json, a.json);
}

TEST(BenchOptions, TraceAndSortCommandsParseBack) {
  trace_args t;
  t.scene = "procedural/sphere-room.toml";
  t.backend = "cpu";
  t.set = {"procedural.n=4"};
  t.rays = {"shadow"};
  t.traversals = {"dfs", "bfs"};
  t.strategies = {"billeter", "redzone"};
  t.bfs_loops = {"host"};
  t.width = 64;
  t.height = 48;
  t.spp = 2;
  t.repeats = 1;
  t.builders = {"sah", "ploc"};
  t.ploc_radius = 8;
  const std::string tc = trace_options().command("sieve", t);
  const trace_args u = parse_back<trace_args>(tc, "sieve bench trace", trace_options());
  EXPECT_EQ(u.scene, t.scene);
  EXPECT_EQ(u.set, t.set);
  EXPECT_EQ(u.rays, t.rays);
  EXPECT_EQ(u.traversals, t.traversals);
  EXPECT_EQ(u.strategies, t.strategies);
  EXPECT_EQ(u.bfs_loops, t.bfs_loops);
  EXPECT_EQ(u.width, t.width);
  EXPECT_EQ(u.height, t.height);
  EXPECT_EQ(u.spp, t.spp);
  EXPECT_EQ(u.repeats, t.repeats);
  EXPECT_EQ(u.builders, t.builders);
  EXPECT_EQ(u.ploc_radius, t.ploc_radius);

  sort_args s;
  s.algorithms = {"cub"};
  s.n = {1U << 20};
  s.bits = {"0:32", "8:24"};
  s.keys = {"duplicates"};
  s.warmup = 0;
  s.repeats = 3;
  const std::string sc = sort_options().command("sieve", s);
  const sort_args r = parse_back<sort_args>(sc, "sieve bench sort", sort_options());
  EXPECT_EQ(r.algorithms, s.algorithms);
  EXPECT_EQ(r.n, s.n);
  EXPECT_EQ(r.bits, s.bits);
  EXPECT_EQ(r.keys, s.keys);
  EXPECT_EQ(r.warmup, s.warmup) << sc;
  EXPECT_EQ(r.repeats, s.repeats);
}

// --- Result rows: one schema per suite --------------------------------------------------------

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::string> keys_of(const nlohmann::json& object) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : object.items()) keys.push_back(k);
  return sorted(keys);
}

// The three outputs of `rows` hold the same rows, and each CSV column named in `json_key_of` holds
// its JSON value in every row: the same text, a number within the CSV's rounding ("-" or "" for
// 0 or a key the row leaves out), 1 / 0 or "yes..." / "NO" for a boolean.
template <class Row>
void expect_outputs_agree(const sieve::report::row_schema<Row>& rows, const std::map<std::string, std::string>& json_key_of) {
  const auto& csv = rows.csv();
  const nlohmann::json& json = rows.json();
  ASSERT_EQ(rows.printed().rows().size(), csv.rows().size());
  ASSERT_EQ(json.size(), csv.rows().size());
  for (const auto& [column, key] : json_key_of) {
    const auto at = std::find(csv.header().begin(), csv.header().end(), column);
    ASSERT_NE(at, csv.header().end()) << column;
    const auto c = static_cast<std::size_t>(at - csv.header().begin());
    for (std::size_t i = 0; i < json.size(); ++i) {
      const std::string& text = csv.rows()[i][c];
      const std::string where = column + " / " + key + ", row " + std::to_string(i) + ": '" + text + "'";
      if (!json[i].contains(key)) {
        EXPECT_TRUE(text == "-" || text.empty()) << where << " has no JSON value";
        continue;
      }
      const nlohmann::json& v = json[i][key];
      if (v.is_boolean()) {
        EXPECT_EQ(v.get<bool>(), text == "1" || text.rfind("yes", 0) == 0) << where;
        EXPECT_TRUE(text == "1" || text == "0" || text.rfind("yes", 0) == 0 || text == "NO") << where;
      } else if (v.is_number()) {
        if (text == "-" || text.empty()) {
          EXPECT_EQ(v.get<double>(), 0.0) << where;
          continue;
        }
        const auto dot = text.find('.');
        const double rounding = dot == std::string::npos ? 0.5 : 0.5 * std::pow(10.0, -double(text.size() - dot - 1));
        EXPECT_NEAR(std::strtod(text.c_str(), nullptr), v.get<double>(), rounding * 1.000001) << where;
      } else {
        EXPECT_EQ(text, v.get<std::string>()) << where;
      }
    }
  }
}

TEST(BenchRows, SortTableCsvAndJsonFromOneSchema) {
  sieve::report::row_schema<sort_row> rows = sort_rows();
  const std::vector<std::string> csv_columns = {
      "algorithm", "n",     "begin_bit", "end_bit", "keys", "ms_median", "ms_min", "ms_max", "gpairs_per_s", "bytes",
      "gbps",      "of_copy_bandwidth", "speed_vs_cub", "workspace_bytes", "validated", "error"};
  EXPECT_EQ(rows.csv().header(), csv_columns);
  EXPECT_EQ(rows.printed().header(),
            (std::vector<std::string>{"algorithm", "n", "bits", "keys", "ms_median", "ms_min", "ms_max", "Gpairs/s", "bytes",
                                      "GB/s", "of_copy", "x_cub", "validated"}));
  const std::size_t n = std::size_t{1} << 20;
  rows.add({"onesweep", n, 0, 32, "uniform", {0.2, 0.1, 0.3}, n * 68.0, 1000, 0.3, 9015552, true, ""});
  rows.add({"cub", n, 8, 24, "duplicates", {}, n * 36.0, 1000, 0, 4096, false, "keys differ at 3, want 1"});
  ASSERT_EQ(rows.json().size(), 2U);
  for (const auto& r : rows.json()) EXPECT_EQ(keys_of(r), sorted(csv_columns)) << "every CSV column is a JSON key";
  std::map<std::string, std::string> same;
  for (const auto& c : csv_columns) same[c] = c;
  same.erase("error");  // one CSV field: checked below
  expect_outputs_agree(rows, same);

  const auto& ok = rows.json()[0];
  EXPECT_DOUBLE_EQ(ok["gpairs_per_s"].get<double>(), n / 0.2e6);
  EXPECT_DOUBLE_EQ(ok["gbps"].get<double>(), n * 68.0 / 0.2e6);
  EXPECT_DOUBLE_EQ(ok["of_copy_bandwidth"].get<double>(), n * 68.0 / 0.2e6 / 1000);
  EXPECT_DOUBLE_EQ(ok["speed_vs_cub"].get<double>(), 1.5);
  EXPECT_TRUE(ok["n"].is_number_unsigned());
  EXPECT_TRUE(ok["begin_bit"].is_number_integer());
  EXPECT_EQ(rows.printed().rows()[0], (std::vector<std::string>{"onesweep", "2^20", "0:32", "uniform", "0.200", "0.100",
                                                                 "0.300", "5.24", "71303168", "357", "0.36", "1.50", "yes"}));
  // A failed point: "-" in the table, its error in one CSV field and whole in the JSON.
  EXPECT_EQ(rows.printed().rows()[1], (std::vector<std::string>{"cub", "2^20", "8:24", "duplicates", "-", "-", "-", "-",
                                                                 "37748736", "-", "-", "", "NO"}));
  EXPECT_EQ(rows.csv().rows()[1].back(), "keys differ at 3; want 1");
  EXPECT_EQ(rows.json()[1]["error"], "keys differ at 3, want 1");
  EXPECT_EQ(rows.json()[1]["validated"], false);
}

TEST(BenchRows, TraceTableIsTheCsvAndTheJsonKeysFollowTheBackend) {
  sieve::report::row_schema<trace_row> rows = trace_rows();
  const std::vector<std::string> columns = {"build",  "rays",     "traversal", "strategy",    "count",        "ms_median",
                                            "ms_min", "ms_max",   "Mrays/s",   "x_dfs",       "x_build0",     "syncs",
                                            "x_embree", "Mrays/cpu-s", "x_embree_cpu", "validated"};
  EXPECT_EQ(rows.csv().header(), columns);
  EXPECT_EQ(rows.printed().header(), columns);

  trace_row embree{.rays = "primary", .traversal = "embree", .strategy = "-", .count = 192, .ms = {0.02, 0.02, 0.03}};
  embree.mrays = embree.embree_mrays = 9.6;
  embree.cpu_ms = 0.04;
  embree.per_cpu_s = embree.embree_cpu = 4.8;
  embree.validated = embree.counted = true;
  embree.differing = 0;
  trace_row dfs = embree;
  dfs.traversal = "dfs";
  dfs.mrays = dfs.dfs_mrays = 4.8;
  dfs.per_cpu_s = 2.4;
  dfs.counted = false;
  dfs.build = "ploc";
  dfs.first_build_mrays = 9.6;  // over the first builder's tree on the same rays: x_build0 0.5
  trace_row gpu{.rays = "diffuse", .traversal = "bfs", .strategy = "cub", .gpu = true, .bfs_loop = "graph", .count = 1000,
                .ms = {0.5, 0.4, 0.6}};
  gpu.mrays = 2.0;
  gpu.dfs_mrays = 4.0;
  gpu.host_syncs = 1;
  gpu.validated = gpu.counted = true;
  gpu.differing = 2;
  gpu.profile = {{"steps", 12}, {"peak_pairs", 4096}};
  rows.add(embree);
  rows.add(dfs);
  rows.add(gpu);
  ASSERT_EQ(rows.json().size(), 3U);
  const std::vector<std::string> cpu_keys = sorted({"build", "count", "cpu_ms_median", "host_syncs", "mrays_per_cpu_s",
                                             "mrays_per_s", "ms_max", "ms_median", "ms_min", "rays", "strategy", "traversal",
                                             "validated", "versus_embree", "versus_embree_cpu", "vs_dfs", "vs_first_build"});
  EXPECT_EQ(keys_of(rows.json()[0]), cpu_keys);
  EXPECT_EQ(keys_of(rows.json()[1]), cpu_keys);
  EXPECT_EQ(keys_of(rows.json()[2]),
            sorted({"backend", "bfs_loop", "build", "count", "differing_rays", "host_syncs", "ms_max", "ms_median", "ms_min",
                    "mrays_per_s", "profile", "rays", "strategy", "traversal", "validated", "vs_dfs", "vs_first_build"}));
  expect_outputs_agree(rows, {{"build", "build"},
                              {"rays", "rays"},
                              {"strategy", "strategy"},
                              {"count", "count"},
                              {"ms_median", "ms_median"},
                              {"ms_min", "ms_min"},
                              {"ms_max", "ms_max"},
                              {"Mrays/s", "mrays_per_s"},
                              {"x_dfs", "vs_dfs"},
                              {"x_build0", "vs_first_build"},
                              {"syncs", "host_syncs"},
                              {"x_embree", "versus_embree"},
                              {"Mrays/cpu-s", "mrays_per_cpu_s"},
                              {"x_embree_cpu", "versus_embree_cpu"},
                              {"validated", "validated"}});
  EXPECT_EQ(rows.csv().rows()[0], (std::vector<std::string>{"sah", "primary", "embree", "-", "192", "0.02", "0.02", "0.03",
                                                             "9.60", "-", "-", "0", "1.00", "4.80", "1.00", "yes (0 differ)"}));
  EXPECT_EQ(rows.csv().rows()[1][0], "ploc");
  EXPECT_EQ(rows.csv().rows()[1][9], "1.00");
  EXPECT_EQ(rows.csv().rows()[1][10], "0.500");
  EXPECT_EQ(rows.csv().rows()[1][12], "0.50");
  EXPECT_EQ(rows.csv().rows()[1].back(), "yes");
  // The GPU's rows: the loop in the table's traversal, 3 decimals, no Embree or CPU time.
  EXPECT_EQ(rows.csv().rows()[2], (std::vector<std::string>{"sah", "diffuse", "bfs graph (cuda)", "cub", "1000", "0.500",
                                                             "0.400", "0.600", "2.0", "0.50", "-", "1", "-", "-", "-",
                                                             "yes (2 differ)"}));
  EXPECT_EQ(rows.json()[2]["traversal"], "bfs");
  EXPECT_EQ(rows.json()[2]["backend"], "cuda");
  EXPECT_EQ(rows.json()[2]["profile"]["steps"], 12);
}

TEST(BenchRows, RenderBenchTableIsTheCsvAndTheJsonHoldsTheBounces) {
  sieve::report::row_schema<render_bench_row> rows = render_bench_rows();
  const std::vector<std::string> columns = {
      "integrator", "queue",      "routing",  "strategy",    "form",          "traversal",   "bvh",
      "reorder",    "textures",   "launch",     "syncs/wave", "s_median",  "s_profiled",    "Mrays/s",
      "compact_ms", "route_ms",   "queue_share", "compact_share", "compact_ms_per_bounce", "identical"};
  EXPECT_EQ(rows.csv().header(), columns);
  EXPECT_EQ(rows.printed().header(), columns);

  render_bench_row r{"wavefront", "pass", "auto -> billeter", "bit mask", "multisplit", "dfs", "auto", "none", {}, 0.4, true, true};
  r.stats.stages = {{"extend", 5.0}, {"route", 0.5}, {"compact", 2.0}};
  r.stats.loops = {{"extend", 4, 4000, 4.5}};
  r.stats.bounces = {{100, 1.25}, {0, 0.0}, {40, 0.75}};
  r.stats.extension_rays = 3000000;
  r.stats.shadow_rays = 1000000;
  r.stats.seconds = 0.5;
  r.stats.waves = 2;
  r.stats.host_syncs = 3;
  r.stats.wave_launch = "graph";
  r.stats.strategies_ran = {"billeter"};
  render_bench_row plain = r;  // --profile-stages off: compaction not measured
  plain.profiled = false;
  plain.stats.stages.clear();
  plain.stats.loops.clear();
  plain.stats.seconds = 0.4;
  plain.identical = false;
  rows.add(r);
  rows.add(plain);
  ASSERT_EQ(rows.json().size(), 2U);
  const std::vector<std::string> keys = sorted({
      "bfs_frontier_compaction_ms", "bounces", "bvh", "compaction_ms", "compaction_share", "extension_rays", "form",
      "host_syncs", "host_syncs_per_wave", "identical", "integrator", "loops", "mrays_per_s", "profile_stages", "queue",
      "queue_share", "reorder", "route_ms", "routing", "seconds", "seconds_unprofiled", "shadow_rays", "stages", "strategies_ran", "strategy", "textures", "traversal",
      "wave_launch", "waves"});
  for (const auto& j : rows.json()) EXPECT_EQ(keys_of(j), keys);
  expect_outputs_agree(rows, {{"integrator", "integrator"},
                              {"queue", "queue"},
                              {"routing", "routing"},
                              {"strategy", "strategy"},
                              {"form", "form"},
                              {"traversal", "traversal"},
                              {"reorder", "reorder"},
                              {"textures", "textures"},
                              {"launch", "wave_launch"},
                              {"syncs/wave", "host_syncs_per_wave"},
                              {"s_median", "seconds_unprofiled"},
                              {"identical", "identical"}});
  EXPECT_EQ(rows.csv().rows()[0],
            (std::vector<std::string>{"wavefront", "pass", "multisplit", "auto -> billeter", "bit mask", "dfs", "auto", "none",
                                      "hardware", "graph", "1.5", "0.400", "0.500", "10.00", "2.0", "0.5", "0.50 %", "0.40 %",
                                      "1.25 0.75", "yes"}));
  // Mrays/s is over s_median; the JSON's mrays_per_s over seconds (the profiled median).
  EXPECT_DOUBLE_EQ(rows.json()[0]["mrays_per_s"].get<double>(), 8.0);
  EXPECT_DOUBLE_EQ(rows.json()[0]["compaction_share"].get<double>(), 2.0 / 500);
  EXPECT_DOUBLE_EQ(rows.json()[0]["queue_share"].get<double>(), 2.5 / 500);  // routing plus compaction
  EXPECT_EQ(rows.json()[0]["stages"]["compact"], 2.0);
  EXPECT_EQ(rows.json()[0]["loops"],
            nlohmann::json::parse(R"([{"name": "extend", "launches": 4, "items": 4000, "ms": 4.5}])"));
  EXPECT_EQ(rows.json()[0]["bounces"],
            nlohmann::json::parse(R"([{"bounce": 0, "live": 100, "compaction_ms": 1.25},
                                      {"bounce": 2, "live": 40, "compaction_ms": 0.75}])"));
  // Without stage times the table says "-" for what was not measured; the JSON keeps its keys.
  EXPECT_EQ(rows.csv().rows()[1],
            (std::vector<std::string>{"wavefront", "pass", "multisplit", "auto -> billeter", "bit mask", "dfs", "auto", "none",
                                      "hardware", "graph", "1.5", "0.400", "-", "10.00", "-", "-", "-", "-", "-", "NO"}));
  EXPECT_EQ(rows.json()[1]["profile_stages"], false);
  EXPECT_TRUE(rows.json()[1]["stages"].is_null());
  EXPECT_TRUE(rows.json()[1]["loops"].empty());
}

// Each suite declares --csv and --json through the shared declaration (option_schema::outputs).
TEST(BenchOptions, EverySuiteTakesCsvAndJson) {
  compaction_args c;
  c.csv = "c.csv";
  c.json = "c.json";
  const auto cb = parse_back<compaction_args>(compaction_options().command("sieve", c), "sieve bench compaction",
                                              compaction_options());
  EXPECT_EQ(cb.csv, "c.csv");
  EXPECT_EQ(cb.json, "c.json");
  sort_args s;
  s.csv = "s.csv";
  s.json = "s.json";
  const auto sb = parse_back<sort_args>(sort_options().command("sieve", s), "sieve bench sort", sort_options());
  EXPECT_EQ(sb.csv, "s.csv");
  EXPECT_EQ(sb.json, "s.json");
  trace_args t;
  t.scene = "t.toml";
  t.csv = "t.csv";
  t.json = "t.json";
  EXPECT_EQ(trace_options().command("sieve", t), "sieve bench trace t.toml --csv t.csv --json t.json");
  const auto tb = parse_back<trace_args>(trace_options().command("sieve", t), "sieve bench trace", trace_options());
  EXPECT_EQ(tb.csv, "t.csv");
  EXPECT_EQ(tb.json, "t.json");
}

}  // namespace
