// One schema for a benchmark's result rows: each column is named once, with its header in the
// printed table, its header in the CSV and its key in the JSON (any of them empty: the column is not
// in that output), and one function that gives its three forms for a row (the table's short text,
// the CSV's exact text, the JSON's value). Adding a row adds it to all three outputs.
#pragma once

#include "report.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace sieve::report {

struct cell {
  std::string table, csv;
  nlohmann::json json;
};

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
      if (!c.json.empty()) j[c.json] = std::move(v.json);
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

}  // namespace sieve::report
