// The `sieve` command end to end: bad input gives one clear line on stderr and a non-zero exit; a
// render writes PNG, EXR and a JSON report with the documented keys; SIGINT during a render writes
// the samples accumulated so far, the report marked partial.
#include <sieve/version.hpp>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_support.hpp"

namespace {

using namespace sieve_cli_test;

TEST_F(Cli, BadInputIsOneClearLine) {
  const std::string cornell = (scenes_dir / "cornell-box" / "cornell-box.toml").string();
  expect_one_line_error({"render", (dir_ / "missing.toml").string()}, "missing.toml");
  expect_one_line_error({"render", file("bad.obj", "v 0 0 0\nv 1 0 0\nv 0 1 zero\nf 1 2 3\n").string()}, "bad.obj");
  expect_one_line_error({"render", file("nan.obj", "v nan 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n").string()}, "nan.obj");
  expect_one_line_error({"render", file("past.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n").string()}, "past.obj");
  file("nomtl.obj", "mtllib gone.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  expect_one_line_error({"render", file("nomtl.toml", "[[objects]]\nobj = \"nomtl.obj\"\n").string()}, "gone.mtl");
  expect_one_line_error({"render", file("key.toml", "[film]\nwidht = 3\n[[objects]]\nobj = \"x.obj\"\n").string()}, "widht");
  expect_one_line_error({"render", cornell, "--set", "film.spp=-4"}, "film.spp");
  // A texture that is not an image, and one whose header claims 100000 x 100000 pixels.
  file("notpng.png", "GIF89a but not quite\n");
  file("tex.mtl", "newmtl a\nmap_Kd notpng.png\n");
  expect_one_line_error({"render", file("tex.obj", "mtllib tex.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl a\nf 1 2 3\n").string()},
                        "notpng.png: the texture is not an image sieve reads");
  {
    std::string huge("\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\x01\x86\xa0\0\x01\x86\xa0\x08\x02\0\0\0\0\0\0\0", 33);
    file("huge.png", huge);
    file("huge.mtl", "newmtl a\nmap_Kd huge.png\n");
    expect_one_line_error({"render", file("huge.obj", "mtllib huge.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl a\nf 1 2 3\n").string()},
                          "100000 x 100000 pixels, more than the limit of 16384");
  }
  expect_one_line_error(with({"render", cornell, "--strategy", "bogus"}, tiny), "bogus");
  expect_one_line_error(with({"render", cornell, "--reorder", "sideways"}, tiny), "sideways");
  expect_one_line_error(with({"render", cornell, "--backend", "cpu", "--strategy", "space"}, tiny), "space");  // CUDA only
  expect_one_line_error(with(with({"render", cornell}, tiny), {"--set", "film.width=100000", "--set", "film.height=100000"}),
                        "film.width");
}

// [environment] map: a missing, malformed, truncated or absurdly large map is one line and exit 1.
TEST_F(Cli, BadEnvironmentMapIsOneClearLine) {
  auto scene_with = [&](const std::string& name, const std::string& map) {
    return file(name + ".toml", "[environment]\nmap = \"" + map +
                                    "\"\n[[lights]]\ncorner = [0, 0, 0]\nedge1 = [1, 0, 0]\nedge2 = [0, 1, 0]\n"
                                    "emission = [1, 1, 1]\n")
        .string();
  };
  expect_one_line_error({"render", scene_with("missing", "gone.exr")}, "environment map 'gone.exr' not found");
  file("junk.exr", std::string("v/1\x01", 4) + "not really an EXR file at all");
  expect_one_line_error({"render", scene_with("junk", "junk.exr")}, "junk.exr: ");
  file("huge.hdr", "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 100000 +X 100000\n");
  expect_one_line_error({"render", scene_with("huge", "huge.hdr")}, "more than the limit");
  file("short.hdr", "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 64 +X 128\n\x01\x02\x03\x04");
  expect_one_line_error({"render", scene_with("short", "short.hdr")}, "short.hdr: cannot decode the environment map");
  // The map is an input: an output naming it is refused, the file left as it was.
  const std::string sky = slurp(scenes_dir / "sky" / "sky.exr");
  file("sky.exr", sky);
  expect_one_line_error(with({"render", scene_with("sky", "sky.exr"), "--exr", (dir_ / "sky.exr").string()}, tiny),
                        "a file this run reads");
  EXPECT_EQ(slurp(dir_ / "sky.exr"), sky);
}

TEST_F(Cli, FractionMustBeANumber) {
  for (const std::string bad : {"nan", "-nan", "inf", "1.5", "x"}) {
    const outcome o = run({"bench", "compaction", "--fraction", bad, "--n", "1000", "--strategies", "std"});
    EXPECT_NE(o.rc, 0) << bad;
    EXPECT_NE(o.err.find("'" + bad + "' is not a number in 0 .. 1"), std::string::npos) << o.err;
  }
}

// Without a GPU, --backend cuda fails before the scene is read: a 33M-triangle heightfield (seconds
// of BVH build) is never generated.
TEST_F(Cli, CudaBackendWithoutAGpuFailsFirst) {
  if (nlohmann::json::parse(run({"info", "--json"}).out)["devices"]["cuda"]["available"] == true)
    GTEST_SKIP() << "a CUDA device is present";
  const auto big = file("big.toml", "[procedural]\ntype = \"heightfield\"\ngrid = 4096\n");
  const auto t0 = std::chrono::steady_clock::now();
  expect_one_line_error({"render", big.string(), "--backend", "cuda", "--quiet"}, "--backend cuda needs a GPU");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 3.0);
}

