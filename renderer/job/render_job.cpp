#include "render_job.hpp"

#include <core/image_io.hpp>
#include <core/marks.hpp>
#include <exec/stop.hpp>
#include <frame/prepared_scene.hpp>
#include <frame/tiles.hpp>
#include <run/render.hpp>
#include <scene/load.hpp>

#include <output_files.hpp>
#include <report.hpp>
#include <sieve/compaction/backend.hpp>
#include <sieve/compaction/names.hpp>

#include <oneapi/tbb/global_control.h>
#include <sys/resource.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <sstream>
#include <type_traits>
#include <thread>
#include <utility>

namespace sieve::render {
namespace {

using clock_type = std::chrono::steady_clock;

double since(clock_type::time_point t0) { return std::chrono::duration<double>(clock_type::now() - t0).count(); }

// The film size one of --width / --height asks for: the other side follows the aspect of `film`.
std::pair<std::uint32_t, std::uint32_t> film_size(const render_request& rq, const film_desc& film) {
  const double aspect = static_cast<double>(film.width) / film.height;
  if (rq.width) return {rq.width, std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::lround(rq.width / aspect)))};
  return {std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::lround(rq.height * aspect))), rq.height};
}


// The request's settings for that scene: the scene's [compaction] where the request leaves a value
// unset, checked before the BVH is built (a strategy that cannot serve the renderer's marks, a
// render too large for the memory).
render_settings requested_settings(const render_request& rq, const scene& sc, bool gpu) {
  render_settings settings = render_settings::from(sc);
  if (rq.strategy) settings.strategy = *rq.strategy;
  if (rq.reorder) settings.reorder = *rq.reorder;
  if (rq.sort) settings.sort = *rq.sort;
  if (rq.routing) settings.routing = *rq.routing;
  settings.traversal = rq.traversal;
  settings.bvh = rq.bvh;
  settings.build = rq.build;
  settings.integrator = rq.integrator;
  settings.queue = rq.queue;
  settings.textures = rq.textures;
  settings.profile_stages = rq.profile_stages;
  std::string from = "compaction.strategy in " + rq.scene;
  if (rq.strategy) from = "--strategy";
  else
    for (const auto& kv : rq.set)
      if (kv.rfind("compaction.strategy=", 0) == 0) from = "--set compaction.strategy";
  check_strategy(settings.strategy, gpu, from);
  check_render_memory(sc, settings, gpu);  // before the BVH build
  return settings;
}

enum class image_format { png, exr };

// An image's format, from its extension (any case): .png or .exr; anything else is a usage error.
image_format image_format_of(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".png") return image_format::png;
  if (ext == ".exr") return image_format::exr;
  throw usage_error("--out " + path + ": the image format comes from the extension, .png or .exr" +
                            (ext.empty() ? std::string(" (none given)") : ", not " + ext));
}

// This process's CPU time so far (user + system, all threads).
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
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
                      {"first_wave_extra_seconds", st.first_wave_extra_seconds},
                      {"waves", st.waves}, {"measured_waves", st.measured_waves}, {"host_syncs", st.host_syncs}, {"graphs", st.graphs},
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
  into.first_wave_extra_seconds += j["first_wave_extra_seconds"].get<double>();
  into.waves += j["waves"].get<std::uint64_t>();
  into.measured_waves += j["measured_waves"].get<std::uint64_t>();
  into.host_syncs += j["host_syncs"].get<std::uint64_t>();
  into.graphs += j["graphs"].get<std::uint64_t>();
  // Ranks may launch their waves differently (their own backends): "graph+cpu" names each once.
  const std::string launch = j["wave_launch"].get<std::string>();
  if (into.wave_launch.empty()) into.wave_launch = launch;
  else if (("+" + into.wave_launch + "+").find("+" + launch + "+") == std::string::npos) into.wave_launch += "+" + launch;
  for (const auto& name : j["strategies_ran"])
    if (std::find(into.strategies_ran.begin(), into.strategies_ran.end(), name.get<std::string>()) == into.strategies_ran.end())
      into.strategies_ran.push_back(name.get<std::string>());
  for (const auto& s : j["stages"]) into.add_stage(s[0].get<std::string>(), -1, s[1].get<double>());
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

