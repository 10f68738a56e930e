#include "suite.hpp"

#include "measure.hpp"

#include <output_files.hpp>
#include <rows.hpp>

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

double sort_row::gpairs() const { return ok() ? static_cast<double>(n) / (ms.median * 1e6) : 0; }
double sort_row::gbps() const { return ok() ? bytes / (ms.median * 1e6) : 0; }
double sort_row::of_copy() const { return ok() && copy_gbps > 0 ? gbps() / copy_gbps : 0; }
double sort_row::x_cub() const { return ok() && cub_ms > 0 ? cub_ms / ms.median : 0; }

// The table shortens (2^20, one bits column, "-" for a failed point), the CSV keeps exact values,
// the JSON plain numbers.
row_schema<sort_row> sort_rows() {
  using col = field<sort_row>;
  // A rate: `table` decimals in the table ("-" for a failed point), `csv` in the CSV.
  const auto rate = [](double x, bool ok, int table, int csv) { return cell{ok ? fixed(x, table) : "-", fixed(x, csv), x}; };
  return row_schema<sort_row>(std::vector<col>{
      {"algorithm", "algorithm", "algorithm", [](const sort_row& r) { return text_cell(r.algorithm); }},
      {"n", "n", "n", [](const sort_row& r) { return cell{human_n(r.n), std::to_string(r.n), r.n}; }},
      {"bits", "begin_bit", "begin_bit",
       [](const sort_row& r) { return cell{bit_range{r.begin_bit, r.end_bit}.label(), std::to_string(r.begin_bit), r.begin_bit}; }},
      {"", "end_bit", "end_bit", [](const sort_row& r) { return count_cell(r.end_bit); }},
      {"keys", "keys", "keys", [](const sort_row& r) { return text_cell(r.keys); }},
      {"ms_median", "ms_median", "ms_median", [](const sort_row& r) { return ms_cell(r.ms.median, r.ok()); }},
      {"ms_min", "ms_min", "ms_min", [](const sort_row& r) { return ms_cell(r.ms.min, r.ok()); }},
      {"ms_max", "ms_max", "ms_max", [](const sort_row& r) { return ms_cell(r.ms.max, r.ok()); }},
      {"Gpairs/s", "gpairs_per_s", "gpairs_per_s", [=](const sort_row& r) { return rate(r.gpairs(), r.ok(), 2, 4); }},
      {"bytes", "bytes", "bytes", [](const sort_row& r) { return cell{fixed(r.bytes, 0), fixed(r.bytes, 0), r.bytes}; }},
      {"GB/s", "gbps", "gbps", [=](const sort_row& r) { return rate(r.gbps(), r.ok(), 0, 2); }},
      {"of_copy", "of_copy_bandwidth", "of_copy_bandwidth", [=](const sort_row& r) { return rate(r.of_copy(), r.ok(), 2, 4); }},
      {"x_cub", "speed_vs_cub", "speed_vs_cub",
       [](const sort_row& r) {
         const double x = r.x_cub();
         return cell{x > 0 ? fixed(x, 2) : "", x > 0 ? fixed(x, 4) : "", x};
       }},
      {"", "workspace_bytes", "workspace_bytes", [](const sort_row& r) { return count_cell(r.workspace_bytes); }},
      {"validated", "validated", "validated", [](const sort_row& r) { return validated_cell(r.validated); }},
      {"", "error", "error", [](const sort_row& r) { return error_cell(r.error); }}});
}

const option_schema<sort_args>& sort_options() {
  using A = sort_args;
  static const option_schema<A> schema = [] {
    option_schema<A> o("bench sort");
    o.backend(&A::backend);
    o.option(&A::algorithms, "--algorithms", "comma-separated: onesweep, cub (default: both)");
    o.option(&A::n, "--n", "pair counts, comma-separated (default 2^20, 2^22, 2^24, 2^26)");
    o.option(&A::bits, "--bits", "key bit ranges B:E, comma-separated (default 0:32)");
    o.option(&A::keys, "--keys", "key distributions: uniform, duplicates (default uniform)");
    o.flag(&A::quick, "--quick", "n = 2^22 and 2^26, 5 timed runs");
    o.option(&A::warmup, "--warmup", "untimed runs per point", [](CLI::Option* x) { x->check(CLI::Range(0, 1000)); });
    o.option(&A::repeats, "--repeats", "timed runs per point (median reported)",
             [](CLI::Option* x) { x->check(CLI::Range(1, 100000))->default_str("25 (--quick: 5)"); });
    o.option(&A::seed, "--seed", "input generator seed");
    o.outputs();
    return o;
  }();
  return schema;
}

int run_sort_bench(const sort_args& a, const std::string& command_line) {
  report::output_set outputs;  // checked before any work
  a.add_to(outputs);
  if (a.backend == "cpu")
    throw error("sieve bench sort times the GPU's radix sorts (onesweep, cub): cuda only, --backend cpu has none");
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

  row_schema<sort_row> rows = sort_rows();
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
          if (!m.validated) {
            ++failed;
            std::cerr << "sieve bench sort: " << m.algorithm << " n=" << n << " bits " << r.label()
                      << " FAILED validation: " << m.error << "\n";
          }
          rows.add({m.algorithm, n, r.begin, r.end, dist, m.ms, bytes, copy_gbps, cub_ms, m.workspace_bytes, m.validated,
                    m.error});
        }
      }

  rows.printed().print(std::cout);
  std::cout << "\nms: one radix_sort_pairs_async call (u32 keys, u32 values, out of place), CUDA events, median of "
            << repeats << " runs after " << a.warmup << " warm-up; validated against the CPU radix sort first.\n"
            << "bytes: n * (4 + 16 * digit passes) (keys read once for the histograms, then per 8-bit digit every "
               "pair read and written). of_copy: GB/s over the device copy bandwidth measured now, "
            << fixed(copy_gbps, 0) << " GB/s. x_cub: cub's median / this median.\n";
  a.stage(outputs, rows,
          {{"benchmark", "sort"},
           {"machine", machine_info(true)},
           {"run", run_info(command_line)},
           {"timing", {{"warmup", a.warmup}, {"repeats", repeats}, {"statistic", "median"}}},
           {"copy_gbps", copy_gbps},
           {"bytes_definition", "n * (4 + 16 * ceil((end_bit - begin_bit) / 8))"}});
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
