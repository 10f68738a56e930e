// Names a user typed, compared with the names known: the suggestion an error message adds for a
// mistyped strategy, mode, subcommand or option.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sieve {

// The edit distance of a and b (insertions, deletions, substitutions and swaps of two neighbours
// each count one; case ignored): how far a mistyped name is from a known one.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  std::vector<std::size_t> prev2(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const bool same = lower(a[i - 1]) == lower(b[j - 1]);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    prev2.swap(prev);
    prev.swap(cur);
  }
  return prev[b.size()];
}

// " (did you mean 'x'?)" for the known name nearest to `word` when it is near enough to be a typo
// (at most 2 edits, and fewer than half the letters of the longer); "" otherwise.
template <class Names>
std::string did_you_mean(std::string_view word, const Names& names, std::string_view quote = "'") {
  std::string best;
  std::size_t best_d = 3;
  for (const auto& n : names) {
    const std::string_view name(n);
    const std::size_t d = edit_distance(word, name);
    if (d > 0 && d < best_d && 2 * d < std::max(word.size(), name.size())) {
      best_d = d;
      best = std::string(name);
    }
  }
  return best.empty() ? std::string() : " (did you mean " + std::string(quote) + best + std::string(quote) + "?)";
}

}  // namespace sieve
