#include "suite.hpp"

#include "measure.hpp"

#include <output_files.hpp>
#include <rows.hpp>

#include <sieve/compaction.hpp>
#include <sieve/compaction/backend.hpp>

#include <tbb/task_arena.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <tuple>

namespace sieve::bench {
namespace {

// One measured case as the result rows show it (bench_case, its measurement, and what is derived).
struct result_row {
  const bench_case& c;
  const measurement& m;
  bool ok = false;          // validated and timed
  double bytes = 0, gbps = 0;
  double floor = 0, of_floor = 0;  // the floor's ms (GPU) and floor / median
  std::string mode, ran, shown;    // in | out; the strategy that ran; "auto -> x" or the name
  std::vector<double> ratios;      // each baseline's median / this median (0: none)
};

// A suite: the grid a paper's experiment spans, per backend, full and quick.
struct suite {
  std::string name;
  std::vector<form> forms;
  std::vector<std::string> types;
  std::vector<std::size_t> n;
  std::vector<double> fractions;
  std::vector<std::string> distributions;
  std::size_t bytes = 0;  // when n is empty: n = bytes / item width, per item type
};

std::vector<std::size_t> powers_of_two(int lo, int hi, int step) {
  std::vector<std::size_t> v;
  for (int e = lo; e <= hi; e += step) v.push_back(std::size_t{1} << e);
  return v;
}

// lo %, lo + step %, ... hi %, as fractions.
std::vector<double> percents(int lo, int hi, int step) {
  std::vector<double> v;
  for (int p = lo; p <= hi; p += step) v.push_back(p / 100.0);
  return v;
}

suite preset(const std::string& name, backend b, bool quick) {
  const bool gpu = b == backend::cuda;
  if (name == "redzone")  // the Redzone paper's section 5: k = 2, 10, 50, 90 %, phase 1 counted for all
    return {name, {form::removal_list}, {"u32"},
            quick ? std::vector<std::size_t>{std::size_t{1} << 22} : gpu ? powers_of_two(15, 29, 2) : powers_of_two(20, 26, 3),
            {0.02, 0.10, 0.50, 0.90},
            quick || !gpu ? std::vector<std::string>{"uniform"}
                          : std::vector<std::string>{"uniform", "r0", "r25", "r50", "r75", "r100"}};
  if (name == "select")  // flags and bit masks over the kept share, SPACE's three distributions
    return {name, {form::byte_flags, form::bit_mask}, {"u32"},
            {quick ? std::size_t{1} << 22 : std::size_t{1} << 24},
            quick ? std::vector<double>{0.01, 0.5, 0.99} : std::vector<double>{0.01, 0.1, 0.5, 0.9, 0.99},
            quick ? std::vector<std::string>{"uniform"} : std::vector<std::string>{"uniform", "cluster", "clusters32"}};
  if (name == "space")  // SPACE's grid (Fett et al.): 1 GiB of items of each type, kept 1 .. 97 % in steps of 4 %
    return {name, {form::byte_flags, form::bit_mask}, {"u8", "u16", "u32", "u64", "float", "double"},
            quick ? std::vector<std::size_t>{std::size_t{1} << 22} : std::vector<std::size_t>{},
            quick ? percents(1, 97, 48) : percents(1, 97, 4), {"uniform", "cluster", "clusters32"},
            std::size_t{1} << 30};
  if (name == "billeter")  // Billeter et al.'s Table 3: 4M u32 items, byte flags, kept 0 .. 100 % in steps of 10 %
    return {name, {form::byte_flags}, {"u32"}, {std::size_t{1} << 22}, quick ? percents(0, 100, 50) : percents(0, 100, 10),
            {"uniform"}};
  throw error("unknown suite '" + name + "'; suites: redzone, select, space, billeter");
}

// The baselines every strategy is compared with, measured at the same grid point in the same run.
std::vector<std::string> baselines_of(backend b) {
  return b == backend::cpu ? std::vector<std::string>{"std"} : std::vector<std::string>{"cub", "thrust"};
}

// The big buffers of `in`, for the next point's make_inputs to recycle; `in` keeps what the checks
// of a loaded CUDA point read (kept, digest, expected).
case_inputs spare_buffers(case_inputs& in) {
  case_inputs spare;
  spare.n = in.n;
  spare.width = in.width;
  spare.items = std::move(in.items);
  spare.removals = std::move(in.removals);
  spare.flags = std::move(in.flags);
  spare.mask = std::move(in.mask);
  spare.keep = std::move(in.keep);
  return spare;
}

// Which way a strategy is timed: removal lists in place where it can (as Redzone must), selections
// out of place where it can (as CUB's Select).
bool timed_in_place(const strategy_info& s, form f) { return f == form::removal_list ? s.in_place : !s.out_of_place; }

std::string human_n(std::size_t n) {
  const int e = std::countr_zero(n);
  if (n && (n & (n - 1)) == 0) return "2^" + std::to_string(e);
  return std::to_string(n);
}

std::string percent(double f) {
  const double p = f * 100;
  return fixed(p, std::abs(p - std::round(p)) < 1e-9 ? 0 : 1) + "%";
}

// The crossover table `auto` reads: per form and n (and, for removal lists, k/n: the only share
// the host knows before the call) and item size the strategies ranked by median time, fastest first. For flags
// and masks the rank is by the geometric mean over the kept shares measured. `auto` itself and
// points that failed validation are left out.
nlohmann::json crossover_table(const std::vector<bench_case>& cases, const std::vector<measurement>& measured,
                               backend where, const std::string& command_line) {
  // (form, item bytes, n, fraction or -1) -> strategy -> (sum of log ms, count)
  std::map<std::tuple<std::string, std::uint32_t, std::size_t, double>, std::map<std::string, std::pair<double, int>>> acc;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const bench_case& c = cases[i];
    if (c.strategy == "auto" || !measured[i].validated || measured[i].ms.median <= 0) continue;
    const double fr = c.f == form::removal_list ? c.fraction : -1.0;
    auto& slot = acc[{form_short_name(c.f), c.type.width, c.n, fr}][c.strategy];
    slot.first += std::log(measured[i].ms.median);
    slot.second += 1;
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [key, by_strategy] : acc) {
    int most = 0;
    for (const auto& [s, v] : by_strategy) most = std::max(most, v.second);
    std::vector<std::pair<double, std::string>> ranked;
    for (const auto& [s, v] : by_strategy)
      if (v.second == most) ranked.push_back({v.first / v.second, s});  // measured at every share
    std::sort(ranked.begin(), ranked.end());
    nlohmann::json order = nlohmann::json::array(), ms = nlohmann::json::array();
    for (const auto& [log_ms, s] : ranked) {
      order.push_back(s);
      ms.push_back(std::exp(log_ms));
    }
    const auto& [f, bytes, n, fr] = key;
    rows.push_back({{"form", f}, {"item_bytes", bytes}, {"n", n},
                    {"fraction", fr < 0 ? nlohmann::json(nullptr) : nlohmann::json(fr)},
                    {"ranking", order}, {"ms", ms}});
  }
  const nlohmann::json machine = machine_info(where == backend::cuda);
  std::string device = device_of(machine);
  device = device.substr(0, device.find(" ("));
  return {{"device", device}, {"backend", to_string(where)}, {"run", run_info(command_line)},
          {"rows", rows},
          {"note", "ms: median (flags/masks: geometric mean over the kept shares) of one column of item_bytes "
                   "bytes; ranking: fastest first"}};
}

// The strategy that ran for a grid point: the name asked for, or what `auto` picked for its form,
// mode, n, k and item size.
std::string resolved_strategy(const bench_case& c) {
  const std::size_t k =
      c.f == form::removal_list ? static_cast<std::size_t>(std::llround(c.fraction * static_cast<double>(c.n))) : 0;
  return std::string(resolve_strategy(c.strategy, c.where, c.f, c.in_place, c.n, k, c.type.width));
}

}  // namespace

