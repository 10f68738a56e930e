// The `sieve` command's outputs and signals (issue #13): the default image name comes from the scene
// file, never from the scene's `name`; outputs that are inputs, each other or special files are
// refused before the render; a full disk or a failed rename is an error naming the reason, the old
// file kept; a report with invalid UTF-8 is still written; a second Ctrl-C while writing leaves no
// temporary and the outputs all old or all new; Ctrl-C stops a large frame within a bounce.
#include "cli_support.hpp"

#include <nlohmann/json.hpp>

#include <poll.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <chrono>
#include <thread>

namespace {

using namespace sieve_cli_test;

bool temporaries_in(const fs::path& dir) {
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().filename().string().find(".tmp-") != std::string::npos) return true;
  return false;
}

// A copy of the Cornell box (TOML, OBJ, MTL) in the test's folder, to be (not) overwritten.
class Outputs : public Cli {
 protected:
  void SetUp() override {
    Cli::SetUp();
    for (const char* f : {"cornell-box.toml", "cornell-box.obj", "cornell-box.mtl"})
      fs::copy_file(scenes_dir / "cornell-box" / f, dir_ / f);
    scene_ = dir_ / "cornell-box.toml";
  }
  void TearDown() override {
    for (auto it = mounts_.rbegin(); it != mounts_.rend(); ++it) ::umount2(it->c_str(), MNT_DETACH);
    Cli::TearDown();
  }
  // Mounts a tmpfs of `bytes` at dir_/name; false where the test may not mount (not root, a container).
  bool small_disk(const std::string& name, std::size_t bytes) {
    fs::create_directories(dir_ / name);
    if (::mount("tmpfs", (dir_ / name).c_str(), "tmpfs", 0, ("size=" + std::to_string(bytes)).c_str()) != 0) return false;
    mounts_.push_back(dir_ / name);
    return true;
  }
  std::vector<std::string> render(const std::vector<std::string>& outputs) const {
    return with(with({"render", scene_.string()}, tiny), outputs);
  }

  fs::path scene_;
  std::vector<fs::path> mounts_;
};

// Case 1: `name` was the output path: an absolute name overwrote any file, ../ wrote outside the
// folder and a NUL cut the .png off.
TEST_F(Outputs, DefaultNameIsTheSceneFilesStemNotItsName) {
  const fs::path victim = file("victim.txt", "precious");
  fs::create_directories(dir_ / "work");
  const std::string text = slurp(scene_);
  for (const std::string& name : std::vector<std::string>{"\"" + victim.string() + "\\u0000\"", "\"../escaped/x\"", "\"" + victim.string() + "\""}) {
    std::ofstream(dir_ / "we ird$name.toml") << "name = " << name << "\n" << text.substr(text.find('\n', text.find("name =")));
    // the Cornell box's objects are relative to the scene file
    const outcome o = run(with({"render", (dir_ / "we ird$name.toml").string()}, tiny), dir_ / "work");
    EXPECT_EQ(o.rc, 0) << name << ": " << o.err;
    EXPECT_EQ(slurp(victim), "precious") << name;
    EXPECT_FALSE(fs::exists(dir_ / "escaped")) << name;
    EXPECT_GT(fs::file_size(dir_ / "work" / "we_ird_name.png"), 100U) << name;
    fs::remove(dir_ / "work" / "we_ird_name.png");
    EXPECT_TRUE(fs::is_empty(dir_ / "work")) << name;
  }
}

// Case 2: an output that is an input, however it is spelled, is refused before the render.
TEST_F(Outputs, AnOutputThatIsAnInputIsRefused) {
  fs::create_directories(dir_ / "sub");
  fs::create_hard_link(dir_ / "cornell-box.obj", dir_ / "hard.obj");
  fs::create_symlink(dir_ / "cornell-box.mtl", dir_ / "link.mtl");
  const std::string scene_text = slurp(scene_), obj = slurp(dir_ / "cornell-box.obj"), mtl = slurp(dir_ / "cornell-box.mtl");
  for (const auto& [option, path] : std::vector<std::pair<std::string, fs::path>>{
           {"--out", dir_ / "sub" / ".." / "cornell-box.toml"},
           {"--json", dir_ / "cornell-box.obj"},
           {"--exr", dir_ / "hard.obj"},
           {"--json", dir_ / "link.mtl"},
           {"--out", dir_ / "." / "cornell-box.mtl"}}) {
    expect_one_line_error(render({option, path.string()}), "a file this run reads");
  }
  // a mesh given alone, and its MTL
  // (A camera given: a bare model's framing note would be a second line.)
  expect_one_line_error({"render", (dir_ / "cornell-box.obj").string(), "--set", "camera.position=[278,273,-800]",
                         "--json", (dir_ / "cornell-box.mtl").string()},
                        "a file this run reads");
  EXPECT_EQ(slurp(scene_), scene_text);
  EXPECT_EQ(slurp(dir_ / "cornell-box.obj"), obj);
  EXPECT_EQ(slurp(dir_ / "cornell-box.mtl"), mtl);
}

