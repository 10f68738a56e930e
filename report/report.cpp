#include "report.hpp"

#include "build_info.hpp"

#include "output_files.hpp"

#include <sieve/compaction/cuda.hpp>
#include <sieve/compaction/error.hpp>
#include <sieve/version.hpp>

#include <tbb/info.h>
#include <tbb/task_arena.h>

#include <sys/utsname.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <thread>

namespace sieve::report {

stats summarize(std::vector<double> s) {
  if (s.empty()) return {};
  std::sort(s.begin(), s.end());
  const std::size_t h = s.size() / 2;
  const double median = s.size() % 2 ? s[h] : 0.5 * (s[h - 1] + s[h]);
  return {median, s.front(), s.back()};
}

namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  return "unknown CPU";
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string slugify(std::string s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

}  // namespace

nlohmann::json machine_info(bool with_cuda) {
  utsname u{};
  uname(&u);
  nlohmann::json m = {{"cpu", cpu_model()},
                      {"hardware_threads", std::thread::hardware_concurrency()},
                      {"tbb_threads", tbb::this_task_arena::max_concurrency()},
                      {"os", std::string(u.sysname) + " " + u.release}};
  if (with_cuda) m["gpu"] = cuda::device_description();
  return m;
}

std::string device_of(const nlohmann::json& machine) {
  return machine.contains("gpu") ? machine.value("gpu", "") : machine.value("cpu", "");
}

nlohmann::json run_info(const std::string& command_line) {
  return {{"version", SIEVE_VERSION_STRING},
          {"commit", build::commit},
          {"local_changes", build::local_changes},
          {"build_type", build::type},
          {"compiler", build::compiler},
          {"cuda_compiler", build::cuda_compiler},
          {"command", command_line},
          {"date", utc_now()}};
}

std::string strategy_shown(const std::string& asked, const std::vector<std::string>& ran) {
  std::string names;
  for (const auto& r : ran) names += (names.empty() ? "" : ", ") + r;
  return names.empty() || names == asked ? asked : asked + " -> " + names;
}

std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      constexpr char hex[] = "0123456789abcdef";
      out += {'\\', 'x', hex[c >> 4], hex[c & 15]};
    } else {
      out += ch;
    }
  }
  return out;
}

std::string shell_quote(const std::string& s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_./:=,+@%^-", c);
  });
  if (plain) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string exact_number(double x) {
  if (std::isfinite(x) && x == std::nearbyint(x) && std::fabs(x) < 9.007199254740992e15)
    return std::to_string(static_cast<long long>(x));
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);  // shortest round-trip form
  return std::string(buf, r.ptr);
}

data_paths find_data() {
  namespace fs = std::filesystem;
  const auto complete = [](const fs::path& d) {
    return fs::is_directory(d / "scenes") && fs::is_regular_file(d / "bench" / "report.py");
  };
  const auto found = [](const fs::path& d) {
    return data_paths{fs::canonical(d / "scenes"), fs::canonical(d / "bench" / "report.py")};
  };
  if (const char* env = std::getenv("SIEVE_DATA_DIR"); env && *env) {
    if (!complete(env))
      throw error(std::string("SIEVE_DATA_DIR=") + env + ": no scenes/ and bench/report.py there");
    return found(env);
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  std::string looked;
  fs::path d = exe.parent_path();
  for (int up = 0; !ec && up <= 2; ++up, d = d.parent_path()) {
    const fs::path candidate = d / SIEVE_DATA_SUBDIR;
    if (complete(candidate)) return found(candidate);
    looked += (looked.empty() ? "" : ", ") + candidate.string();
  }
  throw error("the shipped scenes and bench/report.py were not found (looked in " +
              (looked.empty() ? std::string("nothing: /proc/self/exe unreadable") : looked) +
              "); set SIEVE_DATA_DIR to the folder that holds them");
}

std::string version_line() {
  return std::string("sieve ") + SIEVE_VERSION_STRING + " (commit " + build::commit +
         (build::local_changes ? ", with local changes" : "") + ")";
}

std::string device_slug(bool cuda) {
  if (cuda) {
    std::string d = cuda::device_description();
    d = d.substr(0, d.find(" ("));
    if (d.rfind("NVIDIA ", 0) == 0) d = d.substr(7);
    return slugify(d);
  }
  std::string m = cpu_model();
  for (const char* noise : {"(R)", "(TM)", "(tm)", "CPU", "Processor"})
    for (std::size_t p; (p = m.find(noise)) != std::string::npos;) m.erase(p, std::string(noise).size());
  const auto at = m.find('@');
  if (at != std::string::npos) m = m.substr(0, at);
  return "cpu-" + slugify(m);
}

void table::print(std::ostream& out) const {
  std::vector<std::size_t> width(header_.size());
  for (std::size_t c = 0; c < header_.size(); ++c) width[c] = header_[c].size();
  for (const auto& r : rows_)
    for (std::size_t c = 0; c < r.size() && c < width.size(); ++c) width[c] = std::max(width[c], r[c].size());
  auto line = [&](const std::vector<std::string>& r) {
    for (std::size_t c = 0; c < r.size(); ++c) {
      // Text left, numbers right.
      const bool number = !r[c].empty() && (std::isdigit(static_cast<unsigned char>(r[c][0])) || r[c][0] == '-');
      out << (c ? "  " : "") << (number ? std::right : std::left) << std::setw(static_cast<int>(width[c])) << r[c];
    }
    out << '\n';
  };
  line(header_);
  std::size_t total = 0;
  for (auto w : width) total += w + 2;
  out << std::string(total > 2 ? total - 2 : 0, '-') << '\n';
  for (const auto& r : rows_) line(r);
}

std::string table::csv() const {
  std::ostringstream s;
  // A field holding a comma, a quote or a line break is quoted, its quotes doubled (RFC 4180):
  // "auto -> atomic, space" stays one field.
  auto field = [&](const std::string& f) {
    if (f.find_first_of(",\"\r\n") == std::string::npos) {
      s << f;
      return;
    }
    s << '"';
    for (char c : f) s << (c == '"' ? "\"\"" : std::string(1, c));
    s << '"';
  };
  auto line = [&](const std::vector<std::string>& r) {
    for (std::size_t c = 0; c < r.size(); ++c) {
      if (c) s << ',';
      field(r[c]);
    }
    s << '\n';
  };
  line(header_);
  for (const auto& r : rows_) line(r);
  return s.str();
}

void write_file(const std::string& path, const std::string& text) { write_file_atomically(path, text); }

std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string fixed(double x, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << x;
  return s.str();
}

}  // namespace sieve::report
