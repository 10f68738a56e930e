// A project outside sieve: finds the installed package and removes three items with Redzone.
#include <sieve/compaction.hpp>

#include <algorithm>
#include <cstdio>
#include <vector>

int main() {
  std::vector<int> items = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<std::uint32_t> dead = {3, 8, 4};
  const std::size_t m = sieve::compact("redzone", std::span(items), sieve::removal_list{dead});
  std::vector<int> kept(items.begin(), items.begin() + static_cast<long>(m));
  std::sort(kept.begin(), kept.end());
  const bool ok = kept == std::vector<int>{0, 1, 2, 5, 6, 7, 9};
  std::printf("consumer of sieve %s: kept %zu items, %s\n", SIEVE_VERSION_STRING, m, ok ? "as expected" : "WRONG");
  return ok ? 0 : 1;
}
