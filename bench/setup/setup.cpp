#include "setup.hpp"

#include <bvh/bvh.hpp>
#include <frame/prepared_scene.hpp>
#include <run/render.hpp>
#include <sieve/compaction/backend.hpp>
#include <output_files.hpp>
#include <rows.hpp>
#include <scene/load.hpp>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <optional>
#include <span>

namespace sieve::bench {
namespace {

using namespace sieve::render;
using report::cell;
using report::field;
using report::fixed;
using report::row_schema;

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// A 64-bit digest of bytes (FNV-1a over fixed 1 MiB blocks in parallel, the blocks' digests then
// folded in order): the same bytes give the same digest whatever the threads.
std::uint64_t digest(std::span<const std::byte> bytes, std::uint64_t seed) {
  constexpr std::size_t block = std::size_t{1} << 20;
  const std::size_t blocks = (bytes.size() + block - 1) / block;
  std::vector<std::uint64_t> part(blocks);
  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
    std::uint64_t h = 1469598103934665603ULL;
    for (std::size_t i = b * block; i < std::min(bytes.size(), (b + 1) * block); ++i)
      h = (h ^ static_cast<std::uint64_t>(bytes[i])) * 1099511628211ULL;
    part[b] = h;
  });
  std::uint64_t h = seed ^ bytes.size();
  for (const std::uint64_t p : part) h = (h ^ p) * 1099511628211ULL;
  return h;
}

std::uint64_t digest_of(const bvh& b) {
  std::uint64_t h = 0;
  for_each_part(b, [&](const auto& part) {
    if constexpr (requires { part.data(); }) h = digest(std::as_bytes(std::span(part)), h);
  });
  return h;
}

// The tree is whole: every node but the root reached once from its parent, every reference of the
// leaves' ranges in exactly one leaf.
bool whole(const binary_bvh& b) {
  if (b.nodes.empty()) return b.prims.empty();
  std::vector<std::uint8_t> node_seen(b.nodes.size(), 0), prim_seen(b.prims.size(), 0);
  node_seen[0] = 1;
  for (const bvh_node& n : b.nodes) {
    if (n.leaf()) {
      if (std::uint64_t{n.first} + n.count > b.prims.size()) return false;
      for (std::uint32_t i = n.first; i < n.first + n.count; ++i) ++prim_seen[i];
    } else {
      if (std::uint64_t{n.first} + 1 >= b.nodes.size()) return false;
      ++node_seen[n.first], ++node_seen[n.first + 1];
    }
  }
  const auto once = [](std::uint8_t k) { return k == 1; };
  return std::all_of(node_seen.begin(), node_seen.end(), once) && std::all_of(prim_seen.begin(), prim_seen.end(), once);
}

