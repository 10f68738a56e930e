#include "render.hpp"

#include "common/report.hpp"

#include <core/image_io.hpp>
#include <core/output_files.hpp>
#include <core/marks.hpp>
#include <scene/load.hpp>
#include <wavefront/integrator.hpp>

#include <sieve/compaction.hpp>
#include <sieve/compaction/cuda.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <iterator>

namespace sieve::app {
namespace {

using namespace sieve::render;

std::atomic<bool> interrupted{false};
std::atomic<int> stop_signal{0};  // the signal that interrupted the render: the exit status is 128 + it

// The first Ctrl-C, SIGTERM or SIGHUP stops the render (within a bounce) and writes what was
// accumulated; a second one ends the process at once, leaving no temporary file and the outputs
// all old or all new (output_files).
extern "C" void on_signal(int sig) {
  if (stop_signal.exchange(sig) != 0) return end_by_signal(sig);
  interrupted.store(true);
}

constexpr int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};

// Installs the handlers for the lifetime of a render and the writing of its outputs.
class signal_guard {
 public:
  signal_guard() {
    interrupted.store(false);
    stop_signal.store(0);
    for (std::size_t i = 0; i < std::size(stop_signals); ++i) old_[i] = std::signal(stop_signals[i], on_signal);
  }
  ~signal_guard() {
    for (std::size_t i = 0; i < std::size(stop_signals); ++i) std::signal(stop_signals[i], old_[i]);
  }
  signal_guard(const signal_guard&) = delete;
  signal_guard& operator=(const signal_guard&) = delete;

 private:
  void (*old_[std::size(stop_signals)])(int);
};

// The default image name: the scene file's stem, reduced to letters, digits, '-', '_' and '.'
// (not leading), in the current folder. The scene's `name` is only a label.
std::string default_image_name(const std::string& scene_file) {
  std::string stem;
  for (const char c : std::filesystem::path(scene_file).stem().string()) {
    const bool plain = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || (c == '.' && !stem.empty());
    stem += plain ? c : '_';
  }
  return (stem.empty() ? "render" : stem) + ".png";
}

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

enum class image_format { png, exr };

// --out's format, from its extension (any case): .png or .exr; anything else is a usage error.
image_format image_format_of(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".png") return image_format::png;
  if (ext == ".exr") return image_format::exr;
  throw bench::usage_error("--out " + path + ": the image format comes from the extension, .png or .exr" +
                           (ext.empty() ? std::string(" (none given)") : ", not " + ext));
}

// The film size --width / --height ask for: both as given, or one of them with the other following
// the scene's aspect. The vertical field of view stays the scene's, so the aspect decides the
// horizontal one. {0, 0} when neither is given.
std::pair<std::uint32_t, std::uint32_t> film_size(const render_args& a, const film_desc& film) {
  if (!a.width && !a.height) return {0, 0};
  if (a.width && a.height) return {a.width, a.height};
  const double aspect = static_cast<double>(film.width) / film.height;
  if (a.width) return {a.width, std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::lround(a.width / aspect)))};
  return {std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::lround(a.height * aspect))), a.height};
}

}  // namespace

