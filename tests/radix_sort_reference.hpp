// The reference of the radix sort tests (CPU and CUDA): std::stable_sort on the selected key bits.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace sieve_test {

// The positions of `keys` in the order a stable sort on the bits [b, e) puts them (an empty range:
// the input order). A radix sort of (key, position) pairs must give these positions as its values.
inline std::vector<std::uint32_t> stable_order_on_bits(const std::vector<std::uint32_t>& keys, int b, int e) {
  const std::uint32_t mask = e - b == 32 ? ~0U : ((1U << (e - b)) - 1U);
  auto bits = [&](std::uint32_t key) { return (key >> b) & mask; };
  std::vector<std::uint32_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0U);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t x, std::uint32_t y) { return b < e && bits(keys[x]) < bits(keys[y]); });
  return order;
}

}  // namespace sieve_test