const option_schema<compaction_args>& compaction_options() {
  using A = compaction_args;
  static const option_schema<A> schema = [] {
    option_schema<A> o("bench compaction");
    o.backend(&A::backend);
    o.option(&A::suites, "--suite",
             "redzone (removal lists, the Redzone paper's grid), select (flags and masks), space (SPACE's grid: "
             "flags and masks, u8 u16 u32 u64 float double, 1 GiB of items each, kept 1 .. 97 % by 4 %, three "
             "distributions), billeter (Billeter et al.'s Table 3: 4M u32, byte flags, kept 0 .. 100 % by 10 %)");
    o.option(&A::strategies, "--strategy,--strategies",
             "compaction strategies, comma-separated (default: every one that fits; --strategies: the old name)");
    o.option(&A::n, "--n", "item counts, comma-separated");
    o.option(&A::fractions, "--fraction", "k/n for removal lists, kept share for flags/masks (0..1)", [](CLI::Option* x) {
      x->check(CLI::Validator(  // CLI::Range lets nan through (every comparison with it is false)
          [](std::string& s) -> std::string {
            char* end = nullptr;
            const double v = std::strtod(s.c_str(), &end);
            return end != s.c_str() && *end == '\0' && v >= 0 && v <= 1 ? "" : "'" + s + "' is not a number in 0 .. 1";
          },
          "in 0 .. 1", "fraction"));
    });
    o.option(&A::distributions, "--distribution",
             "removal lists: uniform, r0..r100 (share inside the red zone); flags/masks: uniform, cluster, "
             "clusters32");
    o.option(&A::types, "--type",
             "u8, u16, u32, u64, float, double, struct32, paths48 (the renderer's path queue: columns of 4, 28, "
             "12 and 4 bytes moved as one record; cuda)");
    o.flag(&A::checked, "--checked",
           "time the calls in checked mode, sieve's default (removal lists validated before anything moves); "
           "off unless given, as in the papers' comparisons (every result is validated against the reference "
           "anyway)");
    o.flag(&A::graph, "--graph",
           "cuda: pass the counts in device memory and time each call as the mean of many replays of a CUDA "
           "graph holding it (the GPU's time per call, without the host's launch path); thrust, which reads its "
           "counts back, is timed per call");
    o.option(&A::forms, "--form", "removal, flags, mask");
    o.flag(&A::quick, "--quick", "small grid, few repeats (a minute on 2 cores)");
    o.option(&A::repeats, "--repeats", "timed runs per point (after warm-up)",
             [](CLI::Option* x) { x->check(CLI::Range(1, 100000))->default_str("10 (--quick: 5)"); });
    o.option(&A::seed, "--seed", "input generator seed");
    o.outputs();
    o.option(&A::crossover, "--crossover",
             "write the crossover table `auto` reads (compaction/tuning/<device>.json): strategies ranked "
             "by time per form and n (and k/n for removal lists)");
    return o;
  }();
  return schema;
}

