#include "render.hpp"

#include "mpi.hpp"
#include "setup_lines.hpp"

#include <job/render_job.hpp>
#include <scene/load.hpp>

#include <output_files.hpp>
#include <report.hpp>

#include <sieve/compaction.hpp>
#include <sieve/compaction/backend.hpp>

#include <oneapi/tbb/global_control.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <mutex>
#include <optional>
#include <thread>

namespace sieve::app {
namespace {

using namespace sieve::render;
using report::end_by_signal;

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


std::string pct(double part, double whole) { return whole > 0 ? report::fixed(100.0 * part / whole, 1) + " %" : "-"; }

// Progress on stderr. On a terminal: a line as each step begins (loading, the BVH build, rendering,
// writing) and a bar redrawn in place while rendering. Without one: a line every few seconds while a
// step runs (a quick render, or one that fails at once, prints none: an error stays one line).
class progress_lines {
 public:
  explicit progress_lines(bool tty) : tty_(tty), t0_(clock::now()) {
    if (!tty_) ticker_ = std::thread([this] { tick(); });
  }
  ~progress_lines() {
    {
      const std::lock_guard lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    if (ticker_.joinable()) ticker_.join();
  }
  progress_lines(const progress_lines&) = delete;
  progress_lines& operator=(const progress_lines&) = delete;

  void step(job_step s, const render_job& job) {
    std::string what;
    switch (s) {
      case job_step::load: what = "loading " + job.request().scene; break;
      case job_step::prepare: what = "building the BVH of " + std::to_string(job.loaded().triangles.size()) + " triangles"; break;
      case job_step::render: what = "rendering"; break;
      case job_step::write: what = "writing"; break;
    }
    const std::lock_guard lock(m_);
    what_ = what;
    step_t0_ = clock::now();
    if (!tty_) return;
    if (bar_drawn_) std::fputc('\n', stderr), bar_drawn_ = false;
    std::fprintf(stderr, "sieve: %s (%.1f s so far)\n", what.c_str(), seconds(t0_));
    std::fflush(stderr);
  }

  void samples(std::uint32_t done, std::uint32_t total) {
    const std::lock_guard lock(m_);
    const double s = seconds(step_t0_);
    const double eta = done ? s / done * (total - done) : 0;
    char line[160];
    std::snprintf(line, sizeof line, "rendering: %u/%u spp, %.1f s, %.1f s left", done, total, s, eta);
    what_ = line;
    if (!tty_) return;
    constexpr int width = 40;
    const int filled = static_cast<int>(static_cast<double>(width) * done / total);
    std::fprintf(stderr, "\r[%s%s] %u/%u spp  %.1f s, %.1f s left ", std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), done, total, s, eta);
    bar_drawn_ = done != total;
    if (done == total) std::fputc('\n', stderr);
    std::fflush(stderr);
  }
  bool bar_drawn() const { return bar_drawn_; }

 private:
  using clock = std::chrono::steady_clock;
  static double seconds(clock::time_point since) { return std::chrono::duration<double>(clock::now() - since).count(); }

  // Without a terminal: every few seconds, the step in progress (or the render's samples).
  void tick() {
    constexpr auto every = std::chrono::seconds(5);
    std::unique_lock lock(m_);
    while (!cv_.wait_for(lock, every, [this] { return stop_; })) {
      if (what_.empty()) continue;
      std::fprintf(stderr, "sieve: %s (%.0f s so far)\n", what_.c_str(), seconds(t0_));
      std::fflush(stderr);
    }
  }

