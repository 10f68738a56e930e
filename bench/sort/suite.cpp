#include "suite.hpp"

#include "measure.hpp"

#include <output_files.hpp>

#include <sieve/compaction.hpp>

#include <algorithm>
#include <bit>
#include <iostream>
#include <numeric>
#include <random>

namespace sieve::bench {
namespace {

struct bit_range {
  int begin, end;
  std::string label() const { return std::to_string(begin) + ":" + std::to_string(end); }
};

bit_range parse_bits(const std::string& s) {
  const auto colon = s.find(':');
  try {
    if (colon != std::string::npos) {
      const bit_range r{std::stoi(s.substr(0, colon)), std::stoi(s.substr(colon + 1))};
      if (r.begin >= 0 && r.end <= 32 && r.begin <= r.end) return r;
    }
  } catch (const std::exception&) {
  }
  throw error("--bits '" + s + "': expected B:E with 0 <= B <= E <= 32, e.g. 0:32 or 8:24");
}

std::vector<std::uint32_t> make_keys(std::size_t n, const std::string& dist, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint32_t> k(n);
  if (dist == "uniform") {
    for (auto& x : k) x = static_cast<std::uint32_t>(rng() >> 32);
  } else if (dist == "duplicates") {  // 13 distinct keys
    std::uint32_t pool[13];
    for (auto& p : pool) p = static_cast<std::uint32_t>(rng() >> 32);
    for (auto& x : k) x = pool[rng() % 13];
  } else {
    throw error("--keys '" + dist + "': uniform or duplicates");
  }
  return k;
}

std::string human_n(std::size_t n) {
  if (n && (n & (n - 1)) == 0) return "2^" + std::to_string(std::countr_zero(n));
  return std::to_string(n);
}

}  // namespace

const option_schema<sort_args>& sort_options() {
  using A = sort_args;
  static const option_schema<A> schema = [] {
    option_schema<A> o;
    o.option(&A::algorithms, "--algorithms", "comma-separated: onesweep, cub (default: both)");
    o.option(&A::n, "--n", "pair counts, comma-separated (default 2^20, 2^22, 2^24, 2^26)");
    o.option(&A::bits, "--bits", "key bit ranges B:E, comma-separated (default 0:32)");
    o.option(&A::keys, "--keys", "key distributions: uniform, duplicates (default uniform)");
    o.flag(&A::quick, "--quick", "n = 2^22 and 2^26, 5 timed runs");
    o.option(&A::warmup, "--warmup", "untimed runs per point", [](CLI::Option* x) { x->check(CLI::Range(0, 1000)); });
    o.option(&A::repeats, "--repeats", "timed runs per point (median reported)",
             [](CLI::Option* x) { x->check(CLI::Range(1, 100000)); });
    o.option(&A::seed, "--seed", "input generator seed");
    o.option(&A::csv, "--csv", "write the results as CSV");
    o.option(&A::json, "--json", "write the results, machine and command as JSON");
    return o;
  }();
  return schema;
}

void add_sort_options(CLI::App& cmd, sort_args& a) { sort_options().add(cmd, a); }

std::string sort_command(const std::string& program, const sort_args& a) {
  return sort_options().command(program + " bench sort", a);
}

int run_sort_bench(const sort_args& a, const std::string& command_line) {
  report::output_set outputs;  // checked before any work
  outputs.add_output(a.csv, "--csv");
  outputs.add_output(a.json, "--json");
  if (!cuda::available()) throw error("sieve bench sort needs a CUDA device: " + cuda::device_description());
  std::vector<std::string> algorithms = a.algorithms;
  if (algorithms.empty())
    for (auto name : cuda::radix_sort_algorithms()) algorithms.emplace_back(name);
  for (const auto& name : algorithms)
    if (std::find(cuda::radix_sort_algorithms().begin(), cuda::radix_sort_algorithms().end(), name) ==
        cuda::radix_sort_algorithms().end())
      throw error("--algorithms: unknown '" + name + "'; algorithms: onesweep, cub");
  std::vector<std::size_t> ns = a.n;
  if (ns.empty())
    ns = a.quick ? std::vector<std::size_t>{std::size_t{1} << 22, std::size_t{1} << 26}
                 : std::vector<std::size_t>{std::size_t{1} << 20, std::size_t{1} << 22, std::size_t{1} << 24,
                                            std::size_t{1} << 26};
  for (std::size_t n : ns)
    if (n == 0 || n > (std::size_t{1} << 30) - 1) throw error("--n " + std::to_string(n) + " is out of range (1 .. 2^30 - 1)");
  std::vector<bit_range> ranges;
  for (const auto& s : a.bits.empty() ? std::vector<std::string>{"0:32"} : a.bits) ranges.push_back(parse_bits(s));
  const std::vector<std::string> dists = a.keys.empty() ? std::vector<std::string>{"uniform"} : a.keys;
  const int repeats = a.repeats ? a.repeats : (a.quick ? 5 : 25);
  const double copy_gbps = sort_copy_gbps();

  table t({"algorithm", "n", "bits", "keys", "ms_median", "ms_min", "ms_max", "Gpairs/s", "bytes", "GB/s", "of_copy",
           "x_cub", "validated"});
  table csv({"algorithm", "n", "begin_bit", "end_bit", "keys", "ms_median", "ms_min", "ms_max", "gpairs_per_s", "bytes",
             "gbps", "of_copy_bandwidth", "speed_vs_cub", "workspace_bytes", "validated", "error"});
  nlohmann::json results = nlohmann::json::array();
  int failed = 0, points = 0;
  for (std::size_t n : ns)
    for (const auto& r : ranges)
      for (const auto& dist : dists) {
        std::cerr << "sort n=" << human_n(n) << " bits " << r.label() << " " << dist << "\n";
        const std::vector<std::uint32_t> keys = make_keys(n, dist, a.seed + n);
        std::vector<std::uint32_t> values(n);
        std::iota(values.begin(), values.end(), 0U);
        std::vector<std::uint32_t> want_keys = keys, want_values = values;
        radix_sort_pairs(std::span(want_keys), std::span(want_values), r.begin, r.end);  // the CPU reference
        const auto measured = measure_sorts(algorithms, keys, values, want_keys, want_values, r.begin, r.end,
                                            a.warmup, repeats);
        double cub_ms = 0;
        for (const auto& m : measured)
          if (m.algorithm == "cub" && m.validated) cub_ms = m.ms.median;
        const int passes = (r.end - r.begin + 7) / 8;
        // Nominal bytes of an LSD sort with a fused histogram: the keys read once for the
        // histograms, then per 8-bit digit every key and value read and written once.
        const double bytes = static_cast<double>(n) * (4.0 + 16.0 * passes);
        for (const auto& m : measured) {
          ++points;
          const bool ok = m.validated && m.ms.median > 0;
          if (!m.validated) {
            ++failed;
            std::cerr << "sieve bench sort: " << m.algorithm << " n=" << n << " bits " << r.label()
                      << " FAILED validation: " << m.error << "\n";
          }
          const double gpairs = ok ? static_cast<double>(n) / (m.ms.median * 1e6) : 0;
          const double gbps = ok ? bytes / (m.ms.median * 1e6) : 0;
          const double of_copy = ok && copy_gbps > 0 ? gbps / copy_gbps : 0;
          const double x_cub = ok && cub_ms > 0 ? cub_ms / m.ms.median : 0;
          t.add({m.algorithm, human_n(n), r.label(), dist, ok ? fixed(m.ms.median, 3) : "-", ok ? fixed(m.ms.min, 3) : "-",
                 ok ? fixed(m.ms.max, 3) : "-", ok ? fixed(gpairs, 2) : "-", fixed(bytes, 0), ok ? fixed(gbps, 0) : "-",
                 ok ? fixed(of_copy, 2) : "-", x_cub > 0 ? fixed(x_cub, 2) : "", m.validated ? "yes" : "NO"});
          std::string err = m.error;
          std::replace(err.begin(), err.end(), ',', ';');
          csv.add({m.algorithm, std::to_string(n), std::to_string(r.begin), std::to_string(r.end), dist,
                   fixed(m.ms.median, 5), fixed(m.ms.min, 5), fixed(m.ms.max, 5), fixed(gpairs, 4), fixed(bytes, 0),
                   fixed(gbps, 2), fixed(of_copy, 4), x_cub > 0 ? fixed(x_cub, 4) : "",
                   std::to_string(m.workspace_bytes), m.validated ? "1" : "0", err});
          results.push_back({{"algorithm", m.algorithm}, {"n", n}, {"begin_bit", r.begin}, {"end_bit", r.end},
                             {"keys", dist}, {"ms_median", m.ms.median}, {"ms_min", m.ms.min}, {"ms_max", m.ms.max},
                             {"gpairs_per_s", gpairs}, {"bytes", bytes}, {"gbps", gbps}, {"of_copy_bandwidth", of_copy},
                             {"speed_vs_cub", x_cub}, {"workspace_bytes", m.workspace_bytes},
                             {"validated", m.validated}, {"error", m.error}});
        }
      }

  t.print(std::cout);
  std::cout << "\nms: one radix_sort_pairs_async call (u32 keys, u32 values, out of place), CUDA events, median of "
            << repeats << " runs after " << a.warmup << " warm-up; validated against the CPU radix sort first.\n"
            << "bytes: n * (4 + 16 * digit passes) (keys read once for the histograms, then per 8-bit digit every "
               "pair read and written). of_copy: GB/s over the device copy bandwidth measured now, "
            << fixed(copy_gbps, 0) << " GB/s. x_cub: cub's median / this median.\n";
  outputs.stage(a.csv, csv.csv());
  if (!a.json.empty()) {
    const nlohmann::json doc = {{"benchmark", "sort"},
                                {"machine", machine_info(true)},
                                {"run", run_info(command_line)},
                                {"timing", {{"warmup", a.warmup}, {"repeats", repeats}, {"statistic", "median"}}},
                                {"copy_gbps", copy_gbps},
                                {"bytes_definition", "n * (4 + 16 * ceil((end_bit - begin_bit) / 8))"},
                                {"results", results}};
    outputs.stage(a.json, json_text(doc, 1));
  }
  outputs.commit();
  for (const auto& f : {a.csv, a.json})
    if (!f.empty()) std::cout << "wrote " << f << "\n";
  if (failed) {
    std::cerr << "sieve bench sort: " << failed << " of " << points << " points failed validation\n";
    return 1;
  }
  return 0;
}

}  // namespace sieve::bench
