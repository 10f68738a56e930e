// One schema for a benchmark's result rows: each column is named once, with its header in the
// printed table, its header in the CSV and its key in the JSON (any of them empty: the column is not
// in that output), and one function that gives its three forms for a row (the table's short text,
// the CSV's exact text, the JSON's value). Adding a row adds it to all three outputs. A benchmark's
// --csv and --json files (result_files) are written from one such schema.
#pragma once

#include "output_files.hpp"
#include "report.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace sieve::report {

struct cell {
  std::string table, csv;
  nlohmann::json json;  // omitted(): this row's object leaves the key out
};

// A JSON value that leaves its key out of the row (a column that means nothing for that row, as
// Embree's ratio for a GPU row).
inline nlohmann::json omitted() { return nlohmann::json(nlohmann::json::value_t::discarded); }

// The cells the benchmarks share.
// The same text in all three outputs.
inline cell text_cell(const std::string& s) { return {s, s, s}; }
// A count: its decimal digits, the JSON's integer.
template <class Int>
cell count_cell(Int n) {
  return {std::to_string(n), std::to_string(n), n};
}
// A time in ms: 3 decimals in the table ("-" for a point that failed), 5 in the CSV, the number.
inline cell ms_cell(double ms, bool ok) { return {ok ? fixed(ms, 3) : "-", fixed(ms, 5), ms}; }
// Validation: yes / NO, 1 / 0, true / false.
inline cell validated_cell(bool ok) { return {ok ? "yes" : "NO", ok ? "1" : "0", ok}; }
// An error message (not printed in the table: the run says it on stderr); in the CSV one field
// (commas made semicolons).
inline cell error_cell(const std::string& e) {
  std::string field = e;
  std::replace(field.begin(), field.end(), ',', ';');
  return {"", field, e};
}

template <class Row>
struct field {
  std::string table, csv, json;  // headers and key; empty: not in that output
  std::function<cell(const Row&)> value;
};

template <class Row>
class row_schema {
 public:
  explicit row_schema(std::vector<field<Row>> fields)
      : fields_(std::move(fields)), printed_(headers(&field<Row>::table)), csv_(headers(&field<Row>::csv)) {}

  void add(const Row& r) {
    std::vector<std::string> printed, csv;
    nlohmann::json j = nlohmann::json::object();
    for (const auto& c : fields_) {
      cell v = c.value(r);
      if (!c.table.empty()) printed.push_back(std::move(v.table));
      if (!c.csv.empty()) csv.push_back(std::move(v.csv));
      if (!c.json.empty() && !v.json.is_discarded()) j[c.json] = std::move(v.json);
    }
    printed_.add(std::move(printed));
    csv_.add(std::move(csv));
    json_.push_back(std::move(j));
  }

  const table& printed() const { return printed_; }
  const table& csv() const { return csv_; }
  const nlohmann::json& json() const { return json_; }

 private:
  std::vector<std::string> headers(std::string field<Row>::*which) const {
    std::vector<std::string> out;
    for (const auto& c : fields_)
      if (!(c.*which).empty()) out.push_back(c.*which);
    return out;
  }

  std::vector<field<Row>> fields_;
  table printed_, csv_;
  nlohmann::json json_ = nlohmann::json::array();
};

// A benchmark's result files, --csv and --json (empty: not written); every suite's args hold them.
struct result_files {
  std::string csv, json;

  // Registers them as outputs, named by their options (checked before the work).
  void add_to(output_set& outputs) const {
    outputs.add_output(csv, "--csv");
    outputs.add_output(json, "--json");
  }
  // Stages the rows' CSV and, with --json, `doc` (the run's machine, command, ...) with the rows'
  // JSON as its "results"; outputs.commit() writes them.
  template <class Row>
  void stage(output_set& outputs, const row_schema<Row>& rows, nlohmann::json doc) const {
    outputs.stage(csv, rows.csv().csv());
    if (json.empty()) return;
    doc["results"] = rows.json();
    outputs.stage(json, json_text(doc, 1));
  }
};

}  // namespace sieve::report
