#include "render_job.hpp"

#include <core/image_io.hpp>
#include <core/marks.hpp>
#include <scene/load.hpp>

#include <output_files.hpp>
#include <report.hpp>

#include <oneapi/tbb/global_control.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

namespace sieve::render {
namespace {

// The film size --width / --height ask for: both as given, or one of them with the other following
// the scene's aspect. {0, 0} when neither is given.
std::pair<std::uint32_t, std::uint32_t> film_size(const render_request& rq, const film_desc& film) {
  if (!rq.width && !rq.height) return {0, 0};
  if (rq.width && rq.height) return {rq.width, rq.height};
  const double aspect = static_cast<double>(film.width) / film.height;
  if (rq.width) return {rq.width, std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::lround(rq.width / aspect)))};
  return {std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::lround(rq.height * aspect))), rq.height};
}

}  // namespace

scene load_requested_scene(const render_request& rq) {
  std::vector<std::string> overrides = rq.set;
  if (rq.spp) overrides.push_back("film.spp=" + std::to_string(rq.spp));
  if (!rq.strategy.empty()) overrides.push_back("compaction.strategy=\"" + rq.strategy + "\"");
  if (!rq.reorder.empty()) overrides.push_back("compaction.reorder=\"" + rq.reorder + "\"");
  if (!rq.sort.empty()) overrides.push_back("compaction.sort=\"" + rq.sort + "\"");
  if (rq.width && rq.height) {  // both known: the loader checks them (and frames a bare mesh for them)
    overrides.push_back("film.width=" + std::to_string(rq.width));
    overrides.push_back("film.height=" + std::to_string(rq.height));
  }
  scene sc = load_scene(rq.scene, overrides);
  if (const auto [w, h] = film_size(rq, sc.film); w && (w != sc.film.width || h != sc.film.height)) {
    overrides.push_back("film.width=" + std::to_string(w));  // one given: the other from the scene's aspect
    overrides.push_back("film.height=" + std::to_string(h));
    sc = load_scene(rq.scene, overrides);
  }
  return sc;
}

render_settings requested_settings(const render_request& rq, const scene& sc, bool gpu) {
  render_settings settings = render_settings::from(sc);
  settings.traversal = parse_mode<traversal_kind>(rq.traversal);  // the names were checked by the command line
  settings.integrator = parse_mode<integrator_kind>(rq.integrator);
  settings.profile_stages = rq.profile_stages;
  settings.queue = parse_mode<queue_mode>(rq.queue);
  try {  // an unknown or unfit strategy fails before the BVH build, naming where its name came from
    if (settings.strategy == "append")
      throw sieve::error("renderer: 'append' is a queue, not a strategy: --queue append (shade appends the survivors)");
    marks_form_for(settings.strategy, gpu ? sieve::backend::cuda : sieve::backend::cpu, "renderer");
  } catch (const sieve::error& e) {
    std::string from = "compaction.strategy in " + rq.scene;
    if (!rq.strategy.empty()) from = "--strategy";
    else
      for (const auto& kv : rq.set)
        if (kv.rfind("compaction.strategy=", 0) == 0) from = "--set compaction.strategy";
    std::string what = e.what();
    if (what.find("unknown compaction strategy") != std::string::npos)  // the library's list: every backend's
      what = "renderer: unknown strategy '" + settings.strategy + "'; on " + (gpu ? "cuda" : "cpu") +
             " use one of: " + strategies_for_marks(gpu ? sieve::backend::cuda : sieve::backend::cpu);
    throw sieve::error(what + " (the name from " + from + ")");
  }
  check_render_memory(sc, settings, gpu);  // before the BVH build
  return settings;
}

nlohmann::json loops_json(const render_stats& st) {
  nlohmann::json loops = nlohmann::json::array();
  for (const auto& l : st.loops)
    loops.push_back({{"name", l.name}, {"launches", l.launches}, {"items", l.items}, {"ms", l.ms}});
  return loops;
}

