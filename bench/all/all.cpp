#include "all.hpp"

#include "../report_names.hpp"
#include "../compaction/suite.hpp"
#include "../render/render_bench.hpp"
#include "../sort/suite.hpp"
#include "../setup/setup.hpp"
#include "../trace/trace.hpp"

#include <job/render_job.hpp>

#include <sieve/compaction.hpp>
#include <sieve/compaction/cuda.hpp>

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>

namespace sieve::bench {
namespace {

namespace fs = std::filesystem;

enum class mode { smoke, quick, full };

const char* mode_name(mode m) { return m == mode::smoke ? "smoke" : m == mode::quick ? "quick" : "full"; }

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

// --- The plan ------------------------------------------------------------------------------------------

struct step {
  std::string name, what;
  double expected_s = 0;  // on the reference machine of the backend (see estimate_note)
  std::vector<std::string> files;
  std::string command;
  std::function<int()> run;
};

struct context {
  bool gpu = false;
  mode m = mode::quick;
  fs::path out;
  data_paths data;  // the shipped scenes and bench/report.py
  std::string program;

  // Paths as the commands show them: relative to the working directory when below it.
  std::string shown(const fs::path& p) const {
    const fs::path rel = fs::absolute(p).lexically_normal().lexically_relative(fs::current_path());
    return !rel.empty() && *rel.begin() != ".." ? rel.string() : fs::absolute(p).lexically_normal().string();
  }
  std::string file(const std::string& name) const { return shown(out / name); }
  std::string scene(const std::string& rel) const { return shown(data.scenes / rel); }
  // One value per mode.
  template <class T>
  T by_mode(T smoke, T quick, T full) const {
    return m == mode::smoke ? smoke : m == mode::quick ? quick : full;
  }
  // Expected seconds on the reference machines: the CPU's smoke and quick modes were timed on a 2-core
  // AMD EPYC (RelWithDebInfo, a loaded machine); its full mode and every GPU mode are estimates (H100).
  double expect(double cpu_smoke, double cpu_quick, double cpu_full, double gpu_smoke, double gpu_quick,
                double gpu_full) const {
    return gpu ? by_mode(gpu_smoke, gpu_quick, gpu_full) : by_mode(cpu_smoke, cpu_quick, cpu_full);
  }
};

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

std::vector<step> plan(const context& c) {
  const bool gpu = c.gpu;
  std::vector<step> steps;

  {  // Redzone's grid (its section 5): removal lists, k/n = 2, 10, 50, 90 %; Fig. 4 is k = 2 % at 2 GiB.
    compaction_args a;
    a.suites = {"redzone"};
    a.quick = c.m != mode::full;
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
  {  // SPACE's grid (the `space` preset): flags and masks, 1 GiB of each type, 1 .. 97 % kept, three distributions.
    compaction_args a;
    a.suites = {"space"};
    a.quick = c.m != mode::full;
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
  {  // Billeter's Table 3 (the `billeter` preset): 4M u32 items, byte flags, 0 .. 100 % kept in steps of 10 %.
    compaction_args a;
    a.suites = {"billeter"};
    a.quick = c.m != mode::full;
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
  if (gpu) {  // Queues as the renderer has them: the path record and u32, counts on the device, timed as
             // CUDA-graph replays, and the same calls timed one by one between two events.
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
  {  // The crossover grid `auto` is tuned from: every strategy over n, k/n (kept share) and item size.
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
  if (gpu) {  // The GPU radix sort: own onesweep against cub::DeviceRadixSort.
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
  {  // Traversal: primary and diffuse rays through the ~1M-triangle sphere room: DFS (binary and
     // 8-wide), BFS, and on the CPU Embree (when this build has it) as the baseline; over the SAH
     // builder's tree and PLOC's (on the GPU with the GPU: the renderer's default there).
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
  {  // The setup: the heightfield's generation and its BVH build by phase, on one thread and on all.
    setup_args a;
    a.scene = c.scene("procedural/heightfield.toml");
    a.threads = {1, 0};
    if (c.m != mode::full) a.set = {c.m == mode::smoke ? "procedural.grid=64" : "procedural.grid=512"};
    a.repeats = c.by_mode(1, 3, 3);
    steps.push_back(suite_step(c, "setup", "the scene's load and the BVH build by phase, one thread and all, heightfield",
                               c.expect(1, 5, 60, 1, 5, 60), a, setup_options(), run_setup_bench));
  }
  {  // The render workload: compaction's share of the frame per strategy, scene and bounce.
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
  {  // The shipped scenes' images, for the report.
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
  return steps;
}

// --- Running ---------------------------------------------------------------------------------------------

// Sends what a suite prints to its log file; of its stderr, error lines (they start with "sieve ")
// also reach the console, and on a terminal the per-point progress lines ("[3/40] ...") are shown
// as one line rewritten in place.
class capture : public std::streambuf {
 public:
  capture(std::ostream& log, std::ostream* console, bool tty) : log_(log), console_(console), tty_(tty) {}
  ~capture() override {
    if (!line_.empty()) log_ << line_;
    log_.flush();
  }

 protected:
  int_type overflow(int_type ch) override {
    if (ch == traits_type::eof()) return 0;
    line_ += static_cast<char>(ch);
    if (ch == '\n') flush_line();
    return ch;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    for (std::streamsize i = 0; i < n; ++i) overflow(static_cast<unsigned char>(s[i]));
    return n;
  }
  int sync() override {
    log_.flush();
    return 0;
  }

 private:
  void flush_line() {
    log_ << line_;
    if (console_) {
      std::string text = line_.substr(0, line_.size() - 1);
      if (text.rfind("sieve ", 0) == 0) {
        *console_ << (tty_ ? "\r\033[K" : "") << "      " << text << '\n' << std::flush;
      } else if (tty_ && (text.rfind("[", 0) == 0 || text.rfind("sort n=", 0) == 0)) {
        if (text.size() > 90) text = text.substr(0, 90);
        *console_ << "\r\033[K      " << text << std::flush;
      }
    }
    line_.clear();
  }

  std::ostream& log_;
  std::ostream* console_;
  bool tty_;
  std::string line_;
};

// Redirects std::cout and std::cerr into `log` for its lifetime.
class redirect {
 public:
  redirect(const fs::path& log, std::ostream& console, bool tty)
      : file_(log), out_(file_, nullptr, tty), err_(file_, &console, tty) {
    old_out_ = std::cout.rdbuf(&out_);
    old_err_ = std::cerr.rdbuf(&err_);
  }
  ~redirect() {
    std::cout.flush();
    std::cerr.flush();
    std::cout.rdbuf(old_out_);
    std::cerr.rdbuf(old_err_);
  }
  redirect(const redirect&) = delete;
  redirect& operator=(const redirect&) = delete;

 private:
  std::ofstream file_;
  capture out_, err_;
  std::streambuf* old_out_ = nullptr;
  std::streambuf* old_err_ = nullptr;
};

std::string duration(double s) {
  char buf[32];
  if (s < 10) std::snprintf(buf, sizeof buf, "%.1f s", s);
  else if (s < 90) std::snprintf(buf, sizeof buf, "%.0f s", s);
  else if (s < 5400) std::snprintf(buf, sizeof buf, "%.0f min", s / 60);
  else std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  return buf;
}

// The NVIDIA kernel driver's version ("580.159.04"), read where Linux publishes it.
std::string gpu_driver() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  std::getline(in, line);
  std::smatch m;
  if (std::regex_search(line, m, std::regex(R"((\d+\.\d+(\.\d+)?))"))) return m[1];
  return "unknown (no /proc/driver/nvidia/version)";
}

// A Python 3 for bench/report.py: one with matplotlib when there is one (Debian's python3-matplotlib
// is under /usr/bin, which a pyenv python3 first on PATH does not see). Empty: none at all.
std::string find_python(bool& with_matplotlib) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("SIEVE_PYTHON")) candidates.emplace_back(env);
  candidates.insert(candidates.end(), {"python3", "/usr/bin/python3"});
  std::string any;
  for (const auto& py : candidates) {
    if (std::system((shell_quote(py) + " -c 'import sys' >/dev/null 2>&1").c_str()) != 0) continue;
    if (any.empty()) any = py;
    if (std::system((shell_quote(py) + " -c 'import matplotlib' >/dev/null 2>&1").c_str()) == 0) {
      with_matplotlib = true;
      return py;
    }
  }
  with_matplotlib = false;
  return any;
}

int run_backend(const all_args& args, bool gpu, mode m, const fs::path& out, const std::string& command_line) {
  context c;
  c.gpu = gpu;
  c.m = m;
  c.out = out;
  c.data = find_data();
  c.program = command_line.substr(0, command_line.find(' '));

  std::vector<step> steps = plan(c);
  if (!args.only.empty()) {
    std::erase_if(steps, [&](const step& s) {
      for (const auto& o : args.only)
        if (s.name.rfind(o, 0) == 0) return false;
      return true;
    });
    if (steps.empty()) throw error("--only: no step starts with those names");
  }

  const nlohmann::json machine = machine_info(gpu);
  const std::string device = gpu ? machine.value("gpu", "") : machine.value("cpu", "") + ", " +
                                                                  std::to_string(machine.value("tbb_threads", 0)) +
                                                                  " threads";
  double total = 0;
  for (const auto& s : steps) total += s.expected_s;
  std::ostream console(std::cout.rdbuf());  // the terminal, while the steps' own output goes to their logs
  const bool tty = isatty(STDOUT_FILENO);
  console << "sieve bench all: " << (gpu ? "cuda" : "cpu") << " backend, " << mode_name(m) << " mode, " << device
          << "\ninto " << c.shown(out) << "/; each step's printed tables in <step>.txt\n";
  for (std::size_t i = 0; i < steps.size(); ++i) {
    char line[96];
    std::snprintf(line, sizeof line, "  %2zu. %-28s ~%-8s ", i + 1, steps[i].name.c_str(),
                  duration(steps[i].expected_s).c_str());
    console << line << steps[i].what << "\n";
  }
  console << "expected: about " << duration(total) << " in all ("
          << (!gpu && m != mode::full ? "as timed on a 2-core AMD EPYC"
                                      : gpu ? "a rough estimate for an H100" : "a rough estimate for a 2-core AMD EPYC")
          << "; other machines differ)\n"
          << std::flush;
  if (args.plan_only) return 0;

  fs::create_directories(out);
  nlohmann::json manifest = {{"benchmark", "all"},
                             {"mode", mode_name(m)},
                             {"backend", gpu ? "cuda" : "cpu"},
                             {"device", device},
                             {"driver", gpu ? gpu_driver() : "-"},
                             {"machine", machine},
                             {"run", run_info(command_line)},
                             {"expected_seconds", total},
                             {"steps", nlohmann::json::array()}};
  for (const auto& s : steps)
    manifest["steps"].push_back({{"name", s.name}, {"what", s.what}, {"command", s.command},
                                 {"expected_seconds", s.expected_s}, {"files", s.files}, {"status", "pending"}});
  const std::string manifest_path = (out / "bench-all.json").string();
  write_file(manifest_path, json_text(manifest, 1));

  int failed = 0;
  double done_expected = 0, elapsed = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const step& s = steps[i];
    console << "[" << i + 1 << "/" << steps.size() << "] " << s.name << ": " << s.what << " ..." << (tty ? "" : "\n")
            << std::flush;
    const auto t0 = std::chrono::steady_clock::now();
    int rc = 1;
    std::string status;
    try {
      redirect to_log(out / (s.name + ".txt"), console, tty);
      std::cout << "$ " << s.command << "\n";
      rc = s.run();
      status = rc == 0 ? "ok" : "FAILED (exit code " + std::to_string(rc) + ", see " + s.name + ".txt)";
    } catch (const std::exception& e) {
      status = std::string("FAILED: ") + e.what();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    elapsed += seconds;
    done_expected += s.expected_s;
    if (status != "ok") ++failed;
    const double left = (total - done_expected) * (done_expected > 0 ? elapsed / done_expected : 1);
    console << (tty ? "\r\033[K" : "") << "[" << i + 1 << "/" << steps.size() << "] " << s.name << ": " << status
            << " in " << duration(seconds) << " (expected ~" << duration(s.expected_s) << ")"
            << (i + 1 < steps.size() ? "; about " + duration(left) + " left" : "") << "\n";
    auto& js = manifest["steps"][i];
    js["status"] = status;
    js["seconds"] = seconds;
    js["exit_code"] = rc;
    manifest["seconds"] = elapsed;
    write_file(manifest_path, json_text(manifest, 1));
  }

  if (args.report) {
    bool matplotlib = false;
    const std::string python = find_python(matplotlib);
    const fs::path& script = c.data.report_script;
    if (python.empty()) {
      console << "sieve bench all: no python3 found, so no report.md; the JSON and CSV are in " << c.shown(out)
              << "/ (run bench/report.py " << c.shown(out) << " later)\n";
    } else {
      if (!matplotlib)
        console << "sieve bench all: matplotlib not found (apt-get install python3-matplotlib): report.md without "
                   "plots\n";
      const std::string cmd = shell_quote(python) + " " + shell_quote(script.string()) + " " + shell_quote(c.shown(out));
      console << std::flush;
      if (std::system(cmd.c_str()) != 0) {
        console << "sieve bench all: the report failed: " << cmd << "\n";
        ++failed;
      }
    }
  }
  console << "sieve bench all: " << steps.size() - static_cast<std::size_t>(std::min<int>(failed, steps.size()))
          << " of " << steps.size() << " steps ok in " << duration(elapsed) << "; " << c.shown(out / "report.md")
          << "\n";
  return failed ? 1 : 0;
}

}  // namespace

void add_all_options(CLI::App& cmd, all_args& a) {
  cmd.add_option("--backend", a.backend, "auto (cuda when a GPU is present, else cpu), cpu, cuda or both")
      ->check(CLI::IsMember({"auto", "cpu", "cuda", "both"}))
      ->default_str("auto");
  cmd.add_flag("--quick", a.quick, "small grids and few repeats: a few minutes");
  cmd.add_flag("--smoke", a.smoke, "tiny grids, one repeat: seconds (what CI runs)");
  cmd.add_option("--out", a.out,
                 "results folder (default: a fresh out/bench-<device>[-quick|-smoke]-<UTC date-time> in the working directory, "
                 "never the committed bench/results/<device>: name that to update it; with --backend both: <out>/<device> for each)");
  cmd.add_option("--only", a.only,
                 "run only the steps whose names start with these (comma-separated), e.g. compaction,trace")
      ->delimiter(',');
  cmd.add_flag("--plan", a.plan_only, "print the steps and the expected duration, run nothing");
  cmd.add_flag("!--no-report", a.report, "skip bench/report.py (the JSON and CSV are still written)");
}

namespace {

// The time now as YYYYMMDD-HHMMSS (UTC): a results folder's name.
std::string utc_stamp() {
  const std::time_t now = std::time(nullptr);
  std::tm t{};
  gmtime_r(&now, &t);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &t);
  return text;
}

// `base`, or base-2, base-3 ... when it exists already.
fs::path fresh_folder(const fs::path& base) {
  fs::path p = base;
  for (int i = 2; fs::exists(p); ++i) p = base.string() + "-" + std::to_string(i);
  return p;
}

}  // namespace

int run_bench_all(const all_args& a, const std::string& command_line) {
  if (a.quick && a.smoke) throw error("--quick and --smoke: choose one");
  const mode m = a.smoke ? mode::smoke : a.quick ? mode::quick : mode::full;
  const bool have_gpu = cuda::available();
  const std::string backend = a.backend.empty() || a.backend == "auto" ? (have_gpu ? "cuda" : "cpu") : a.backend;
  if (backend != "cpu" && !have_gpu && !a.plan_only)  // a plan can be shown anywhere
    throw error("--backend " + backend + ": " + cuda::device_description());
  std::vector<bool> gpus;
  if (backend != "cpu") gpus.push_back(true);
  if (backend != "cuda") gpus.push_back(false);
  int rc = 0;
  for (bool gpu : gpus) {
    fs::path out;
    if (a.out.empty()) {  // a fresh folder: never over the committed bench/results/<device>/
      out = fresh_folder(fs::path("out") / ("bench-" + device_slug(gpu) + (m != mode::full ? "-" + std::string(mode_name(m)) : "") +
                                            "-" + utc_stamp()));
    } else {
      out = gpus.size() > 1 ? fs::path(a.out) / device_slug(gpu) : fs::path(a.out);
    }
    rc |= run_backend(a, gpu, m, out, command_line);
  }
  return rc;
}

}  // namespace sieve::bench
