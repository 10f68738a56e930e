#pragma once

#include <cstdint>
#include <span>

namespace sieve {

// Stable LSD radix sort of (key, value) pairs by key bits [begin_bit, end_bit), on the CPU (oneTBB).
// Pairs whose keys agree on those bits keep their order. keys and values have equal length.
void radix_sort_pairs(std::span<std::uint32_t> keys, std::span<std::uint32_t> values, int begin_bit = 0,
                      int end_bit = 32);

}  // namespace sieve
