// Radix sort of (u32 key, u32 value) pairs on the CPU: LSD, 8-bit digits, oneTBB. Each pass builds
// one histogram per block, an exclusive prefix in (digit, block) order gives every block its slice
// of every digit's output range, and the blocks scatter in parallel, each in input order, which
// keeps the sort stable. Passes whose digit is the same for every key are skipped.
#include <sieve/compaction/error.hpp>
#include <sieve/compaction/radix_sort.hpp>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace sieve {

void radix_sort_pairs(std::span<std::uint32_t> keys, std::span<std::uint32_t> values, int begin_bit, int end_bit) {
  if (keys.size() != values.size())
    throw error("radix_sort_pairs: " + std::to_string(keys.size()) + " keys but " + std::to_string(values.size()) +
                " values");
  if (begin_bit < 0 || end_bit > 32 || begin_bit > end_bit)
    throw error("radix_sort_pairs: bit range [" + std::to_string(begin_bit) + ", " + std::to_string(end_bit) +
                ") is not inside [0, 32)");
  const std::size_t n = keys.size();
  if (n < 2 || begin_bit == end_bit) return;

  constexpr int digit_bits = 8;
  constexpr std::size_t radix = std::size_t{1} << digit_bits;
  constexpr std::size_t block = 1 << 16;
  const std::size_t blocks = (n + block - 1) / block;

  std::vector<std::uint32_t> key_tmp(n), value_tmp(n);
  std::uint32_t *k_in = keys.data(), *v_in = values.data(), *k_out = key_tmp.data(), *v_out = value_tmp.data();
  std::vector<std::array<std::size_t, radix>> count(blocks);

  for (int shift = begin_bit; shift < end_bit; shift += digit_bits) {
    const int bits = std::min(digit_bits, end_bit - shift);
    const std::uint32_t digit_mask = (1U << bits) - 1U;
    auto digit = [&](std::uint32_t key) { return (key >> shift) & digit_mask; };
    const auto blocks_range = tbb::blocked_range<std::size_t>(0, blocks, 1);

    tbb::parallel_for(blocks_range, [&](const auto& r) {
      for (std::size_t b = r.begin(); b != r.end(); ++b) {
        auto& c = count[b];
        c.fill(0);
        for (std::size_t i = b * block, e = std::min(n, i + block); i < e; ++i) ++c[digit(k_in[i])];
      }
    });

    // Exclusive prefix in (digit, block) order; skip the pass if one digit holds every key.
    std::size_t sum = 0, nonempty_digits = 0;
    for (std::size_t d = 0; d < radix; ++d) {
      const std::size_t before = sum;
      for (std::size_t b = 0; b < blocks; ++b) {
        const std::size_t c = count[b][d];
        count[b][d] = sum;
        sum += c;
      }
      nonempty_digits += sum != before;
    }
    if (nonempty_digits <= 1) continue;

    tbb::parallel_for(blocks_range, [&](const auto& r) {
      for (std::size_t b = r.begin(); b != r.end(); ++b) {
        auto& next = count[b];
        for (std::size_t i = b * block, e = std::min(n, i + block); i < e; ++i) {
          const std::size_t to = next[digit(k_in[i])]++;
          k_out[to] = k_in[i];
          v_out[to] = v_in[i];
        }
      }
    });
    std::swap(k_in, k_out);
    std::swap(v_in, v_out);
  }
  if (k_in != keys.data()) {
    std::copy(k_in, k_in + n, keys.data());
    std::copy(v_in, v_in + n, values.data());
  }
}

}  // namespace sieve
