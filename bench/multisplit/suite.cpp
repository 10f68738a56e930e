#include "suite.hpp"

#include "keys.hpp"
#include "measure.hpp"

#include <output_files.hpp>
#include <rows.hpp>

#include <sieve/compaction.hpp>
#include <sieve/compaction/backend.hpp>

#include <algorithm>
#include <bit>
#include <array>
#include <chrono>
#include <functional>
#include <iostream>
#include <numeric>

namespace sieve::bench {
namespace {

// The default GPU list; "auto" and the index-then-gather form of a design ("<design>_gather") on request.
const std::vector<std::string> cuda_algorithms = {"onesweep", "radix",    "atomic",        "ballot",
                                                  "ballot_lookback", "ballot_gather", "cub_sort", "cub_partition"};
const std::vector<std::string> cuda_extra = {"auto", "onesweep_gather", "ballot_lookback_gather"};
const std::vector<std::string> cpu_algorithms = {"tbb", "std_stable_partition"};

std::string human_n(std::size_t n) {
  if (n && (n & (n - 1)) == 0) return "2^" + std::to_string(std::countr_zero(n));
  return std::to_string(n);
}

double item_bytes_of(const std::string& items) { return items == "path" ? 48 : 4; }

// The CPU items: the u32 column (item i holds 16 i), or the path record's four columns.
struct host_items {
  std::vector<std::vector<std::uint32_t>> cols;
  std::vector<std::uint32_t> words;
  host_items(std::size_t n, const std::string& items) {
    words = items == "path" ? std::vector<std::uint32_t>{1, 7, 3, 1} : std::vector<std::uint32_t>{1};
    std::uint32_t first = 0;
    for (auto w : words) {
      cols.emplace_back(n * w);
      for (std::size_t k = 0; k < n * w; ++k) cols.back()[k] = static_cast<std::uint32_t>(16 * (k / w) + first + k % w);
      first += w;
    }
  }
  record view() {
    std::array<column, record::max_columns> c{};
    for (std::size_t k = 0; k < cols.size(); ++k) c[k] = {reinterpret_cast<std::byte*>(cols[k].data()), words[k] * 4};
    return record(std::span<const column>(c.data(), cols.size()), cols[0].size() / words[0]);
  }
};

std::string check_cpu(const std::vector<std::uint32_t>& col0, const split_reference& want) {
  for (std::size_t j = 0; j < want.order.size(); ++j)
    if (col0[j] != 16 * want.order[j])
      return "slot " + std::to_string(j) + " holds item " + std::to_string(col0[j] / 16) + ", not " +
             std::to_string(want.order[j]);
  return "";
}

template <class F>
stats time_cpu(F&& call, int warmup, int repeats) {
  std::vector<double> ms;
  for (int r = 0; r < warmup + repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    const double e = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (r >= warmup) ms.push_back(e);
  }
  return summarize(ms);
}

std::vector<multisplit_measurement> measure_cpu(const std::vector<std::string>& algorithms, const multisplit_point& p,
                                                const std::vector<std::uint8_t>& ids, const split_reference& want,
                                                int warmup, int repeats) {
  std::vector<multisplit_measurement> out;
  host_items in(p.n, p.items), result(p.n, p.items);
  for (const auto& a : algorithms) {
    multisplit_measurement m;
    m.algorithm = a;
    m.timing = "clock";
    std::function<void()> call;
    if (a == "tbb") {
      std::vector<std::uint64_t> offsets(p.buckets + 1);
      call = [&, offsets]() mutable {
        multisplit(const_record(in.view()), result.view(), bucket_ids{ids}, p.buckets, offsets);
        if (offsets != want.offsets) throw error("tbb: offsets differ from the reference");
      };
    } else if (a == "std_stable_partition" && p.items == "u32") {
      // B - 1 stable partitions, each splitting one bucket off the rest (in place: restored first).
      call = [&] {
        result.cols[0] = in.cols[0];
        auto first = result.cols[0].begin();
        for (unsigned b = 0; b + 1 < p.buckets; ++b)
          first = std::stable_partition(first, result.cols[0].end(), [&](std::uint32_t x) { return ids[x / 16] == b; });
      };
    } else {
      m.error = a + ": not an algorithm for " + p.items + " items on the CPU";
      out.push_back(m);
      continue;
    }
    try {
      call();
      m.error = check_cpu(result.cols[0], want);
      m.validated = m.error.empty();
      if (m.validated) m.ms = time_cpu(call, warmup, repeats);
    } catch (const std::exception& e) {
      m.error = e.what();
    }
    out.push_back(m);
  }
  return out;
}

}  // namespace

double multisplit_row::gitems() const { return ok() ? static_cast<double>(n) / (ms.median * 1e6) : 0; }
double multisplit_row::floor_ms() const {
  return copy_gbps > 0 ? 2.0 * static_cast<double>(n) * (1 + item_bytes) / (copy_gbps * 1e6) : 0;
}
double multisplit_row::of_copy() const { return ok() && floor_ms() > 0 ? floor_ms() / ms.median : 0; }
double multisplit_row::x_sort() const { return ok() && sort_ms > 0 ? sort_ms / ms.median : 0; }

row_schema<multisplit_row> multisplit_rows() {
  using col = field<multisplit_row>;
  using R = multisplit_row;
  const auto rate = [](double x, bool ok, int table, int csv) { return cell{ok && x > 0 ? fixed(x, table) : "-", fixed(x, csv), x}; };
  return row_schema<R>(std::vector<col>{
      {"backend", "backend", "backend", [](const R& r) { return text_cell(r.backend); }},
      {"algorithm", "algorithm", "algorithm", [](const R& r) { return text_cell(r.algorithm); }},
      {"items", "items", "items", [](const R& r) { return text_cell(r.items); }},
      {"n", "n", "n", [](const R& r) { return cell{human_n(r.n), std::to_string(r.n), r.n}; }},
      {"buckets", "buckets", "buckets", [](const R& r) { return count_cell(r.buckets); }},
      {"dist", "dist", "dist", [](const R& r) { return text_cell(r.dist); }},
      {"timing", "timing", "timing", [](const R& r) { return text_cell(r.timing); }},
      {"ms_median", "ms_median", "ms_median", [](const R& r) { return ms_cell(r.ms.median, r.ok()); }},
      {"", "ms_min", "ms_min", [](const R& r) { return ms_cell(r.ms.min, r.ok()); }},
      {"", "ms_max", "ms_max", [](const R& r) { return ms_cell(r.ms.max, r.ok()); }},
      {"Gitems/s", "gitems_per_s", "gitems_per_s", [=](const R& r) { return rate(r.gitems(), r.ok(), 2, 4); }},
      {"of_copy", "of_copy_floor", "of_copy_floor", [=](const R& r) { return rate(r.of_copy(), r.ok(), 2, 4); }},
      {"x_sort", "speed_vs_cub_sort", "speed_vs_cub_sort", [=](const R& r) { return rate(r.x_sort(), r.ok(), 2, 4); }},
      {"", "copy_gbps", "copy_gbps", [](const R& r) { return cell{fixed(r.copy_gbps, 0), fixed(r.copy_gbps, 2), r.copy_gbps}; }},
      {"", "workspace_bytes", "workspace_bytes", [](const R& r) { return count_cell(r.workspace_bytes); }},
      {"validated", "validated", "validated", [](const R& r) { return validated_cell(r.validated); }},
      {"", "error", "error", [](const R& r) { return error_cell(r.error); }}});
}

const option_schema<multisplit_args>& multisplit_options() {
  using A = multisplit_args;
  static const option_schema<A> schema = [] {
    option_schema<A> o("bench multisplit");
    o.option(&A::backend, "--backend", "cuda, cpu or auto (cuda when there is a device)",
             [](CLI::Option* x) { x->check(CLI::IsMember({"auto", "cuda", "cpu"})); });
    o.option(&A::algorithms, "--algorithms",
             "comma-separated; cuda: onesweep, radix, atomic, ballot, ballot_lookback, auto, cub_sort, cub_partition, "
             "and <design>_gather (records: the design splits an index, then a gather); cpu: tbb, std_stable_partition");
    o.option(&A::n, "--n", "item counts, comma-separated (default 2^14, 2^16, 2^20, 2^24, 2^26, 2^28; cpu to 2^24)");
    o.option(&A::buckets, "--buckets", "bucket counts 1..256, comma-separated (default 2, 3, 8, 32, 256)",
             [](CLI::Option* x) { x->check(CLI::Range(1, 256)); });
    o.option(&A::dist, "--dist", "bucket id distributions: uniform, zipf, dominant, runs (default uniform)");
    o.option(&A::items, "--items", "u32, path (the 48-byte path record) (default both)");
    o.option(&A::graph_below, "--graph-below", "time points of at most this many items as CUDA-graph replays");
    o.flag(&A::quick, "--quick", "n = 2^16 and 2^24, 5 timed runs");
    o.option(&A::warmup, "--warmup", "untimed runs per point", [](CLI::Option* x) { x->check(CLI::Range(0, 1000)); });
    o.option(&A::repeats, "--repeats", "timed runs per point (median reported)",
             [](CLI::Option* x) { x->check(CLI::Range(1, 100000)); });
    o.option(&A::seed, "--seed", "bucket id generator seed");
    o.outputs();
    return o;
  }();
  return schema;
}

int run_multisplit_bench(const multisplit_args& a, const std::string& command_line) {
  report::output_set outputs;  // checked before any work
  a.add_to(outputs);
  const backend where = resolve_backend(a.backend);  // cuda without a device: an error here
  const bool gpu = where == backend::cuda;
  const auto& known = gpu ? cuda_algorithms : cpu_algorithms;
  const std::vector<std::string> algorithms = a.algorithms.empty() ? known : a.algorithms;
  for (const auto& x : algorithms)
    if (std::find(known.begin(), known.end(), x) == known.end() &&
        !(gpu && std::find(cuda_extra.begin(), cuda_extra.end(), x) != cuda_extra.end()))
      throw error("--algorithms: unknown '" + x + "' for the " + std::string(to_string(where)) + " backend");
  std::vector<std::size_t> ns = a.n;
  if (ns.empty()) {
    ns = a.quick ? std::vector<std::size_t>{1 << 16, 1 << 24} : std::vector<std::size_t>{1 << 14, 1 << 16, 1 << 20, 1 << 24};
    if (gpu && !a.quick) ns.insert(ns.end(), {std::size_t{1} << 26, std::size_t{1} << 28});
  }
  for (std::size_t n : ns)
    if (n == 0 || n > (std::size_t{1} << 30) - 1) throw error("--n " + std::to_string(n) + " is out of range (1 .. 2^30 - 1)");
  const std::vector<unsigned> buckets = a.buckets.empty() ? std::vector<unsigned>{2, 3, 8, 32, 256} : a.buckets;
  const std::vector<std::string> dists = a.dist.empty() ? std::vector<std::string>{"uniform"} : a.dist;
  for (const auto& d : dists) make_bucket_ids(0, 2, d, 0);  // an unknown name is an error before any work
  const std::vector<std::string> items = a.items.empty() ? std::vector<std::string>{"u32", "path"} : a.items;
  for (const auto& i : items)
    if (i != "u32" && i != "path") throw error("--items '" + i + "': u32 or path");
  const int repeats = a.repeats ? a.repeats : (a.quick ? 5 : 25);
  const double copy_gbps = gpu ? multisplit_copy_gbps() : 0;

  row_schema<multisplit_row> rows = multisplit_rows();
  int failed = 0, points = 0;
  for (const auto& it : items)
    for (std::size_t n : ns)
      for (unsigned b : buckets)
        for (const auto& dist : dists) {
          std::cerr << "multisplit " << it << " n=" << human_n(n) << " buckets " << b << " " << dist << "\n";
          const multisplit_point p{n, b, dist, it};
          const auto ids = make_bucket_ids(n, b, dist, a.seed * 1000003 + n + b);
          const auto want = reference_split(ids, n, b);
          std::vector<std::string> here;
          for (const auto& x : algorithms)
            if ((x != "cub_partition" || b <= 3) && (it == "u32" || (x != "cub_partition" && x != "std_stable_partition")) &&
                (it != "u32" || !x.ends_with("_gather")))
              here.push_back(x);
          const auto measured = gpu ? measure_multisplit_cuda(here, p, ids, want, {a.warmup, repeats, n <= a.graph_below})
                                    : measure_cpu(here, p, ids, want, a.warmup, repeats);
          double sort_ms = 0;
          for (const auto& m : measured)
            if (m.algorithm == "cub_sort" && m.validated) sort_ms = m.ms.median;
          for (const auto& m : measured) {
            ++points;
            if (!m.validated) {
              ++failed;
              std::cerr << "sieve bench multisplit: " << m.algorithm << " " << it << " n=" << n << " buckets " << b
                        << " " << dist << " FAILED validation: " << m.error << "\n";
            }
            rows.add({std::string(to_string(where)), m.algorithm, it, dist, m.timing, n, b, m.ms, item_bytes_of(it), copy_gbps,
                      sort_ms, m.workspace_bytes, m.validated, m.error});
          }
        }

  rows.printed().print(std::cout);
  std::cout << "\nms: one out-of-place split, median of " << repeats << " runs after " << a.warmup << " warm-up";
  if (gpu)
    std::cout << " (offsets on the device; CUDA events, or the mean of 100 CUDA-graph replays at n <= " << a.graph_below
              << "); validated against the reference split first.\nof_copy: the time to copy the ids and the items "
                 "(read + write) at the device copy bandwidth measured now ("
              << fixed(copy_gbps, 0) << " GB/s) over this time. x_sort: cub_sort's median / this median.\n";
  else
    std::cout << " (wall clock); validated against the reference split first.\n";
  a.stage(outputs, rows,
          {{"benchmark", "multisplit"},
           {"machine", machine_info(gpu)},
           {"run", run_info(command_line)},
           {"timing", {{"warmup", a.warmup}, {"repeats", repeats}, {"statistic", "median"}, {"graph_below", a.graph_below}}},
           {"copy_gbps", copy_gbps},
           {"floor_definition", "2 * n * (1 + item_bytes) / copy_gbps"}});
  outputs.commit();
  for (const auto& f : {a.csv, a.json})
    if (!f.empty()) std::cout << "wrote " << f << "\n";
  if (failed) {
    std::cerr << "sieve bench multisplit: " << failed << " of " << points << " points failed validation\n";
    return 1;
  }
  return 0;
}

}  // namespace sieve::bench
