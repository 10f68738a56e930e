// GPU radix sort (ctest label `gpu`): every algorithm of sieve::cuda::radix_sort_algorithms() against
// std::stable_sort on the selected key bits. The values are the original positions, so a pair out of
// its input order among equal digits shows up as a stability failure. Outputs are poisoned first and
// the inputs must come back unchanged. Without a device every test is skipped.
#include <sieve/compaction.hpp>
#include <sieve/compaction/cuda_check.hpp>

#include <gtest/gtest.h>

#include "cuda_support.cuh"
#include "radix_sort_reference.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {

using sieve::test::device_array;

enum class keys { uniform, duplicates, sorted, reversed };

std::vector<std::uint32_t> make_keys(std::size_t n, keys dist, std::mt19937& rng) {
  std::vector<std::uint32_t> k(n);
  switch (dist) {
    case keys::uniform:
      for (auto& x : k) x = static_cast<std::uint32_t>(rng());
      break;
    case keys::duplicates: {  // 13 distinct keys spread over every byte of the word
      std::uint32_t pool[13];
      for (auto& p : pool) p = static_cast<std::uint32_t>(rng());
      for (auto& x : k) x = pool[rng() % 13];
      break;
    }
    case keys::sorted:
      for (std::size_t i = 0; i < n; ++i) k[i] = static_cast<std::uint32_t>(i * 4099);
      break;
    case keys::reversed:
      for (std::size_t i = 0; i < n; ++i) k[i] = static_cast<std::uint32_t>((n - i) * 4099);
      break;
  }
  return k;
}

const char* name_of(keys d) {
  switch (d) {
    case keys::uniform: return "uniform";
    case keys::duplicates: return "duplicates";
    case keys::sorted: return "sorted";
    case keys::reversed: return "reversed";
  }
  return "?";
}

using sort_param = std::tuple<std::string, std::size_t, std::pair<int, int>, keys>;
class CudaRadixSort : public ::testing::TestWithParam<sort_param> {};

TEST_P(CudaRadixSort, MatchesStableSortOnTheKeyBits) {
  REQUIRE_DEVICE();
  const auto& [algorithm, n, range, dist] = GetParam();
  const auto [b, e] = range;
  std::mt19937 rng(static_cast<std::uint32_t>(n * 131 + static_cast<std::size_t>(b) * 7 + static_cast<std::size_t>(e)));
  const std::vector<std::uint32_t> k = make_keys(n, dist, rng);
  std::vector<std::uint32_t> v(n);
  std::iota(v.begin(), v.end(), 0U);

  const std::vector<std::uint32_t> order = sieve_test::stable_order_on_bits(k, b, e);

  device_array<std::uint32_t> keys_in(k), values_in(v), keys_out(n), values_out(n);
  SIEVE_CUDA_CHECK(cudaMemset(keys_out.data, 0xA5, std::max<std::size_t>(n, 1) * 4));
  SIEVE_CUDA_CHECK(cudaMemset(values_out.data, 0xA5, std::max<std::size_t>(n, 1) * 4));
  const std::size_t bytes = sieve::cuda::radix_sort_workspace_bytes(algorithm, n, b, e);
  device_array<std::byte> ws(bytes);
  sieve::cuda::radix_sort_pairs_async(algorithm, keys_in.cspan(), values_in.cspan(), keys_out.span(),
                                      values_out.span(), b, e, {ws.data, bytes});
  SIEVE_CUDA_CHECK(cudaDeviceSynchronize());

  const auto got_k = keys_out.host(), got_v = values_out.host();
  for (std::size_t i = 0; i < n; ++i) {  // first difference only: the vectors are large
    ASSERT_EQ(got_v[i], order[i]) << "value (original position) differs at " << i;
    ASSERT_EQ(got_k[i], k[order[i]]) << "key differs at " << i << " (keys must travel with their values)";
  }
  EXPECT_EQ(keys_in.host(), k) << "the input keys changed";
  EXPECT_EQ(values_in.host(), v) << "the input values changed";
}