struct setup_row {
  unsigned threads = 0;
  std::uint64_t triangles = 0, bytes = 0;
  double load_ms = 0, load_cpu_ms = 0;
  double build_ms = 0, build_cpu_ms = 0;
  bvh_phases wall;  // of the median build
  bvh_phases cpu;   // the process's CPU seconds per phase, of the same build
  // CUDA: the scene and the film to the device, then the first pass of one sample over the film (the
  // graph capture included); negative: not measured (the CPU uploads nothing).
  double upload_ms = -1, first_frame_ms = -1;
  double sah = 0;
  std::uint64_t tree = 0;  // digest of every array of the tree (the same bytes: the same digest)
  double load_efficiency = 0, build_efficiency = 0;  // against the first row, per thread
  bool validated = false;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The columns; with `load_only` the load's and the validation's alone.
row_schema<setup_row> setup_rows(bool load_only) {
  using col = field<setup_row>;
  using row = setup_row;
  const auto number = [](double x, int digits) { return cell{fixed(x, digits), fixed(x, digits), x}; };
  const auto ms = [=](double s) { return number(s * 1e3, 1); };
  std::vector<col> cols{
      {"threads", "threads", "threads", [](const row& r) { return report::count_cell(r.threads); }},
      {"triangles", "triangles", "triangles", [](const row& r) { return report::count_cell(r.triangles); }},
      {"load_ms", "load_ms", "load_ms", [=](const row& r) { return number(r.load_ms, 1); }},
      {"MB/s", "MB_per_s", "load_mb_per_s",
       [=](const row& r) {
         // Procedural scenes have no model file: no rate.
         if (r.bytes < (1u << 20) || r.load_ms <= 0) return cell{"-", "-", nullptr};
         return number(static_cast<double>(r.bytes) / 1e6 / (r.load_ms * 1e-3), 0);
       }},
      {"load_eff", "load_efficiency", "load_efficiency", [=](const row& r) { return number(r.load_efficiency, 2); }},
      {"build_ms", "build_ms", "build_ms", [=](const row& r) { return number(r.build_ms, 1); }},
      {"refs", "refs_ms", "refs_ms", [=](const row& r) { return ms(r.wall.refs); }},
      {"binary", "binary_ms", "binary_ms", [=](const row& r) { return ms(r.wall.binary); }},
      {"pairs", "pairs_ms", "pairs_ms", [=](const row& r) { return ms(r.wall.pairs); }},
      {"collapse", "collapse_ms", "collapse_ms", [=](const row& r) { return ms(r.wall.collapse); }},
      {"cw", "cw_ms", "cw_ms", [=](const row& r) { return ms(r.wall.cw); }},
      {"refs_cpu", "refs_cpu_ms", "refs_cpu_ms", [=](const row& r) { return ms(r.cpu.refs); }},
      {"binary_cpu", "binary_cpu_ms", "binary_cpu_ms", [=](const row& r) { return ms(r.cpu.binary); }},
      {"pairs_cpu", "pairs_cpu_ms", "pairs_cpu_ms", [=](const row& r) { return ms(r.cpu.pairs); }},
      {"collapse_cpu", "collapse_cpu_ms", "collapse_cpu_ms", [=](const row& r) { return ms(r.cpu.collapse); }},
      {"cw_cpu", "cw_cpu_ms", "cw_cpu_ms", [=](const row& r) { return ms(r.cpu.cw); }},
      {"Mtris/s", "Mtris_per_s", "build_mtris_per_s",
       [=](const row& r) { return number(r.build_ms > 0 ? static_cast<double>(r.triangles) / (r.build_ms * 1e3) : 0, 2); }},
      {"Mtris/cpu-s", "Mtris_per_cpu_s", "build_mtris_per_cpu_s",
       [=](const row& r) { return number(r.build_cpu_ms > 0 ? static_cast<double>(r.triangles) / (r.build_cpu_ms * 1e3) : 0, 2); }},
      {"build_eff", "build_efficiency", "build_efficiency", [=](const row& r) { return number(r.build_efficiency, 2); }},
      {"upload", "upload_ms", "upload_ms", [=](const row& r) { return r.upload_ms < 0 ? cell{"-", "-", nullptr} : number(r.upload_ms, 1); }},
      {"first_frame", "first_frame_ms", "first_frame_ms",
       [=](const row& r) { return r.first_frame_ms < 0 ? cell{"-", "-", nullptr} : number(r.first_frame_ms, 1); }},
      {"SAH", "sah_cost", "sah_cost", [=](const row& r) { return number(r.sah, 2); }},
      {"tree", "tree_digest", "tree_digest",
       [](const row& r) {
         char hex[17];
         std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(r.tree));
         return cell{hex, hex, std::string(hex)};
       }},
      {"validated", "validated", "validated",
       [](const row& r) { return cell{r.validated ? "yes" : "NO", r.validated ? "yes" : "NO", r.validated}; }}};
  if (load_only) cols.erase(cols.begin() + 5, cols.end() - 1);  // build_ms .. the tree's digest
  return row_schema<row>(std::move(cols));
}

// The references every later run is checked against (the first run's).
struct expected {
  std::optional<std::uint64_t> scene, tree;
  bool warm = false;  // the GPU's first frame of the process rendered
};

// One render of one sample over the film of `ps` on the GPU: the upload's seconds and the first
// pass's (from the render's start, the upload excluded); false when the film is not whole and finite.
bool first_frame(const prepared_scene& ps, double& upload_s, double& first_s) {
  render_settings settings = render_settings::from(ps.source());
  settings.sample_count = 1;
  double pass_s = -1;
  const auto t0 = std::chrono::steady_clock::now();
  render_controls controls;
  controls.progress = [&](std::uint32_t, std::uint32_t) {
    if (pass_s < 0) pass_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const render_result r = render_cuda(ps, settings, controls);
  upload_s = r.stats.upload_seconds;
  first_s = pass_s - upload_s;
  const auto finite = [](const vec3& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); };
  return r.samples == 1 && pass_s >= 0 && std::all_of(r.sum.begin(), r.sum.end(), finite);
}