// The ranks' rows added into rank 0's statistics, and the report's "ranks" object: the per-rank
// rows and the job's times (the slowest rank's setup, rendering and waiting; rank 0's reduction).
nlohmann::json reduce_ranks(render_stats& stats, nlohmann::json rows, const render_outcome& lead, const tile_plan& plan) {
  const sieve::form form = stats.form;
  stats = render_stats{};
  stats.form = form;
  stats.wave_launch.clear();
  double setup = 0, rendering = 0, busy = 0, wait = 0;
  for (auto& rk : rows) {
    add_stats(stats, rk["stats"]);
    rk.erase("stats");
    setup = std::max(setup, rk["setup_seconds"].get<double>());
    rendering = std::max(rendering, rk["render_seconds"].get<double>());
    busy += rk["render_seconds"].get<double>();
    wait = std::max(wait, rk["wait_seconds"].get<double>());
  }
  const double n = static_cast<double>(rows.size()), seconds = lead.seconds;
  return {{"count", rows.size()},
          {"split", "tiles of the film taken on demand, each pixel rendered by one rank"},
          {"tiles", plan.count()},
          {"tile_pixels", plan.tile_pixels},
          {"tile_units", plan.units},  // the most tiles one take holds
          {"per_rank", rows},
          {"setup_seconds", setup},
          {"render_seconds", rendering},
          {"wait_seconds", wait},
          {"reduction_seconds", lead.reduction_seconds},
          {"reduction_share", seconds > 0 ? lead.reduction_seconds / seconds : 0},
          {"job_seconds", lead.total_seconds},
          // The ranks' render time over the time of the job (all ranks rendering until the
          // reduction ends): 1 when every rank renders for the whole job; setup, imbalance and the
          // reduction lower it.
          {"efficiency", seconds > 0 ? busy / (n * seconds) : 0},
          {"efficiency_rendering", rendering > 0 ? busy / (n * rendering) : 0}};
}

}  // namespace

// The scene as the request overrides it: --spp, --set, and the film size (both given, or one with
// the other following the scene's aspect; the vertical field of view stays the scene's).
scene load_requested_scene(const render_request& rq) {
  std::vector<std::string> overrides = rq.set;
  if (rq.spp) overrides.push_back("film.spp=" + std::to_string(rq.spp));
  if (rq.width && rq.height) {  // both known: the loader checks them (and frames a bare mesh for them)
    overrides.push_back("film.width=" + std::to_string(rq.width));
    overrides.push_back("film.height=" + std::to_string(rq.height));
  }
  if (!rq.width == !rq.height) return load_scene(rq.scene, overrides);
  // One given: the other from the aspect of the scene's film, sized before the scene is read.
  return load_scene(rq.scene, overrides, {}, [&rq](const film_desc& film) { return film_size(rq, film); });
}

void check_image_name(const std::string& path) { image_format_of(path); }

void check_strategy(const std::string& name, bool gpu, const std::string& from) {
  const sieve::backend b = gpu ? sieve::backend::cuda : sieve::backend::cpu;
  const auto names = sieve::compaction_strategies();
  const bool known = std::any_of(names.begin(), names.end(), [&](const sieve::strategy_info& s) { return s.name == name; });
  const std::string where = " (the name from " + from + ")";
  if (name == "append")
    throw sieve::error("renderer: 'append' is a queue, not a strategy: --queue append (shade appends the survivors)" + where);
  if (!known) {  // the library's list holds every backend's: name this one's
    std::vector<std::string_view> list;
    for (const auto& s : names) list.push_back(s.name);
    const std::string what = "renderer: unknown strategy '" + name + "'" + sieve::did_you_mean(name, list) + "; on " +
                             (gpu ? "cuda" : "cpu") + " use one of: " + strategies_for_marks(b) + where;
    if (from == "--strategy") throw usage_error(what);  // the command line is at fault
    throw sieve::error(what);
  }
  try {
    marks_form_for(name, b, "renderer");
  } catch (const sieve::error& e) {
    throw sieve::error(e.what() + where);
  }
}

