#include "render.hpp"

#include "mpi.hpp"

#include <core/image_io.hpp>
#include <job/render_job.hpp>
#include <wavefront/integrator.hpp>
#include <wavefront/split.hpp>

#include <output_files.hpp>
#include <report.hpp>

#include <sieve/compaction.hpp>
#include <sieve/compaction/cuda.hpp>

#include <oneapi/tbb/global_control.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <optional>
#include <thread>

namespace sieve::app {
namespace {

using namespace sieve::render;
using report::end_by_signal;
using report::output_set;

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

// Installs the handlers for the lifetime of a render and the writing of its outputs, for the
// signals not ignored when it starts: a render under nohup, or with Ctrl-C ignored by the shell,
// goes on ignoring them (as output_files does).
class signal_guard {
 public:
  signal_guard() {
    interrupted.store(false);
    stop_signal.store(0);
    for (std::size_t i = 0; i < std::size(stop_signals); ++i) {
      struct sigaction sa {};
      sa.sa_handler = on_signal;
      sigemptyset(&sa.sa_mask);
      installed_[i] = sigaction(stop_signals[i], nullptr, &old_[i]) == 0 && !ignored(old_[i]) &&
                      sigaction(stop_signals[i], &sa, nullptr) == 0;
    }
  }
  ~signal_guard() {
    for (std::size_t i = 0; i < std::size(stop_signals); ++i)
      if (installed_[i]) sigaction(stop_signals[i], &old_[i], nullptr);
  }
  signal_guard(const signal_guard&) = delete;
  signal_guard& operator=(const signal_guard&) = delete;