// One thread count: the load and the build, each --repeats times, validated, medians kept; on the
// GPU the upload and the first frame over the last tree, --repeats times.
setup_row measure(const setup_args& a, unsigned threads, bool gpu, expected& want) {
  std::optional<tbb::global_control> limit;
  if (threads) limit.emplace(tbb::global_control::max_allowed_parallelism, threads);
  setup_row row;
  row.threads = static_cast<unsigned>(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
  row.validated = true;
  std::vector<double> load_ms, load_cpu, build_ms, build_cpu;
  std::vector<bvh_phases> phases, phases_cpu;
  scene sc;
  bvh last;
  for (int r = 0; r < a.repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = process_cpu_seconds();
    sc = load_scene(a.scene, a.set);
    load_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    load_cpu.push_back((process_cpu_seconds() - c0) * 1e3);
    const std::uint64_t d = digest(std::as_bytes(std::span(sc.triangles)), 0);
    if (!want.scene) want.scene = d;
    row.validated &= *want.scene == d;
  }
  row.triangles = sc.triangles.size();
  row.bytes = input_bytes(sc);
  for (int r = 0; r < a.repeats && !a.load_only; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = process_cpu_seconds();
    bvh b = build_bvh(sc.triangles);
    build_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    build_cpu.push_back((process_cpu_seconds() - c0) * 1e3);
    phases.push_back(b.stats.wall), phases_cpu.push_back(b.stats.cpu);
    const std::uint64_t d = digest_of(b);
    if (!want.tree) want.tree = d;
    row.tree = d;
    row.validated &= *want.tree == d && whole(b.binary);
    if (r == 0) row.sah = sah_cost(b.binary);
    if (r + 1 == a.repeats) last = std::move(b);
  }
  row.load_ms = median(load_ms), row.load_cpu_ms = median(load_cpu);
  if (a.load_only) return row;
  if (gpu) {
    const prepared_scene ps(sc, std::move(last));
    std::vector<double> upload, first;
    if (!want.warm) {  // the CUDA context made and the kernels loaded: once per process, not in the rows
      const auto t0 = std::chrono::steady_clock::now();
      double u = 0, f = 0;
      row.validated &= first_frame(ps, u, f);
      std::cout << "the first frame of the process (the CUDA context made, the kernels loaded; not in the rows): "
                << fixed(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(), 1) << " ms\n";
      want.warm = true;
    }
    for (int r = 0; r < a.repeats; ++r) {
      double u = 0, f = 0;
      row.validated &= first_frame(ps, u, f);
      upload.push_back(u * 1e3), first.push_back(f * 1e3);
    }
    row.upload_ms = median(upload), row.first_frame_ms = median(first);
  }
  row.build_ms = median(build_ms), row.build_cpu_ms = median(build_cpu);
  // The phases of the run whose total is the median.
  const auto at = std::find(build_ms.begin(), build_ms.end(), row.build_ms) - build_ms.begin();
  row.wall = phases[static_cast<std::size_t>(at)], row.cpu = phases_cpu[static_cast<std::size_t>(at)];
  return row;
}

}  // namespace

const option_schema<setup_args>& setup_options() {
  using A = setup_args;
  static const option_schema<A> schema = [] {
    option_schema<A> o("bench setup");
    o.scene();
    o.option(&A::threads, "--threads", "oneTBB threads, one row each (comma-separated; 0: all)",
             [](CLI::Option* x) { x->check(CLI::Range(0U, 4096U)); });
    o.option(&A::repeats, "--repeats", "runs of each step per row (median reported)", [](CLI::Option* x) { x->check(CLI::Range(1, 100)); });
    o.flag(&A::load_only, "--load-only", "the load alone: no build, upload or first frame (the readers' rates)");
    o.outputs();
    return o;
  }();
  return schema;
}

int run_setup_bench(const setup_args& a, const std::string& command_line) {
  report::output_set outputs;
  a.add_files_to(outputs);
  const bool gpu = resolve_backend(a.backend) == sieve::backend::cuda;
  const nlohmann::json machine = report::machine_info(gpu);
  const std::string device = report::device_of(machine);
  std::cout << "setup of " << a.scene << " on " << device << ": the scene's load"
            << (a.load_only ? "" : " and the BVH build (every layout)") << (gpu && !a.load_only ? ", the upload and the first frame" : "")
            << ", median of " << a.repeats << " runs a row\n";
  expected want;
  row_schema<setup_row> rows = setup_rows(a.load_only);
  std::vector<setup_row> done;
  for (const unsigned t : a.threads) {
    setup_row row = measure(a, t, gpu, want);
    if (!done.empty()) {
      const setup_row& first = done.front();
      const double scale = static_cast<double>(row.threads) / first.threads;
      row.load_efficiency = row.load_ms > 0 ? first.load_ms / row.load_ms / scale : 0;
      row.build_efficiency = row.build_ms > 0 ? first.build_ms / row.build_ms / scale : 0;
    } else {
      row.load_efficiency = row.build_efficiency = 1;
    }
    done.push_back(row);
    rows.add(row);
  }
  rows.printed().print(std::cout);
  if (a.load_only)
    std::cout << "\nload_ms: the scene file read and parsed into triangles (MB/s: its files' bytes over that time); "
                 "load_eff: the first row's time over this row's, per thread (parallel efficiency). Validated: the "
                 "triangles the same bytes as the first run's.\n";
  else
    std::cout << "\nload_ms: the scene file read and parsed into triangles (MB/s: its files' bytes over that time); "
                 "build_ms: the BVH with every layout the renderer reads, by phase (wall clock): references, the binary "
                 "SAH tree, the pair layout, the 8-wide collapse, the compressed encoding (*_cpu: the same phases in CPU "
                 "milliseconds of the process, all its threads); upload (CUDA): the scene and the film "
                 "copied to the device; first_frame (CUDA): from then to one sample over the whole film (the wave's graph "
                 "captured, the first launches); Mtris/cpu-s: per CPU-second of "
                 "the process; *_eff: the first row's time over this row's, per thread (parallel efficiency). Validated: "
                 "the triangles and every array of the tree the same bytes as the first run's, the tree whole, the first "
                 "frame's film whole and finite.\n";
  bool ok = true;
  for (const setup_row& r : done) ok &= r.validated;
  a.stage(outputs, rows,
          {{"benchmark", "setup"}, {"scene", a.scene}, {"device", device}, {"machine", machine}, {"run", report::run_info(command_line)}});
  outputs.commit();
  return ok ? 0 : 1;
}

}  // namespace sieve::bench