bool render_outcome::partial() const { return samples < spp; }

nlohmann::json loops_json(const render_stats& st) {
  nlohmann::json loops = nlohmann::json::array();
  for (const auto& l : st.loops)
    loops.push_back({{"name", l.name}, {"launches", l.launches}, {"items", l.items}, {"ms", l.ms}});
  return loops;
}

// The report's schema: its version goes up when a key changes meaning or name (docs/renderer.md).
constexpr int report_schema_version = 2;

nlohmann::json render_report(const render_request& rq, const scene& sc, const render_settings& settings,
                             const render_outcome& out, const std::string& command_line) {
  const render_result& r = out.result;
  const render_stats& st = r.stats;
  const bool gpu = out.backend == "cuda";
  const double total_ms = st.seconds * 1e3;
  const double rays = static_cast<double>(st.extension_rays + st.shadow_rays);
  // A setting that did not apply to this render is null: no strategy where no compaction ran, no
  // sort without reordering, no tree choice off the GPU.
  const auto applies = [](bool yes, nlohmann::json v) { return yes ? std::move(v) : nlohmann::json(nullptr); };
  const bool strategy_ran = settings.runs_strategy();
  nlohmann::json j;
  j["schema_version"] = report_schema_version;
  j["scene"] = sc.name;
  j["scene_file"] = rq.scene;
  j["backend"] = out.backend;
  const nlohmann::json machine = report::machine_info(gpu);
  j["device"] = gpu ? machine["gpu"] : machine["cpu"];
  j["machine"] = machine;
  j["strategy"] = applies(strategy_ran, report::strategy_shown(settings.strategy, st.strategies_ran));
  j["strategy_asked"] = settings.strategy;
  j["strategies_ran"] = st.strategies_ran;
  j["strategy_reason"] = applies(strategy_ran && !st.strategy_reason.empty(), st.strategy_reason);
  j["form"] = applies(strategy_ran, std::string(sieve::to_string(st.form)));
  j["integrator"] = std::string(to_string(settings.integrator));
  j["traversal"] = std::string(to_string(settings.uses_megakernel() ? traversal_kind::dfs : settings.traversal));
  j["bvh"] = applies(gpu && (settings.uses_megakernel() || settings.traversal == traversal_kind::dfs),
                     std::string(to_string(settings.bvh)));
  j["bvh_builder"] = builder_ran(settings.build, gpu, sc.triangles.size());
  j["queue"] = applies(!settings.uses_megakernel(), std::string(to_string(settings.queue)));
  j["reorder"] = std::string(to_string(settings.reorder));
  j["sort"] = applies(gpu && (settings.reorders() || (!settings.uses_megakernel() && settings.routing == routing_kind::sort)),
                      std::string(to_string(settings.sort)));
  j["routing"] = std::string(to_string(settings.routing));
  j["width"] = r.width;
  j["height"] = r.height;
  j["vfov_degrees"] = sc.camera.vfov_degrees;
  j["spp"] = sc.film.spp;
  j["samples_completed"] = out.samples;
  j["partial"] = out.samples < sc.film.spp;
  j["max_bounces"] = sc.film.max_bounces;
  j["seed"] = sc.film.seed;
  j["triangles"] = sc.triangles.size();
  std::uint64_t stored = 0, source = 0;
  for (const texture& t : sc.textures) stored += t.bytes(), source += t.source_bytes;
  j["textures"] = {{"count", sc.textures.size()}, {"stored_bytes", stored}, {"source_bytes", source},
                   {"storage", gpu ? std::string(to_string(settings.textures)) : std::string("packed")}, {"summary", texture_memory_line(sc.textures)}};
  j["threads"] = tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
  // Times: every key names its unit. frame_seconds is the render (what Mrays/s are over); "time"
  // the job's steps (a split render adds the ranks' waiting and reduction: write()).
  j["frame_seconds"] = out.seconds;
  j["time"] = {{"load_seconds", out.load_seconds},     {"bvh_build_seconds", out.bvh_seconds},
               {"setup_seconds", out.setup_seconds},   {"render_setup_seconds", st.setup_seconds},
               {"render_seconds", out.render_seconds}, {"total_seconds", out.total_seconds}};
  j["rays"] = {{"extension", st.extension_rays}, {"shadow", st.shadow_rays}};
  j["mrays_per_s"] = out.seconds > 0 ? rays / out.seconds / 1e6 : 0;
  // Times measured only with profile_stages: otherwise null (not measured), never zeros. The stages,
  // the first wave's one-time costs and the time between the stages add up to frame_seconds.
  const bool measured = settings.profile_stages;
  const auto ms_or_null = [&](double v) { return measured ? nlohmann::json(v) : nlohmann::json(nullptr); };
  j["profile_stages"] = settings.profile_stages;
  j["stages_ms"] = nlohmann::json::object();  // empty unless profile_stages
  for (const auto& s : st.stages) j["stages_ms"][s.name] = s.ms;
  j["first_wave_extra_ms"] = st.waves > 1 ? nlohmann::json(st.first_wave_extra_seconds * 1e3) : nlohmann::json(nullptr);
  j["between_stages_ms"] = ms_or_null(st.other_ms());
  j["compaction_ms"] = applies(strategy_ran, ms_or_null(st.compaction_ms()));
  j["compaction_percent"] = applies(strategy_ran, measured ? nlohmann::json(total_ms > 0 ? 100 * st.compaction_ms() / total_ms : 0)
                                                           : nlohmann::json(nullptr));
  j["bfs_frontier_compaction_ms"] = applies(settings.traversal == traversal_kind::bfs && !settings.uses_megakernel(),
                                            ms_or_null(st.bfs_compact_ms));
  j["loops"] = loops_json(st);
  j["waves"] = st.waves;
  j["measured_waves"] = measured ? nlohmann::json(st.measured_waves) : nlohmann::json(nullptr);
  j["wave_launch"] = st.wave_launch;
  j["host_syncs"] = applies(gpu, st.host_syncs);
  j["host_syncs_per_wave"] =
      applies(gpu, st.waves ? static_cast<double>(st.host_syncs) / static_cast<double>(st.waves) : 0.0);
  j["bounces"] = nlohmann::json::array();
  for (std::size_t b = 0; b < st.bounces.size(); ++b)
    if (st.bounces[b].live)
      j["bounces"].push_back({{"bounce", b}, {"live", st.bounces[b].live},
                              {"compaction_ms", applies(strategy_ran, ms_or_null(st.bounces[b].compact_ms))}});
  j["setup_s"] = setup_report(out, sc.triangles.size());
  j["run"] = report::run_info(command_line);
  return j;
}