// Case 2: outputs that are one file: refused, not the last one winning.
TEST_F(Outputs, OutputsThatAreOneFileAreRefused) {
  const std::string x = (dir_ / "x").string();
  expect_one_line_error(render({"--out", x, "--exr", x, "--json", x}), "the same file as --out");
  fs::create_directories(dir_ / "d");
  fs::create_symlink(dir_ / "d" / "y.png", dir_ / "y-link.png");  // not there yet
  file("d/y.png", "old");
  expect_one_line_error(render({"--out", (dir_ / "y-link.png").string(), "--exr", (dir_ / "d" / "y.png").string()}),
                        "the same file as --out");
  expect_one_line_error(render({"--out", (dir_ / "new" / "z.png").string(), "--json", (dir_ / "new" / ".." / "new" / "z.png").string()}),
                        "the same file as --out");
  EXPECT_FALSE(fs::exists(x));
  EXPECT_EQ(slurp(dir_ / "d" / "y.png"), "old");
  EXPECT_FALSE(fs::exists(dir_ / "new"));
}

// Case 4: a temporary renamed over a device or FIFO replaced the node with a regular file.
TEST_F(Outputs, SpecialFilesAreRefused) {
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0644), 0);
  expect_one_line_error(render({"--json", (dir_ / "fifo").string()}), "a FIFO");
  EXPECT_TRUE(fs::is_fifo(dir_ / "fifo"));
  expect_one_line_error(render({"--out", dir_.string()}), "--out");
  expect_one_line_error(render({"--json", (dir_ / "cornell-box.toml" / "r.json").string()}), "not a folder");
  if (::mknod((dir_ / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
    GTEST_SKIP() << "cannot create a character device here (not root): the FIFO case ran";
  expect_one_line_error(render({"--exr", (dir_ / "null").string()}), "a character device");
  EXPECT_TRUE(fs::is_character_file(dir_ / "null"));
}

// Case 3: the EXR writer's close was not checked: a full disk gave exit 0 and a 0-byte file.
TEST_F(Outputs, AFullDiskIsAnErrorAndKeepsTheOldFile) {
  if (!small_disk("full", 64 * 1024)) GTEST_SKIP() << "cannot mount a tmpfs here (needs root): " << std::strerror(errno);
  const fs::path exr = dir_ / "full" / "a.exr", png = dir_ / "full" / "a.png", json = dir_ / "full" / "a.json";
  const outcome first = run(render({"--exr", exr.string(), "--out", png.string(), "--json", json.string()}));
  ASSERT_EQ(first.rc, 0) << first.err;
  const std::string old_exr = slurp(exr), old_png = slurp(png), old_json = slurp(json);
  {
    std::ofstream fill(dir_ / "full" / "filler", std::ios::binary);
    const std::string block(4096, 'x');
    for (int i = 0; i < 64 && fill; ++i) fill.write(block.data(), block.size());
  }
  for (const auto& [option, path] : std::vector<std::pair<std::string, fs::path>>{{"--exr", exr}, {"--out", png}, {"--json", json}})
    expect_one_line_error(render({option, path.string()}), "No space left on device");
  EXPECT_EQ(slurp(exr), old_exr);
  EXPECT_EQ(slurp(png), old_png);
  EXPECT_EQ(slurp(json), old_json);
  EXPECT_FALSE(temporaries_in(dir_ / "full"));
}

// Case 9: a failed rename reported "Success" (the error code was reused).
TEST_F(Outputs, AFailedRenameNamesTheReason) {
  const fs::path json = file("r.json", "old"), over = file("over", "mounted");
  if (::mount(over.c_str(), json.c_str(), nullptr, MS_BIND, nullptr) != 0)
    GTEST_SKIP() << "cannot bind-mount here (needs root): " << std::strerror(errno);
  mounts_.push_back(json);
  const outcome o = run(render({"--json", json.string()}));
  EXPECT_NE(o.rc, 0);
  EXPECT_NE(o.err.find("r.json"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("busy"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("Success"), std::string::npos) << o.err;
  EXPECT_FALSE(temporaries_in(dir_));
}

// Case 8: a non-UTF-8 byte in an argument made the JSON writer throw after the render.
TEST_F(Outputs, InvalidUtf8IsReplacedNotFatal) {
  fs::create_directories(dir_ / "caf\xe9");
  const fs::path json = dir_ / "caf\xe9" / "r\xff.json";
  const outcome o = run(render({"--json", json.string(), "--set", "film.seed=1"}));
  ASSERT_EQ(o.rc, 0) << o.err;
  const std::string text = slurp(json);
  const auto j = nlohmann::json::parse(text);
  EXPECT_NE(j["run"]["command"].get<std::string>().find("\xEF\xBF\xBD"), std::string::npos);
  EXPECT_EQ(j["width"], 16);
}

// Case 8: bench outputs were checked only after the whole grid.
TEST_F(Outputs, BenchOutputsAreCheckedBeforeTheGrid) {
  const std::string x = (dir_ / "x").string();
  const outcome o = run({"bench", "compaction", "--backend", "cpu", "--n", "4096", "--csv", x, "--json", x});
  EXPECT_NE(o.rc, 0);
  EXPECT_NE(o.err.find("the same file as --csv"), std::string::npos) << o.err;
  EXPECT_EQ(o.out, "");  // nothing measured
  EXPECT_FALSE(fs::exists(x));
  const std::string obj = slurp(dir_ / "cornell-box.obj");
  for (const char* suite : {"render", "trace"}) {
    const outcome b = run({"bench", suite, scene_.string(), "--set", "film.width=8", "--set", "film.height=8", "--json",
                           (dir_ / "cornell-box.obj").string()});
    EXPECT_NE(b.rc, 0) << suite;
    EXPECT_NE(b.err.find("a file this run reads"), std::string::npos) << suite << ": " << b.err;
    EXPECT_EQ(b.out, "") << suite;
  }
  EXPECT_EQ(slurp(dir_ / "cornell-box.obj"), obj);
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0644), 0);
  const outcome fifo = run({"bench", "compaction", "--backend", "cpu", "--n", "4096", "--csv", (dir_ / "fifo").string()});
  EXPECT_NE(fifo.err.find("a FIFO"), std::string::npos) << fifo.err;
  EXPECT_TRUE(fs::is_fifo(dir_ / "fifo"));
  EXPECT_EQ(fifo.out, "");
}

// Case 9: a second Ctrl-C while the outputs are written left *.tmp-PID and a mix of old and new.
// The second signal is sent the moment the first temporary appears (inotify).
TEST_F(Outputs, ASecondCtrlCWhileWritingLeavesNoTemporaryAndNoMix) {
  const fs::path out = dir_ / "o";
  fs::create_directories(out);
  const fs::path png = out / "p.png", exr = out / "p.exr", json = out / "p.json";
  std::ofstream(png) << "old png";
  std::ofstream(exr) << "old exr";
  std::ofstream(json) << "old json";
  const int watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(watch, 0);
  ASSERT_GE(inotify_add_watch(watch, out.c_str(), IN_CREATE), 0);
  // A frame whose PNG and EXR take a while to encode and write.
  const pid_t pid = start({"render", scene_.string(), "--set", "film.width=1024", "--set", "film.height=1024", "--set",
                           "film.max_bounces=1", "--spp", "10000", "--quiet", "--out", png.string(), "--exr",
                           exr.string(), "--json", json.string()});
  EXPECT_TRUE(wait_for_handler(pid, SIGINT)) << "sieve never installed a SIGINT handler";
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ::kill(pid, SIGINT);
  const bool seen = temporary_appears(watch, pid);
  if (seen) ::kill(pid, SIGINT);
  ::close(watch);
  const outcome o = finish(pid);
  EXPECT_EQ(o.rc, 128 + SIGINT) << o.err;
  EXPECT_FALSE(temporaries_in(dir_));
  const bool old = slurp(png) == "old png", old_exr = slurp(exr) == "old exr", old_json = slurp(json) == "old json";
  EXPECT_EQ(old, old_exr);
  EXPECT_EQ(old, old_json);
  if (!old) {
    EXPECT_EQ(nlohmann::json::parse(slurp(json))["partial"], true);
  }
  if (!seen) std::cout << "note: the render wrote its outputs before a temporary was seen; no second signal sent\n";
}

// Case 9: Ctrl-C on a large frame waited for the whole sample pass (45 s seen): now the bounce in
// progress (the megakernel: a slice of paths). A frame of 4 chunks of 2^20 paths, each several
// bounces: a pass takes many seconds.
TEST_F(Outputs, CtrlCStopsALargeFrameWithinABounce) {
  for (const char* integrator : {"wavefront", "megakernel"}) {
    const fs::path json = dir_ / "big.json";
    // On the CPU, where a pass takes many seconds (a GPU renders this frame before the signal comes).
    const pid_t pid = start({"render", scene_.string(), "--backend", "cpu", "--integrator", integrator, "--set",
                             "film.width=2048", "--set", "film.height=2048", "--spp", "4", "--quiet", "--json",
                             json.string()});
    EXPECT_TRUE(wait_for_handler(pid, SIGINT)) << integrator << ": sieve never installed a SIGINT handler";
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    ::kill(pid, SIGINT);
    const auto t0 = std::chrono::steady_clock::now();
    const outcome o = finish(pid);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(o.rc, 128 + SIGINT) << integrator << ": " << o.err;
    // A bounce, not the pass (45 s before): 1.5 s seen alone, 2.9 s in the sanitizer build with the
    // two cores shared by another build.
    EXPECT_LT(seconds, 6.0) << integrator << ": from the signal to the exit";
    std::cout << integrator << ": exited " << seconds << " s after the signal\n";
    if (o.err.find("nothing was written") != std::string::npos) {  // not one sample of every pixel yet
      EXPECT_FALSE(fs::exists(json)) << integrator;
      continue;
    }
    const auto j = nlohmann::json::parse(slurp(json));
    EXPECT_EQ(j["partial"], true) << integrator;
    EXPECT_LT(j["samples_completed"].get<int>(), 4) << integrator;  // a fast CPU may finish a sample first
  }
}

}  // namespace
