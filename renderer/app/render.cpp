#include "render.hpp"

#include "common/report.hpp"

#include <core/image_io.hpp>
#include <core/marks.hpp>
#include <scene/load.hpp>
#include <wavefront/integrator.hpp>

#include <sieve/compaction.hpp>
#include <sieve/compaction/cuda.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>

namespace sieve::app {
namespace {

using namespace sieve::render;

std::atomic<bool> interrupted{false};
std::atomic<int> stop_signal{0};  // the signal that interrupted the render: the exit status is 128 + it

extern "C" void on_signal(int sig) {
  stop_signal.store(sig);
  interrupted.store(true);
  std::signal(sig, SIG_DFL);  // a second signal ends the process at once
}

// Installs the Ctrl-C / SIGTERM handlers for the lifetime of a render.
class signal_guard {
 public:
  signal_guard() {
    interrupted.store(false);
    stop_signal.store(0);
    old_int_ = std::signal(SIGINT, on_signal);
    old_term_ = std::signal(SIGTERM, on_signal);
  }
  ~signal_guard() {
    std::signal(SIGINT, old_int_);
    std::signal(SIGTERM, old_term_);
  }
  signal_guard(const signal_guard&) = delete;
  signal_guard& operator=(const signal_guard&) = delete;

 private:
  void (*old_int_)(int);
  void (*old_term_)(int);
};

void draw_progress(std::uint32_t done, std::uint32_t total, double seconds) {
  constexpr int width = 40;
  const int filled = static_cast<int>(static_cast<double>(width) * done / total);
  const double eta = done ? seconds / done * (total - done) : 0;
  std::fprintf(stderr, "\r[%s%s] %u/%u spp  %.1f s, %.1f s left ", std::string(filled, '#').c_str(),
               std::string(width - filled, '.').c_str(), done, total, seconds, eta);
  if (done == total) std::fputc('\n', stderr);
  std::fflush(stderr);
}

std::string pct(double part, double whole) { return whole > 0 ? bench::fixed(100.0 * part / whole, 1) + " %" : "-"; }

}  // namespace

void add_render_options(CLI::App& cmd, render_args& a) {
  cmd.add_option("scene", a.scene, "scene file (.toml) or mesh (.obj)")->required();
  cmd.add_option("--strategy", a.strategy, "compaction strategy for the path queue (default: the scene's)");
  cmd.add_option("--backend", a.backend, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  cmd.add_option("--integrator", a.integrator, "wavefront (queues compacted between bounces) or megakernel (one thread per path)")
      ->check(CLI::IsMember({"wavefront", "megakernel"}));
  cmd.add_option("--traversal", a.traversal, "dfs or bfs")->check(CLI::IsMember({"dfs", "bfs"}));
  cmd.add_option("--reorder", a.reorder, "ray reordering: none, morton, octant, termination (default: the scene's)");
  cmd.add_option("--sort", a.sort, "GPU radix sort for --reorder: onesweep or cub (default: the scene's)");
  cmd.add_option("--spp", a.spp, "samples per pixel (default: the scene's film.spp)")->check(CLI::Range(1U, 1U << 20));
  cmd.add_option("--out", a.png, "PNG image (8-bit sRGB); default <scene name>.png when no output is named");
  cmd.add_option("--exr", a.exr, "EXR image (32-bit float, linear)");
  cmd.add_option("--json", a.json, "JSON report");
  cmd.add_option("--set", a.set, "override a scene key, key=value (repeatable), e.g. film.width=256");
  cmd.add_flag("--quiet", a.quiet, "no progress bar and no table");
}

int run_render(const render_args& a, const std::string& command_line) {
  std::vector<std::string> overrides = a.set;
  if (a.spp) overrides.push_back("film.spp=" + std::to_string(a.spp));
  if (!a.strategy.empty()) overrides.push_back("compaction.strategy=\"" + a.strategy + "\"");
  if (!a.reorder.empty()) overrides.push_back("compaction.reorder=\"" + a.reorder + "\"");
  if (!a.sort.empty()) overrides.push_back("compaction.sort=\"" + a.sort + "\"");
  const bool gpu = a.backend == "cuda";
  if (gpu && !sieve::cuda::available())  // before the scene is read and its BVH built
    throw sieve::error("--backend cuda: no CUDA device: " + sieve::cuda::device_description());
  const scene sc = load_scene(a.scene, overrides);

  render_settings settings = render_settings::from(sc);
  settings.traversal = a.traversal;
  settings.integrator = a.integrator;
  marks_form_for(settings.strategy, gpu ? sieve::backend::cuda : sieve::backend::cpu,
                 "renderer");  // an unfit strategy fails before the BVH build

  check_render_memory(sc, settings, gpu);  // before the BVH build
  const std::string png = a.png.empty() && a.exr.empty() && a.json.empty() ? sc.name + ".png" : a.png;
  const auto t_bvh = std::chrono::steady_clock::now();
  const prepared_scene prepared(sc);
  const double bvh_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_bvh).count();

  const bool bar = !a.quiet && isatty(STDERR_FILENO);
  const auto t0 = std::chrono::steady_clock::now();
  if (bar)
    settings.progress = [&](std::uint32_t done, std::uint32_t total) {
      draw_progress(done, total, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    };
  signal_guard guard;
  settings.cancel = &interrupted;
  const render_result r = gpu ? render_cuda(prepared, settings) : render_cpu(prepared, settings);
  if (r.partial())
    std::cerr << (bar ? "\n" : "") << "sieve: interrupted after " << r.samples << " of " << r.spp
              << " samples per pixel; writing what was accumulated\n";

  const render_stats& st = r.stats;
  const double total_ms = st.seconds * 1e3;
  const double rays = static_cast<double>(st.extension_rays + st.shadow_rays);
  const double mrays = st.seconds > 0 ? rays / st.seconds / 1e6 : 0;

  nlohmann::json j;
  j["scene"] = sc.name;
  j["scene_file"] = a.scene;
  j["backend"] = a.backend;
  const nlohmann::json machine = bench::machine_info(gpu);
  j["device"] = gpu ? machine["gpu"] : machine["cpu"];
  j["machine"] = machine;
  j["strategy"] = settings.strategy;
  j["form"] = std::string(sieve::to_string(st.form));
  j["integrator"] = settings.integrator;
  j["traversal"] = settings.traversal;
  j["reorder"] = std::string(to_string(settings.reorder));
  j["sort"] = settings.sort;
  j["width"] = r.width;
  j["height"] = r.height;
  j["spp"] = r.spp;
  j["samples_completed"] = r.samples;
  j["partial"] = r.partial();
  j["max_bounces"] = sc.film.max_bounces;
  j["seed"] = sc.film.seed;
  j["triangles"] = sc.triangles.size();
  j["bvh_build_seconds"] = bvh_s;
  j["seconds"] = st.seconds;
  j["rays"] = {{"extension", st.extension_rays}, {"shadow", st.shadow_rays}};
  j["mrays_per_s"] = mrays;
  j["compaction_ms"] = st.compaction_ms();
  j["compaction_share"] = total_ms > 0 ? st.compaction_ms() / total_ms : 0;
  j["bfs_frontier_compaction_ms"] = st.bfs_compact_ms;
  for (const auto& s : st.stages) j["stages"][s.name] = s.ms;
  j["bounces"] = nlohmann::json::array();
  for (std::size_t b = 0; b < st.bounces.size(); ++b)
    if (st.bounces[b].live)
      j["bounces"].push_back({{"bounce", b}, {"live", st.bounces[b].live}, {"compaction_ms", st.bounces[b].compact_ms}});
  j["run"] = bench::run_info(command_line);

  const std::vector<vec3> image = r.mean();
  if (!png.empty()) write_png(png, r.width, r.height, image);
  if (!a.exr.empty()) write_exr(a.exr, r.width, r.height, image);
  if (!a.json.empty()) write_text_file(a.json, j.dump(2) + "\n");

  if (!a.quiet) {
    std::cout << sc.name << ": " << r.width << " x " << r.height << ", " << r.samples << " spp, "
              << sc.triangles.size() << " triangles (BVH " << bench::fixed(bvh_s, 3) << " s), strategy "
              << settings.strategy << " (" << sieve::to_string(st.form) << "), " << settings.integrator << ", " << settings.traversal
              << ", reorder " << to_string(settings.reorder) << "\n"
              << bench::fixed(st.seconds, 3) << " s, " << bench::fixed(mrays, 2) << " Mrays/s ("
              << st.extension_rays << " extension + " << st.shadow_rays << " shadow rays)\n\n";
    bench::table stages({"stage", "ms", "share"});
    for (const auto& s : st.stages) stages.add({s.name, bench::fixed(s.ms, 1), pct(s.ms, total_ms)});
    if (settings.traversal == "bfs")
      stages.add({"(bfs frontier compaction, in extend)", bench::fixed(st.bfs_compact_ms, 1), pct(st.bfs_compact_ms, total_ms)});
    stages.add({"compaction, all", bench::fixed(st.compaction_ms(), 1), pct(st.compaction_ms(), total_ms)});
    stages.print(std::cout);
    std::cout << "\n";
    bench::table bounces({"bounce", "live paths", "compact ms"});
    for (std::size_t b = 0; b < st.bounces.size(); ++b)
      if (st.bounces[b].live)
        bounces.add({std::to_string(b), std::to_string(st.bounces[b].live), bench::fixed(st.bounces[b].compact_ms, 2)});
    bounces.print(std::cout);
    std::cout << "\nwrote";
    for (const auto& f : {png, a.exr, a.json})
      if (!f.empty()) std::cout << " " << f;
    std::cout << "\n";
  }
  return r.partial() ? 128 + (stop_signal.load() ? stop_signal.load() : SIGINT) : 0;
}

}  // namespace sieve::app
