// sieve::multisplit on the CPU against the reference split (bench/multisplit/keys.hpp): every bucket
// count and id distribution, around powers of two, out of place and in place, one column and a
// record of three; the function form; checked mode and bad arguments.
#include <sieve/compaction.hpp>

#include <gtest/gtest.h>

#include "../bench/multisplit/keys.hpp"

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace {

using sieve::bench::bucket_distributions;
using sieve::bench::make_bucket_ids;
using sieve::bench::reference_split;

constexpr unsigned bucket_counts[] = {1, 2, 3, 7, 8, 32, 100, 256};
constexpr std::size_t sizes[] = {0, 1, 31, 32767, 32768, 32769, 100000};

struct item48 {
  std::uint32_t w[12];
};

void expect_split(const std::vector<std::uint32_t>& got, const std::vector<std::uint64_t>& offsets,
                  const sieve::bench::split_reference& want, const std::string& what) {
  ASSERT_EQ(offsets, want.offsets) << what;
  for (std::size_t j = 0; j < want.order.size(); ++j)
    ASSERT_EQ(got[j], want.order[j]) << what << " slot " << j;
}

TEST(Multisplit, EveryBucketCountAndDistributionMatchesTheReference) {
  for (unsigned buckets : bucket_counts)
    for (auto dist : bucket_distributions)
      for (std::size_t n : sizes) {
        const std::string what = std::to_string(buckets) + " buckets, " + std::string(dist) + ", n " + std::to_string(n);
        const auto ids = make_bucket_ids(n, buckets, dist, n * 31 + buckets);
        const auto want = reference_split(ids, n, buckets);
        std::vector<std::uint32_t> in(n), out(n, 0xDEADBEEF);
        std::iota(in.begin(), in.end(), 0U);
        std::vector<std::uint64_t> offsets(buckets + 1, 77);
        sieve::multisplit(std::span<const std::uint32_t>(in), std::span(out), sieve::bucket_ids{ids}, buckets, offsets);
        expect_split(out, offsets, want, what + ", out of place");
        std::fill(offsets.begin(), offsets.end(), 77);
        sieve::multisplit(std::span(in), sieve::bucket_ids{ids}, buckets, offsets);
        expect_split(in, offsets, want, what + ", in place");
      }
}

TEST(Multisplit, RecordColumnsMoveTogether) {
  const std::size_t n = 70001;
  const unsigned buckets = 5;
  const auto ids = make_bucket_ids(n, buckets, "zipf", 3);
  const auto want = reference_split(ids, n, buckets);
  std::vector<std::uint32_t> a(n);
  std::vector<item48> b(n);
  std::vector<std::uint8_t> c(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = static_cast<std::uint32_t>(i);
    for (int w = 0; w < 12; ++w) b[i].w[w] = static_cast<std::uint32_t>(i * 12 + w);
    c[i] = static_cast<std::uint8_t>(i * 7);
  }
  std::vector<std::uint64_t> offsets(buckets + 1);
  sieve::multisplit(sieve::record(std::span(a), std::span(b), std::span(c)), sieve::bucket_ids{ids}, buckets, offsets);
  expect_split(a, offsets, want, "column a");
  for (std::size_t j = 0; j < n; ++j) {
    ASSERT_EQ(b[j].w[11], want.order[j] * 12 + 11) << j;
    ASSERT_EQ(c[j], static_cast<std::uint8_t>(want.order[j] * 7)) << j;
  }
}

TEST(Multisplit, BucketFunctionMatchesTheIdColumn) {
  const std::size_t n = 50000;
  const auto ids = make_bucket_ids(n, 12, "runs", 9);
  const auto want = reference_split(ids, n, 12);
  std::vector<std::uint32_t> in(n), out(n);
  std::iota(in.begin(), in.end(), 0U);
  std::vector<std::uint64_t> offsets(13);
  sieve::multisplit(std::span<const std::uint32_t>(in), std::span(out),
                    sieve::bucket_of{[&](std::size_t i) { return unsigned{ids[i]}; }}, 12, offsets);
  expect_split(out, offsets, want, "bucket_of");
}

TEST(Multisplit, CheckedModeNamesTheFirstIdOutOfRange) {
  std::vector<std::uint8_t> ids(100000, 1);
  ids[70000] = 4;
  ids[90000] = 9;
  std::vector<std::uint32_t> in(ids.size()), out(ids.size(), 5);
  std::vector<std::uint64_t> offsets(5);
  try {
    sieve::multisplit(std::span<const std::uint32_t>(in), std::span(out), sieve::bucket_ids{ids}, 4, offsets);
    FAIL() << "no error";
  } catch (const sieve::error& e) {
    EXPECT_NE(std::string(e.what()).find("item 70000 has bucket id 4"), std::string::npos) << e.what();
  }
  EXPECT_EQ(out[0], 5U) << "nothing moves before the check";
  // Unchecked, the bad ids end up past the last bucket, inside the output.
  sieve::multisplit(std::span<const std::uint32_t>(in), std::span(out), sieve::bucket_ids{ids}, 4, offsets,
                    sieve::options{.checked = false});
  EXPECT_EQ(offsets[4], ids.size() - 2);
}

TEST(Multisplit, BadArgumentsAreErrors) {
  std::vector<std::uint8_t> ids(10, 0);
  std::vector<std::uint32_t> in(10), out(10), small(9);
  std::vector<std::uint64_t> offsets(3);
  const std::span<const std::uint32_t> cin(in);
  EXPECT_THROW(sieve::multisplit(cin, std::span(out), sieve::bucket_ids{ids}, 0, offsets), sieve::error);
  EXPECT_THROW(sieve::multisplit(cin, std::span(out), sieve::bucket_ids{ids}, 257, offsets), sieve::error);
  EXPECT_THROW(sieve::multisplit(cin, std::span(out), sieve::bucket_ids{ids}, 3, offsets), sieve::error);  // offsets
  EXPECT_THROW(sieve::multisplit(cin, std::span(small), sieve::bucket_ids{ids}, 2, offsets), sieve::error);
  EXPECT_THROW(sieve::multisplit(cin, std::span(out), sieve::bucket_ids{std::span(ids).first(9)}, 2, offsets),
               sieve::error);
  EXPECT_THROW(sieve::multisplit(cin, std::span(in), sieve::bucket_ids{ids}, 2, offsets), sieve::error);  // overlap
  EXPECT_THROW(sieve::multisplit(cin, std::span(out), sieve::bucket_of{}, 2, offsets), sieve::error);
}

}  // namespace