  bool tty_;
  bool bar_drawn_ = false;
  clock::time_point t0_, step_t0_ = clock::now();
  std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::string what_;
  std::thread ticker_;
};

// The ranks of an MPI job as the render job's peers (renderer/job/render_job.hpp).
class mpi_peers final : public job_peers {
 public:
  explicit mpi_peers(int gpu_index) : gpu_index_(gpu_index) {}
  int rank() const override { return mpi::world().rank; }
  int size() const override { return mpi::world().size; }
  // When `step` threw on any rank, the lowest such rank rethrows (main prints it, naming the rank)
  // and the others end quietly with status 1 (mpi::peer_failed), so no rank waits for one that is gone.
  void on_every_rank(const std::function<void()>& step) override {
    std::exception_ptr failure;
    try {
      step();
    } catch (...) {
      failure = std::current_exception();
    }
    const int first = mpi::first_failure(failure != nullptr);
    if (first < 0) return;
    if (first == rank()) std::rethrow_exception(failure);
    throw mpi::peer_failed{first};
  }
  std::string broadcast(const std::string& text) override { return mpi::broadcast(text); }
  std::vector<std::string> gather(const std::string& text) override { return mpi::gather(text); }
  void broadcast_bytes(std::span<std::byte> data) override { mpi::broadcast_bytes(data); }
  void barrier() override { mpi::barrier(); }
  void render(const std::function<void()>& render, std::span<float> film) override {
    try {
      post_.emplace(film);                 // the tiles to rank 0 as they end
      mpi::shared_counter tiles;           // the tiles handed out
      counter_ = &tiles;
      // A stop on any rank stops every rank; on rank 0 the relay's thread also takes in the tiles.
      mpi::stop_relay relay(interrupted, [this] {
        if (rank() == 0) post_->poll();
      });
      render();
      counter_ = nullptr;
    } catch (const std::exception& e) {
      counter_ = nullptr;
      if (size() < 2) throw;
      // The other ranks wait in a collective: end the whole job.
      std::cerr << "sieve: rank " << rank() << ": " << e.what() << "\n";
      mpi::abort(1);
    }
  }
  std::uint64_t count_tiles(std::uint64_t n) override {
    if (!counter_) throw sieve::error("the tile counter is used outside the render");
    return counter_->fetch_add(n);
  }
  void send_tile(std::uint32_t first_pixel, std::span<const float> sums) override {
    if (!post_) throw sieve::error("a tile is sent outside the render");
    post_->send(first_pixel, sums);
  }
  void finish_tiles(std::uint64_t pixels) override {
    if (!post_) throw sieve::error("the tiles are finished outside the render");
    post_->finish(pixels);
    post_.reset();
  }
  nlohmann::json describe() const override { return {{"host", mpi::world().host}, {"gpu_index", gpu_index_}}; }

