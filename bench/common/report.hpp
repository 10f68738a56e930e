// What every benchmark shares: statistics over repeated runs, the machine and build a result came
// from, the command line, and writing CSV / JSON / an aligned table.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

namespace sieve::bench {

struct stats {
  double median = 0, min = 0, max = 0;
};
stats summarize(std::vector<double> samples);

// CPU model, hardware threads, oneTBB's concurrency, OS; GPU name, driver and clocks when CUDA runs.
nlohmann::json machine_info(bool with_cuda);
// Commit, build type, compilers, the command line, and the time (UTC).
nlohmann::json run_info(const std::string& command_line);
// A short name for the results folder: "h100-sxm", "cpu-<model>", ...
std::string device_slug(bool cuda);

// A table of strings, printed with aligned columns; also written as CSV.
class table {
 public:
  explicit table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& out) const;
  std::string csv() const;  // the header and rows, comma-separated
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

}  // namespace sieve::bench
