// `mpirun -np N sieve render` end to end (CPU backend; built when CMake finds MPI): the ranks take
// the film's tiles on demand and the image of 1, 2 and 3 ranks is the one-process image bit for
// bit, also with a rank slowed on purpose (which then takes fewer tiles) and with more ranks than
// tiles; a rank that fails (a missing scene, another film) is named and the job exits non-zero
// with no output written; a stop on one rank stops all and the outputs hold what they completed.
#include <scene/load.hpp>
#include <run/render.hpp>
#include <app/pending.hpp>

#include <nlohmann/json.hpp>
#include <tinyexr.h>

#include <gtest/gtest.h>

#include <dirent.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <thread>

#include "cli_support.hpp"

namespace {

using namespace sieve_cli_test;
namespace sr = sieve::render;

const std::string scene_file = (scenes_dir / "cornell-box" / "cornell-mirror-glass.toml").string();
constexpr std::uint32_t width = 40, height = 30, spp = 7, seed = 9;

// mpirun as root needs its consent (CI containers run as root); more ranks than cores need
// --oversubscribe. Set here only, for the mpirun this test starts. In the sanitizer build the ranks
// run without LeakSanitizer: Open MPI leaves allocations of its plugins at MPI_Finalize and unloads
// them, so their stacks name no module a suppression could match; AddressSanitizer's and UBSan's
// other checks stay fatal, and the single-process tests check the same render code for leaks.
void allow_mpirun() {
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 1);
  const char* asan = std::getenv("ASAN_OPTIONS");
  setenv("ASAN_OPTIONS", ((asan && *asan ? std::string(asan) + ":" : std::string()) + "detect_leaks=0").c_str(), 1);
}

std::vector<std::string> render_args(const fs::path& dir, const std::string& name) {
  return {"render", scene_file, "--backend", "cpu", "--width", std::to_string(width), "--height", std::to_string(height),
          "--spp", std::to_string(spp), "--set", "film.seed=" + std::to_string(seed), "--quiet",
          "--out", (dir / (name + ".exr")).string(), "--json", (dir / (name + ".json")).string()};
}

std::vector<sr::vec3> read_exr(const fs::path& p) {
  float* rgba = nullptr;
  int w = 0, h = 0;
  const char* err = nullptr;
  if (LoadEXR(&rgba, &w, &h, p.c_str(), &err) != TINYEXR_SUCCESS) {
    ADD_FAILURE() << "cannot read " << p << ": " << (err ? err : "?");
    FreeEXRErrorMessage(err);
    return {};
  }
  std::vector<sr::vec3> out(static_cast<std::size_t>(w) * h);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = {rgba[4 * i], rgba[4 * i + 1], rgba[4 * i + 2]};
  std::free(rgba);
  return out;
}