// What the steps hand on to each other, beyond the job's members.
struct render_job::state {
  report::output_set files;            // checked before the scene is loaded
  std::optional<prepared_scene> prepared;
  tile_plan tiles;                     // a split render's tiles
  std::vector<vec3> inbox;             // a split render, process 0: the others' tiles as they come
  clock_type::time_point t_job;        // the job's start (load)
  clock_type::time_point t0;           // the render's start
  clock_type::time_point t_rendered;   // this process's last wave done (before the peers' closing collectives)
  double cpu0 = 0;
  nlohmann::json ranks;                // a split render's rows (rank 0)
};

render_job::render_job(render_request rq, render_outputs outputs, std::string command_line, job_hooks hooks)
    : rq_(std::move(rq)), outputs_(std::move(outputs)), command_line_(std::move(command_line)), hooks_(std::move(hooks)),
      state_(std::make_shared<state>()) {}

template <class F>
void render_job::on_every_rank(F&& step) {
  if (hooks_.peers) return hooks_.peers->on_every_rank(step);
  step();
}

const render_outcome& render_job::run() {
  // A stop while the scene loads or the tree builds ends the job at the next safe point; a split
  // render's ranks see stops through their relay, during the render only.
  const stop_scope scope(hooks_.peers ? nullptr : hooks_.cancel);
  try {
    load();
    prepare();
  } catch (const stopped&) {
    out_.stopped_early = true;
    return out_;
  }
  render();
  reduce();
  out_.stopped_early = !hooks_.peers && out_.samples == 0;
  if (out_.writes && !out_.stopped_early) write();
  return out_;
}