std::vector<std::string> algorithms() {
  const auto a = sieve::cuda::radix_sort_algorithms();
  return {a.begin(), a.end()};
}

std::string param_name(const ::testing::TestParamInfo<sort_param>& info) {
  const auto& [algorithm, n, range, dist] = info.param;
  return algorithm + "_n" + std::to_string(n) + "_bits" + std::to_string(range.first) + "to" +
         std::to_string(range.second) + "_" + name_of(dist);
}

// Sizes around powers of two and the tile sizes (2048, 3072, 4096 pairs); bit ranges: all 32, the
// middle 16, one digit, an empty range, one bit, the top bit, an odd range.
const std::vector<std::size_t> sizes = {0, 1, 2, 31, 1000, 4095, 4096, 4097, 65535, 65537, (1 << 20) + 7, 1 << 22};
const std::vector<std::pair<int, int>> ranges = {{0, 32}, {8, 24}, {0, 8}, {8, 8}, {0, 1}, {31, 32}, {5, 17}};
const std::vector<std::pair<int, int>> ordered_ranges = {{0, 32}, {4, 20}};

INSTANTIATE_TEST_SUITE_P(Algorithms, CudaRadixSort,
                         ::testing::Combine(::testing::ValuesIn(algorithms()), ::testing::ValuesIn(sizes),
                                            ::testing::ValuesIn(ranges),
                                            ::testing::Values(keys::uniform, keys::duplicates)),
                         param_name);

INSTANTIATE_TEST_SUITE_P(Ordered, CudaRadixSort,
                         ::testing::Combine(::testing::ValuesIn(algorithms()),
                                            ::testing::Values(std::size_t{300000}),
                                            ::testing::ValuesIn(ordered_ranges),
                                            ::testing::Values(keys::sorted, keys::reversed)),
                         param_name);

TEST(CudaRadixSortErrors, BadArgumentsThrow) {
  // Argument checks come before any device work, so these run without a device too.
  std::vector<std::uint32_t> a(8), b(8), c(8), d(8), short_one(7);
  const std::span<const std::uint32_t> ka(a), va(b);
  const std::span<std::uint32_t> kc(c), vd(d), s7(short_one);
  EXPECT_THROW(sieve::cuda::radix_sort_workspace_bytes("quick", 8), sieve::error);
  EXPECT_THROW(sieve::cuda::radix_sort_workspace_bytes("onesweep", 8, -1, 8), sieve::error);
  EXPECT_THROW(sieve::cuda::radix_sort_workspace_bytes("onesweep", 8, 0, 33), sieve::error);
  EXPECT_THROW(sieve::cuda::radix_sort_workspace_bytes("cub", 8, 20, 10), sieve::error);
  EXPECT_THROW(sieve::cuda::radix_sort_workspace_bytes("onesweep", std::size_t{1} << 30), sieve::error);
  EXPECT_THROW(sieve::cuda::radix_sort_pairs_async("onesweep", ka, va, kc, s7, 0, 32, {}), sieve::error);
  // In place is not this API.
  EXPECT_THROW(sieve::cuda::radix_sort_pairs_async("onesweep", ka, va, std::span(a), vd, 0, 32, {}), sieve::error);
}

TEST(CudaRadixSortErrors, TooSmallAWorkspaceIsAnError) {
  REQUIRE_DEVICE();
  for (const auto& algorithm : algorithms()) {
    device_array<std::uint32_t> k(5000), v(5000), ko(5000), vo(5000);
    EXPECT_THROW(sieve::cuda::radix_sort_pairs_async(algorithm, k.cspan(), v.cspan(), ko.span(), vo.span(), 0, 32,
                                                     {nullptr, 0}),
                 sieve::error)
        << algorithm;
  }
}

}  // namespace