 private:
  int gpu_index_;
  mpi::shared_counter* counter_ = nullptr;
  std::optional<mpi::tile_post> post_;
};

// The modes that apply to this render, named once: the integrator, the traversal and the tree, the
// queue and its strategy (none where no strategy runs), the reordering and the routing.
std::string modes_line(const render_settings& s, bool gpu) {
  std::string line(to_string(s.integrator));
  if (s.uses_megakernel()) return line + (s.integrator == integrator_kind::megakernel ? "" : " (routing megakernel)") +
                                  (gpu ? ", bvh " + std::string(to_string(s.bvh)) : "") + " (no queue, no compaction)";
  line += ", " + std::string(to_string(s.traversal));
  if (gpu && s.traversal == traversal_kind::dfs) line += ", bvh " + std::string(to_string(s.bvh));
  line += ", queue " + std::string(to_string(s.queue));
  line += s.runs_strategy() ? ", strategy " + s.strategy : " (no compaction pass)";
  line += ", reorder " + std::string(to_string(s.reorder));
  if (gpu && s.reorders()) line += " (sort " + std::string(to_string(s.sort)) + ")";
  return line + ", routing " + std::string(to_string(s.routing));
}

// Before the work: what is rendered, how and where.
void print_header(const render_job& job) {
  const scene& sc = job.loaded();
  const render_settings& s = job.settings();
  const bool gpu = job.backend() == sieve::backend::cuda;
  std::cout << sc.name << ": " << sc.film.width << " x " << sc.film.height << ", " << sc.film.spp << " spp, "
            << sc.triangles.size() << " triangles; " << modes_line(s, gpu) << "\n"
            << "device: " << report::machine_info(gpu)[gpu ? "gpu" : "cpu"].get<std::string>() << " (" << sieve::to_string(job.backend()) << ")\n"
            << (!s.profile_stages ? std::string("stage times: not measured (--no-profile)\n")
                : gpu ? "stage times: measured (CUDA events around each stage and loop in one wave of every " +
                            std::to_string(s.profile_every) + ", scaled to all; --no-profile for the bare frame time)\n"
                      : std::string("stage times: measured (a clock read around each stage and loop; --no-profile for "
                                    "the bare frame time)\n"))
            << std::flush;
}

void print_ranks(const nlohmann::json& ranks, double seconds) {
  report::table rt({"rank", "host", "device", "tiles", "setup s", "render s", "wait s", "reduce s", "Mrays/s"});
  for (const auto& rk : ranks["per_rank"]) {
    const double s = rk["render_seconds"].get<double>();
    rt.add({std::to_string(rk["rank"].get<int>()), rk["host"].get<std::string>(),
            rk["backend"].get<std::string>() + (rk["gpu"].get<int>() >= 0 ? " " + std::to_string(rk["gpu"].get<int>()) : ""),
            std::to_string(rk["tiles"].get<std::uint32_t>()), report::fixed(rk["setup_seconds"].get<double>(), 3),
            report::fixed(s, 3), report::fixed(rk["wait_seconds"].get<double>(), 3),
            report::fixed(rk["reduction_seconds"].get<double>(), 3),
            report::fixed(s > 0 ? rk["rays"].get<double>() / s / 1e6 : 0, 2)});
  }
  rt.print(std::cout);
  const double red = ranks["reduction_seconds"].get<double>();
  const auto units = ranks["tile_units"].get<std::uint32_t>();
  std::cout << ranks["count"].get<int>() << " ranks, " << ranks["tiles"].get<std::uint32_t>() << " tiles of "
            << ranks["tile_pixels"].get<std::uint32_t>() << " pixels"
            << (units > 1 ? " (up to " + std::to_string(units) + " a take)" : std::string()) << ": setup "
            << report::fixed(ranks["setup_seconds"].get<double>(), 3)
            << " s, rendering " << report::fixed(ranks["render_seconds"].get<double>(), 3) << " s, waiting for the slowest "
            << report::fixed(ranks["wait_seconds"].get<double>() * 1e3, 1) << " ms, reduction " << report::fixed(red * 1e3, 1)
            << " ms (" << pct(red, seconds) << "); efficiency " << report::fixed(ranks["efficiency"].get<double>(), 3)
            << " (rendering alone " << report::fixed(ranks["efficiency_rendering"].get<double>(), 3) << ")\n\n";
}

// The stage, loop and bounce tables: measured figures only. The stages, the first wave's one-time
// costs and the time between the stages add up to the frame.
void print_times(const render_settings& settings, const render_stats& st) {
  const double total_ms = st.seconds * 1e3;
  if (!settings.profile_stages) {
    report::table bounces({"bounce", "live paths"});
    for (std::size_t b = 0; b < st.bounces.size(); ++b)
      if (st.bounces[b].live) bounces.add({std::to_string(b), std::to_string(st.bounces[b].live)});
    bounces.print(std::cout);
    return;
  }
  const bool bfs = settings.traversal == traversal_kind::bfs && !settings.uses_megakernel();
  const double first_ms = st.first_wave_extra_seconds * 1e3;
  report::table stages({"stage", "ms", "share"});
  for (const auto& s : st.stages) {
    stages.add({s.name, report::fixed(s.ms, 1), pct(s.ms, total_ms)});
    if (bfs && s.name == "extend")
      stages.add({"  of which the BFS frontier's compaction", report::fixed(st.bfs_compact_ms, 1), pct(st.bfs_compact_ms, total_ms)});
  }
  const std::string between = first_ms > 0 ? "(2)" : "(1)";
  if (first_ms > 0) stages.add({"first wave's one-time costs (1)", report::fixed(first_ms, 1), pct(first_ms, total_ms)});
  stages.add({"between the stages " + between, report::fixed(st.other_ms(), 1), pct(st.other_ms(), total_ms)});
  stages.add({"frame", report::fixed(total_ms, 1), pct(total_ms, total_ms)});
  stages.print(std::cout);
  if (first_ms > 0)
    std::cout << "(1) the first wave's time outside the stages over the other waves' mean: queues allocated, code "
                 "loaded and the wave's graph captured on the GPU, memory touched the first time\n";
  std::cout << between << " outside every timed stage: launches, waits for the device, the host's work between the stages\n";
  if (st.measured_waves < st.waves)
    std::cout << "stage and loop times measured on " << st.measured_waves << " of " << st.waves
              << " waves, scaled to all of them\n";
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
  const bool compacts = settings.runs_strategy();
  report::table bounces(compacts ? std::vector<std::string>{"bounce", "live paths", "compact ms"}
                                 : std::vector<std::string>{"bounce", "live paths"});
  for (std::size_t b = 0; b < st.bounces.size(); ++b) {
    if (!st.bounces[b].live) continue;
    std::vector<std::string> row{std::to_string(b), std::to_string(st.bounces[b].live)};
    if (compacts) row.push_back(report::fixed(st.bounces[b].compact_ms, 2));
    bounces.add(row);
  }
  bounces.print(std::cout);
}

// After the work: what ran, how fast, where the time went, what was written. Each figure once; the
// ranks' figures (waiting, reduction) only for a render split over them.
void print_outcome(const render_job& job, const render_outcome& out) {
  const render_settings& settings = job.settings();
  const render_stats& st = out.result.stats;
  const bool split = out.report.contains("ranks");
  const double rays = static_cast<double>(st.extension_rays + st.shadow_rays);
  const double mrays = out.seconds > 0 ? rays / out.seconds / 1e6 : 0;
  if (!st.strategies_ran.empty())
    std::cout << "strategy: "
              << (st.strategy_reason.empty()
                      ? report::strategy_shown(settings.strategy, st.strategies_ran) + " (" + std::string(sieve::to_string(st.form)) + ")"
                      : st.strategy_reason)
              << "\n";
  std::cout << out.samples << " spp in " << report::fixed(out.seconds, 3) << " s, " << report::fixed(mrays, 2)
            << " Mrays/s (" << st.extension_rays << " extension + " << st.shadow_rays << " shadow rays)\n";
  std::cout << "time: setup " << report::fixed(out.setup_seconds, 3) << " s (load " << report::fixed(out.load_seconds, 3)
            << ", BVH " << report::fixed(out.bvh_seconds, 3)
            << (job.backend() == sieve::backend::cuda ? ", upload and capture " + report::fixed(st.setup_seconds, 3) : std::string()) << "), rendering "
            << report::fixed(out.render_seconds, 3) << " s"
            << (split ? ", waiting " + report::fixed(out.wait_seconds, 3) + " s, reduction " + report::fixed(out.reduction_seconds, 3) + " s"
                      : std::string())
            << ", all " << report::fixed(out.total_seconds, 3) << " s\n";
  if (!settings.profile_stages && st.first_wave_extra_seconds > 0)
    std::cout << "the first wave took " << report::fixed(st.first_wave_extra_seconds, 3)
              << " s more than the mean of the others (one-time costs)\n";
  if (const auto& f = st.first_wave; f.capture >= 0)
    std::cout << "the first wave: queues allocated " << report::fixed(f.queues * 1e3, 1) << " ms, graph captured "
              << report::fixed(f.capture * 1e3, 1) << " ms (the kernels' code loaded on first use) and instantiated "
              << report::fixed(f.instantiate * 1e3, 1) << " ms, run " << report::fixed(f.run * 1e3, 1) << " ms\n";
  std::cout << "\n" << st.waves << (st.waves == 1 ? " wave (" : " waves (") << st.wave_launch << ")";
  if (st.wave_launch != "cpu") std::cout << ", " << st.host_syncs << " host synchronisations";
  std::cout << "\n";
  if (out.report["textures"]["count"].get<std::size_t>() > 0)
    std::cout << "textures: " << out.report["textures"]["summary"].get<std::string>() << ", read "
              << out.report["textures"]["storage"].get<std::string>() << "\n";
  if (split) print_ranks(out.report["ranks"], out.seconds);
  print_times(settings, st);
  std::cout << "\nwrote";
  for (const auto& f : {job.outputs().image, job.outputs().exr, job.outputs().json})
    if (!f.empty()) std::cout << " " << f;
  std::cout << "\n";
}

}  // namespace

void check_render_args(const render_args& a, bool dry_run) {
  render::check_scene_file(a.scene);  // the loader's first checks: there, a regular file, a known type
  // The job's first checks of the outputs: none is the scene file or another output, each writable.
  report::output_set files;
  files.add_input(a.scene);
  files.add_output(a.png.empty() && a.exr.empty() ? default_image_name(a.scene) : a.png, "--out");
  files.add_output(a.exr, "--exr");
  files.add_output(a.json, "--json");
  // The image's format: the run checks it once the scene's own files are known (an output that is
  // one of them is refused as such first).
  if (dry_run && !a.png.empty()) render::check_image_name(a.png);
  // A strategy from the command line: known, and able to run on the backend the render would take.
  if (!a.strategy.empty()) render::check_strategy(a.strategy, sieve::resolve_backend(a.backend) == sieve::backend::cuda, "--strategy");
}

render::render_request render_args::request() const {
  render::render_request rq;
  rq.scene = scene;
  rq.backend = backend;
  if (!strategy.empty()) rq.strategy = strategy;
  rq.integrator = parse_mode<integrator_kind>(integrator);  // the names were checked by the command line
  rq.traversal = parse_mode<traversal_kind>(traversal);
  rq.bvh = parse_mode<bvh_layout>(bvh);
  rq.build = parse_mode<bvh_builder>(build);
  rq.queue = parse_mode<queue_mode>(queue);
  if (!reorder.empty()) rq.reorder = parse_mode<reorder_key>(reorder);
  if (!sort.empty()) rq.sort = parse_mode<sort_kind>(sort);
  if (!routing.empty()) rq.routing = parse_mode<routing_kind>(routing);
  rq.textures = parse_mode<texture_storage>(textures);
  rq.spp = spp;
  rq.width = width;
  rq.height = height;
  rq.set = set;
  rq.profile_stages = !no_profile;
  rq.tile_pixels = tile_pixels;
  rq.tile_delay_ms = tile_delay_ms;
  rq.tile_units = tile_units;
  rq.share_tree = tree == "shared";
  return rq;
}

void add_render_options(CLI::App& cmd, render_args& a) {
  cmd.add_option("scene", a.scene, "scene file (.toml) or model (.obj, .ply, .gltf, .glb)")->required();
  cmd.add_option("--strategy", a.strategy, "compaction strategy for the path queue (default: the scene's)");
  cmd.add_option("--backend", a.backend, "auto (the GPU when there is one), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  cmd.add_option("--integrator", a.integrator, "wavefront (queues compacted between bounces) or megakernel (one thread per path)")
      ->check(CLI::IsMember(mode_name_list<integrator_kind>()));
  cmd.add_option("--traversal", a.traversal, "dfs or bfs")->check(CLI::IsMember(mode_name_list<traversal_kind>()));
  cmd.add_option("--bvh", a.bvh,
                 "the tree the GPU's depth-first rays walk: auto (per ray kind, whichever measured faster), binary, "
                 "cwbvh (the compressed 8-wide tree by persistent warps) or cwbvh-thread (one ray a thread)")
      ->check(CLI::IsMember(mode_name_list<bvh_layout>()));
  cmd.add_option("--build", a.build,
                 "the BVH's builder: auto (ploc when the GPU renders, else sah), sah (binned SAH on the CPU), lbvh "
                 "(linear BVH: its binary tree on the GPU when the GPU renders) or ploc (on the GPU with every layout "
                 "when the GPU renders, else its CPU run)")
      ->check(CLI::IsMember(mode_name_list<bvh_builder>()));
  cmd.add_option("--queue", a.queue,
                 "pass (the strategy compacts the path state), index (it compacts 4-byte path indices) or append "
                 "(shade appends the survivors: no compaction pass)")
      ->check(CLI::IsMember(mode_name_list<queue_mode>()));
  cmd.add_option("--reorder", a.reorder, "ray reordering: none, morton, octant, termination (default: the scene's)")
      ->check(CLI::IsMember(mode_name_list<reorder_key>()));
  cmd.add_option("--sort", a.sort, "GPU radix sort for --reorder: onesweep or cub (default: the scene's)")
      ->check(CLI::IsMember(mode_name_list<sort_kind>()));
  cmd.add_option("--routing", a.routing,
                 "how shade reaches the material families: branch (one kernel), multisplit, queues (appended by "
                 "extend), sort (by material) or megakernel (default: the scene's, else branch)")
      ->check(CLI::IsMember(mode_name_list<routing_kind>()));
  cmd.add_option("--textures", a.textures,
                 "how the GPU reads textures: hardware (texture objects: the texture unit filters; RGB as three "
                 "one-channel layers), rgba (texture objects, RGB widened to RGBA) or packed (the stored texels "
                 "filtered by the CPU's code)")
      ->check(CLI::IsMember(mode_name_list<texture_storage>()));
  cmd.add_option("--spp", a.spp, "samples per pixel")->check(CLI::Range(1U, 1U << 20))->default_str("the scene's film.spp");
  cmd.add_option("--out", a.png,
                 "image, its format from the extension: .png (8-bit sRGB) or .exr (32-bit float, linear); "
                 "default <scene file's stem>.png when no image is named (also with --json)");
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
  cmd.add_flag("--quiet", a.quiet, "no progress lines and no table");
  cmd.add_flag("--profile-stages", a.profile_stages,
               "time every stage, loop and bounce (CPU clock, CUDA events inside the wave's graph); the default");
  cmd.add_flag("--no-profile", a.no_profile, "the frame time only: no clock read or event between the stages")
      ->excludes("--profile-stages");
  cmd.add_option("--threads", a.threads, "CPU threads (oneTBB) of this process; 0: all (under mpirun: the host's, shared by its ranks)")
      ->check(CLI::Range(0U, 1U << 16));
  cmd.add_option("--tile-pixels", a.tile_pixels, "under mpirun: pixels per tile the ranks take on demand")
      ->check(CLI::Range(1U, 1U << 30))
      ->default_str("about two waves of paths, at least 8 tiles per rank");
  cmd.add_option("--tile-units", a.tile_units, "under mpirun: the most tiles a rank takes at once, fewer towards the film's end")
      ->check(CLI::Range(1U, 1024U))
      ->default_str("8 when the ranks' backends differ, else 1");
  cmd.add_option("--tree", a.tree, "under mpirun: the BVH built by every rank (each) or by rank 0 alone and sent to the others (shared)")
      ->check(CLI::IsMember({"shared", "each"}))
      ->capture_default_str();
  // Tests only: a rank slowed on purpose (each of its tiles lasts that much longer); not in --help.
  cmd.add_option("--tile-delay-ms", a.tile_delay_ms)->check(CLI::Range(0U, 60000U))->group("");
}

int run_render(const render_args& a, const std::string& command_line) {
  // Under mpirun every rank runs the job; each renders its share of the film's samples and rank 0
  // (the lead) checks and writes the outputs and prints. Alone, the lead renders everything.
  const mpi::world_info& world = mpi::world();
  const bool split = world.launched;
  const bool lead = world.rank == 0;
  // TBB's threads: --threads, or under mpirun the host's hardware threads shared by its ranks.
  const std::size_t threads = a.threads ? a.threads
                              : split ? std::max(1U, std::thread::hardware_concurrency() / static_cast<unsigned>(world.local_size))
                                      : 0;
  std::optional<tbb::global_control> thread_limit;
  if (threads) thread_limit.emplace(tbb::global_control::max_allowed_parallelism, threads);

  int gpu_index = -1;
  std::optional<mpi_peers> peers;
  if (split) {
    peers.emplace(-1);
    peers->on_every_rank([&] { gpu_index = mpi::select_gpu(); });  // before anything touches CUDA
    peers.emplace(gpu_index);
  }
  // What --dry-run checks, with the same exit status (every rank, failing together under mpirun).
  if (split) peers->on_every_rank([&] { check_render_args(a, false); });
  else check_render_args(a, false);
  // The image: --out, or the default name unless only an EXR is named (--json alone still writes it).
  render_outputs outputs{a.png.empty() && a.exr.empty() ? default_image_name(a.scene) : a.png, a.exr, a.json};
  const bool talk = lead && !a.quiet;
  std::optional<progress_lines> progress;
  if (talk) progress.emplace(isatty(STDERR_FILENO) != 0);
  signal_guard guard;
  job_hooks hooks;
  hooks.cancel = &interrupted;
  hooks.peers = split ? &*peers : nullptr;
  // The signal, if any, when the outputs began to be written (-1: they were not written).
  int sig_before_write = -1;
  job_step step_now = job_step::load;
  hooks.step = [&](job_step s, const render_job& j) {
    step_now = s;
    if (s == job_step::write) sig_before_write = stop_signal.load();
    if (progress) progress->step(s, j);
  };
  if (talk) {
    hooks.ready = [](const render_job& j) { print_header(j); };
    hooks.phase = [](setup_phase p, const render_job& j) { print_setup_phase(std::cout, p, j); };
    hooks.progress = [&](std::uint32_t done, std::uint32_t total) { progress->samples(done, total); };
  }
  render_job job(a.request(), outputs, command_line, hooks);
  const render_outcome& out = job.run();
  const bool bar_drawn = progress && progress->bar_drawn();
  progress.reset();  // no progress line after the work
  const int sig_now = stop_signal.load();
  if (!lead) return sig_now ? 128 + sig_now : 0;
  const int sig = sig_before_write >= 0 ? sig_before_write : sig_now;
  if (out.stopped_early) {  // nothing to write: the outputs stay as they were
    std::cerr << (bar_drawn ? "\n" : "") << "sieve: interrupted "
              << (step_now == job_step::load      ? "while the scene was loading"
                  : step_now == job_step::prepare ? "while the BVH was being built"
                                                  : "before the first sample of every pixel was done")
              << "; nothing was written\n";
    return 128 + (sig ? sig : SIGINT);
  }
  if (out.partial())
    std::cerr << (bar_drawn ? "\n" : "") << "sieve: interrupted after " << out.samples << " of " << out.spp
              << " samples per pixel" << (split ? " (all ranks)" : "") << "; writing what was accumulated\n";
  if (talk) print_outcome(job, out);
  // A signal that came while the outputs were written (they are complete): said, and the exit
  // status tells it.
  if (const int late = sig ? 0 : sig_now) {
    std::cerr << "sieve: " << strsignal(late) << " while the outputs were written; they are complete\n";
    return 128 + late;
  }
  return sig ? 128 + sig : out.partial() ? 128 + SIGINT : 0;
}

}  // namespace sieve::app