TEST_F(Cli, RenderWritesImagesAndReport) {
  const std::string cornell = (scenes_dir / "cornell-box" / "cornell-box.toml").string();
  const fs::path png = dir_ / "out" / "c.png", exr = dir_ / "c.exr", json = dir_ / "c.json";
  const outcome o = run(with({"render", cornell, "--strategy", "redzone", "--traversal", "bfs", "--out", png.string(),
                              "--exr", exr.string(), "--json", json.string(), "--profile-stages"},
                             tiny));
  ASSERT_EQ(o.rc, 0) << o.err;
  EXPECT_GT(fs::file_size(png), 100U);
  EXPECT_GT(fs::file_size(exr), 500U);
  const auto j = nlohmann::json::parse(slurp(json));
  for (const char* key : {"schema_version", "scene", "backend", "device", "strategy", "width", "height", "spp",
                          "frame_seconds", "mrays_per_s", "compaction_ms", "compaction_percent", "stages_ms",
                          "between_stages_ms", "first_wave_extra_ms", "bounces", "run"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["schema_version"], 2);
  EXPECT_EQ(j["scene"], "cornell-box");
  EXPECT_EQ(j["strategy"], "redzone");
  EXPECT_EQ(j["form"], "removal list");
  EXPECT_EQ(j["width"], 16);
  EXPECT_EQ(j["spp"], 2);
  EXPECT_EQ(j["partial"], false);
  EXPECT_GT(j["mrays_per_s"].get<double>(), 0.0);
  EXPECT_GE(j["compaction_percent"].get<double>(), 0.0);
  EXPECT_LE(j["compaction_percent"].get<double>(), 100.0);
  EXPECT_EQ(j["bounces"][0]["live"], 16 * 12 * 2);
  EXPECT_TRUE(j["stages_ms"].contains("extend"));
  EXPECT_TRUE(j["first_wave_extra_ms"].is_null());  // one wave: nothing to compare it with
  EXPECT_EQ(j["profile_stages"], true);
  EXPECT_EQ(j["waves"], 1);
  // The loops the stages are made of, in the order they first ran, and their table on stdout.
  ASSERT_TRUE(j.contains("loops"));
  ASSERT_FALSE(j["loops"].empty());
  EXPECT_EQ(j["loops"][0]["name"], "wave.begin");
  bool bfs_begin = false;
  for (const auto& l : j["loops"]) {
    EXPECT_GT(l["launches"].get<std::uint64_t>(), 0U) << l["name"];
    EXPECT_GE(l["ms"].get<double>(), 0.0) << l["name"];
    if (l["name"] == "bfs.begin") bfs_begin = true;
  }
  EXPECT_TRUE(bfs_begin);
  if (j["backend"] == "cpu") {
    EXPECT_EQ(j["wave_launch"], "cpu");
    EXPECT_TRUE(j["host_syncs_per_wave"].is_null());  // the GPU's figure: null on the CPU
    EXPECT_TRUE(j["bvh"].is_null());
    EXPECT_FALSE(j["time"].contains("wait_seconds"));  // the ranks' figures: only under mpirun
  } else {
    EXPECT_EQ(j["wave_launch"], "stream");  // a profiled GPU BFS: its host-driven loop times the frontier
  }
  EXPECT_TRUE(j["run"].contains("commit"));
  // With --no-profile: the frame time alone, no stage times (and null, not zero, where they would be).
  const fs::path plain = dir_ / "plain.json";
  ASSERT_EQ(run(with({"render", cornell, "--out", png.string(), "--json", plain.string(), "--no-profile"}, tiny)).rc, 0);
  const auto p = nlohmann::json::parse(slurp(plain));
  EXPECT_EQ(p["profile_stages"], false);
  EXPECT_TRUE(p["stages_ms"].empty());
  EXPECT_TRUE(p["loops"].empty());
  EXPECT_TRUE(p["between_stages_ms"].is_null());
  EXPECT_TRUE(p["bounces"][0]["compaction_ms"].is_null());
  EXPECT_GT(p["frame_seconds"].get<double>(), 0.0);
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().string().find(".tmp-"), std::string::npos) << "temporary left behind: " << e.path();
}

