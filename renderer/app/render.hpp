// `sieve render SCENE`: renders a scene file (.toml) or a mesh (.obj) with the wavefront path
// tracer and writes PNG / EXR / a JSON report; prints where the time went, stage by stage and bounce
// by bounce. A progress bar on stderr when it is a terminal; Ctrl-C, SIGTERM or SIGHUP stops within
// the bounce in progress and writes the samples completed, the report marked partial; a second
// signal ends it at once (no temporary left, the outputs all old or all new). The outputs are
// checked before the scene is loaded (renderer/core/output_files.hpp). Under mpirun every rank
// renders a contiguous share of the samples and rank 0 adds the films in rank order and writes the
// outputs (mpi.hpp, renderer/wavefront/split.hpp, docs/mpi.md).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace sieve::app {

struct render_args {
  std::string scene;
  std::string strategy;   // empty: the scene's [compaction] strategy
  std::string backend = "auto";  // auto: the GPU when there is one
  std::string integrator = "wavefront";
  std::string traversal = "dfs";
  std::string queue = "pass";  // pass | index | append (render_settings::queue)
  std::string reorder;    // empty: the scene's [compaction] reorder
  std::string sort;       // empty: the scene's [compaction] sort
  std::uint32_t spp = 0;  // 0: the scene's film.spp
  std::uint32_t width = 0, height = 0;  // 0: the scene's film size (one alone: the other keeps the aspect)
  std::string png, exr, json;
  std::vector<std::string> set;
  bool quiet = false;
  bool profile_stages = false;  // per-stage and per-bounce times (otherwise the frame time only)
  unsigned threads = 0;   // oneTBB's threads; 0: all (under mpirun: the host's shared by its ranks)
};

void add_render_options(CLI::App& cmd, render_args& args);
// Returns the exit code: 0, or 128 + the signal when interrupted (the partial image is still written).
int run_render(const render_args& args, const std::string& command_line);

}  // namespace sieve::app