void render_job::load() {
  state_->t_job = clock_type::now();
  const bool lead = !hooks_.peers || hooks_.peers->rank() == 0;
  out_.writes = lead;
  on_every_rank([&] {
    // The outputs are checked before anything is loaded: no output may be an input or another
    // output, or an existing file that is not a regular file.
    if (lead) {
      state_->files.add_input(rq_.scene);
      state_->files.add_output(outputs_.image, "--out");
      state_->files.add_output(outputs_.exr, "--exr");
      state_->files.add_output(outputs_.json, "--json");
    }
    // An image name of the wrong extension is refused before the load, where it names no existing
    // file; an existing one may be an input, which the check after the load names as such first.
    std::error_code ec;
    if (!outputs_.image.empty() && !std::filesystem::exists(std::filesystem::symlink_status(outputs_.image, ec)))
      image_format_of(outputs_.image);
    backend_ = resolve_backend(rq_.backend);
    if (hooks_.step) hooks_.step(job_step::load, *this);
    const auto t_load = clock_type::now();
    scene_ = load_requested_scene(rq_);
    out_.load_seconds = since(t_load);
    if (lead)
      for (const auto& f : scene_.files) state_->files.add_input(f);
    if (!outputs_.image.empty()) image_format_of(outputs_.image);  // once every input is known
    settings_ = requested_settings(rq_, scene_, backend_ == "cuda");
  });
  if (hooks_.peers) {  // the ranks must render the same film (each may pick its backend and strategy)
    const std::string film = film_fingerprint(scene_);
    const std::string lead_film = hooks_.peers->broadcast(film);
    on_every_rank([&] {
      if (film != lead_film) throw sieve::error("renders another film than rank 0: " + film + " (rank 0: " + lead_film + ")");
    });
  }
  out_.backend = backend_;
  out_.spp = scene_.film.spp;
  out_.setup.load_bytes = input_bytes(scene_);
  if (hooks_.ready) hooks_.ready(*this);
  phase_done(setup_phase::load);
}

void render_job::phase_done(setup_phase p) {
  if (p == setup_phase::build) out_.setup.build_phases = state_->prepared->tree().stats.wall;
  if (hooks_.phase) hooks_.phase(p, *this);
}

namespace {

// Rank 0's tree on every process: the arrays' sizes as text, then each part's bytes in place.
void share_tree(bvh& tree, job_peers& peers) {
  std::string sizes;
  for_each_part(tree, [&](auto& part) {
    if constexpr (requires { part.resize(0); }) sizes += std::to_string(part.size()) + " ";
  });
  std::istringstream in(peers.broadcast(sizes));
  for_each_part(tree, [&](auto& part) {
    if constexpr (requires { part.resize(0); }) {
      std::size_t n = 0;
      in >> n;
      part.resize(n);
      peers.broadcast_bytes(std::as_writable_bytes(std::span(part)));
    } else {
      static_assert(std::is_trivially_copyable_v<std::remove_reference_t<decltype(part)>>);
      peers.broadcast_bytes(std::as_writable_bytes(std::span(&part, 1)));
    }
  });
}

}  // namespace

