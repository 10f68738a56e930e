// `sieve bench render SCENE`: the wavefront renderer once per (strategy, traversal, reorder), and
// what compaction costs inside it: total time, Mrays/s, compaction ms and its share of the frame,
// bounce by bounce. Every configuration's image must equal the first one's bit for bit (the
// renderer's invariant) before it is timed; on the GPU the first one's of the same texture storage
// (the texture unit's filter is not the packed texels' to the bit: docs/textures.md).
#pragma once

#include "../options.hpp"

#include <run/render.hpp>

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace sieve::bench {

struct render_bench_args : scene_suite_args {
  std::vector<std::string> strategies;   // default: every strategy of the backend that takes a mask, flags or a removal list
  std::vector<std::string> integrators = {"wavefront"};
  std::vector<std::string> traversals = {"dfs"};
  std::vector<std::string> bvhs = {"auto"};  // the GPU's depth-first trees (render_settings::bvh)
  std::string build = "auto";  // the tree's builder (render_settings::build)
  std::vector<std::string> queues = {"pass"};  // pass, index, append (render_settings::queue)
  std::vector<std::string> launches = {"graph"};  // GPU: graph, stream (render_settings::wave_graph)
  std::vector<std::string> reorders = {"none"};
  // How shade reaches the material families (render_settings::routing); megakernel: the megakernel's row.
  std::vector<std::string> routings = {"branch"};
  // How the GPU reads textures (render_settings::textures): hardware (texture objects), packed (the
  // CPU's texels and filter in one buffer). The CPU reads its packed texels whatever this says.
  std::vector<std::string> textures = {"hardware"};
  int repeats = 3;
  std::uint32_t width = 0, height = 0, spp = 0;  // 0: the scene's (one of width, height: the aspect kept)
  // Paths in flight at once, a wave (render_settings::max_queue); 0: the renderer's default
  // (frame/waves.hpp default_wave_paths).
  std::uint32_t wave_paths = 0;
  // Stage times (render_settings::profile_stages): both = the timed renders without them (the frame
  // time, s_median) and again with them (stage and compaction times, s_profiled); on; off.
  std::string profile_stages = "both";
};

// The options, declared once (bench/options.hpp): the parser and the command that repeats an args.
const option_schema<render_bench_args>& render_bench_options();
int run_render_bench(const render_bench_args& args, const std::string& command_line);

// One configuration as the results show it.
struct render_bench_row {
  std::string integrator, queue, strategy, form;  // strategy and form "-" where no pass compacts
  std::string routing;                            // "-" for the megakernel
  std::string traversal, bvh, reorder;
  render::render_stats stats;       // of the median render (with stage times when profiled)
  double seconds_unprofiled = 0;    // the median render without stage times
  bool profiled = false;            // stage times (and compaction's) measured
  bool identical = false;           // the image equals the first configuration's (of its texture storage)
  std::string textures = "hardware";  // how the GPU read the textures
};
// The columns of the printed table (also the CSV) and the JSON, declared once.
report::row_schema<render_bench_row> render_bench_rows();

}  // namespace sieve::bench