// The printed report of a profiled render: the stage table as before, then the loop table naming
// the loops the stages are made of; unprofiled, neither table's rows.
TEST_F(Cli, ProfiledRenderPrintsTheLoopTable) {
  const std::string cornell = (scenes_dir / "cornell-box" / "cornell-box.toml").string();
  const std::vector<std::string> small = {"--set", "film.width=16", "--set", "film.height=12", "--spp", "1",
                                          "--backend", "cpu", "--out", (dir_ / "t.png").string()};
  const outcome o = run(with(with({"render", cornell, "--profile-stages"}, small), {"--reorder", "morton"}));
  ASSERT_EQ(o.rc, 0) << o.err;
  const auto stage_table = o.out.find("between the stages"), loop_header = o.out.find("launches");
  ASSERT_NE(stage_table, std::string::npos) << o.out;
  ASSERT_NE(loop_header, std::string::npos) << o.out;
  EXPECT_LT(stage_table, loop_header) << o.out;
  for (const char* loop : {"wave.begin", "generate", "extend", "shade", "connect", "reorder.keys", "reorder.gather",
                           "accumulate"})
    EXPECT_NE(o.out.find(std::string(loop), loop_header), std::string::npos) << loop << "\n" << o.out;
  // Stage times are measured by default: the same tables without asking.
  const outcome dflt = run(with({"render", cornell}, small));
  ASSERT_EQ(dflt.rc, 0) << dflt.err;
  EXPECT_NE(dflt.out.find("between the stages"), std::string::npos) << dflt.out;
  EXPECT_NE(dflt.out.find("launches"), std::string::npos) << dflt.out;
  // --no-profile: no table of figures that were not measured, and it says so in words.
  const outcome plain = run(with({"render", cornell, "--no-profile"}, small));
  ASSERT_EQ(plain.rc, 0) << plain.err;
  EXPECT_EQ(plain.out.find("launches"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("reorder.keys"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("between the stages"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("compact ms"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("stage times: not measured"), std::string::npos) << plain.out;
}

// The default render's stage table: measured figures, a non-zero compaction share, and the stages
// with "other" adding up to the frame time. The header comes before the work, the tables after.
TEST_F(Cli, DefaultRenderMeasuresItsStagesAndTheyAddUp) {
  const std::string cornell = (scenes_dir / "cornell-box" / "cornell-box.toml").string();
  const fs::path json = dir_ / "d.json";
  const outcome o = run({"render", cornell, "--backend", "cpu", "--set", "film.width=32", "--set", "film.height=24",
                         "--spp", "2", "--json", json.string(), "--out", (dir_ / "d.png").string()});
  ASSERT_EQ(o.rc, 0) << o.err;
  const auto j = nlohmann::json::parse(slurp(json));
  ASSERT_TRUE(j["profile_stages"].get<bool>());
  EXPECT_GT(j["compaction_ms"].get<double>(), 0.0);
  EXPECT_GT(j["compaction_percent"].get<double>(), 0.0);
  double sum = j["between_stages_ms"].get<double>();
  if (!j["first_wave_extra_ms"].is_null()) sum += j["first_wave_extra_ms"].get<double>();
  for (const auto& [name, ms] : j["stages_ms"].items()) sum += ms.get<double>();
  EXPECT_NEAR(sum, j["frame_seconds"].get<double>() * 1e3, 1e-6 * std::max(1.0, sum));
  // The table adds up too: its rows are printed once each, "compaction, all" no longer repeats "compact".
  EXPECT_NE(o.out.find("between the stages (1)"), std::string::npos) << o.out;  // one wave: no first-wave line
  EXPECT_NE(o.out.find("\nframe "), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("compaction, all"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("reduction"), std::string::npos) << o.out;  // the ranks' figures: only under mpirun
  const auto header = o.out.find("device: "), table = o.out.find("between the stages");
  ASSERT_NE(header, std::string::npos) << o.out;
  EXPECT_LT(header, table) << o.out;
  // Without a terminal progress is a line every few seconds: a quick render prints none (its setup
  // lines are on stdout).
  EXPECT_EQ(o.err, "") << o.err;

  // Unmeasured: null in the report, never zeros.
  const fs::path bare = dir_ / "bare.json";
  const outcome n = run({"render", cornell, "--backend", "cpu", "--no-profile", "--set", "film.width=16", "--set",
                         "film.height=12", "--spp", "1", "--json", bare.string(), "--out", (dir_ / "bare.png").string()});
  ASSERT_EQ(n.rc, 0) << n.err;
  const auto b = nlohmann::json::parse(slurp(bare));
  EXPECT_TRUE(b["compaction_ms"].is_null());
  EXPECT_TRUE(b["compaction_percent"].is_null());
  EXPECT_TRUE(b["stages_ms"].empty());
}

// The setup the user waits for, a plain line per phase on stdout as it ends (also off a terminal,
// no carriage returns): the load with its triangles and MB, the BVH by phase, the first frame; no
// upload on the CPU. The same times in the report's setup_s; --quiet prints none.
TEST_F(Cli, RenderPrintsTheSetupPhasesAsTheyEnd) {
  const fs::path cornell = scenes_dir / "cornell-box" / "cornell-box.toml";
  const fs::path json = dir_ / "s.json";
  const outcome o = run({"render", cornell.string(), "--backend", "cpu", "--set", "film.width=32", "--set",
                         "film.height=24", "--spp", "2", "--json", json.string(), "--out", (dir_ / "s.png").string()});
  ASSERT_EQ(o.rc, 0) << o.err;
  EXPECT_EQ(o.err, "") << o.err;
  EXPECT_EQ(o.out.find('\r'), std::string::npos) << o.out;
  const auto j = nlohmann::json::parse(slurp(json));
  const auto& s = j["setup_s"];
  const std::string triangles = std::to_string(j["triangles"].get<std::uint64_t>());
  const auto header = o.out.find("device: "), load = o.out.find("\nsetup: load "), bvh = o.out.find("\nsetup: BVH "),
             first = o.out.find("\nsetup: first frame "), outcome_line = o.out.find("\ntime: setup ");
  ASSERT_NE(load, std::string::npos) << o.out;
  ASSERT_NE(bvh, std::string::npos) << o.out;
  ASSERT_NE(first, std::string::npos) << o.out;
  EXPECT_LT(header, load) << o.out;
  EXPECT_LT(load, bvh) << o.out;
  EXPECT_LT(bvh, first) << o.out;
  EXPECT_LT(first, outcome_line) << o.out;
  EXPECT_EQ(o.out.find("setup: upload"), std::string::npos) << o.out;  // the CPU renders from host memory
  const std::string load_line = o.out.substr(load + 1, o.out.find('\n', load + 1) - load - 1);
  EXPECT_NE(load_line.find(" s, " + triangles + " triangles from "), std::string::npos) << load_line;
  const std::string bvh_line = o.out.substr(bvh + 1, o.out.find('\n', bvh + 1) - bvh - 1);
  EXPECT_NE(bvh_line.find("binary "), std::string::npos) << bvh_line;
  EXPECT_NE(bvh_line.find(" threads, "), std::string::npos) << bvh_line;
  EXPECT_NE(o.out.find("(2 spp over the whole film)"), std::string::npos) << o.out;

  // The report: the same phases, in seconds, consistent with each other.
  EXPECT_DOUBLE_EQ(s["load_s"].get<double>(), j["time"]["load_seconds"].get<double>());
  EXPECT_DOUBLE_EQ(s["build_s"].get<double>(), j["time"]["bvh_build_seconds"].get<double>());
  std::uint64_t bytes = 0;
  for (const char* f : {"cornell-box.toml", "cornell-box.obj", "cornell-box.mtl"})
    if (fs::exists(cornell.parent_path() / f)) bytes += fs::file_size(cornell.parent_path() / f);
  EXPECT_GE(s["load_bytes"].get<std::uint64_t>(), bytes);
  EXPECT_GT(s["load_bytes"].get<std::uint64_t>(), 0U);
  double phases = 0;
  for (const auto& [name, t] : s["build_phases_s"].items()) phases += t.get<double>();
  EXPECT_GT(s["build_phases_s"]["binary_s"].get<double>(), 0.0);
  EXPECT_LE(phases, s["build_s"].get<double>());
  EXPECT_TRUE(s["upload_s"].is_null());
  EXPECT_TRUE(s["device_build_s"].is_null());  // built on the host
  // The first frame's steps: the queues on every backend; the graph's capture, instantiation and
  // run on the GPU alone (null here, never zeros).
  EXPECT_GE(s["first_frame_steps_s"]["queues_s"].get<double>(), 0.0);
  EXPECT_LE(s["first_frame_steps_s"]["queues_s"].get<double>(), s["first_frame_s"].get<double>());
  for (const char* k : {"capture_s", "instantiate_s", "run_s"}) EXPECT_TRUE(s["first_frame_steps_s"][k].is_null()) << k;
  EXPECT_EQ(s["first_frame_spp"].get<int>(), 2);
  EXPECT_GT(s["first_frame_s"].get<double>(), 0.0);
  EXPECT_GE(s["first_image_s"].get<double>(), s["load_s"].get<double>() + s["build_s"].get<double>() + s["first_frame_s"].get<double>());
  EXPECT_LE(s["first_image_s"].get<double>(), j["time"]["total_seconds"].get<double>());

  const outcome q = run({"render", cornell.string(), "--backend", "cpu", "--quiet", "--set", "film.width=16", "--set",
                         "film.height=12", "--spp", "1", "--out", (dir_ / "q.png").string()});
  ASSERT_EQ(q.rc, 0) << q.err;
  EXPECT_EQ(q.out.find("setup:"), std::string::npos) << q.out;
}

// `bench setup` on the CPU: a validated row per thread count, the build's phases inside its time,
// the same triangles and tree at any thread count; no upload or first frame (null, never zeros).
TEST_F(Cli, BenchSetupRowsOnTheCpu) {
  const fs::path json = dir_ / "setup.json";
  const outcome o = run({"bench", "setup", (scenes_dir / "procedural" / "heightfield.toml").string(), "--backend", "cpu",
                         "--set", "procedural.grid=32", "--threads", "1,2", "--repeats", "2", "--json", json.string()});
  ASSERT_EQ(o.rc, 0) << o.err << o.out;
  EXPECT_NE(o.out.find("first_frame"), std::string::npos) << o.out;
  const auto j = nlohmann::json::parse(slurp(json));
  ASSERT_EQ(j["results"].size(), 2U) << j.dump();
  for (const auto& r : j["results"]) {
    EXPECT_TRUE(r["validated"].get<bool>()) << r.dump();
    EXPECT_EQ(r["triangles"].get<std::uint64_t>(), 2U * 32 * 32) << r.dump();
    EXPECT_TRUE(r["upload_ms"].is_null()) << r.dump();
    EXPECT_TRUE(r["first_frame_ms"].is_null()) << r.dump();
    double phases = 0;
    for (const char* k : {"refs_ms", "binary_ms", "pairs_ms", "collapse_ms", "cw_ms"}) phases += r[k].get<double>();
    EXPECT_GT(r["binary_ms"].get<double>(), 0.0) << r.dump();
    EXPECT_LE(phases, r["build_ms"].get<double>() * 1.001) << r.dump();
    double cpu = 0;  // the phases' CPU time: each measured, none beyond the build's whole CPU time
    for (const char* k : {"refs_cpu_ms", "binary_cpu_ms", "pairs_cpu_ms", "collapse_cpu_ms", "cw_cpu_ms"}) {
      EXPECT_GE(r[k].get<double>(), 0.0) << k << r.dump();
      cpu += r[k].get<double>();
    }
    EXPECT_GT(r["binary_cpu_ms"].get<double>(), 0.0) << r.dump();
    EXPECT_GT(cpu, 0.0) << r.dump();
  }
  EXPECT_EQ(j["results"][0]["sah_cost"], j["results"][1]["sah_cost"]);
}

// --json alone still writes the image, under the default name, in the current folder.
TEST_F(Cli, JsonAloneStillWritesTheImage) {
  const std::string cornell = (scenes_dir / "cornell-box" / "cornell-box.toml").string();
  const fs::path json = dir_ / "only.json";
  const outcome o = run({"render", cornell, "--backend", "cpu", "--set", "film.width=16", "--set", "film.height=12",
                         "--spp", "1", "--json", json.string()},
                        dir_);
  ASSERT_EQ(o.rc, 0) << o.err;
  EXPECT_TRUE(fs::exists(json));
  EXPECT_TRUE(fs::exists(dir_ / "cornell-box.png")) << o.out;
}

// Ctrl-C, SIGTERM and SIGHUP alike: the image so far (PNG and EXR) and the report marked partial, exit 128 + signal.
class Interrupt : public Cli, public testing::WithParamInterface<int> {};

TEST_P(Interrupt, WritesThePartialImage) {
  const int sig = GetParam();
  const std::string cornell = (scenes_dir / "cornell-box" / "cornell-box.toml").string();
  const fs::path png = dir_ / "p.png", exr = dir_ / "p.exr", json = dir_ / "p.json";
  // A loaded machine (CI runs tests in parallel, sanitizers slow the start) may not finish a sample
  // pass before the signal: then nothing is written (an image of no samples never replaces an
  // output), and the test waits longer.
  int samples = 0;
  for (const int wait_ms : {1500, 5000, 15000}) {
    // One bounce: a wave (the 2^20 paths the queue holds) completes in about a second; a signal
    // drops the wave in progress.
    // On the CPU: a GPU finishes this frame before the signal comes.
    const pid_t pid = start({"render", cornell, "--backend", "cpu", "--set", "film.width=64", "--set", "film.height=64",
                             "--set", "film.max_bounces=1", "--spp", "100000",
                             "--quiet", "--out", png.string(), "--exr", exr.string(), "--json", json.string()});
    EXPECT_TRUE(wait_for_handler(pid, sig)) << "sieve never installed a handler for signal " << sig;
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    ::kill(pid, sig);
    const outcome o = finish(pid);
    EXPECT_EQ(o.rc, 128 + sig) << o.err;
    EXPECT_NE(o.err.find("interrupted"), std::string::npos) << o.err;
    if (o.err.find("nothing was written") != std::string::npos) {
      EXPECT_FALSE(fs::exists(png) || fs::exists(exr) || fs::exists(json)) << o.err;
      continue;
    }
    ASSERT_TRUE(fs::exists(png));
    EXPECT_GT(fs::file_size(exr), 500U);
    const auto j = nlohmann::json::parse(slurp(json));
    EXPECT_EQ(j["partial"], true);
    samples = j["samples_completed"].get<int>();
    EXPECT_LT(samples, 100000);
    if (samples > 0) break;
  }
  EXPECT_GT(samples, 0);
}

// SIGHUP (the terminal closed) like SIGTERM: it was not handled, the outputs lost.
INSTANTIATE_TEST_SUITE_P(Cli, Interrupt, testing::Values(SIGINT, SIGTERM, SIGHUP), [](const auto& info) {
  return std::string(info.param == SIGINT ? "SIGINT" : info.param == SIGTERM ? "SIGTERM" : "SIGHUP");
});

// A render that fails leaves the files already there as they were.
TEST_F(Cli, FailedRenderKeepsExistingOutputs) {
  const fs::path png = file("kept.png", "an earlier image"), json = file("kept.json", "{\"earlier\": true}");
  expect_one_line_error({"render", file("bad.toml", "[film]\nwidth = -1\n").string(), "--out", png.string(), "--json",
                         json.string()},
                        "film.width");
  EXPECT_EQ(slurp(png), "an earlier image");
  EXPECT_EQ(slurp(json), "{\"earlier\": true}");
}

// --- Conventions: exit status, --version, --help defaults, formats by extension, film size, what ran ---

// Usage errors are one line `sieve: ...` and exit 2; runtime errors exit 1.
TEST_F(Cli, UsageErrorsExit2RuntimeErrorsExit1) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--bogus"}, {}, {"render"}, {"bench", "compaction", "--n", "1.04858e+06"},
           {"bench", "compaction", "--backend", "gpu"}, {"render", "x.toml", "--spp", "0"},
           {"info", "extra"}}) {
    const outcome o = run(args);
    std::string shown;
    for (const auto& a : args) shown += a + " ";
    EXPECT_EQ(o.rc, 2) << shown << ": " << o.err;
    EXPECT_EQ(o.err.rfind("sieve: ", 0), 0U) << shown << ": " << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << shown << ": " << o.err;
  }
  const outcome missing = run({"render", (dir_ / "missing.toml").string()});
  EXPECT_EQ(missing.rc, 1) << missing.err;
}

TEST_F(Cli, VersionPrintsVersionAndCommit) {
  const outcome o = run({"--version"});
  EXPECT_EQ(o.rc, 0) << o.err;
  EXPECT_EQ(o.out.rfind(std::string("sieve ") + SIEVE_VERSION_STRING + " (commit ", 0), 0U) << o.out;
  EXPECT_EQ(o.out.find("-dirty"), std::string::npos) << o.out;
}

TEST_F(Cli, HelpShowsDefaults) {
  const outcome o = run({"render", "--help"});
  EXPECT_EQ(o.rc, 0) << o.err;
  const auto backend = o.out.find("--backend");
  ASSERT_NE(backend, std::string::npos) << o.out;
  const std::string line = o.out.substr(backend, o.out.find('\n', backend) - backend);
  EXPECT_NE(line.find("auto"), std::string::npos) << line;
  EXPECT_NE(o.out.find("wavefront"), std::string::npos);
}

TEST_F(Cli, OutFormatFollowsTheExtension) {
  const std::string cornell = (scenes_dir / "cornell-box" / "cornell-box.toml").string();
  const fs::path exr = dir_ / "x.exr", png = dir_ / "x.PNG";
  ASSERT_EQ(run(with({"render", cornell, "--out", exr.string()}, tiny)).rc, 0);
  ASSERT_EQ(run(with({"render", cornell, "--out", png.string()}, tiny)).rc, 0);
  EXPECT_EQ(slurp(exr).substr(0, 4), std::string("\x76\x2f\x31\x01"));  // OpenEXR magic
  EXPECT_EQ(slurp(png).substr(1, 3), "PNG");
  const outcome bad = run(with({"render", cornell, "--out", (dir_ / "x.jpg").string()}, tiny));
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find(".png or .exr"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(dir_ / "x.jpg"));
}

// --width/--height change the film and keep the vertical field of view; one alone keeps the aspect.
TEST_F(Cli, WidthAndHeight) {
  const std::string cornell = (scenes_dir / "cornell-box" / "cornell-box.toml").string();
  const auto report = [&](const std::vector<std::string>& size) {
    const fs::path json = dir_ / "r.json";
    const outcome o = run(with(with({"render", cornell, "--spp", "1", "--quiet", "--json", json.string()}, size),
                               {"--out", (dir_ / "r.png").string()}));
    EXPECT_EQ(o.rc, 0) << o.err;
    return nlohmann::json::parse(slurp(json));
  };
  const auto scene = report({"--set", "film.width=8", "--set", "film.height=8"});
  const auto both = report({"--width", "24", "--height", "10"});
  EXPECT_EQ(both["width"], 24);
  EXPECT_EQ(both["height"], 10);
  EXPECT_EQ(both["vfov_degrees"], scene["vfov_degrees"]);
  const auto width = report({"--width", "20"});  // the box is square: 20 x 20
  EXPECT_EQ(width["width"], 20);
  EXPECT_EQ(width["height"], 20);
  const auto height = report({"--set", "film.width=30", "--set", "film.height=10", "--height", "4"});
  EXPECT_EQ(height["width"], 12);
  EXPECT_EQ(height["height"], 4);
}

// `auto` says what it ran: console and JSON of render, rows of bench compaction.
TEST_F(Cli, AutoNamesTheStrategyItRan) {
  const std::string cornell = (scenes_dir / "cornell-box" / "cornell-box.toml").string();
  const fs::path json = dir_ / "a.json";
  const outcome o = run({"render", cornell, "--backend", "cpu", "--strategy", "auto", "--set", "film.width=16",
                         "--set", "film.height=12", "--spp", "2", "--json", json.string(), "--out",
                         (dir_ / "a.png").string()});
  ASSERT_EQ(o.rc, 0) << o.err;
  const auto j = nlohmann::json::parse(slurp(json));
  ASSERT_FALSE(j["strategies_ran"].empty());
  const std::string ran = j["strategies_ran"][0];
  EXPECT_NE(ran, "auto");
  EXPECT_EQ(j["strategy"], "auto -> " + ran);
  EXPECT_EQ(j["strategy_asked"], "auto");
  EXPECT_EQ(j["backend"], "cpu");
  EXPECT_FALSE(j["device"].get<std::string>().empty());
  EXPECT_NE(o.out.find("strategy: auto -> " + ran), std::string::npos) << o.out;  // once, with why
  EXPECT_NE(o.out.find("device: "), std::string::npos) << o.out;

  const fs::path bench = dir_ / "b.json", bench_csv = dir_ / "b.csv";
  const outcome b = run({"bench", "compaction", "--backend", "cpu", "--suite", "redzone", "--n", "4096", "--fraction",
                         "0.1", "--repeats", "1", "--strategy", "auto,std", "--json", bench.string(), "--csv",
                         bench_csv.string()});
  ASSERT_EQ(b.rc, 0) << b.err;
  EXPECT_NE(b.out.find("auto -> "), std::string::npos) << b.out;
  const auto doc = nlohmann::json::parse(slurp(bench));
  EXPECT_FALSE(doc["device"].get<std::string>().empty());
  // The CSV and the JSON from one row schema: a row each, every CSV column a JSON key.
  std::istringstream csv(slurp(bench_csv));
  std::string header, line;
  std::getline(csv, header);
  std::size_t csv_rows = 0;
  while (std::getline(csv, line)) ++csv_rows;
  EXPECT_EQ(csv_rows, doc["results"].size());
  for (std::size_t at = 0, next; at <= header.size(); at = next + 1) {
    next = std::min(header.find(',', at), header.size());
    const std::string column = header.substr(at, next - at);
    for (const auto& r : doc["results"]) EXPECT_TRUE(r.contains(column)) << column;
  }
  int autos = 0;
  for (const auto& r : doc["results"]) {
    EXPECT_TRUE(r.contains("form"));
    if (r["strategy"] != "auto") continue;
    ++autos;
    EXPECT_NE(r["resolved"], "auto");
    EXPECT_FALSE(r["resolved"].get<std::string>().empty());
  }
  EXPECT_GT(autos, 0);

  const outcome trace = run({"bench", "trace", cornell, "--backend", "cpu", "--traversal", "bfs", "--strategy", "auto",
                             "--width", "16", "--height", "12", "--repeats", "1"});
  ASSERT_EQ(trace.rc, 0) << trace.err;
  EXPECT_NE(trace.out.find("auto -> "), std::string::npos) << trace.out;
  EXPECT_NE(trace.out.find("device: "), std::string::npos) << trace.out;
}

// bench trace: --spp multiplies the primary rays, shadow rays trace any hits, and Embree (when this
// build has it) traces the same rays, agrees with sieve's DFS and is the ratio's baseline.
TEST_F(Cli, TraceRayKindsSppAndEmbree) {
  const std::string cornell = (scenes_dir / "cornell-box" / "cornell-box.toml").string();
  const fs::path json = dir_ / "trace.json";
  const outcome o = run({"bench", "trace", cornell, "--backend", "cpu", "--rays", "primary,diffuse,shadow", "--traversal",
                         "dfs,embree", "--spp", "3", "--width", "16", "--height", "12", "--repeats", "1", "--json",
                         json.string()});
  ASSERT_EQ(o.rc, 0) << o.err;
  const auto doc = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(doc["spp"], 3);
  const bool embree = o.out.find("has no Embree") == std::string::npos;
  std::size_t shadow = 0, embree_rows = 0;
  for (const auto& r : doc["results"]) {
    EXPECT_TRUE(r["validated"].get<bool>()) << r.dump();
    if (r["rays"] == "primary") EXPECT_EQ(r["count"], 16 * 12 * 3);
    if (r["rays"] == "shadow") ++shadow;
    if (r["traversal"] == "embree") ++embree_rows;
    if (r["traversal"] == "dfs" && embree) EXPECT_GT(r["versus_embree"].get<double>(), 0) << r.dump();
  }
  EXPECT_EQ(shadow, embree ? 2U : 1U);
  EXPECT_EQ(embree_rows, embree ? 3U : 0U);
}

TEST_F(Cli, InfoJson) {
  const outcome o = run({"info", "--json"});
  ASSERT_EQ(o.rc, 0) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["version"], SIEVE_VERSION_STRING);
  EXPECT_FALSE(j["commit"].get<std::string>().empty());
  EXPECT_TRUE(j["devices"].contains("cpu"));
  EXPECT_TRUE(j["devices"].contains("cuda"));
  EXPECT_TRUE(j["default_backend"] == "cpu" || j["default_backend"] == "cuda");
  EXPECT_TRUE(fs::is_directory(fs::path(j["data"].get<std::string>()) / "scenes")) << j["data"];
  bool redzone = false;
  for (const auto& s : j["strategies"]) redzone |= s["name"] == "redzone";
  EXPECT_TRUE(redzone);
}

// --backend auto is the default: the GPU when there is one. Without one, --backend cuda says so once.
TEST_F(Cli, BackendAutoByDefault) {
  const auto info = nlohmann::json::parse(run({"info", "--json"}).out);
  const std::string cornell = (scenes_dir / "cornell-box" / "cornell-box.toml").string();
  const fs::path json = dir_ / "d.json";
  ASSERT_EQ(run(with({"render", cornell, "--json", json.string(), "--out", (dir_ / "d.png").string()}, tiny)).rc, 0);
  EXPECT_EQ(nlohmann::json::parse(slurp(json))["backend"], info["default_backend"]);
  if (info["devices"]["cuda"]["available"] == true) return;
  const outcome o = run(with({"render", cornell, "--backend", "cuda"}, tiny));
  EXPECT_EQ(o.rc, 1);
  EXPECT_NE(o.err.find("--backend cuda needs a GPU"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("no CUDA device: no CUDA device"), std::string::npos) << o.err;
}

// A recorded command runs as printed: --dry-run parses it (and rejects what the old reports held).
TEST_F(Cli, DryRunChecksACommandLine) {
  EXPECT_EQ(run({"--dry-run", "bench", "compaction", "--n", "1048576,4096", "--fraction", "0.02"}).rc, 0);
  EXPECT_EQ(run({"--dry-run", "bench", "compaction", "--n", "4096,1.04858e+06"}).rc, 2);
}

// --dry-run checks the command line only, and says so; `sieve check` loads the scene.
TEST_F(Cli, CheckLoadsTheSceneAndDryRunDoesNot) {
  const outcome dry = run({"--dry-run", "render", (scenes_dir / "cornell-box" / "cornell-box.toml").string()});
  EXPECT_EQ(dry.rc, 0) << dry.err;
  EXPECT_NE(dry.out.find("nothing was loaded or run"), std::string::npos) << dry.out;
  const outcome missing = run({"check", "no-such-scene.toml"});
  EXPECT_EQ(missing.rc, 1);
  EXPECT_NE(missing.err.find("no-such-scene.toml: scene file not found"), std::string::npos) << missing.err;
  const std::string cornell = (scenes_dir / "cornell-box" / "cornell-box.toml").string();
  const outcome ok = run({"check", cornell, "--set", "film.spp=3"});
  EXPECT_EQ(ok.rc, 0) << ok.err;
  for (const char* part : {"triangles: 32\n", "materials: ", "diffuse", "lights: 2 emissive triangles", "camera: position (278, 273, -800)", "3 spp"})
    EXPECT_NE(ok.out.find(part), std::string::npos) << part << " not in: " << ok.out;
  const std::string textured = (scenes_dir / "textured" / "textured.toml").string();
  const outcome t = run({"check", textured});
  EXPECT_EQ(t.rc, 0) << t.err;
  EXPECT_NE(t.out.find("checker.png: "), std::string::npos) << t.out;  // each texture with its size
  EXPECT_NE(t.out.find(" x "), std::string::npos) << t.out;
}

// --dry-run refuses what the run refuses before it loads anything, with the run's exit status: a
// usage error (a mistyped flag, an unknown name) 2, a runtime error (a missing scene, a strategy
// the backend cannot run) 1; a command line the run takes is valid.
TEST_F(Cli, DryRunRefusesWhatTheRunRefusesWithItsExitStatus) {
  const std::string cornell = (scenes_dir / "cornell-box" / "cornell-box.toml").string();
  const std::vector<std::string> base = with({"render", cornell, "--backend", "cpu"}, tiny);
  for (const auto& [extra, rc] : std::vector<std::pair<std::vector<std::string>, int>>{
           {{"--strategy", "bogus"}, 2}, {{"--queue", "bogus"}, 2}, {{"--reorder", "sideways"}, 2},
           {{"--stratgy", "redzone"}, 2}, {{"--out", "x.jpg"}, 2}, {{"--strategy", "space"}, 1}}) {
    std::string shown;
    for (const auto& a : extra) shown += a + " ";
    const outcome real = run(with(base, extra));
    const outcome dry = run(with(with({"--dry-run"}, base), extra));
    EXPECT_EQ(real.rc, rc) << shown << real.err;
    EXPECT_EQ(dry.rc, rc) << shown << dry.err;
    EXPECT_EQ(std::count(dry.err.begin(), dry.err.end(), '\n'), 1) << shown << dry.err;
  }
  const outcome missing = run({"--dry-run", "render", (dir_ / "missing.toml").string()});
  EXPECT_EQ(missing.rc, run({"render", (dir_ / "missing.toml").string()}).rc);
  EXPECT_EQ(missing.rc, 1);
  EXPECT_NE(missing.err.find("scene file not found"), std::string::npos) << missing.err;
  EXPECT_EQ(run({"--dry-run", "check", (dir_ / "missing.toml").string()}).rc, 1);
  EXPECT_EQ(run(with(with({"--dry-run"}, base), {"--strategy", "redzone"})).rc, 0);
}

// A mistyped flag, subcommand, mode or strategy gets the nearest known name; a word far from any
// gets none.
TEST_F(Cli, MistypedNamesGetASuggestion) {
  const std::string cornell = (scenes_dir / "cornell-box" / "cornell-box.toml").string();
  expect_one_line_error({"render", cornell, "--stratgy", "redzone"}, "did you mean --strategy?");
  expect_one_line_error({"render", cornell, "--queue", "apend"}, "did you mean 'append'?");
  expect_one_line_error({"render", cornell, "--backend", "cpu", "--strategy", "redzon"}, "did you mean 'redzone'?");
  expect_one_line_error({"rendr", cornell}, "did you mean 'render'?");
  expect_one_line_error({"bench", "compactoin"}, "did you mean 'compaction'?");
  const outcome far = run({"render", cornell, "--backend", "cpu", "--strategy", "bogus"});
  EXPECT_EQ(far.rc, 2);
  EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << far.err;
}

// No strategy is reported where none ran: the append queue (shade appends the survivors) and the
// megakernel (no queue) name none, in the console and in the report.
TEST_F(Cli, NoStrategyWhereNoneRan) {
  const std::string cornell = (scenes_dir / "cornell-box" / "cornell-box.toml").string();
  for (const std::vector<std::string>& mode : {std::vector<std::string>{"--queue", "append"},
                                               std::vector<std::string>{"--integrator", "megakernel"}}) {
    const fs::path json = dir_ / "what-ran.json";
    const outcome o = run(with({"render", cornell, "--backend", "cpu", "--strategy", "redzone", "--set", "film.width=16",
                                "--set", "film.height=12", "--spp", "2", "--json", json.string(), "--out",
                                (dir_ / "what-ran.png").string()},
                               mode));
    ASSERT_EQ(o.rc, 0) << mode[1] << ": " << o.err;
    EXPECT_EQ(o.out.find("redzone"), std::string::npos) << mode[1] << ": " << o.out;
    EXPECT_EQ(o.out.find("strategy:"), std::string::npos) << mode[1] << ": " << o.out;
    EXPECT_EQ(o.out.find("compact ms"), std::string::npos) << mode[1] << ": " << o.out;
    const auto j = nlohmann::json::parse(slurp(json));
    EXPECT_TRUE(j["strategy"].is_null()) << mode[1];
    EXPECT_TRUE(j["form"].is_null()) << mode[1];
    EXPECT_TRUE(j["compaction_ms"].is_null()) << mode[1];
    EXPECT_TRUE(j["strategies_ran"].empty()) << mode[1];
    EXPECT_EQ(j["strategy_asked"], "redzone") << mode[1];
    EXPECT_TRUE(j["sort"].is_null()) << mode[1];  // no reordering: the sort does not apply
  }
}

// A glTF renders alone (.gltf and .glb) as a bare OBJ does; a broken one is one line.
TEST_F(Cli, GltfRendersAloneAndBadGltfIsOneLine) {
  for (const char* name : {"box.gltf", "box.glb"}) {
    const fs::path png = dir_ / (std::string(name) + ".png");
    const outcome o = run(with({"render", (scenes_dir / "gltf" / name).string(), "--out", png.string()}, tiny));
    EXPECT_EQ(o.rc, 0) << name << ": " << o.err;
    EXPECT_TRUE(fs::exists(png)) << name;
  }
  expect_one_line_error({"render", file("bad.gltf", "{\"asset\": ").string()}, "bad.gltf");
  expect_one_line_error({"render", file("bad.glb", "glTF\x02\x00\x00\x00").string()}, "bad.glb");
  expect_one_line_error(
      {"render", file("past.gltf",
                      R"({"asset": {"version": "2.0"}, "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
                          "nodes": [{"mesh": 0}], "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3,
                          "type": "VEC3"}], "bufferViews": [{"buffer": 0, "byteLength": 36}],
                          "buffers": [{"byteLength": 4, "uri": "data:application/octet-stream;base64,AAAAAA=="}]})")
                  .string()},
      "bufferViews[0]");
}

}  // namespace