void render_job::prepare() {
  if (hooks_.step) hooks_.step(job_step::prepare, *this);
  const auto t_bvh = clock_type::now();
  const bool gpu = backend_ == "cuda";
  if (hooks_.peers && rq_.share_tree && hooks_.peers->size() > 1 && !builds_on_device(settings_.build, gpu, scene_.triangles.size())) {
    // Built once, by rank 0 with every core the others would have shared, and sent to them.
    bvh tree;
    on_every_rank([&] {
      if (hooks_.peers->rank() == 0) tree = build_bvh(scene_.triangles);
    });
    share_tree(tree, *hooks_.peers);
    state_->prepared.emplace(scene_, std::move(tree));
    out_.bvh_seconds = since(t_bvh);
    phase_done(setup_phase::build);
  } else if (!hooks_.peers || hooks_.peers->size() < 2) {
    on_every_rank([&] { state_->prepared.emplace(scene_, settings_.build, gpu); });
    out_.bvh_seconds = since(t_bvh);
    phase_done(setup_phase::build);
  }
  // Else each rank builds its own inside the split render (render()): a rank whose build ends first
  // takes tiles at once instead of waiting for the slowest build at a collective.
  if (hooks_.peers) {  // a split render: the film's tiles, taken on demand, as rank 0 cuts them
    job_peers& peers = *hooks_.peers;
    const std::uint32_t pixels = scene_.film.width * scene_.film.height;
    // Units of a take: as asked, else 8 when the backends differ (ranks of unequal speed).
    const std::vector<std::string> backends = peers.gather(backend_);
    const bool mixed = std::any_of(backends.begin(), backends.end(), [&](const std::string& b) { return b != backend_; });
    const tile_plan plan = plan_tiles(pixels, scene_.film.spp, settings_.max_queue, static_cast<std::uint32_t>(peers.size()),
                                      rq_.tile_pixels, rq_.tile_units ? rq_.tile_units : mixed ? 8 : 1);
    std::istringstream in(peers.broadcast(std::to_string(plan.tile_pixels) + " " + std::to_string(plan.units)));
    state_->tiles.pixels = pixels;
    in >> state_->tiles.tile_pixels >> state_->tiles.units;
    if (peers.rank() == 0) state_->inbox.assign(pixels, vec3{0, 0, 0});
  }
  settings_.cancel = hooks_.cancel;
  settings_.uploaded = [this](double seconds) {
    out_.setup.upload_s = seconds;
    phase_done(setup_phase::upload);
  };
  // The first pass of samples over the whole film ends the setup (and the hooks' progress follows).
  settings_.progress = [this, progress = hooks_.progress](std::uint32_t done, std::uint32_t total) {
    if (out_.setup.first_frame_s < 0) {
      out_.setup.first_frame_s = std::max(0.0, since(state_->t0) - out_.setup.upload_s);
      out_.setup.first_image_s = since(state_->t_job);
      out_.setup.first_frame_spp = done;
      phase_done(setup_phase::first_frame);
    }
    if (progress) progress(done, total);
  };
}

