#include "render_job.hpp"
#include "ranks.hpp"

#include <core/image_io.hpp>
#include <core/marks.hpp>
#include <core/memory.hpp>
#include <exec/stop.hpp>
#include <frame/cuda_context.hpp>
#include <frame/prepared_scene.hpp>
#include <frame/tiles.hpp>
#include <frame/waves.hpp>
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
#include <cstdlib>
#include <filesystem>
#include <future>
#include <memory>
#include <sstream>
#include <string_view>
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
  if (gpu) settings.max_queue = default_wave_paths(gpu, cuda_free_memory(), memory::host_available());
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




// Whether the GPU's render kernels are loaded beside the BVH build (preload_render_kernels): only
// with SIEVE_PRELOAD=on or parallel (a measuring switch). Measured on the H200 with the GPU build,
// it moves the render module's load (65 .. 105 ms) out of the first frame but not out of the first
// image: the build it overlaps takes 40 ms, and the load runs longer beside it.
namespace {
bool preload_kernels() {
  const char* v = std::getenv("SIEVE_PRELOAD");
  return v && (std::string_view(v) == "on" || std::string_view(v) == "parallel");
}
}  // namespace

// What the steps hand on to each other, beyond the job's members.
struct render_job::state {
  report::output_set files;            // checked before the scene is loaded
  std::optional<prepared_scene> prepared;
  render_controls controls;            // beside settings_: cancel, progress, upload, tiles
  tile_plan tiles;                     // a split render's tiles
  std::vector<vec3> inbox;             // a split render, process 0: the others' tiles as they come
  clock_type::time_point t_job;        // the job's start (load)
  clock_type::time_point t0;           // the render's start
  clock_type::time_point t_rendered;   // this process's last wave done (before the peers' closing collectives)
  double cpu0 = 0;
  nlohmann::json ranks;                // a split render's rows (rank 0)
  std::future<std::size_t> preloaded;  // the GPU's render kernels loaded beside the build
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
    if (!hooks_.peers && rq_.backend != "cpu") start_cuda_context();  // made while the scene loads
    backend_ = resolve_backend(rq_.backend);
    if (hooks_.step) hooks_.step(job_step::load, *this);
    const auto t_load = clock_type::now();
    scene_ = load_requested_scene(rq_);
    out_.load_seconds = since(t_load);
    if (lead)
      for (const auto& f : scene_.files) state_->files.add_input(f);
    if (!outputs_.image.empty()) image_format_of(outputs_.image);  // once every input is known
    settings_ = requested_settings(rq_, scene_, backend_ == sieve::backend::cuda);
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
  if (p == setup_phase::build) {
    out_.setup.build_phases = state_->prepared->tree().stats.wall;
    out_.setup.device_build = state_->prepared->device_timing();
  }
  if (hooks_.phase) hooks_.phase(p, *this);
}

void render_job::prepare() {
  if (hooks_.step) hooks_.step(job_step::prepare, *this);
  const auto t_bvh = clock_type::now();
  const bool gpu = backend_ == sieve::backend::cuda;
  // The kernels of the first frame loaded while the tree builds (one process: a split render's
  // ranks choose their devices first).
  if (gpu && !hooks_.peers && preload_kernels())
    state_->preloaded = std::async(std::launch::async, [this] {
      const auto t = clock_type::now();
      const std::size_t n = preload_render_kernels();
      out_.setup.preload_s = since(t);
      return n;
    });
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
    state_->tiles = agree_tiles(*hooks_.peers, backend_, scene_.film, settings_.max_queue, rq_);
    if (hooks_.peers->rank() == 0) state_->inbox.assign(state_->tiles.pixels, vec3{0, 0, 0});
  }
  state_->controls.cancel = hooks_.cancel;
  state_->controls.uploaded = [this](double seconds) {
    out_.setup.upload_s = seconds;
    phase_done(setup_phase::upload);
  };
  // The first pass of samples over the whole film ends the setup (and the hooks' progress follows).
  state_->controls.progress = [this, progress = hooks_.progress](std::uint32_t done, std::uint32_t total) {
    if (out_.setup.first_frame_s < 0) {
      out_.setup.first_frame_s = std::max(0.0, since(state_->t0) - out_.setup.upload_s);
      out_.setup.first_image_s = since(state_->t_job);
      out_.setup.first_frame_spp = done;
      phase_done(setup_phase::first_frame);
    }
    if (progress) progress(done, total);
  };
}

void render_job::render() {
  if (hooks_.step) hooks_.step(job_step::render, *this);
  const bool gpu = backend_ == sieve::backend::cuda;
  auto run = [&] {
    if (!state_->prepared) {  // a split render's own BVH (prepare), on this rank's GPU when it renders there
      const auto t_bvh = clock_type::now();
      state_->prepared.emplace(scene_, settings_.build, gpu);
      out_.bvh_seconds = since(t_bvh);
      phase_done(setup_phase::build);
    }
    if (state_->preloaded.valid()) {
      const auto t_wait = clock_type::now();
      out_.setup.preloaded_kernels = state_->preloaded.get();
      out_.setup.preload_wait_s = since(t_wait);
    }
    state_->t0 = clock_type::now();
    state_->cpu0 = cpu_seconds();
    if (hooks_.peers) {
      job_peers& peers = *hooks_.peers;
      settings_.tile_pixels = state_->tiles.largest();
      state_->controls.next_tile = tile_source(peers, state_->tiles, rq_.tile_delay_ms);
      // Each tile goes to rank 0 as it ends, while the next renders: the reduction off the critical path.
      if (peers.rank() != 0)
        state_->controls.tile_rendered = [&peers](std::uint32_t first, std::span<const vec3> sums) {
          peers.send_tile(first, std::span<const float>(reinterpret_cast<const float*>(sums.data()), 3 * sums.size()));
        };
    }
    out_.result = gpu ? render_cuda(*state_->prepared, settings_, state_->controls)
                       : render_cpu(*state_->prepared, settings_, state_->controls);
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
  out_.setup.first_frame_steps = out_.result.stats.first_wave;
  out_.total_seconds = since(state_->t_job);
}

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
  // The reduction: the tiles went to rank 0 as they ended (render_controls::tile_rendered); here
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
  tiled_film film = assemble_film(rows, std::move(r.sum), state_->inbox);
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
