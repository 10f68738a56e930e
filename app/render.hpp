// `sieve render SCENE`: renders a scene file (.toml) or a mesh (.obj) with the wavefront path
// tracer and writes PNG / EXR / a JSON report; prints where the time went, stage by stage and bounce
// by bounce (measured by default; --no-profile for the bare frame time). Progress lines on stderr as
// loading, the BVH build and rendering begin, and a bar while rendering (one line every few seconds
// without a terminal); Ctrl-C, SIGTERM or SIGHUP stops within
// the bounce in progress and writes the samples completed, the report marked partial; a second
// signal ends it at once (no temporary left, the outputs all old or all new). The outputs are
// checked before the scene is loaded (report/output_files.hpp). Under mpirun the ranks take
// the film's tiles on demand and rank 0 puts them together and writes the outputs (mpi.hpp,
// renderer/frame/tiles.hpp, docs/mpi.md).
#pragma once

#include <job/render_job.hpp>

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace sieve::app {

// The command line's options as given; request() parses them once into the job's typed values.
struct render_args {
  std::string scene;
  std::string strategy;   // empty: the scene's [compaction] strategy
  std::string backend = "auto";
  std::string integrator = "wavefront", traversal = "dfs", bvh = "auto", queue = "pass", textures = "hardware";
  std::string build = "auto";  // the BVH's builder
  std::string reorder, sort, routing;  // empty: the scene's
  std::uint32_t spp = 0, width = 0, height = 0;
  std::vector<std::string> set;
  bool profile_stages = false;  // accepted; stage times are measured unless --no-profile
  bool no_profile = false;
  std::string png, exr, json;
  bool quiet = false;
  unsigned threads = 0;   // oneTBB's threads; 0: all (under mpirun: the host's shared by its ranks)
  std::uint32_t tile_pixels = 0;    // under mpirun: pixels per tile (0: chosen from the film)
  std::uint32_t tile_delay_ms = 0;  // tests: each tile of this rank lasts that much longer
  std::uint32_t tile_units = 0;     // under mpirun: the most tiles one take holds (0: 8 when the backends differ, else 1)
  std::string tree = "each";        // under mpirun: the BVH built by every rank (each) or by rank 0 and sent (shared)

  render::render_request request() const;
};

void add_render_options(CLI::App& cmd, render_args& args);
// Returns the exit code: 0, or 128 + the signal when interrupted (the partial image is still written).
int run_render(const render_args& args, const std::string& command_line);
// What a render checks before it loads anything: the scene file there and of a known type, the
// outputs none of them the scene or each other, --strategy known and able to run on the backend;
// with `dry_run` also --out's format (the run checks it once the scene's own files are known).
// Throws sieve::usage_error for the command line, sieve::error otherwise: run_render and
// --dry-run make the same checks, so they exit alike.
void check_render_args(const render_args& args, bool dry_run);

}  // namespace sieve::app