class Mpi : public Cli {
 protected:
  // `mpirun -np n sieve args...`; more (`:`-separated) programs in `more` (MPMD).
  pid_t start_mpi(int n, const std::vector<std::string>& args, const std::vector<std::string>& more = {}) const {
    allow_mpirun();
    std::vector<std::string> all{SIEVE_MPIEXEC, "-np", std::to_string(n), SIEVE_BINARY};
    all.insert(all.end(), args.begin(), args.end());
    all.insert(all.end(), more.begin(), more.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, (dir_ / "stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, (dir_ / "stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = -1;
    EXPECT_EQ(posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    return pid;
  }
  outcome run_mpi(int n, const std::vector<std::string>& args, const std::vector<std::string>& more = {}) const {
    return finish(start_mpi(n, args, more));
  }
  // The plain render, then the job `name` of two ranks plus one whose takes last `delay_ms` longer,
  // all with the options `extra`; the job's report.
  nlohmann::json run_with_slow_rank(const std::string& name, const std::vector<std::string>& extra, int delay_ms) const {
    const outcome plain = run(render_args(dir_, "plain"));
    EXPECT_EQ(plain.rc, 0) << plain.err;
    std::vector<std::string> args = render_args(dir_, name), slow = render_args(dir_, name);
    args.insert(args.end(), extra.begin(), extra.end());
    slow.insert(slow.end(), extra.begin(), extra.end());
    slow.insert(slow.end(), {"--tile-delay-ms", std::to_string(delay_ms)});
    slow.insert(slow.begin(), {":", "-np", "1", SIEVE_BINARY});
    const outcome o = run_mpi(2, args, slow);
    EXPECT_EQ(o.rc, 0) << o.err;
    return o.rc == 0 ? nlohmann::json::parse(slurp(dir_ / (name + ".json"))) : nlohmann::json{};
  }
};

// The image and the report of `name`, and whether the image is the plain render's bit for bit.
void expect_plain_image(const fs::path& dir, const std::string& name) {
  const std::vector<sr::vec3> one = read_exr(dir / "plain.exr"), got = read_exr(dir / (name + ".exr"));
  ASSERT_EQ(one.size(), std::size_t{width} * height);
  ASSERT_EQ(got.size(), one.size());
  EXPECT_EQ(std::memcmp(got.data(), one.data(), got.size() * sizeof(sr::vec3)), 0) << name << ": not the plain render";
}

// Every rank's tiles, summed: every pixel once; the report's times present.
std::vector<std::uint32_t> tiles_per_rank(const nlohmann::json& j) {
  std::vector<std::uint32_t> tiles;
  std::uint64_t pixels = 0;
  for (const auto& r : j["ranks"]["per_rank"]) {
    tiles.push_back(r["tiles"].get<std::uint32_t>());
    pixels += r["pixels"].get<std::uint64_t>();
    EXPECT_EQ(r["backend"], "cpu");
    for (const char* t : {"setup_seconds", "render_seconds", "wait_seconds", "reduction_seconds"})
      EXPECT_GE(r[t].get<double>(), 0.0) << t;
  }
  EXPECT_EQ(pixels, std::uint64_t{width} * height);
  std::uint32_t all = 0;
  for (const std::uint32_t t : tiles) all += t;
  EXPECT_EQ(all, j["ranks"]["tiles"].get<std::uint32_t>());
  return tiles;
}

// Rank 0's tile receives: dropping the finished ones keeps every receive still under way with its
// buffer where MPI writes it (the same bytes at the same address), in order, also where the first
// entries are the ones still under way (an entry moved onto itself once freed its buffer).
TEST(MpiTilePost, KeepsThePendingReceivesBuffers) {
  struct incoming {
    std::vector<std::byte> bytes;
    int source = 0;
  };
  constexpr int done = -1;
  std::vector<int> requests = {10, 11, done, 13, done, done, 16};
  std::vector<incoming> items;
  std::vector<const std::byte*> where;
  for (int i = 0; i < 7; ++i) {
    items.push_back({std::vector<std::byte>(64, std::byte(i)), i});
    where.push_back(items.back().bytes.data());
  }
  sieve::app::keep_pending(requests, items, done);
  ASSERT_EQ(requests, (std::vector<int>{10, 11, 13, 16}));
  ASSERT_EQ(items.size(), 4u);
  const int kept[] = {0, 1, 3, 6};
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(items[k].source, kept[k]);
    ASSERT_EQ(items[k].bytes.size(), 64u) << "entry " << k;
    EXPECT_EQ(items[k].bytes.data(), where[static_cast<std::size_t>(kept[k])]) << "entry " << k << " lost its buffer";
    EXPECT_EQ(items[k].bytes[0], std::byte(kept[k]));
  }
  std::vector<int> none = {done, done};
  std::vector<incoming> two(2);
  sieve::app::keep_pending(none, two, done);
  EXPECT_TRUE(none.empty() && two.empty());
}

TEST_F(Mpi, RanksRenderTheOneProcessImage) {
  const outcome plain = run(render_args(dir_, "plain"));
  ASSERT_EQ(plain.rc, 0) << plain.err;
  const auto plain_json = nlohmann::json::parse(slurp(dir_ / "plain.json"));
  for (const int n : {1, 2, 3}) {
    SCOPED_TRACE(std::to_string(n) + " ranks");
    const std::string name = "ranks" + std::to_string(n);
    const outcome o = run_mpi(n, render_args(dir_, name));
    ASSERT_EQ(o.rc, 0) << o.err;
    expect_plain_image(dir_, name);
    const auto j = nlohmann::json::parse(slurp(dir_ / (name + ".json")));
    EXPECT_EQ(j["ranks"]["count"], n);
    EXPECT_EQ(j["samples_completed"], spp);
    EXPECT_EQ(j["partial"], false);
    tiles_per_rank(j);
    EXPECT_GE(j["ranks"]["tiles"].get<std::uint32_t>(), 8U * n);
    EXPECT_GT(j["ranks"]["efficiency"].get<double>(), 0.0);
    EXPECT_GT(j["ranks"]["efficiency_rendering"].get<double>(), 0.0);
    EXPECT_GE(j["ranks"]["reduction_seconds"].get<double>(), 0.0);
    EXPECT_GE(j["time"]["total_seconds"].get<double>(), j["time"]["render_seconds"].get<double>());
    EXPECT_GE(j["time"]["reduction_seconds"].get<double>(), 0.0);  // the ranks' figures, under mpirun only
    EXPECT_GE(j["time"]["wait_seconds"].get<double>(), 0.0);
    EXPECT_EQ(j["rays"], plain_json["rays"]);  // every path traced once, by one rank
    EXPECT_EQ(j["wave_launch"], "cpu");
  }
}

// A rank slowed on purpose (each of its tiles lasts 300 ms longer) takes fewer tiles than the
// others, and the image is still the plain render's bit for bit: which rank rendered a tile does
// not change its bits.
TEST_F(Mpi, ASlowRankTakesFewerTilesAndTheImageKeepsItsBits) {
  const auto j = run_with_slow_rank("slow", {"--tile-pixels", "20"}, 300);
  ASSERT_FALSE(j.is_null());
  expect_plain_image(dir_, "slow");
  EXPECT_EQ(j["ranks"]["tiles"], width * height / 20);
  const std::vector<std::uint32_t> tiles = tiles_per_rank(j);
  ASSERT_EQ(tiles.size(), 3U);
  // Whichever fast rank takes more (each builds its tree inside the render, and a loaded machine may
  // let one of them take nearly all), the slow rank takes the fewest, and fewer than the fast ones' mean.
  EXPECT_LE(tiles[2], std::min(tiles[0], tiles[1])) << "the slow rank took more tiles than a fast one";
  EXPECT_LT(2 * tiles[2], tiles[0] + tiles[1]) << "the slow rank took as many tiles as the fast ones";
}

// Takes of several tiles (--tile-units), sized to each rank's speed, with one rank slowed on purpose:
// the image is still the plain render's bit for bit (the tiles came to rank 0 as each ended), every
// pixel once, and the slow rank renders fewer pixels.
TEST_F(Mpi, TakesSizedToEachRanksSpeedKeepTheBits) {
  const auto j = run_with_slow_rank("takes", {"--tile-pixels", "40", "--tile-units", "4"}, 200);
  ASSERT_FALSE(j.is_null());
  expect_plain_image(dir_, "takes");
  EXPECT_EQ(j["ranks"]["tile_units"], 4);
  EXPECT_EQ(j["ranks"]["tile_pixels"], 10);
  EXPECT_EQ(j["ranks"]["tiles"], width * height / 10);
  std::vector<std::uint64_t> pixels;
  std::uint64_t all = 0;
  for (const auto& r : j["ranks"]["per_rank"]) {
    pixels.push_back(r["pixels"].get<std::uint64_t>());
    all += pixels.back();
  }
  EXPECT_EQ(all, std::uint64_t{width} * height);
  ASSERT_EQ(pixels.size(), 3U);
  // Whichever fast rank takes more (a loaded machine may let one of them take nearly all), the slow
  // rank takes the fewest, and fewer than the fast ones' mean.
  EXPECT_LE(pixels[2], std::min(pixels[0], pixels[1])) << "the slow rank rendered more than a fast one";
  EXPECT_LT(2 * pixels[2], pixels[0] + pixels[1]) << "the slow rank rendered as many pixels as the fast ones";
}

// The BVH built by rank 0 and sent to the others, or built by every rank: the same image, the
// plain render's bit for bit.
TEST_F(Mpi, TheTreeSharedOrBuiltByEveryRankGivesThePlainImage) {
  const outcome plain = run(render_args(dir_, "plain"));
  ASSERT_EQ(plain.rc, 0) << plain.err;
  for (const char* tree : {"shared", "each"}) {
    SCOPED_TRACE(tree);
    std::vector<std::string> args = render_args(dir_, std::string("tree-") + tree);
    args.insert(args.end(), {"--tree", tree});
    const outcome o = run_mpi(3, args);
    ASSERT_EQ(o.rc, 0) << o.err;
    expect_plain_image(dir_, std::string("tree-") + tree);
    const auto j = nlohmann::json::parse(slurp(dir_ / (std::string("tree-") + tree + ".json")));
    EXPECT_EQ(j["rays"], nlohmann::json::parse(slurp(dir_ / "plain.json"))["rays"]);
  }
  // Every rank builds its own tree with the builder asked for (PLOC: on its GPU where it renders on
  // one, else its CPU run, as here): the same image.
  std::vector<std::string> args = render_args(dir_, "tree-ploc");
  args.insert(args.end(), {"--build", "ploc"});
  const outcome o = run_mpi(3, args);
  ASSERT_EQ(o.rc, 0) << o.err;
  expect_plain_image(dir_, "tree-ploc");
  EXPECT_EQ(nlohmann::json::parse(slurp(dir_ / "tree-ploc.json"))["bvh_builder"], "ploc (CPU)");
}

// A profiled split render's loop times are the ranks' summed: every path generated and extended
// once, by one rank, each wave's loops counted once.
TEST_F(Mpi, RanksLoopTimesAddUp) {
  std::vector<std::string> args = render_args(dir_, "loops");
  args.push_back("--profile-stages");
  const outcome o = run_mpi(2, args);
  ASSERT_EQ(o.rc, 0) << o.err;
  const auto j = nlohmann::json::parse(slurp(dir_ / "loops.json"));
  auto loop = [&](const std::string& name) {
    for (const auto& l : j["loops"])
      if (l["name"] == name) return l;
    ADD_FAILURE() << "no loop " << name << " in " << j["loops"].dump();
    return nlohmann::json{{"launches", 0}, {"items", 0}};
  };
  EXPECT_EQ(loop("generate")["items"].get<std::uint64_t>(), std::uint64_t{width} * height * spp);
  EXPECT_EQ(loop("extend")["items"], j["rays"]["extension"]);
  EXPECT_EQ(loop("wave.begin")["launches"], j["waves"]);
  EXPECT_GE(j["waves"].get<std::uint64_t>(), 2U);
}

// More ranks than tiles: a rank that gets no tile renders nothing and the image is still the whole
// film's (which ranks get the two tiles depends on when each is ready: one may take both).
TEST_F(Mpi, MoreRanksThanTiles) {
  const outcome plain = run(render_args(dir_, "plain"));
  ASSERT_EQ(plain.rc, 0) << plain.err;
  std::vector<std::string> args = render_args(dir_, "few");
  args.insert(args.end(), {"--tile-pixels", std::to_string(width * height / 2)});
  const outcome o = run_mpi(3, args);
  ASSERT_EQ(o.rc, 0) << o.err;
  expect_plain_image(dir_, "few");
  const auto j = nlohmann::json::parse(slurp(dir_ / "few.json"));
  EXPECT_EQ(j["samples_completed"], spp);
  EXPECT_EQ(j["partial"], false);
  const std::vector<std::uint32_t> tiles = tiles_per_rank(j);
  EXPECT_GE(std::count(tiles.begin(), tiles.end(), 0U), 1);  // two tiles, three ranks
  EXPECT_EQ(std::accumulate(tiles.begin(), tiles.end(), 0U), 2U);
}

// A rank that fails before rendering is named, the job exits non-zero, rank 0 writes nothing.
TEST_F(Mpi, AFailingRankIsNamedAndTheJobFails) {
  std::vector<std::string> missing = render_args(dir_, "x");
  missing[1] = (dir_ / "no-such-scene.toml").string();
  missing.insert(missing.begin(), {":", "-np", "1", SIEVE_BINARY});
  const outcome o = run_mpi(1, render_args(dir_, "good"), missing);
  EXPECT_NE(o.rc, 0);
  EXPECT_NE(o.err.find("sieve: rank 1: "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("no-such-scene.toml"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(dir_ / "good.exr"));
  EXPECT_FALSE(fs::exists(dir_ / "good.json"));

  // Every rank must render the same film.
  std::vector<std::string> other = render_args(dir_, "y");
  other[9] = std::to_string(spp + 1);  // --spp
  other.insert(other.begin(), {":", "-np", "1", SIEVE_BINARY});
  const outcome o2 = run_mpi(1, render_args(dir_, "good"), other);
  EXPECT_NE(o2.rc, 0);
  EXPECT_NE(o2.err.find("sieve: rank 1: renders another film than rank 0"), std::string::npos) << o2.err;
  EXPECT_FALSE(fs::exists(dir_ / "good.exr"));
}

std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  DIR* d = opendir("/proc");
  while (dirent* e = d ? readdir(d) : nullptr) {
    const pid_t pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    const std::string stat = slurp(fs::path("/proc") / e->d_name / "stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) out.push_back(pid);
  }
  if (d) closedir(d);
  return out;
}

// Ctrl-C on one rank (SIGINT to its process alone) stops every rank; rank 0 writes the samples all
// ranks completed, the report marked partial.
TEST_F(Mpi, AStopOnOneRankStopsAllAndWritesTheirSamples) {
  const fs::path exr = dir_ / "p.exr", json = dir_ / "p.json";
  // One bounce at 64 x 64: a wave of 256 samples takes about a second; 100000 spp would take hours.
  const pid_t job = start_mpi(2, {"render", (scenes_dir / "cornell-box" / "cornell-box.toml").string(), "--backend", "cpu",
                                  "--set", "film.width=64", "--set", "film.height=64", "--set", "film.max_bounces=1",
                                  "--spp", "100000", "--quiet", "--exr", exr.string(), "--json", json.string()});
  std::vector<pid_t> ranks;
  for (int i = 0; i < 100 && ranks.size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ranks = children_of(job);
  }
  ASSERT_EQ(ranks.size(), 2U);
  std::this_thread::sleep_for(std::chrono::milliseconds(4000));
  ::kill(std::max(ranks[0], ranks[1]), SIGINT);  // one rank only
  const outcome o = finish(job);
  EXPECT_NE(o.rc, 0);
  EXPECT_NE(o.err.find("interrupted after"), std::string::npos) << o.err;
  ASSERT_TRUE(fs::exists(exr)) << o.err;
  const auto j = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(j["partial"], true);
  EXPECT_LT(j["samples_completed"].get<std::uint32_t>(), 100000U);
  // The ranks stopped with tiles left (the job ended: the stop reached both).
  std::uint32_t taken = 0;
  for (const auto& r : j["ranks"]["per_rank"]) taken += r["tiles"].get<std::uint32_t>();
  EXPECT_LT(taken, j["ranks"]["tiles"].get<std::uint32_t>());
}

}  // namespace