namespace {

// A split render's tile source: the next tiles of the shared counter while this process is worth
// giving some (take_another; rank 0 takes tiles until none is left, so every tile is rendered), as
// many as take_size says, each take lasting delay_ms longer.
std::function<bool(std::uint32_t&, std::uint32_t&)> tile_source(job_peers& peers, const tile_plan& plan, std::uint32_t delay_ms) {
  struct pace {
    clock_type::time_point t0 = clock_type::now();
    std::uint32_t mine = 0;  // tiles
  };
  return [&peers, plan, delay_ms, p = std::make_shared<pace>()](std::uint32_t& first, std::uint32_t& n) {
    const std::uint64_t count = plan.count();
    const double s = since(p->t0);
    std::uint32_t k = 1;
    if (p->mine > 0 && s > 0 && (plan.units > 1 || peers.rank() != 0)) {
      const std::uint64_t taken = peers.count_tiles(0);
      if (taken >= count) return false;
      const auto left = static_cast<std::uint32_t>(count - taken);
      const double mine_per_s = p->mine / s, all_per_s = static_cast<double>(taken) / s;
      if (peers.rank() != 0 && !take_another(left, mine_per_s, all_per_s, static_cast<std::uint32_t>(peers.size()))) return false;
      k = take_size(left, mine_per_s, all_per_s, plan.units);
    }
    const std::uint64_t i = peers.count_tiles(k);
    if (i >= count) return false;
    if (delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    plan.tile(static_cast<std::uint32_t>(i), k, first, n);
    p->mine += static_cast<std::uint32_t>(std::min<std::uint64_t>(k, count - i));
    return true;
  };
}

}  // namespace

void render_job::render() {
  if (hooks_.step) hooks_.step(job_step::render, *this);
  const bool gpu = backend_ == "cuda";
  auto run = [&] {
    if (!state_->prepared) {  // a split render's own BVH (prepare), on this rank's GPU when it renders there
      const auto t_bvh = clock_type::now();
      state_->prepared.emplace(scene_, settings_.build, gpu);
      out_.bvh_seconds = since(t_bvh);
      phase_done(setup_phase::build);
    }
    state_->t0 = clock_type::now();
    state_->cpu0 = cpu_seconds();
    if (hooks_.peers) {
      job_peers& peers = *hooks_.peers;
      settings_.tile_pixels = state_->tiles.largest();
      settings_.next_tile = tile_source(peers, state_->tiles, rq_.tile_delay_ms);
      // Each tile goes to rank 0 as it ends, while the next renders: the reduction off the critical path.
      if (peers.rank() != 0)
        settings_.tile_rendered = [&peers](std::uint32_t first, std::span<const vec3> sums) {
          peers.send_tile(first, std::span<const float>(reinterpret_cast<const float*>(sums.data()), 3 * sums.size()));
        };
    }
    out_.result = gpu ? render_cuda(*state_->prepared, settings_) : render_cpu(*state_->prepared, settings_);
    state_->t_rendered = clock_type::now();
  };
  static_assert(sizeof(vec3) == 3 * sizeof(float));
  if (hooks_.peers)
    hooks_.peers->render(run, std::span<float>(reinterpret_cast<float*>(state_->inbox.data()), 3 * state_->inbox.size()));
  else run();
  // Rendering ends with this process's last tile; the peers' closing collectives (the stop relay,
  // the tile counter) wait for the others, and count as waiting (reduce).
  const double step = std::chrono::duration<double>(state_->t_rendered - state_->t0).count();
  const double render_setup = out_.result.stats.setup_seconds;
  out_.setup_seconds = out_.load_seconds + out_.bvh_seconds + render_setup;
  out_.render_seconds = std::max(0.0, step - render_setup);
  out_.samples = out_.result.samples;
  out_.seconds = out_.result.stats.seconds;
  out_.total_seconds = since(state_->t_job);
}

namespace {

// The per-rank row of a split render's report (sent to rank 0 as JSON).
nlohmann::json rank_row(job_peers& peers, const render_outcome& out, const std::string& backend, double cpu_s) {
  const bool gpu = backend == "cuda";
  const render_result& r = out.result;
  nlohmann::json row = peers.describe();
  row["gpu"] = gpu ? row.value("gpu_index", -1) : -1;
  row.erase("gpu_index");
  std::uint64_t pixels = 0;
  nlohmann::json tiles = nlohmann::json::array();
  for (const tile_done& t : r.tiles) {
    pixels += t.pixels;
    tiles.push_back({t.first_pixel, t.pixels, t.samples, t.ahead});
  }
  row.update({{"rank", peers.rank()},
              {"backend", backend},
              {"device", gpu ? report::machine_info(true)["gpu"] : report::machine_info(false)["cpu"]},
              {"threads", tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)},
              {"tiles", r.tiles.size()},
              {"pixels", pixels},
              {"tile_list", tiles},
              {"setup_seconds", out.setup_seconds},
              // setup's parts: the scene's loading, the BVH (built here, or built by rank 0 and
              // received), the render's own setup (upload, graph capture)
              {"load_seconds", out.load_seconds},
              {"bvh_seconds", out.bvh_seconds},
              {"render_setup_seconds", r.stats.setup_seconds},
              {"render_seconds", out.render_seconds},
              {"wait_seconds", out.wait_seconds},
              {"reduction_seconds", out.reduction_seconds},
              {"seconds", r.stats.seconds},
              {"cpu_seconds", cpu_s},
              {"rays", r.stats.extension_rays + r.stats.shadow_rays},
              {"stats", stats_json(r.stats)}});
  return row;
}

}  // namespace