namespace {

// The grid of cases the options ask for, checked: strategies that run on the backend, types and
// sizes it measures; the suites' presets narrowed by the options.
std::vector<bench_case> grid_of(const compaction_args& a, backend where) {
  for (const auto& s : a.strategies) {
    const auto& info = compaction_strategy(s);  // throws for an unknown name
    if (!info.runs_on(where))
      throw error("strategy '" + s + "' does not run on " + std::string(to_string(where)));
  }
  for (const auto& t : a.types)
    if (!item_type_named(t).columns.empty() && where != backend::cuda)
      throw error("--type " + t + ": records of several columns are measured on the cuda backend");
  if (a.graph && where != backend::cuda) throw error("--graph times CUDA graphs: it needs --backend cuda");
  for (std::size_t n : a.n)
    if (n == 0 || n > (std::size_t{1} << 32) - 1)
      throw error("--n " + std::to_string(n) + " is out of range (1 .. 2^32 - 1)");

  const std::vector<std::string> suite_names = a.suites.empty() ? std::vector<std::string>{"redzone", "select"} : a.suites;
  std::vector<bench_case> cases;
  for (const auto& name : suite_names) {
    suite s = preset(name, where, a.quick);
    if (!a.forms.empty()) {
      std::vector<form> forms;
      for (const auto& f : a.forms)
        if (std::find(s.forms.begin(), s.forms.end(), form_named(f)) != s.forms.end()) forms.push_back(form_named(f));
      s.forms = forms;
    }
    if (!a.types.empty()) s.types = a.types;
    if (!a.n.empty()) s.n = a.n;
    if (!a.fractions.empty()) s.fractions = a.fractions;
    if (!a.distributions.empty()) s.distributions = a.distributions;
    for (form f : s.forms)
      for (const auto& d : s.distributions) check_distribution(f, d);
    for (form f : s.forms)
      for (const auto& t : s.types)
        for (std::size_t n : s.n.empty() ? std::vector<std::size_t>{s.bytes / item_type_named(t).width} : s.n)
          for (double fr : s.fractions)
            for (const auto& d : s.distributions)
              for (const auto& info : compaction_strategies()) {
                const std::string name(info.name);
                const bool named = std::find(a.strategies.begin(), a.strategies.end(), name) != a.strategies.end();
                if (a.strategies.empty() ? (name == "auto" || name == "redzone-serial") : !named) continue;
                if (!info.takes(where, f)) continue;
                cases.push_back({where, name, f, item_type_named(t), n, fr, d, timed_in_place(info, f)});
              }
  }
  if (cases.empty()) throw error("the grid is empty: no strategy of those named takes the forms of the chosen suites");
  return cases;
}

// One schema for the printed table, the CSV and the JSON: the table shortens (2^20, 2 %, 3
// decimals, "-" for a failed point), the CSV keeps exact values, the JSON plain numbers.
row_schema<result_row> compaction_rows(const std::vector<std::string>& baselines, bool cuda) {
  using col = field<result_row>;
  std::vector<col> columns = {
      {"backend", "backend", "backend", [](const result_row& r) { return text_cell(std::string(to_string(r.c.where))); }},
      {"strategy", "strategy", "strategy", [](const result_row& r) { return cell{r.shown, r.shown, r.c.strategy}; }},
      {"", "", "resolved", [](const result_row& r) { return cell{"", "", r.ran}; }},
      {"form", "form", "form", [](const result_row& r) { return text_cell(form_short_name(r.c.f)); }},
      {"mode", "mode", "mode", [](const result_row& r) { return text_cell(r.mode); }},
      {"type", "type", "type", [](const result_row& r) { return text_cell(r.c.type.name); }},
      {"n", "n", "n", [](const result_row& r) { return cell{human_n(r.c.n), std::to_string(r.c.n), r.c.n}; }},
      {"fraction", "fraction", "fraction",
       [](const result_row& r) { return cell{percent(r.c.fraction), fixed(r.c.fraction, 4), r.c.fraction}; }},
      {"distribution", "distribution", "distribution", [](const result_row& r) { return text_cell(r.c.distribution); }},
      {"ms_median", "ms_median", "ms_median", [](const result_row& r) { return ms_cell(r.m.ms.median, r.ok); }},
      {"ms_min", "ms_min", "ms_min", [](const result_row& r) { return ms_cell(r.m.ms.min, r.ok); }},
      {"ms_max", "ms_max", "ms_max", [](const result_row& r) { return ms_cell(r.m.ms.max, r.ok); }},
      {"phase1_ms", "phase1_ms", "phase1_ms", [](const result_row& r) { return ms_cell(r.m.phase1_ms, r.ok); }},
      {"bytes", "bytes", "bytes", [](const result_row& r) { return cell{fixed(r.bytes, 0), fixed(r.bytes, 0), r.bytes}; }},
      {"GB/s", "gbps", "gbps",
       [](const result_row& r) { return cell{r.ok ? fixed(r.gbps, 2) : "-", fixed(r.gbps, 3), r.gbps}; }},
      {"kept", "kept", "kept", [](const result_row& r) { return count_cell(r.m.kept); }}};
  for (std::size_t b = 0; b < baselines.size(); ++b)
    columns.push_back({"x_" + baselines[b], "speedup_vs_" + baselines[b], "speedup_vs_" + baselines[b],
                       [b](const result_row& r) {
                         const double x = r.ratios[b];
                         return cell{x > 0 ? fixed(x, 2) : "", x > 0 ? fixed(x, 4) : "", x};
                       }});
  // The floor and the timing method are printed for the GPU only (the CPU has neither).
  columns.push_back({cuda ? "floor_ms" : "", "floor_ms", "floor_ms", [](const result_row& r) {
                       return cell{r.floor > 0 ? fixed(r.floor, 3) : "", r.floor > 0 ? fixed(r.floor, 5) : "", r.floor};
                     }});
  columns.push_back({cuda ? "of_floor" : "", "of_floor", "of_floor", [](const result_row& r) {
                       return cell{r.of_floor > 0 ? fixed(r.of_floor, 2) : "", r.of_floor > 0 ? fixed(r.of_floor, 4) : "",
                                   r.of_floor};
                     }});
  columns.push_back({cuda ? "timing" : "", "timing", "timing", [](const result_row& r) { return text_cell(r.m.timing); }});
  columns.push_back({"validated", "validated", "validated", [](const result_row& r) { return validated_cell(r.m.validated); }});
  columns.push_back({"", "error", "error", [](const result_row& r) { return error_cell(r.m.error); }});
  return row_schema<result_row>(std::move(columns));

}

// Inputs are shared by every strategy of a grid point; keyed by everything but the strategy.
std::string point_key(const bench_case& c) {
  return form_short_name(c.f) + "/" + c.type.name + "/" + std::to_string(c.n) + "/" + std::to_string(c.fraction) + "/" +
         c.distribution;
}

// What the grid's measurement gives: each case's measurement, the baselines' and the floor's
// medians per grid point, the cases that failed validation.
struct grid_timings {
  std::vector<measurement> measured;
  std::map<std::string, std::map<std::string, double>> baseline_ms;  // key -> baseline -> ms
  std::map<std::string, double> floor_ms;                             // key -> the floor's ms
  int failed = 0;
};

// Measures every case, grid point by grid point (the inputs made once per point).
grid_timings measure_grid(const std::vector<bench_case>& cases, const compaction_args& a, const timing_plan& plan,
                          const std::vector<std::string>& baselines, double copy_gbps, backend where) {
  grid_timings t;
  auto& measured = t.measured;
  auto& baseline_ms = t.baseline_ms;
  auto& floor_ms = t.floor_ms;
  int& failed = t.failed;
  measured.resize(cases.size());
  // The grid points: runs of consecutive cases with the same key (the loops above nest the strategy
  // innermost), from points[p] to points[p + 1].
  std::vector<std::size_t> points;
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (i == 0 || point_key(cases[i]) != point_key(cases[i - 1])) points.push_back(i);
  points.push_back(cases.size());

  std::unique_ptr<cuda_bench> device;
  if (where == backend::cuda) device = std::make_unique<cuda_bench>();
  // On the GPU the next point's inputs are made while this one is measured, on all cores but two
  // (one drives the GPU); on the CPU the measurement needs the cores and the inputs, so they take turns.
  tbb::task_arena ahead(std::max(1, tbb::this_task_arena::max_concurrency() - 2));
  case_inputs inputs = make_inputs(cases[0], a.seed);
  for (std::size_t p = 0; p + 1 < points.size(); ++p) {
    const bench_case& first = cases[points[p]];
    const std::string key = point_key(first);
    const bool last = p + 2 == points.size();
    std::future<case_inputs> next;
    std::string point_error;  // the upload failed (out of device memory, say): every case of the point fails
    if (device) {
      try {
        device->load(first, inputs);
        // The floor: the O(k) kernel for removal lists; for selections the nominal bytes at copy speed.
        floor_ms[key] = first.f == form::removal_list ? device->removal_floor(first, plan).median
                                                      : nominal_bytes(first, inputs.kept) / (copy_gbps * 1e6);
      } catch (const std::exception& e) {
        point_error = std::string("loading the point's inputs on the device: ") + e.what();
      }
      if (!last)
        next = std::async(std::launch::async, [&ahead, c = cases[points[p + 1]], seed = a.seed,
                                               spare = spare_buffers(inputs)]() mutable {
          return ahead.execute([&] { return make_inputs(c, seed, std::move(spare)); });
        });
    }
    for (std::size_t i = points[p]; i < points[p + 1]; ++i) {
      const bench_case& c = cases[i];
      std::cerr << "[" << i + 1 << "/" << cases.size() << "] " << c.strategy << " " << form_short_name(c.f) << " "
                << c.type.name << " n=" << human_n(c.n) << " " << percent(c.fraction) << " " << c.distribution << "\n";
      if (!point_error.empty())
        measured[i].error = point_error;
      else
        measured[i] = device ? device->measure(c, inputs, plan) : measure_cpu(c, inputs, plan);
      if (!measured[i].validated) {
        ++failed;
        std::cerr << "sieve bench compaction: " << c.strategy << " " << form_short_name(c.f) << " " << c.type.name
                  << " n=" << c.n << " " << percent(c.fraction) << " " << c.distribution
                  << " FAILED validation: " << measured[i].error << "\n";
      }
      if (std::find(baselines.begin(), baselines.end(), c.strategy) != baselines.end() && measured[i].validated)
        baseline_ms[key][c.strategy] = measured[i].ms.median;
    }
    if (!last) inputs = next.valid() ? next.get() : make_inputs(cases[points[p + 1]], a.seed, std::move(inputs));
  }

  return t;
}

}  // namespace

