// `sieve bench all`'s planners (plan.hpp): one function per suite, a table of them, and one loop.
#include "plan.hpp"

#include "../compaction/suite.hpp"
#include "../render/render_bench.hpp"
#include "../report_names.hpp"
#include "../setup/setup.hpp"
#include "../sort/suite.hpp"
#include "../trace/trace.hpp"

#include <job/render_job.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace sieve::bench::all_steps {
namespace {

// --- Command lines: each step's JSON names the single `sieve` command that repeats it ---------------
// A suite's command comes from its own option schema (compaction_options(), ...); the images' from
// `sieve render`'s options named here.

std::string render_command(const std::string& program, const image_request& r) {
  std::string c = program + " render " + shell_quote(r.scene) + " --backend " + shell_quote(r.backend);
  if (r.spp) c += " --spp " + std::to_string(r.spp);
  for (const auto& s : r.set) c += " --set " + shell_quote(s);
  if (!r.png.empty()) c += " --out " + shell_quote(r.png);
  if (!r.json.empty()) c += " --json " + shell_quote(r.json);
  return c + " --quiet";
}

std::vector<std::size_t> pow2(std::initializer_list<int> exponents) {
  std::vector<std::size_t> v;
  for (int e : exponents) v.push_back(std::size_t{1} << e);
  return v;
}

// A step of one suite: its arguments aimed at <name>.csv / <name>.json in the output folder, the
// equivalent `sieve` command, and the suite's run function.
template <class Args>
step suite_step(const context& c, const std::string& name, const std::string& what, double expected, Args a,
                const option_schema<Args>& options, int (*run)(const Args&, const std::string&)) {
  if constexpr (requires { a.backend; }) a.backend = c.gpu ? "cuda" : "cpu";  // sort: the GPU's only
  a.csv = c.file(name + ".csv");
  a.json = c.file(name + ".json");
  step s{name, what, expected, {name + ".json", name + ".csv"}, options.command(c.program, a), {}};
  s.run = [a, run, cmd = s.command] { return run(a, cmd); };
  return s;
}

step compaction_step(const context& c, const std::string& name, const std::string& what, double expected,
                     compaction_args a) {
  step s = suite_step(c, name, what, expected, a, compaction_options(), run_compaction_bench);
  if (!a.crossover.empty()) s.files.push_back(fs::path(a.crossover).filename().string());
  return s;
}

step render_bench_step(const context& c, const std::string& name, const std::string& what, double expected,
                       render_bench_args a) {
  return suite_step(c, name, what, expected, a, render_bench_options(), run_render_bench);
}

// A compaction suite's preset, quick unless the mode is full (the smoke mode shrinks it further).
compaction_args preset(const context& c, const std::string& suite) {
  compaction_args a;
  a.suites = {suite};
  a.quick = c.m != mode::full;
  return a;
}

// Redzone's grid (its section 5): removal lists, k/n = 2, 10, 50, 90 %; Fig. 4 is k = 2 % at 2 GiB.
void redzone_steps(const context& c, std::vector<step>& steps) {
  const bool gpu = c.gpu;
  compaction_args a = preset(c, "redzone");
  if (c.m == mode::smoke) {
    a.n = pow2({14});
    a.fractions = {0.02, 0.5};
    a.repeats = 1;
  }
  const std::string sizes = c.by_mode<std::string>("n = 2^14", "n = 2^22",
                                                    gpu ? "n = 2^15 .. 2^29 (2 GiB), r = uniform, 0 .. 100 %"
                                                        : "n = 2^20, 2^23, 2^26");
  steps.push_back(compaction_step(c, "compaction-redzone", "Redzone's grid: removal lists, " + sizes,
                                  c.expect(1, 2, 120, 2, 20, 600), a));
}

// SPACE's grid (the `space` preset): flags and masks, 1 GiB of each type, 1 .. 97 % kept, three distributions.
void space_steps(const context& c, std::vector<step>& steps) {
  const bool gpu = c.gpu;
  compaction_args a = preset(c, "space");
  if (c.m == mode::smoke) {
    a.n = pow2({14});
    a.types = {"u32"};
    a.fractions = {0.01, 0.99};
    a.distributions = {"uniform", "cluster"};
    a.repeats = 1;
  } else if (c.m == mode::quick && !gpu) {  // the preset's six types are minutes on a few cores
    a.types = {"u32"};
  } else if (c.m == mode::full && !gpu) {  // 1 GiB per point is hours on a few cores: 2^24 items of three types
    a.n = pow2({24});
    a.types = {"u8", "u32", "double"};
  }
  steps.push_back(compaction_step(c, "compaction-space",
                                  "SPACE's grid: flags and bit masks, " +
                                      c.by_mode<std::string>("n = 2^14 u32, 1 and 99 % kept",
                                                             gpu ? "n = 2^22, six types, 1, 49, 97 % kept"
                                                                 : "n = 2^22 u32, 1, 49, 97 % kept",
                                                             gpu ? "1 GiB of each of six types, 1 .. 97 % kept"
                                                                 : "n = 2^24 of u8, u32, double, 1 .. 97 % kept") +
                                      ", uniform and clustered",
                                  c.expect(1, 5, 600, 2, 30, 1200), a));
}

// Billeter's Table 3 (the `billeter` preset): 4M u32 items, byte flags, 0 .. 100 % kept in steps of 10 %.
void billeter_steps(const context& c, std::vector<step>& steps) {
  compaction_args a = preset(c, "billeter");
  if (c.m == mode::smoke) {
    a.n = pow2({14});
    a.fractions = {0, 0.5, 1};
    a.repeats = 1;
  }
  steps.push_back(compaction_step(c, "compaction-billeter",
                                  "Billeter's Table 3: " +
                                      c.by_mode<std::string>("n = 2^14", "4M u32, 0, 50, 100 % kept",
                                                             "4M u32, 0 .. 100 % kept in steps of 10 %") +
                                      ", byte flags",
                                  c.expect(1, 1, 40, 1, 10, 60), a));
}

// Queues as the renderer has them: the path record and u32, counts on the device, timed as
// CUDA-graph replays, and the same calls timed one by one between two events.
void queue_steps(const context& c, std::vector<step>& steps) {
  const bool gpu = c.gpu;
  if (!gpu) return;
  for (const bool graph : {true, false}) {
    compaction_args a;
    a.suites = {"select"};
    a.types = {"paths48", "u32"};
    a.n = c.by_mode(pow2({14}), pow2({14, 17, 20}), pow2({14, 17, 20}));
    a.fractions = {0.93};
    a.distributions = {"uniform"};
    a.repeats = c.by_mode(1, 5, 20);
    a.graph = graph;
    steps.push_back(compaction_step(c, graph ? "compaction-queues" : "compaction-queues-events",
                                    "the path queue (4 + 28 + 12 + 4 bytes) and u32 at " +
                                        c.by_mode<std::string>("16K", "16K, 128K, 1M", "16K, 128K, 1M") + ", 93 % kept: " +
                                        (graph ? "counts on the device, CUDA-graph replays" : "one call between events"),
                                    c.expect(0, 0, 0, 2, 10, 20), a));
  }
}

// The crossover grid `auto` is tuned from: every strategy over n, k/n (kept share) and item size.
void crossover_steps(const context& c, std::vector<step>& steps) {
  const bool gpu = c.gpu;
  compaction_args a;
  a.suites = {"select", "redzone"};
  a.distributions = {"uniform"};
  a.fractions = c.m == mode::smoke ? std::vector<double>{0.1, 0.9} : std::vector<double>{0.01, 0.1, 0.5, 0.9, 0.99};
  a.n = c.by_mode(pow2({10, 14}), gpu ? pow2({12, 16, 20, 24}) : pow2({12, 16, 20}),
                  gpu ? pow2({12, 14, 16, 18, 20, 22, 24, 26}) : pow2({12, 14, 16, 18, 20, 22}));
  a.types = c.m == mode::full ? std::vector<std::string>{"u32", "struct32"} : std::vector<std::string>{"u32"};
  a.quick = c.m != mode::full;
  a.repeats = c.by_mode(1, 3, gpu ? 10 : 5);
  a.crossover = c.file("crossover-measured.json");
  a.graph = gpu;  // as callers with counts on the device see them
  steps.push_back(compaction_step(c, "compaction-crossover",
                                  "the crossover grid (every strategy over n and k/n" +
                                      std::string(c.m == mode::full ? ", u32 and 32-byte items" : "") +
                                      "): where each stops paying",
                                  c.expect(1, 1, 400, 3, 40, 900), a));
}

// The GPU radix sort: own onesweep against cub::DeviceRadixSort.
void sort_steps(const context& c, std::vector<step>& steps) {
  const bool gpu = c.gpu;
  if (!gpu) return;
  sort_args a;
  a.quick = c.m == mode::quick;
  if (c.m == mode::smoke) {
    a.n = pow2({16});
    a.warmup = 1;
    a.repeats = 2;
  }
  if (c.m == mode::full) a.bits = {"0:32", "8:24"};
  steps.push_back(suite_step(c, "sort", "radix sort of (u32, u32) pairs: onesweep vs cub", c.expect(0, 0, 0, 2, 15, 60),
                             a, sort_options(), run_sort_bench));
}

// Traversal: primary and diffuse rays through the ~1M-triangle sphere room: DFS (binary and
// 8-wide), BFS, and on the CPU Embree (when this build has it) as the baseline; over the SAH
// builder's tree and PLOC's (on the GPU with the GPU: the renderer's default there).
void trace_steps(const context& c, std::vector<step>& steps) {
  const bool gpu = c.gpu;
  trace_args a;
  a.scene = c.scene("procedural/sphere-room.toml");
  a.builders = {"sah", "ploc"};
  a.traversals = gpu ? std::vector<std::string>{"dfs", "wide", "bfs"} : std::vector<std::string>{"dfs", "wide", "bfs", "embree"};
  a.strategies = gpu ? std::vector<std::string>{"atomic", "cub", "space", "redzone"}
                     : std::vector<std::string>{"billeter", "redzone"};
  if (c.m == mode::smoke) {
    a.set = {"procedural.n=4", "procedural.segments=8"};
    a.width = 64;
    a.height = 48;
  } else if (c.m == mode::quick && !gpu) {
    a.width = 512;
    a.height = 384;
  }
  a.repeats = c.by_mode(1, gpu ? 3 : 2, gpu ? 10 : 3);
  steps.push_back(suite_step(c, "trace",
                             "traversal Mrays/s, sphere room, " + std::to_string(a.width) + " x " +
                                 std::to_string(a.height) + " rays: DFS, wide DFS, BFS per strategy, SAH and PLOC trees" +
                                 (gpu ? "" : ", Embree"),
                             c.expect(1, 12, 60, 2, 15, 40), a, trace_options(), run_trace_bench));
}

// The setup: the heightfield's generation and its BVH build by phase, on one thread and on all.
void setup_steps(const context& c, std::vector<step>& steps) {
  setup_args a;
  a.scene = c.scene("procedural/heightfield.toml");
  a.threads = {1, 0};
  if (c.m != mode::full) a.set = {c.m == mode::smoke ? "procedural.grid=64" : "procedural.grid=512"};
  a.repeats = c.by_mode(1, 3, 3);
  steps.push_back(suite_step(c, "setup", "the scene's load and the BVH build by phase, one thread and all, heightfield",
                             c.expect(1, 5, 60, 1, 5, 60), a, setup_options(), run_setup_bench));
}

// The render workload: compaction's share of the frame per strategy, scene and bounce.
void render_steps(const context& c, std::vector<step>& steps) {
  const bool gpu = c.gpu;
  render_bench_args box;
  box.scene = c.scene("cornell-box/cornell-box.toml");
  box.set = c.by_mode(std::vector<std::string>{"film.width=32", "film.height=32", "film.spp=1"},
                      gpu ? std::vector<std::string>{"film.spp=16"}
                          : std::vector<std::string>{"film.width=256", "film.height=256", "film.spp=4"},
                      {gpu ? "film.spp=64" : "film.spp=16"});
  box.repeats = c.by_mode(1, gpu ? 2 : 1, gpu ? 5 : 3);
  if (gpu && c.m != mode::smoke) box.integrators = {"wavefront", "megakernel"};
  steps.push_back(render_bench_step(c, "render-cornell-box",
                                    "renderer, Cornell box: every strategy of the path queue",
                                    c.expect(1, 8, 200, 3, 15, 30), box));

  render_bench_args room = box;
  room.scene = c.scene("procedural/sphere-room.toml");
  room.set = c.by_mode(std::vector<std::string>{"procedural.n=2", "procedural.segments=8", "film.width=32",
                                                "film.height=24", "film.spp=1", "film.max_bounces=3"},
                       gpu ? std::vector<std::string>{"film.spp=4"}
                           : std::vector<std::string>{"film.width=256", "film.height=192", "film.spp=1"},
                       gpu ? std::vector<std::string>{}
                           : std::vector<std::string>{"film.width=512", "film.height=384", "film.spp=4"});
  room.repeats = c.by_mode(1, gpu ? 2 : 1, gpu ? 3 : 2);
  steps.push_back(render_bench_step(c, "render-sphere-room", "renderer, sphere room (~1M triangles): every strategy",
                                    c.expect(1, 10, 600, 3, 20, 60), room));

  // Shading by material family: every routing on the heavy-material scene.
  render_bench_args mats = box;
  mats.scene = c.scene("materials/materials.toml");
  mats.set = c.by_mode(std::vector<std::string>{"film.width=32", "film.height=18", "film.spp=1"},
                       gpu ? std::vector<std::string>{"film.spp=16"}
                           : std::vector<std::string>{"film.width=160", "film.height=90", "film.spp=2"},
                       gpu ? std::vector<std::string>{"film.spp=64"}
                           : std::vector<std::string>{"film.width=320", "film.height=180", "film.spp=4"});
  mats.integrators = {"wavefront"};
  mats.strategies = {"auto"};
  mats.queues = {"pass", "append"};
  mats.routings = {"branch", "multisplit", "queues", "sort", "megakernel"};
  steps.push_back(render_bench_step(c, "render-materials-routing",
                                    "renderer, heavy-material scene: shading routed by material family",
                                    c.expect(1, 10, 120, 3, 10, 30), mats));

  // Textures: each storage the GPU has (texture objects, the packed filter) on the scenes whose
  // shading reads them: the helmet (4 maps of 2048 x 2048) and the textured Sponza (30 maps).
  const std::pair<const char*, const char*> textured[] = {{"helmet", "helmet/helmet.toml"},
                                                          {"sponza-textured", "third-party/sponza/sponza-textured.toml"}};
  for (const auto& [name, file] : textured) {
    render_bench_args tex = box;
    tex.scene = c.scene(file);
    tex.set = c.by_mode(std::vector<std::string>{"film.width=32", "film.height=32", "film.spp=1"},
                        gpu ? std::vector<std::string>{"film.width=512", "film.height=512", "film.spp=16"}
                            : std::vector<std::string>{"film.width=128", "film.height=128", "film.spp=2"},
                        gpu ? std::vector<std::string>{"film.width=512", "film.height=512", "film.spp=64"}
                            : std::vector<std::string>{"film.width=256", "film.height=256", "film.spp=4"});
    tex.integrators = {"wavefront"};
    tex.strategies = {"auto"};
    tex.queues = {"pass", "append"};
    if (gpu) tex.textures = {"hardware", "packed"};
    steps.push_back(render_bench_step(c, std::string("render-") + name + "-textures",
                                      std::string("renderer, ") + name + ": texture storage (texture objects, packed)",
                                      c.expect(1, 10, 120, 3, 10, 30), tex));
  }

  if (c.m == mode::full) {
    render_bench_args bfs = box;
    bfs.set = {gpu ? "film.spp=16" : "film.spp=4"};
    bfs.integrators = {"wavefront"};
    bfs.traversals = {"bfs"};
    bfs.strategies = gpu ? std::vector<std::string>{"atomic", "cub", "space", "redzone"}
                         : std::vector<std::string>{"billeter", "stencil", "std", "redzone"};
    steps.push_back(render_bench_step(c, "render-cornell-box-bfs",
                                      "renderer, Cornell box, BFS traversal: queue and frontier compaction",
                                      c.expect(0, 0, 150, 0, 0, 60), bfs));
    if (gpu) {
      render_bench_args glass = box;
      glass.scene = c.scene("cornell-box/cornell-mirror-glass.toml");
      steps.push_back(render_bench_step(c, "render-cornell-mirror-glass",
                                        "renderer, mirror and glass box: wavefront vs megakernel",
                                        c.expect(0, 0, 0, 0, 0, 30), glass));
    }
  }
}

// The shipped scenes' images, for the report.
void image_steps(const context& c, std::vector<step>& steps) {
  const bool gpu = c.gpu;
  struct shot {
    std::string name, scene;
    std::uint32_t spp_smoke, spp_quick, spp_full;
    std::vector<std::string> smoke_set, quick_cpu_set;
  };
  const std::vector<std::string> tiny = {"film.width=32", "film.height=32"};
  const std::vector<shot> shots = {
      {"cornell-box", "cornell-box/cornell-box.toml", 1, 16, 64, tiny, {"film.width=256", "film.height=256"}},
      {"cornell-mirror-glass", "cornell-box/cornell-mirror-glass.toml", 1, 16, gpu ? 1024u : 64u, tiny,
       {"film.width=256", "film.height=256"}},
      {"sphere-room", "procedural/sphere-room.toml", 1, gpu ? 16u : 4u, gpu ? 256u : 16u,
       {"procedural.n=2", "procedural.segments=8", "film.width=32", "film.height=24"},
       {"film.width=512", "film.height=384"}},
      {"heightfield", "procedural/heightfield.toml", 1, gpu ? 16u : 4u, gpu ? 64u : 4u,
       {"procedural.grid=32", "film.width=32", "film.height=24"},
       {"procedural.grid=512", "film.width=512", "film.height=384"}},
      {"sponza-textured", "third-party/sponza/sponza-textured.toml", 1, gpu ? 16u : 2u, gpu ? 256u : 16u,
       {"film.width=32", "film.height=18"}, {"film.width=320", "film.height=180"}},
  };
  const std::vector<double> cpu_quick = {3, 5, 8, 4, 8}, cpu_full = {30, 40, 300, 90, 120};
  for (std::size_t i = 0; i < shots.size(); ++i) {
    const shot& sh = shots[i];
    image_request r;
    r.scene = c.scene(sh.scene);
    r.backend = gpu ? "cuda" : "cpu";
    r.spp = c.by_mode(sh.spp_smoke, sh.spp_quick, sh.spp_full);
    if (c.m == mode::smoke) r.set = sh.smoke_set;
    if (c.m == mode::quick && !gpu) r.set = sh.quick_cpu_set;
    r.png = c.file("image-" + sh.name + ".png");
    r.json = c.file("image-" + sh.name + ".json");
    step s{"image-" + sh.name, "render " + sh.name + " at " + std::to_string(r.spp) + " spp for the report",
           c.expect(1, cpu_quick[i], cpu_full[i], 3, 5, 10),
           {"image-" + sh.name + ".png", "image-" + sh.name + ".json"}, render_command(c.program, r), {}};
    s.run = [r, cmd = s.command] {
      render::render_request rq;
      rq.scene = r.scene;
      rq.backend = r.backend;
      rq.spp = r.spp;
      rq.set = r.set;
      render::render_to_files(rq, {r.png, {}, r.json}, cmd);
      return 0;
    };
    steps.push_back(s);
  }
}

// The suites in the order they run: each adds its steps for the run's mode and backend.
using planner = void (*)(const context&, std::vector<step>&);
constexpr planner planners[] = {redzone_steps, space_steps, billeter_steps, queue_steps, crossover_steps,
                                sort_steps,    trace_steps, setup_steps,    render_steps, image_steps};

}  // namespace

std::vector<step> plan(const context& c) {
  std::vector<step> steps;
  for (const planner add : planners) add(c, steps);
  return steps;
}

}  // namespace sieve::bench::all_steps
