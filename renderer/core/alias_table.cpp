// Vose's construction of an alias table (alias_table.hpp).
#include "alias_table.hpp"

#include <cmath>
#include <cstdint>

namespace sieve::render {

std::vector<alias_entry> build_alias_table(const std::vector<double>& w) {
  const std::size_t n = w.size();
  std::vector<alias_entry> t(n);
  double total = 0;
  for (const double x : w) total += x;
  if (n == 0) return t;
  // Each slot holds 1 / n of the probability: outcome i's scaled weight p_i = n w_i / total fills
  // its own slot up to min(p_i, 1); the rest of a small slot goes to a large outcome.
  std::uint32_t heaviest = 0;
  for (std::size_t i = 1; i < n; ++i)
    if (w[i] > w[heaviest]) heaviest = static_cast<std::uint32_t>(i);
  std::vector<double> p(n);
  std::vector<std::uint32_t> small, large;
  for (std::size_t i = 0; i < n; ++i) {
    p[i] = total > 0 ? static_cast<double>(n) * w[i] / total : 1.0;
    (p[i] < 1.0 ? small : large).push_back(static_cast<std::uint32_t>(i));
  }
  while (!small.empty() && !large.empty()) {
    const std::uint32_t s = small.back(), l = large.back();
    small.pop_back();
    t[s].keep = static_cast<std::uint32_t>(std::llround(p[s] * alias_one));
    t[s].alias = l;
    p[l] -= 1.0 - p[s];
    if (p[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // Left over: slots whose share is 1 up to rounding. A zero weight keeps nothing (it is never
  // drawn): its slot goes to the heaviest outcome.
  for (const std::uint32_t i : large) t[i] = {alias_one, i};
  for (const std::uint32_t i : small) t[i] = w[i] > 0 || total <= 0 ? alias_entry{alias_one, i} : alias_entry{0, heaviest};
  return t;
}

}  // namespace sieve::render
