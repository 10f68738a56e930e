// Each suite's options are declared once (bench/options.hpp): the command line `sieve bench all`
// records for a filled args, parsed back by the suite's own parser, gives the same args, every
// option included (the hand-built copy this replaced dropped --queue, --launch, --reorder and
// --profile-stages from `bench render`'s commands).
#include "compaction/suite.hpp"
#include "render/render_bench.hpp"
#include "sort/suite.hpp"
#include "trace/trace.hpp"

#include <gtest/gtest.h>

#include <algorithm>
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
  a.repeats = 2;
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
  EXPECT_EQ(b.reorders, a.reorders) << cmd;
  EXPECT_EQ(b.repeats, a.repeats);
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

}  // namespace