 private:
  static bool ignored(const struct sigaction& a) { return !(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_IGN; }
  struct sigaction old_[std::size(stop_signals)] {};
  bool installed_[std::size(stop_signals)] = {};
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

std::string pct(double part, double whole) { return whole > 0 ? report::fixed(100.0 * part / whole, 1) + " %" : "-"; }

enum class image_format { png, exr };

// --out's format, from its extension (any case): .png or .exr; anything else is a usage error.
image_format image_format_of(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".png") return image_format::png;
  if (ext == ".exr") return image_format::exr;
  throw report::usage_error("--out " + path + ": the image format comes from the extension, .png or .exr" +
                           (ext.empty() ? std::string(" (none given)") : ", not " + ext));
}

}  // namespace

void check_render_args(const render_args& a) {
  if (!a.png.empty()) image_format_of(a.png);
}

namespace {

// Runs `setup` (what a rank does before it renders). Under mpirun the ranks then agree: when it
// threw on any rank, the lowest such rank rethrows (main prints it, naming the rank) and the others
// end quietly with status 1 (mpi::peer_failed), so no rank waits for one that is gone.
template <class F>
void on_every_rank(F&& setup) {
  const mpi::world_info& world = mpi::world();
  if (!world.launched) return setup();
  std::exception_ptr failure;
  try {
    setup();
  } catch (...) {
    failure = std::current_exception();
  }
  const int first = mpi::first_failure(failure != nullptr);
  if (first < 0) return;
  if (first == world.rank) std::rethrow_exception(failure);
  throw mpi::peer_failed{first};
}

// This process's CPU time so far (user + system, all threads).
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// What every rank of a split render must agree on: the film and the scene's size.
std::string film_fingerprint(const scene& sc) {
  return std::to_string(sc.film.width) + " x " + std::to_string(sc.film.height) + ", " + std::to_string(sc.film.spp) +
         " spp, " + std::to_string(sc.film.max_bounces) + " bounces, seed " + std::to_string(sc.film.seed) + ", " +
         std::to_string(sc.triangles.size()) + " triangles";
}

// A rank's render_stats, sent to rank 0 as JSON, and added up there.
nlohmann::json stats_json(const render_stats& st) {
  nlohmann::json j = {{"extension_rays", st.extension_rays}, {"shadow_rays", st.shadow_rays},
                      {"bfs_compact_ms", st.bfs_compact_ms}, {"seconds", st.seconds},
                      {"waves", st.waves}, {"host_syncs", st.host_syncs}, {"graphs", st.graphs},
                      {"wave_launch", st.wave_launch}, {"strategies_ran", st.strategies_ran},
                      {"stages", nlohmann::json::array()}, {"loops", nlohmann::json::array()},
                      {"bounces", nlohmann::json::array()}};
  for (const auto& s : st.stages) j["stages"].push_back({s.name, s.ms});
  for (const auto& l : st.loops) j["loops"].push_back({l.name, l.launches, l.items, l.ms});
  for (const auto& b : st.bounces) j["bounces"].push_back({b.live, b.compact_ms});
  return j;
}

void add_stats(render_stats& into, const nlohmann::json& j) {
  into.extension_rays += j["extension_rays"].get<std::uint64_t>();
  into.shadow_rays += j["shadow_rays"].get<std::uint64_t>();
  into.bfs_compact_ms += j["bfs_compact_ms"].get<double>();
  into.seconds += j["seconds"].get<double>();
  into.waves += j["waves"].get<std::uint64_t>();
  into.host_syncs += j["host_syncs"].get<std::uint64_t>();
  into.graphs += j["graphs"].get<std::uint64_t>();
  // Ranks may launch their waves differently (their own backends): "graph+cpu" names each once.
  const std::string launch = j["wave_launch"].get<std::string>();
  if (into.wave_launch.empty()) into.wave_launch = launch;
  else if (("+" + into.wave_launch + "+").find("+" + launch + "+") == std::string::npos) into.wave_launch += "+" + launch;
  for (const auto& name : j["strategies_ran"])
    if (std::find(into.strategies_ran.begin(), into.strategies_ran.end(), name.get<std::string>()) == into.strategies_ran.end())
      into.strategies_ran.push_back(name.get<std::string>());
  for (const auto& s : j["stages"]) {
    const std::string name = s[0].get<std::string>();
    auto it = std::find_if(into.stages.begin(), into.stages.end(), [&](const stage_time& t) { return t.name == name; });
    if (it == into.stages.end()) it = into.stages.insert(into.stages.end(), stage_time{name, 0});
    it->ms += s[1].get<double>();
  }
  for (const auto& l : j["loops"])
    exec::add_loop_time(into.loops, {l[0].get<std::string>(), l[1].get<std::uint64_t>(), l[2].get<std::uint64_t>(),
                                     l[3].get<double>()});
  const auto& bounces = j["bounces"];
  if (into.bounces.size() < bounces.size()) into.bounces.resize(bounces.size());
  for (std::size_t b = 0; b < bounces.size(); ++b) {
    into.bounces[b].live += bounces[b][0].get<std::uint64_t>();
    into.bounces[b].compact_ms += bounces[b][1].get<double>();
  }
}

}  // namespace

void add_render_options(CLI::App& cmd, render_args& a) {
  cmd.add_option("scene", a.job.scene, "scene file (.toml) or model (.obj, .gltf, .glb)")->required();
  cmd.add_option("--strategy", a.job.strategy, "compaction strategy for the path queue (default: the scene's)");
  cmd.add_option("--backend", a.job.backend, "auto (the GPU when there is one), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  cmd.add_option("--integrator", a.job.integrator, "wavefront (queues compacted between bounces) or megakernel (one thread per path)")
      ->check(CLI::IsMember(mode_name_list<integrator_kind>()));
  cmd.add_option("--traversal", a.job.traversal, "dfs or bfs")->check(CLI::IsMember(mode_name_list<traversal_kind>()));
  cmd.add_option("--queue", a.job.queue,
                 "pass (the strategy compacts the path state), index (it compacts 4-byte path indices) or append "
                 "(shade appends the survivors: no compaction pass)")
      ->check(CLI::IsMember(mode_name_list<queue_mode>()));
  cmd.add_option("--reorder", a.job.reorder, "ray reordering: none, morton, octant, termination (default: the scene's)");
  cmd.add_option("--sort", a.job.sort, "GPU radix sort for --reorder: onesweep or cub (default: the scene's)");
  cmd.add_option("--spp", a.job.spp, "samples per pixel")->check(CLI::Range(1U, 1U << 20))->default_str("the scene's film.spp");
  cmd.add_option("--out", a.png,
                 "image, its format from the extension: .png (8-bit sRGB) or .exr (32-bit float, linear); "
                 "default <scene file's stem>.png when no output is named");
  cmd.add_option("--exr", a.exr, "a second image, EXR (32-bit float, linear)");
  cmd.add_option("--width", a.job.width, "film width in pixels; alone, the height follows the scene's aspect "
                                     "(the vertical field of view stays the scene's)")
      ->check(CLI::Range(1U, 1U << 16))
      ->default_str("the scene's film.width");
  cmd.add_option("--height", a.job.height, "film height in pixels; alone, the width follows the scene's aspect")
      ->check(CLI::Range(1U, 1U << 16))
      ->default_str("the scene's film.height");
  cmd.add_option("--json", a.json, "JSON report");
  cmd.add_option("--set", a.job.set, "override a scene key, key=value (repeatable), e.g. film.width=256");
  cmd.add_flag("--quiet", a.quiet, "no progress bar and no table");
  cmd.add_flag("--profile-stages", a.job.profile_stages,
               "time every stage and bounce (CPU clock, CUDA events inside the wave's graph); default: the frame time only");
  cmd.add_option("--threads", a.threads, "CPU threads (oneTBB) of this process; 0: all (under mpirun: the host's, shared by its ranks)")
      ->check(CLI::Range(0U, 1U << 16));
}

int run_render(const render_args& a, const std::string& command_line) {
  // Under mpirun every rank runs this; each renders its share of the film's samples and rank 0 (the
  // lead) checks and writes the outputs and prints. Alone, the lead renders everything.
  const mpi::world_info& world = mpi::world();
  const bool split = world.launched;
  const bool lead = world.rank == 0;
  // TBB's threads: --threads, or under mpirun the host's hardware threads shared by its ranks.
  const std::size_t threads = a.threads ? a.threads
                              : split ? std::max(1U, std::thread::hardware_concurrency() / static_cast<unsigned>(world.local_size))
                                      : 0;
  std::optional<tbb::global_control> thread_limit;
  if (threads) thread_limit.emplace(tbb::global_control::max_allowed_parallelism, threads);

  std::string png, backend;
  output_set outputs;
  scene sc;
  image_format out_format = image_format::png;
  render_settings settings;
  bool gpu = false;
  int gpu_index = -1;
  std::optional<prepared_scene> prepared;
  double bvh_s = 0;
  on_every_rank([&] {
    gpu_index = mpi::select_gpu();  // before anything touches CUDA
    // The outputs are checked before anything is loaded: no output may be an input or another output,
    // or an existing file that is not a regular file.
    png = a.png.empty() && a.exr.empty() && a.json.empty() ? default_image_name(a.job.scene) : a.png;
    if (lead) {
      outputs.add_input(a.job.scene);
      outputs.add_output(png, "--out");
      outputs.add_output(a.exr, "--exr");
      outputs.add_output(a.json, "--json");
    }
    backend = report::resolve_backend(a.job.backend);
    sc = load_requested_scene(a.job);
    if (lead)
      for (const auto& f : sc.files) outputs.add_input(f);
    // --out's format, checked once every input is known (an output that is an input says so first).
    out_format = a.png.empty() ? image_format::png : image_format_of(a.png);
    gpu = backend == "cuda";
    settings = requested_settings(a.job, sc, gpu);  // checked before the BVH build
  });
  // The ranks must render the same film (each may pick its backend and strategy).
  if (split) {
    const std::string film = film_fingerprint(sc);
    const std::string lead_film = mpi::broadcast(film);
    on_every_rank([&] {
      if (film != lead_film) throw sieve::error("renders another film than rank 0: " + film + " (rank 0: " + lead_film + ")");
    });
  }
  on_every_rank([&] {
    const auto t_bvh = std::chrono::steady_clock::now();
    prepared.emplace(sc);
    bvh_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_bvh).count();
  });

  // This rank's samples: all of them, or its contiguous share.
  const sample_range share = split ? share_of(sc.film.spp, world.size, world.rank) : sample_range{0, sc.film.spp};
  settings.first_sample = share.first;
  settings.sample_count = share.count;

  const bool bar = lead && !a.quiet && isatty(STDERR_FILENO);
  const auto t0 = std::chrono::steady_clock::now();
  if (bar)
    settings.progress = [&](std::uint32_t done, std::uint32_t total) {
      draw_progress(done, total, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    };
  signal_guard guard;
  settings.cancel = &interrupted;
  render_result r;
  split_film film(sc.film.width, sc.film.height);
  nlohmann::json ranks;
  double wall_s = 0;
  const double cpu0 = cpu_seconds();
  try {
    {
      mpi::stop_relay relay(interrupted);  // a stop on any rank stops every rank
      if (share.count == 0) {  // more ranks than samples: nothing to render here
        r = begin_render(sc, settings, gpu ? sieve::backend::cuda : sieve::backend::cpu);
        r.spp = 0;
      } else {
        r = gpu ? render_cuda(*prepared, settings) : render_cpu(*prepared, settings);
      }
    }
    const auto t_rendered = std::chrono::steady_clock::now();
    const double render_cpu_s = cpu_seconds() - cpu0;
    if (split) {
      const nlohmann::json mine = {{"rank", world.rank},
                                   {"host", world.host},
                                   {"backend", backend},
                                   {"device", gpu ? report::machine_info(true)["gpu"] : report::machine_info(false)["cpu"]},
                                   {"gpu", gpu ? gpu_index : -1},
                                   {"threads", tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)},
                                   {"first_sample", share.first},
                                   {"samples", share.count},
                                   {"samples_completed", r.samples},
                                   {"ahead", r.ahead},
                                   {"seconds", r.stats.seconds},
                                   {"cpu_seconds", render_cpu_s},
                                   {"rays", r.stats.extension_rays + r.stats.shadow_rays},
                                   {"stats", stats_json(r.stats)}};
      const std::vector<std::string> texts = mpi::gather(mine.dump());
      const auto t_gathered = std::chrono::steady_clock::now();
      // The films, added in rank order (split.hpp): the same bits whatever the ranks' timing.
      if (lead) {
        for (const auto& t : texts) ranks.push_back(nlohmann::json::parse(t));
        film.add(r.sum, r.samples, r.ahead);
      }
      static_assert(sizeof(vec3) == 3 * sizeof(float));
      mpi::gather_in_order(std::span<const float>(&r.sum.data()->x, 3 * r.sum.size()), [&](int rank, std::span<const float> f) {
        const nlohmann::json& from = ranks[static_cast<std::size_t>(rank)];
        film.add(std::span<const vec3>(reinterpret_cast<const vec3*>(f.data()), f.size() / 3),
                 from["samples_completed"].get<std::uint32_t>(), from["ahead"].get<std::uint32_t>());
      });
      const auto t_reduced = std::chrono::steady_clock::now();
      if (lead) {
        const sieve::form form = r.stats.form;
        r.stats = render_stats{};
        r.stats.form = form;
        r.stats.wave_launch.clear();
        for (const auto& rk : ranks) add_stats(r.stats, rk["stats"]);
        for (auto& rk : ranks) rk.erase("stats");
        ranks = {{"count", world.size},
                 {"split", "contiguous sample ranges, films added in rank order"},
                 {"per_rank", ranks},
                 {"wait_seconds", std::chrono::duration<double>(t_gathered - t_rendered).count()},
                 {"reduction_seconds", std::chrono::duration<double>(t_reduced - t_gathered).count()},
                 {"reduction_bound_relative", split_bound(sc.film.spp)}};
      }
      wall_s = std::chrono::duration<double>(t_reduced - t0).count();
    }
  } catch (const std::exception& e) {
    if (!split || world.size < 2) throw;
    // The other ranks wait in a collective: end the whole job.
    std::cerr << "sieve: rank " << world.rank << ": " << e.what() << "\n";
    mpi::abort(1);
  }
  const int sig = stop_signal.load();
  if (!lead) return sig ? 128 + sig : 0;

  const std::uint32_t spp = sc.film.spp;
  const std::uint32_t samples = split ? film.samples() : r.samples;
  const bool partial = samples < spp;
  if (partial)
    std::cerr << (bar ? "\n" : "") << "sieve: interrupted after " << samples << " of " << spp
              << " samples per pixel" << (split ? " (all ranks)" : "") << "; writing what was accumulated\n";

  const double seconds = split ? wall_s : r.stats.seconds;
  const render_outcome out{backend, std::move(r), samples, seconds, bvh_s};
  const render_result& res = out.result;
  const render_stats& st = res.stats;
  const double total_ms = st.seconds * 1e3;
  const double rays = static_cast<double>(st.extension_rays + st.shadow_rays);
  const double mrays = seconds > 0 ? rays / seconds / 1e6 : 0;

  nlohmann::json j = render_report(a.job, sc, settings, out, command_line);
  if (split) {
    // The ranks' render time over the time of the job (all ranks rendering until the reduction ends):
    // 1 when every rank renders for the whole job; load imbalance and the reduction lower it.
    double busy = 0;
    for (const auto& rk : ranks["per_rank"]) busy += rk["seconds"].get<double>();
    ranks["efficiency"] = seconds > 0 ? busy / (world.size * seconds) : 0;
    ranks["reduction_share"] = seconds > 0 ? ranks["reduction_seconds"].get<double>() / seconds : 0;
    j["ranks"] = ranks;
    j["stages_note"] = "stage and loop times, rays and bounces are summed over the ranks; seconds is the job's";
  }

  const std::vector<vec3> image = split ? film.mean() : res.mean();
  if (!png.empty())
    outputs.stage(png, out_format == image_format::exr ? encode_exr(png, res.width, res.height, image)
                                                       : encode_png(png, res.width, res.height, image));
  if (!a.exr.empty()) outputs.stage(a.exr, encode_exr(a.exr, res.width, res.height, image));
  if (!a.json.empty()) outputs.stage(a.json, report::json_text(j, 2));
  outputs.commit();

  if (!a.quiet) {
    std::cout << sc.name << ": " << res.width << " x " << res.height << ", " << samples << " spp, "
              << sc.triangles.size() << " triangles (BVH " << report::fixed(bvh_s, 3) << " s), strategy "
              << report::strategy_shown(settings.strategy, st.strategies_ran) << " (" << sieve::to_string(st.form) << "), "
              << to_string(settings.integrator) << ", " << to_string(settings.traversal) << ", reorder " << to_string(settings.reorder) << "\n"
              << "device: " << j["device"].get<std::string>() << " (" << backend << ")\n"
              << report::fixed(seconds, 3) << " s, " << report::fixed(mrays, 2) << " Mrays/s ("
              << st.extension_rays << " extension + " << st.shadow_rays << " shadow rays)\n\n";
    std::cout << st.waves << " waves (" << st.wave_launch << "), " << st.host_syncs << " host synchronisations\n";
    if (!settings.profile_stages) std::cout << "stage times: --profile-stages\n";
    if (split) {
      report::table rt({"rank", "host", "device", "samples", "s", "Mrays/s"});
      for (const auto& rk : ranks["per_rank"]) {
        const double s = rk["seconds"].get<double>();
        rt.add({std::to_string(rk["rank"].get<int>()), rk["host"].get<std::string>(),
                rk["backend"].get<std::string>() + (rk["gpu"].get<int>() >= 0 ? " " + std::to_string(rk["gpu"].get<int>()) : ""),
                std::to_string(rk["first_sample"].get<std::uint32_t>()) + "+" + std::to_string(rk["samples_completed"].get<std::uint32_t>()),
                report::fixed(s, 3), report::fixed(s > 0 ? rk["rays"].get<double>() / s / 1e6 : 0, 2)});
      }
      rt.print(std::cout);
      std::cout << world.size << " ranks: reduction " << report::fixed(ranks["reduction_seconds"].get<double>() * 1e3, 1)
                << " ms (" << pct(ranks["reduction_seconds"].get<double>(), seconds) << "), waiting for the slowest "
                << report::fixed(ranks["wait_seconds"].get<double>() * 1e3, 1) << " ms, efficiency "
                << report::fixed(ranks["efficiency"].get<double>(), 3) << "\n\n";
    }
    report::table stages({"stage", "ms", "share"});
    for (const auto& s : st.stages) stages.add({s.name, report::fixed(s.ms, 1), pct(s.ms, total_ms)});
    if (settings.traversal == traversal_kind::bfs)
      stages.add({"(bfs frontier compaction, in extend)", report::fixed(st.bfs_compact_ms, 1), pct(st.bfs_compact_ms, total_ms)});
    stages.add({"compaction, all", report::fixed(st.compaction_ms(), 1), pct(st.compaction_ms(), total_ms)});
    stages.print(std::cout);
    std::cout << "\n";
    if (!st.loops.empty()) {  // the parallel_for loops the stages are made of (the library's calls are not loops)
      report::table loops({"loop", "launches", "items", "ms", "share"});
      for (const auto& l : st.loops)
        loops.add({l.name, std::to_string(l.launches), std::to_string(l.items), report::fixed(l.ms, 1), pct(l.ms, total_ms)});
      loops.print(std::cout);
      if (st.wave_launch.find("graph") != std::string::npos)
        std::cout << "(graph: each loop launches over the wave's capacity; items counts slots, not live paths)\n";
      std::cout << "\n";
    }
    report::table bounces({"bounce", "live paths", "compact ms"});
    for (std::size_t b = 0; b < st.bounces.size(); ++b)
      if (st.bounces[b].live)
        bounces.add({std::to_string(b), std::to_string(st.bounces[b].live), report::fixed(st.bounces[b].compact_ms, 2)});
    bounces.print(std::cout);
    std::cout << "\nwrote";
    for (const auto& f : {png, a.exr, a.json})
      if (!f.empty()) std::cout << " " << f;
    std::cout << "\n";
  }
  // A signal that came while the outputs were written (they are complete): said, and the exit
  // status tells it.
  if (const int late = sig ? 0 : stop_signal.load()) {
    std::cerr << "sieve: " << strsignal(late) << " while the outputs were written; they are complete\n";
    return 128 + late;
  }
  return sig ? 128 + sig : partial ? 128 + SIGINT : 0;
}

}  // namespace sieve::app
