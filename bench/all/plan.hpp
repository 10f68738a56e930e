// `sieve bench all`'s plan: the steps of a run (one suite's call, or one image) for its mode and
// backend, each with its expected time, its files and the `sieve` command that repeats it. plan.cpp
// holds the suites' planners, all.cpp runs the steps.
#pragma once

#include "all.hpp"

#include <report.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace sieve::bench::all_steps {

namespace fs = std::filesystem;

enum class mode { smoke, quick, full };

inline const char* mode_name(mode m) { return m == mode::smoke ? "smoke" : m == mode::quick ? "quick" : "full"; }

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
  report::data_paths data;  // the shipped scenes and bench/report.py
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

// Every step of the run, in the order they run.
std::vector<step> plan(const context& c);

}  // namespace sieve::bench::all_steps
