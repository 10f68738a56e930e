// What every benchmark shares: statistics over repeated runs, the machine and build a result came
// from, the command line, and writing CSV / JSON / an aligned table.
#pragma once

#include <sieve/compaction/error.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace sieve::report {

struct stats {
  double median = 0, min = 0, max = 0;
};
stats summarize(std::vector<double> samples);

// CPU model, hardware threads, oneTBB's concurrency, OS; GPU name, driver and clocks when CUDA runs.
nlohmann::json machine_info(bool with_cuda);
// The device a machine_info names: its GPU when it has one, else its CPU.
std::string device_of(const nlohmann::json& machine);
// Version, commit (and whether the tree had changes not committed), build type, compilers, the
// command line, and the time (UTC).
nlohmann::json run_info(const std::string& command_line);
// "sieve 0.2.0 (commit 1c7e53e0f2a4)": what `sieve --version` prints.
std::string version_line();
// A short name for the results folder: "h100-sxm", "cpu-<model>", ...
std::string device_slug(bool cuda);

// The data the command reads besides its arguments: the shipped scenes and bench/report.py. Found in
// $SIEVE_DATA_DIR when set, else in the first share/sieve in the executable's folder or up to two
// folders above it (installed: <prefix>/share/sieve; build tree: <build>/share/sieve, links into the
// source tree). Paths are canonical (links resolved). Throws sieve::error naming where it looked.
struct data_paths {
  std::filesystem::path scenes, report_script;
};
data_paths find_data();

// A compaction strategy as asked and as it ran: "billeter", or "auto -> billeter" (several when
// `auto` picked differently for different sizes: "auto -> atomic, space").
std::string strategy_shown(const std::string& asked, const std::vector<std::string>& ran);

// `s` with its control characters (bytes below 0x20, and 0x7f) written as \xNN: text from a user's
// file reaches the terminal as text, never as a line break or an escape sequence.
std::string printable(std::string_view s);

// `s` quoted for a POSIX shell where it needs to be (plain words stay as they are).
std::string shell_quote(const std::string& s);
// A number as a command line takes it back exactly: integers as integers, other values in the
// shortest form that reads back to the same double (0.02, 1e-05; never 1.04858e+06 for 1048576).
std::string exact_number(double x);

// A table of strings, printed with aligned columns; also written as CSV.
class table {
 public:
  explicit table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& out) const;
  std::string csv() const;  // the header and rows, comma-separated (RFC 4180: a field with a comma quoted)
  const std::vector<std::string>& header() const { return header_; }
  const std::vector<std::vector<std::string>>& rows() const { return rows_; }

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Writes `text` to path through a temporary file and a rename, so a reader never sees half a file.
void write_file(const std::string& path, const std::string& text);
// A JSON document as text with a final newline; invalid UTF-8 (a path or argument in another
// encoding) replaced by U+FFFD rather than failing the report.
std::string json_text(const nlohmann::json& j, int indent);

std::string fixed(double x, int digits);

}  // namespace sieve::report
