#include "all.hpp"
#include "plan.hpp"

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

using namespace all_steps;

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