// One CLI: --dry-run after the subcommand as before it; an unknown subcommand named; the scene
// options of `render` on `bench render`; `bench all --backend auto` as documented; help with the
// real defaults.
TEST_F(Cli, OneCommandLineForEverySubcommand) {
  const std::string cornell = (scenes_dir / "cornell-box" / "cornell-box.toml").string();
  EXPECT_EQ(run({"bench", "compaction", "--n", "4096", "--dry-run"}).rc, 0);
  EXPECT_EQ(run({"render", cornell, "--spp", "2", "--dry-run"}).rc, 0);
  EXPECT_EQ(run({"bench", "render", cornell, "--width", "32", "--height", "24", "--spp", "2", "--dry-run"}).rc, 0);
  EXPECT_EQ(run({"bench", "trace", cornell, "--width", "32", "--spp", "2", "--dry-run"}).rc, 0);
  EXPECT_EQ(run({"bench", "sort", "--backend", "auto", "--dry-run"}).rc, 0);
  const outcome plan = run({"bench", "all", "--backend", "auto", "--plan", "--smoke", "--out", (dir_ / "all").string()});
  EXPECT_EQ(plan.rc, 0) << plan.err;
  // Without --out: a fresh folder, never the committed bench/results/<device>/.
  const outcome fresh = run({"bench", "all", "--backend", "auto", "--plan", "--smoke"}, dir_);
  EXPECT_EQ(fresh.rc, 0) << fresh.err;
  EXPECT_NE(fresh.out.find("into out/bench-"), std::string::npos) << fresh.out;
  EXPECT_EQ(fresh.out.find("bench/results"), std::string::npos) << fresh.out;

  expect_one_line_error({"frobnicate"}, "unknown subcommand 'frobnicate' of 'sieve'; subcommands: render");
  expect_one_line_error({"bench", "frobnicate"}, "unknown subcommand 'frobnicate' of 'sieve bench'");
  EXPECT_EQ(run({"frobnicate"}).rc, 2);
  expect_one_line_error({"bench", "sort", "--backend", "cpu"}, "cuda only");

  const outcome help = run({"bench", "compaction", "--help"});
  EXPECT_NE(help.out.find("10 (--quick: 5)"), std::string::npos) << help.out;
  const outcome render_help = run({"bench", "render", "--help"});
  EXPECT_NE(render_help.out.find("--width"), std::string::npos) << render_help.out;
}