void add_render_options(CLI::App& cmd, render_args& a) {
  cmd.add_option("scene", a.scene, "scene file (.toml) or mesh (.obj)")->required();
  cmd.add_option("--strategy", a.strategy, "compaction strategy for the path queue (default: the scene's)");
  cmd.add_option("--backend", a.backend, "auto (the GPU when there is one), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  cmd.add_option("--integrator", a.integrator, "wavefront (queues compacted between bounces) or megakernel (one thread per path)")
      ->check(CLI::IsMember({"wavefront", "megakernel"}));
  cmd.add_option("--traversal", a.traversal, "dfs or bfs")->check(CLI::IsMember({"dfs", "bfs"}));
  cmd.add_option("--queue", a.queue,
                 "pass (the strategy compacts the path state), index (it compacts 4-byte path indices) or append "
                 "(shade appends the survivors: no compaction pass)")
      ->check(CLI::IsMember({"pass", "index", "append"}));
  cmd.add_option("--reorder", a.reorder, "ray reordering: none, morton, octant, termination (default: the scene's)");
  cmd.add_option("--sort", a.sort, "GPU radix sort for --reorder: onesweep or cub (default: the scene's)");
  cmd.add_option("--spp", a.spp, "samples per pixel")->check(CLI::Range(1U, 1U << 20))->default_str("the scene's film.spp");
  cmd.add_option("--out", a.png,
                 "image, its format from the extension: .png (8-bit sRGB) or .exr (32-bit float, linear); "
                 "default <scene file's stem>.png when no output is named");
  cmd.add_option("--exr", a.exr, "a second image, EXR (32-bit float, linear)");
  cmd.add_option("--width", a.width, "film width in pixels; alone, the height follows the scene's aspect "
                                     "(the vertical field of view stays the scene's)")
      ->check(CLI::Range(1U, 1U << 16))
      ->default_str("the scene's film.width");
  cmd.add_option("--height", a.height, "film height in pixels; alone, the width follows the scene's aspect")
      ->check(CLI::Range(1U, 1U << 16))
      ->default_str("the scene's film.height");
  cmd.add_option("--json", a.json, "JSON report");
  cmd.add_option("--set", a.set, "override a scene key, key=value (repeatable), e.g. film.width=256");
  cmd.add_flag("--quiet", a.quiet, "no progress bar and no table");
  cmd.add_flag("--profile-stages", a.profile_stages,
               "time every stage and bounce (CPU clock, CUDA events inside the wave's graph); default: the frame time only");
}

int run_render(const render_args& a, const std::string& command_line) {
  // The outputs are checked before anything is loaded: no output may be an input or another output,
  // or an existing file that is not a regular file.
  const std::string png = a.png.empty() && a.exr.empty() && a.json.empty() ? default_image_name(a.scene) : a.png;
  output_set outputs;
  outputs.add_input(a.scene);
  outputs.add_output(png, "--out");
  outputs.add_output(a.exr, "--exr");
  outputs.add_output(a.json, "--json");
  std::vector<std::string> overrides = a.set;
  if (a.spp) overrides.push_back("film.spp=" + std::to_string(a.spp));
  if (!a.strategy.empty()) overrides.push_back("compaction.strategy=\"" + a.strategy + "\"");
  if (!a.reorder.empty()) overrides.push_back("compaction.reorder=\"" + a.reorder + "\"");
  if (!a.sort.empty()) overrides.push_back("compaction.sort=\"" + a.sort + "\"");
  const std::string backend = bench::resolve_backend(a.backend);
  if (a.width && a.height) {  // both known: the loader checks them (and frames a bare mesh for them)
    overrides.push_back("film.width=" + std::to_string(a.width));
    overrides.push_back("film.height=" + std::to_string(a.height));
  }
  scene sc = load_scene(a.scene, overrides);
  if (const auto [w, h] = film_size(a, sc.film); w && (w != sc.film.width || h != sc.film.height)) {
    overrides.push_back("film.width=" + std::to_string(w));  // one given: the other from the scene's aspect
    overrides.push_back("film.height=" + std::to_string(h));
    sc = load_scene(a.scene, overrides);
  }
  for (const auto& f : sc.files) outputs.add_input(f);
  // --out's format, checked once every input is known (an output that is an input says so first).
  const image_format out_format = a.png.empty() ? image_format::png : image_format_of(a.png);

  render_settings settings = render_settings::from(sc);
  settings.traversal = a.traversal;
  settings.integrator = a.integrator;
  settings.profile_stages = a.profile_stages;
  settings.queue = a.queue;
  const bool gpu = backend == "cuda";
  marks_form_for(settings.strategy, gpu ? sieve::backend::cuda : sieve::backend::cpu,
                 "renderer");  // an unfit strategy fails before the BVH build
  check_render_memory(sc, settings, gpu);  // before the BVH build

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
  j["backend"] = backend;
  const nlohmann::json machine = bench::machine_info(gpu);
  j["device"] = gpu ? machine["gpu"] : machine["cpu"];
  j["machine"] = machine;
  j["strategy"] = bench::strategy_shown(settings.strategy, st.strategies_ran);
  j["strategy_asked"] = settings.strategy;
  j["strategies_ran"] = st.strategies_ran;
  j["form"] = std::string(sieve::to_string(st.form));
  j["integrator"] = settings.integrator;
  j["traversal"] = settings.traversal;
  j["queue"] = settings.queue;
  j["reorder"] = std::string(to_string(settings.reorder));
  j["sort"] = settings.sort;
  j["width"] = r.width;
  j["height"] = r.height;
  j["vfov_degrees"] = sc.camera.vfov_degrees;
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
  j["profile_stages"] = settings.profile_stages;
  j["stages"] = nlohmann::json::object();  // empty unless profile_stages
  for (const auto& s : st.stages) j["stages"][s.name] = s.ms;
  j["waves"] = st.waves;
  j["wave_launch"] = st.wave_launch;
  j["host_syncs"] = st.host_syncs;
  j["host_syncs_per_wave"] = st.waves ? static_cast<double>(st.host_syncs) / static_cast<double>(st.waves) : 0.0;
  j["bounces"] = nlohmann::json::array();
  for (std::size_t b = 0; b < st.bounces.size(); ++b)
    if (st.bounces[b].live)
      j["bounces"].push_back({{"bounce", b}, {"live", st.bounces[b].live}, {"compaction_ms", st.bounces[b].compact_ms}});
  j["run"] = bench::run_info(command_line);

  const std::vector<vec3> image = r.mean();
  if (!png.empty())
    outputs.stage(png, out_format == image_format::exr ? encode_exr(png, r.width, r.height, image)
                                                       : encode_png(png, r.width, r.height, image));
  if (!a.exr.empty()) outputs.stage(a.exr, encode_exr(a.exr, r.width, r.height, image));
  if (!a.json.empty()) outputs.stage(a.json, bench::json_text(j, 2));
  outputs.commit();

  if (!a.quiet) {
    std::cout << sc.name << ": " << r.width << " x " << r.height << ", " << r.samples << " spp, "
              << sc.triangles.size() << " triangles (BVH " << bench::fixed(bvh_s, 3) << " s), strategy "
              << bench::strategy_shown(settings.strategy, st.strategies_ran) << " (" << sieve::to_string(st.form) << "), "
              << settings.integrator << ", " << settings.traversal << ", reorder " << to_string(settings.reorder) << "\n"
              << "device: " << j["device"].get<std::string>() << " (" << backend << ")\n"
              << bench::fixed(st.seconds, 3) << " s, " << bench::fixed(mrays, 2) << " Mrays/s ("
              << st.extension_rays << " extension + " << st.shadow_rays << " shadow rays)\n\n";
    std::cout << st.waves << " waves (" << st.wave_launch << "), " << st.host_syncs << " host synchronisations\n";
    if (!settings.profile_stages) std::cout << "stage times: --profile-stages\n";
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
  const int sig = stop_signal.load();
  return sig ? 128 + sig : r.partial() ? 128 + SIGINT : 0;
}

}  // namespace sieve::app
