// The render's JSON report (render_report, render_job.hpp): what was asked, what ran, and where the
// time went; render_job::write adds a split render's "ranks".
#include "render_job.hpp"

#include <frame/prepared_scene.hpp>

#include <report.hpp>
#include <sieve/compaction/names.hpp>

#include <oneapi/tbb/global_control.h>

namespace sieve::render {

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
  const bool gpu = out.backend == sieve::backend::cuda;
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
  j["backend"] = std::string(sieve::to_string(out.backend));
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
  std::uint64_t stored = 0, source = 0, objects = 0;
  for (const texture& t : sc.textures) stored += t.bytes(), source += t.source_bytes, objects += hardware_bytes(t);
  j["textures"] = {{"count", sc.textures.size()}, {"stored_bytes", stored}, {"source_bytes", source},
                   {"texture_object_bytes", objects},
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

}  // namespace sieve::render