// bench render renders at the size and samples asked, as render does.
TEST_F(Cli, BenchRenderTakesTheSceneOptions) {
  const std::string cornell = (scenes_dir / "cornell-box" / "cornell-box.toml").string();
  const outcome o = run({"bench", "render", cornell, "--backend", "cpu", "--width", "32", "--height", "24", "--spp",
                         "2", "--strategy", "auto,std", "--repeats", "1", "--profile-stages", "off"});
  ASSERT_EQ(o.rc, 0) << o.err;
  EXPECT_NE(o.out.find("32 x 24, 2 spp"), std::string::npos) << o.out;
}

// A strategy the backend cannot run: the strategies it can (and which are CUDA-only), and where the
// name came from: the flag, --set, or the scene's TOML key.
TEST_F(Cli, StrategyErrorsNameTheChoicesAndTheSource) {
  const std::string cornell = (scenes_dir / "cornell-box" / "cornell-box.toml").string();
  const std::vector<std::string> cpu = {"render", cornell, "--backend", "cpu", "--quiet"};
  expect_one_line_error(with(cpu, {"--strategy", "space"}), "runs on cuda only");
  expect_one_line_error(with(cpu, {"--strategy", "space"}), "redzone");
  expect_one_line_error(with(cpu, {"--strategy", "space"}), "(cuda only: ");
  expect_one_line_error(with(cpu, {"--strategy", "space"}), "(the name from --strategy)");
  expect_one_line_error(with(cpu, {"--set", "compaction.strategy=\"nope\""}),
                        "unknown strategy 'nope'; on cpu use one of: auto");
  expect_one_line_error(with(cpu, {"--set", "compaction.strategy=\"nope\""}), "(the name from --set compaction.strategy)");
  std::string text = slurp(cornell);
  const auto at = text.find("strategy = \"auto\"");
  ASSERT_NE(at, std::string::npos) << "the Cornell box names its [compaction] strategy";
  text.replace(at, 17, "strategy = \"cub\"");
  const fs::path named = file("named.toml", text);
  fs::copy(fs::path(cornell).parent_path() / "cornell-box.obj", dir_ / "cornell-box.obj");
  fs::copy(fs::path(cornell).parent_path() / "cornell-box.mtl", dir_ / "cornell-box.mtl");
  expect_one_line_error({"render", named.string(), "--backend", "cpu", "--quiet"},
                        "(the name from compaction.strategy in " + named.string() + ")");
  expect_one_line_error(with(cpu, {"--strategy", "append"}), "--queue append");
}