nlohmann::json render_report(const render_request& rq, const scene& sc, const render_settings& settings,
                             const render_outcome& out, const std::string& command_line) {
  const render_result& r = out.result;
  const render_stats& st = r.stats;
  const bool gpu = out.backend == "cuda";
  const double total_ms = st.seconds * 1e3;
  const double rays = static_cast<double>(st.extension_rays + st.shadow_rays);
  nlohmann::json j;
  j["scene"] = sc.name;
  j["scene_file"] = rq.scene;
  j["backend"] = out.backend;
  const nlohmann::json machine = report::machine_info(gpu);
  j["device"] = gpu ? machine["gpu"] : machine["cpu"];
  j["machine"] = machine;
  j["strategy"] = report::strategy_shown(settings.strategy, st.strategies_ran);
  j["strategy_asked"] = settings.strategy;
  j["strategies_ran"] = st.strategies_ran;
  j["strategy_reason"] = st.strategy_reason;
  j["form"] = std::string(sieve::to_string(st.form));
  j["integrator"] = std::string(to_string(settings.integrator));
  j["traversal"] = std::string(to_string(settings.traversal));
  j["queue"] = std::string(to_string(settings.queue));
  j["reorder"] = std::string(to_string(settings.reorder));
  j["sort"] = std::string(to_string(settings.sort));
  j["width"] = r.width;
  j["height"] = r.height;
  j["vfov_degrees"] = sc.camera.vfov_degrees;
  j["spp"] = sc.film.spp;
  j["samples_completed"] = out.samples;
  j["partial"] = out.samples < sc.film.spp;
  j["max_bounces"] = sc.film.max_bounces;
  j["seed"] = sc.film.seed;
  j["triangles"] = sc.triangles.size();
  j["bvh_build_seconds"] = out.bvh_seconds;
  j["threads"] = tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
  j["seconds"] = out.seconds;
  j["rays"] = {{"extension", st.extension_rays}, {"shadow", st.shadow_rays}};
  j["mrays_per_s"] = out.seconds > 0 ? rays / out.seconds / 1e6 : 0;
  j["compaction_ms"] = st.compaction_ms();
  j["compaction_share"] = total_ms > 0 ? st.compaction_ms() / total_ms : 0;
  j["bfs_frontier_compaction_ms"] = st.bfs_compact_ms;
  j["profile_stages"] = settings.profile_stages;
  j["stages"] = nlohmann::json::object();  // empty unless profile_stages
  for (const auto& s : st.stages) j["stages"][s.name] = s.ms;
  j["loops"] = loops_json(st);
  j["waves"] = st.waves;
  j["wave_launch"] = st.wave_launch;
  j["host_syncs"] = st.host_syncs;
  j["host_syncs_per_wave"] = st.waves ? static_cast<double>(st.host_syncs) / static_cast<double>(st.waves) : 0.0;
  j["bounces"] = nlohmann::json::array();
  for (std::size_t b = 0; b < st.bounces.size(); ++b)
    if (st.bounces[b].live)
      j["bounces"].push_back({{"bounce", b}, {"live", st.bounces[b].live}, {"compaction_ms", st.bounces[b].compact_ms}});
  j["run"] = report::run_info(command_line);
  return j;
}

render_outcome render_to_files(const render_request& rq, const std::string& png, const std::string& json,
                               const std::string& command_line) {
  report::output_set outputs;  // checked before anything is loaded
  outputs.add_input(rq.scene);
  outputs.add_output(png, "--out");
  outputs.add_output(json, "--json");
  render_outcome out;
  out.backend = report::resolve_backend(rq.backend);
  const bool gpu = out.backend == "cuda";
  const scene sc = load_requested_scene(rq);
  for (const auto& f : sc.files) outputs.add_input(f);
  const render_settings settings = requested_settings(rq, sc, gpu);
  const auto t_bvh = std::chrono::steady_clock::now();
  const prepared_scene prepared(sc);
  out.bvh_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_bvh).count();
  out.result = gpu ? render_cuda(prepared, settings) : render_cpu(prepared, settings);
  out.samples = out.result.samples;
  out.seconds = out.result.stats.seconds;
  const render_result& r = out.result;
  if (!png.empty()) outputs.stage(png, encode_png(png, r.width, r.height, r.mean()));
  if (!json.empty()) outputs.stage(json, report::json_text(render_report(rq, sc, settings, out, command_line), 2));
  outputs.commit();
  return out;
}

}  // namespace sieve::render
