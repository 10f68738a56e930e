// The `sieve` command end to end: a test fixture that runs the binary in a fresh folder per test
// (stdout and stderr to files), for cli_test.cpp and cli_outputs_test.cpp.
#pragma once

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace sieve_cli_test {

namespace fs = std::filesystem;
const fs::path scenes_dir = SIEVE_SCENES_DIR;

struct outcome {
  int rc = -1;
  std::string out, err;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');  // parameterised tests: Name/0
    dir_ = fs::temp_directory_path() / ("sieve_cli_" + std::to_string(::getpid()) + "_" + name);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path file(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }

  // Starts `sieve args...` with stdout and stderr to files (in `cwd`, default the test's folder
  // too; stdout to `out` where given, an existing file such as /dev/full); returns its pid.
  pid_t start(const std::vector<std::string>& args, const fs::path& cwd = {}, const fs::path& out = {}) const {
    std::vector<std::string> all{SIEVE_BINARY};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (out.empty()) posix_spawn_file_actions_addopen(&fa, 1, (dir_ / "stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    else posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, (dir_ / "stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
    pid_t pid = -1;
    EXPECT_EQ(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    return pid;
  }
  // Waits (up to 60 s) until `pid` has a handler for `sig` (its /proc status lists the signal as
  // caught), so a test signals a process that is past its start-up, however slow the machine is
  // (loading the shared libraries alone can take seconds on a loaded one). False: it never did.
  static bool wait_for_handler(pid_t pid, int sig) {
    for (int i = 0; i < 6000; ++i) {
      std::ifstream status("/proc/" + std::to_string(pid) + "/status");
      std::string line;
      while (std::getline(status, line)) {
        if (line.rfind("SigCgt:", 0) == 0 && (std::stoull(line.substr(7), nullptr, 16) >> (sig - 1) & 1)) return true;
      }
      if (!status.eof() && !status.good()) return false;
      ::usleep(10000);
    }
    return false;
  }

  outcome finish(pid_t pid) const {
    int status = 0;
    waitpid(pid, &status, 0);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), slurp(dir_ / "stdout"),
            slurp(dir_ / "stderr")};
  }
  outcome run(const std::vector<std::string>& args, const fs::path& cwd = {}) const { return finish(start(args, cwd)); }

  // One line on stderr, starting "sieve: " and holding `needle`; a non-zero exit.
  void expect_one_line_error(const std::vector<std::string>& args, const std::string& needle) const {
    const outcome o = run(args);
    EXPECT_NE(o.rc, 0);
    EXPECT_EQ(o.err.rfind("sieve: ", 0), 0U) << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    EXPECT_NE(o.err.find(needle), std::string::npos) << "expected '" << needle << "' in: " << o.err;
  }

  fs::path dir_;
};

// Waits until inotify descriptor `watch` (IN_CREATE on an output folder) sees a temporary output
// (*.tmp-*) appear: true; false when the process `pid` ended first (left to be reaped) or `limit` passed.
inline bool temporary_appears(int watch, pid_t pid, std::chrono::seconds limit = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{watch, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) {
      siginfo_t info{};
      if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid)
        return false;
      continue;
    }
    alignas(inotify_event) char buf[4096];
    const ssize_t n = ::read(watch, buf, sizeof buf);
    for (ssize_t i = 0; i < n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(buf + i);
      if (e->len && std::string(e->name).find(".tmp-") != std::string::npos) return true;
      i += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
    }
  }
  return false;
}

// A render small enough for any test: 16 x 12 pixels, 2 samples, no table.
const std::vector<std::string> tiny = {"--set", "film.width=16", "--set", "film.height=12", "--spp", "2", "--quiet"};

inline std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace sieve_cli_test
