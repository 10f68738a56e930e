#include "crossover.hpp"

#include <cmath>
#include <limits>
#include <string>

namespace sieve::detail {
namespace {

struct row {
  std::string_view device, backend, form;
  unsigned item_bytes;
  unsigned long long n;
  double fraction;  // -1: any (flags and masks)
  std::string_view ranking;  // comma-separated, fastest first
};

constexpr row rows[] = {
#include "crossover_tables.inc"
    {"", "", "", 0, 0, 0, ""}  // the end (keeps the array non-empty)
};

}  // namespace

std::string_view crossover_pick(backend b, std::string_view device, form f, std::size_t n, double fraction,
                                std::size_t item_bytes, const std::function<bool(std::string_view)>& fits) {
  const std::string_view backend_name = b == backend::cpu ? "cpu" : "cuda";
  std::string_view table;  // the device whose rows are used
  for (const row& r : rows)
    if (r.backend == backend_name && (table.empty() || r.device == device)) {
      table = r.device;
      if (r.device == device) break;
    }
  if (table.empty()) return {};
  const row* best = nullptr;
  double best_distance = std::numeric_limits<double>::infinity();
  const double log_n = std::log2(static_cast<double>(n ? n : 1));
  const double log_bytes = std::log2(static_cast<double>(item_bytes ? item_bytes : 1));
  for (const row& r : rows) {
    if (r.backend != backend_name || r.device != table || r.form != short_name(f)) continue;
    double d = std::fabs(std::log2(static_cast<double>(r.n)) - log_n) +
               std::fabs(std::log2(static_cast<double>(r.item_bytes)) - log_bytes);
    if (r.fraction >= 0) d += 10 * std::fabs(r.fraction - fraction);  // k/n weighs like a few doublings of n
    if (d < best_distance) {
      best_distance = d;
      best = &r;
    }
  }
  if (!best) return {};
  std::string_view rest = best->ranking;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view name = rest.substr(0, comma);
    if (fits(name)) return name;
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  return {};
}

}  // namespace sieve::detail