int run_compaction_bench(const compaction_args& a, const std::string& command_line) {
  report::output_set outputs;  // checked before any work
  a.add_to(outputs);
  outputs.add_output(a.crossover, "--crossover");
  const backend where = resolve_backend(a.backend);
  const std::vector<bench_case> cases = grid_of(a, where);
  // A point holds its items, the output, the expected rows and the selection (about 3 w + 6 bytes an
  // item); on the GPU the next point's inputs are made meanwhile.
  double most = 0;
  for (const bench_case& c : cases) most = std::max(most, static_cast<double>(c.n) * (3.0 * c.type.width + 6));
  admit_memory(most * (where == backend::cuda ? 2 : 1), "bench compaction: the largest point's items");

  const timing_plan plan{a.quick ? 1 : 2, a.repeats ? a.repeats : (a.quick ? 5 : 10), a.graph, a.checked};
  const std::vector<std::string> baselines = baselines_of(where);
  // The ceiling of an O(n) pass on this GPU, measured now: a device-to-device copy of 1 GiB.
  const double copy_gbps = where == backend::cuda ? device_copy_gbps(std::size_t{1} << 30, plan) : 0;

  row_schema<result_row> rows = compaction_rows(baselines, where == backend::cuda);
  grid_timings t = measure_grid(cases, a, plan, baselines, copy_gbps, where);
  auto& measured = t.measured;
  auto& baseline_ms = t.baseline_ms;
  auto& floor_ms = t.floor_ms;
  int& failed = t.failed;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const bench_case& c = cases[i];
    const measurement& m = measured[i];
    const std::string key = point_key(c);
    const bool ok = m.validated && m.ms.median > 0;
    const double bytes = nominal_bytes(c, m.kept);
    const double gbps = ok ? bytes / (m.ms.median * 1e6) : 0;
    const std::string mode = c.in_place ? "in" : "out";
    const std::string ran = resolved_strategy(c);
    const std::string shown = ran == c.strategy ? ran : c.strategy + " -> " + ran;
    std::vector<double> ratios;
    for (const auto& b : baselines) {
      const auto found = baseline_ms[key].find(b);
      ratios.push_back(ok && found != baseline_ms[key].end() ? found->second / m.ms.median : 0);
    }
    const double fl = floor_ms.count(key) ? floor_ms[key] : 0;
    const double of_floor = ok && fl > 0 ? fl / m.ms.median : 0;

    rows.add({c, m, ok, bytes, gbps, fl, of_floor, mode, ran, shown, ratios});
  }

  const nlohmann::json machine = machine_info(where == backend::cuda);
  const std::string device_name = device_of(machine);
  std::cout << "device: " << device_name << " (" << to_string(where) << ")\n";
  rows.printed().print(std::cout);
  std::string names;
  for (const auto& b : baselines) names += (names.empty() ? "" : ", ") + b;
  std::cout << "\nms: whole call (phase 1 marking included), median of " << plan.repeats << " runs after "
            << plan.warmup << " warm-up"
            << (plan.checked ? "; checked mode (removal lists validated first)" : "")
            << (plan.graph ? " (timing graph: each run the mean of many replays of a CUDA graph of the call, counts "
                             "in device memory; events: one call between two events)"
                           : "")
            << "; x_B: baseline B's median / this median (same grid point, same run; "
            << names << ").\n"
            << "bytes: removal lists, the O(k) floor 4k + 2kw (read k indices and k red-zone items, write k "
               "items); flags/masks, selection + n*w read + kept*w written. GB/s = bytes / ms_median.\n";
  if (where == backend::cuda)
    std::cout << "floor_ms: removal lists, the O(k) floor kernel (reads R and the red zone, scatters k writes); "
                 "flags/masks, bytes at the device copy bandwidth, measured now: "
              << fixed(copy_gbps, 0) << " GB/s (read + written). of_floor: floor_ms / ms_median.\n";
  a.stage(outputs, rows,
          {{"benchmark", "compaction"},
           {"backend", to_string(where)},
           {"device", device_name},
           {"machine", machine},
           {"run", run_info(command_line)},
           {"timing", {{"warmup", plan.warmup}, {"repeats", plan.repeats}, {"statistic", "median"},
                       {"graph", plan.graph}, {"checked", plan.checked}}},
           {"baselines", baselines},
           {"copy_gbps", copy_gbps},
           {"bytes_definition",
            "removal list: 4k + 2kw (indices, red-zone reads, hole writes); flags/mask: selection bytes + n*w + "
            "kept*w"}});
  if (!a.crossover.empty()) outputs.stage(a.crossover, json_text(crossover_table(cases, measured, where, command_line), 1));
  outputs.commit();
  for (const auto& f : {a.csv, a.json, a.crossover})
    if (!f.empty()) std::cout << "wrote " << f << "\n";
  if (failed) {
    std::cerr << "sieve bench compaction: " << failed << " of " << cases.size() << " points failed validation\n";
    return 1;
  }
  return 0;
}

}  // namespace sieve::bench
