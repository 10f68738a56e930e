// sieve::radix_sort_pairs against std::stable_sort on the selected key bits. The values are the
// original positions, so equal digits in the wrong order show up as a stability failure.
#include <sieve/compaction.hpp>

#include <gtest/gtest.h>

#include "radix_sort_reference.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <ostream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {

constexpr std::uint64_t seed = 77031;

enum class keys { uniform, duplicates };

struct sort_case {
  std::size_t n;
  int begin_bit, end_bit;
  keys dist;
};

std::vector<std::uint32_t> make_keys(std::size_t n, keys dist, std::mt19937& rng) {
  std::vector<std::uint32_t> k(n);
  if (dist == keys::uniform) {
    for (auto& x : k) x = static_cast<std::uint32_t>(rng());
  } else {
    // Many duplicates: 13 distinct keys spread over every byte of the word.
    std::uint32_t pool[13];
    for (auto& p : pool) p = static_cast<std::uint32_t>(rng());
    for (auto& x : k) x = pool[rng() % 13];
  }
  return k;
}

void PrintTo(const sort_case& c, std::ostream* os) {
  *os << "n=" << c.n << " bits [" << c.begin_bit << ", " << c.end_bit << ") "
      << (c.dist == keys::uniform ? "uniform" : "duplicates");
}

class RadixSort : public ::testing::TestWithParam<sort_case> {};

TEST_P(RadixSort, MatchesStableSortOnTheKeyBits) {
  const auto [n, b, e, dist] = GetParam();
  std::mt19937 rng(static_cast<std::uint32_t>(seed + n * 131 + static_cast<std::size_t>(b) * 7 + e));
  std::vector<std::uint32_t> k = make_keys(n, dist, rng);
  std::vector<std::uint32_t> v(n);
  std::iota(v.begin(), v.end(), 0U);

  const std::vector<std::uint32_t> order = sieve_test::stable_order_on_bits(k, b, e);
  std::vector<std::uint32_t> want_keys(n);
  for (std::size_t i = 0; i < n; ++i) want_keys[i] = k[order[i]];

  sieve::radix_sort_pairs(std::span(k), std::span(v), b, e);

  // First difference only: the vectors are large.
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(v[i], order[i]) << "value (original position) differs at " << i;
    ASSERT_EQ(k[i], want_keys[i]) << "key differs at " << i << " (keys must travel with their values)";
  }
}

std::vector<sort_case> sort_cases() {
  std::vector<sort_case> c;
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{1000},
                              (std::size_t{1} << 20) + 7})
    for (const auto& [b, e] : {std::pair{0, 32}, {0, 8}, {4, 20}, {8, 8}, {30, 32}, {5, 17}, {0, 1}})
      for (const keys d : {keys::uniform, keys::duplicates}) c.push_back({n, b, e, d});
  return c;
}

INSTANTIATE_TEST_SUITE_P(Cpu, RadixSort, ::testing::ValuesIn(sort_cases()), [](const auto& info) {
  const sort_case& c = info.param;
  return "n" + std::to_string(c.n) + "_bits" + std::to_string(c.begin_bit) + "to" + std::to_string(c.end_bit) +
         (c.dist == keys::uniform ? "_uniform" : "_duplicates");
});

TEST(RadixSortEdges, EmptyBitRangeLeavesEverythingInPlace) {
  std::vector<std::uint32_t> k = {5, 3, 9, 1, 0xFFFFFFFFU}, v = {0, 1, 2, 3, 4};
  const auto k0 = k, v0 = v;
  sieve::radix_sort_pairs(std::span(k), std::span(v), 8, 8);
  EXPECT_EQ(k, k0);
  EXPECT_EQ(v, v0);
  sieve::radix_sort_pairs(std::span(k), std::span(v), 32, 32);
  EXPECT_EQ(k, k0);
  EXPECT_EQ(v, v0);
}

TEST(RadixSortEdges, SortsAFullySortedAndAReversedInput) {
  const std::size_t n = 300000;
  for (const bool reversed : {false, true}) {
    std::vector<std::uint32_t> k(n), v(n);
    for (std::size_t i = 0; i < n; ++i) {
      k[i] = static_cast<std::uint32_t>(reversed ? (n - i) * 4099 : i * 4099);
      v[i] = static_cast<std::uint32_t>(i);
    }
    sieve::radix_sort_pairs(std::span(k), std::span(v));
    EXPECT_TRUE(std::is_sorted(k.begin(), k.end()));
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_EQ(v[i], reversed ? n - 1 - i : i) << "reversed=" << reversed << " at " << i;
  }
}

TEST(RadixSortErrors, MismatchedLengthsThrow) {
  std::vector<std::uint32_t> k(10), v(9);
  EXPECT_THROW(sieve::radix_sort_pairs(std::span(k), std::span(v)), sieve::error);
  std::vector<std::uint32_t> none;
  EXPECT_THROW(sieve::radix_sort_pairs(std::span(none), std::span(v)), sieve::error);
}

TEST(RadixSortErrors, BitRangesOutsideTheWordThrow) {
  std::vector<std::uint32_t> k = {3, 1, 2}, v = {0, 1, 2};
  const auto k0 = k, v0 = v;
  for (const auto& [b, e] : {std::pair{-1, 8}, {0, 33}, {20, 10}, {33, 33}, {-8, -1}, {0, 64}}) {
    SCOPED_TRACE("[" + std::to_string(b) + ", " + std::to_string(e) + ")");
    EXPECT_THROW(sieve::radix_sort_pairs(std::span(k), std::span(v), b, e), sieve::error);
    EXPECT_EQ(k, k0);
    EXPECT_EQ(v, v0);
  }
  // Errors are sieve::error, which is a std::runtime_error.
  EXPECT_THROW(sieve::radix_sort_pairs(std::span(k), std::span(v), 5, 4), std::runtime_error);
}

}  // namespace
