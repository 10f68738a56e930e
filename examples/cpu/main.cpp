// A complete CPU program: keep the particles that are still alive with a byte-flag selection
// (Billeter's count-prefix-move), then remove a list of dead indices in place (Redzone, O(k)), and
// let `auto` choose. Its output is in expected-output.txt beside it.
#include <sieve/compaction.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

int main() {
  // 20 particles; a particle with energy below 5 is dead.
  std::vector<float> energy(20);
  for (std::size_t i = 0; i < energy.size(); ++i) energy[i] = static_cast<float>((i * 7) % 11);
  std::vector<std::uint8_t> alive(energy.size());
  for (std::size_t i = 0; i < energy.size(); ++i) alive[i] = energy[i] >= 5;

  // Out of place, stable: the survivors in their order.
  std::vector<float> survivors(energy.size());
  const std::size_t m = sieve::compact_copy("billeter", std::span<const float>(energy), std::span(survivors),
                                            sieve::byte_flags{alive});
  std::printf("billeter kept %zu of %zu:", m, energy.size());
  for (std::size_t i = 0; i < m; ++i) std::printf(" %g", survivors[i]);
  std::printf("\n");

  // In place, from a list of distinct indices to remove (checked: a bad index is a sieve::error).
  std::vector<int> ids(12);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(100 + i);
  std::vector<std::uint32_t> dead = {1, 4, 5, 10};  // the list may be reordered
  const std::size_t left = sieve::compact("redzone", std::span(ids), sieve::removal_list{dead});
  std::vector<int> kept(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(left));
  std::sort(kept.begin(), kept.end());  // Redzone fills holes from the tail: not stable
  std::printf("redzone removed %zu, kept (sorted):", dead.size());
  for (int v : kept) std::printf(" %d", v);
  std::printf("\n");

  // A bad list is refused, never memory corruption.
  try {
    std::vector<std::uint32_t> bad = {2, 2};
    sieve::compact("redzone", std::span(ids).first(left), sieve::removal_list{bad});
  } catch (const sieve::error& e) {
    std::printf("refused: %s\n", e.what());
  }

  // `auto` picks per backend, form and size; resolve_strategy says what it would run.
  std::printf("auto on the cpu for byte flags, out of place: %s\n",
              std::string(sieve::resolve_strategy("auto", sieve::backend::cpu, sieve::form::byte_flags, false,
                                                  energy.size())).c_str());
  return 0;
}