void render_job::reduce() {
  render_result& r = out_.result;
  if (!hooks_.peers) {
    out_.image = r.mean();
    return;
  }
  job_peers& peers = *hooks_.peers;
  const double cpu_s = cpu_seconds() - state_->cpu0;
  nlohmann::json row = rank_row(peers, out_, backend_, cpu_s);  // before the wait: nothing of it waits
  // Waiting: from this rank's last tile until every rank has rendered its tiles.
  peers.barrier();
  const auto t_all = clock_type::now();
  out_.wait_seconds = std::chrono::duration<double>(t_all - state_->t_rendered).count();
  row["wait_seconds"] = out_.wait_seconds;
  // The reduction: the tiles went to rank 0 as they ended (render_settings::tile_rendered); here
  // the rows, the last tiles still on their way, and the film put together. Nothing is added: each
  // pixel came from one rank.
  const std::vector<std::string> texts = peers.gather(row.dump());
  if (!out_.writes) {
    peers.finish_tiles(0);
    out_.reduction_seconds = since(t_all);
    out_.seconds = since(state_->t0);
    out_.total_seconds = since(state_->t_job);
    return;
  }
  nlohmann::json rows = nlohmann::json::array();
  std::uint64_t theirs = 0;
  for (const auto& text : texts) {
    rows.push_back(nlohmann::json::parse(text));
    if (rows.size() > 1) theirs += rows.back()["pixels"].get<std::uint64_t>();
  }
  peers.finish_tiles(theirs);
  tiled_film film(std::move(r.sum));  // rank 0's own tiles are in place
  for (auto& row_j : rows) {
    const bool own = &row_j == &rows[0];
    for (const auto& tj : row_j["tile_list"]) {
      const tile_done t{tj[0].get<std::uint32_t>(), tj[1].get<std::uint32_t>(), tj[2].get<std::uint32_t>(), tj[3].get<std::uint32_t>()};
      if (own) film.place(t);
      else if (t.first_pixel < state_->inbox.size() && t.pixels <= state_->inbox.size() - t.first_pixel)
        film.add(t, std::span<const vec3>(state_->inbox).subspan(t.first_pixel, t.pixels));
      else film.place(t);  // throws: the tile does not fit the film
    }
    row_j.erase("tile_list");
  }
  state_->inbox = {};
  out_.reduction_seconds = since(t_all);
  out_.seconds = since(state_->t0);
  out_.total_seconds = since(state_->t_job);
  rows[0]["reduction_seconds"] = out_.reduction_seconds;
  state_->ranks = reduce_ranks(r.stats, std::move(rows), out_, state_->tiles);
  out_.samples = film.samples();
  out_.image = film.mean();
  r.sum = film.take_sum();
}

void render_job::write() {
  out_.report = render_report(rq_, scene_, settings_, out_, command_line_);
  if (hooks_.peers) {
    out_.report["time"]["wait_seconds"] = out_.wait_seconds;
    out_.report["time"]["reduction_seconds"] = out_.reduction_seconds;
    out_.report["ranks"] = state_->ranks;
    out_.report["stages_note"] = "stage and loop times, rays and bounces are summed over the ranks; frame_seconds is the job's";
  }
  if (outputs_.image.empty() && outputs_.exr.empty() && outputs_.json.empty()) return;
  if (hooks_.step) hooks_.step(job_step::write, *this);
  const render_result& res = out_.result;
  const std::string& image = outputs_.image;
  if (!image.empty())
    state_->files.stage(image, image_format_of(image) == image_format::exr ? encode_exr(image, res.width, res.height, out_.image)
                                                                            : encode_png(image, res.width, res.height, out_.image));
  if (!outputs_.exr.empty()) state_->files.stage(outputs_.exr, encode_exr(outputs_.exr, res.width, res.height, out_.image));
  if (!outputs_.json.empty()) state_->files.stage(outputs_.json, report::json_text(out_.report, 2));
  state_->files.commit();
}

render_outcome render_to_files(const render_request& rq, const render_outputs& outputs, const std::string& command_line) {
  render_job job(rq, outputs, command_line);
  return job.run();
}

}  // namespace sieve::render
