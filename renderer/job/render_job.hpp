// A render job: a scene file and what the command line asks of it in; the scene as overridden, the
// checked settings, the render and its JSON report out. `sieve render` (app/render.cpp) runs it step
// by step with its ranks, signals and progress bar around it; `sieve bench all` renders its report's
// images with render_to_files, in one call.
#pragma once

#include <scene/scene.hpp>
#include <wavefront/integrator.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace sieve::render {

struct render_request {
  std::string scene;              // a scene file (.toml) or a mesh (.obj)
  std::string strategy;           // empty: the scene's [compaction] strategy
  std::string backend = "auto";   // auto (the GPU when there is one), cpu or cuda
  std::string integrator = "wavefront";
  std::string traversal = "dfs";
  std::string queue = "pass";     // pass | index | append (render_settings::queue)
  std::string reorder;            // empty: the scene's [compaction] reorder
  std::string sort;               // empty: the scene's [compaction] sort
  std::uint32_t spp = 0;          // 0: the scene's film.spp
  std::uint32_t width = 0, height = 0;  // 0: the scene's film size (one alone: the other keeps the aspect)
  std::vector<std::string> set;   // key=value overrides of the scene file
  bool profile_stages = false;    // per-stage and per-bounce times (otherwise the frame time only)
};

// The scene as the request overrides it: --spp, --strategy, --reorder, --sort, --set, and the film
// size (both given, or one with the other following the scene's aspect; the vertical field of view
// stays the scene's).
scene load_requested_scene(const render_request& rq);

// The settings of the request for that scene on the GPU (gpu) or the CPU, checked before the BVH
// is built: a strategy that cannot serve the renderer's marks, a render too large for the memory.
render_settings requested_settings(const render_request& rq, const scene& sc, bool gpu);

// One render done, as its report names it.
struct render_outcome {
  std::string backend;         // cpu | cuda
  render_result result;        // the film and its statistics
  std::uint32_t samples = 0;   // samples per pixel completed for every pixel (< spp when stopped)
  double seconds = 0;          // the render's wall time
  double bvh_seconds = 0;      // building the BVH (prepared_scene)
};

// The JSON report (`sieve render --json`): scene, device and machine, settings, rays, stage and
// bounce times, the run (version, commit, command line).
nlohmann::json render_report(const render_request& rq, const scene& sc, const render_settings& settings,
                             const render_outcome& out, const std::string& command_line);

// A profiled render's loops (render_stats::loops) as a JSON array of {name, launches, items, ms}, in
// the order they first ran; empty unless profile_stages. The render report's and the benchmark's.
nlohmann::json loops_json(const render_stats& st);

// The whole job in this process: the outputs checked before the scene is loaded (none may be an
// input or another output), the render, then the PNG (when png is not empty) and the JSON report
// (when json is not empty) written all-or-nothing. Throws sieve::error on bad input.
render_outcome render_to_files(const render_request& rq, const std::string& png, const std::string& json,
                               const std::string& command_line);

}  // namespace sieve::render
