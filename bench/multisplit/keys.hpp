// Bucket-id columns for the multisplit benchmark and its tests, and the reference split they are
// checked against. Header-only: the tests use the same distributions.
#pragma once

#include <sieve/compaction/error.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace sieve::bench {

// uniform: every bucket equally likely; zipf: bucket b with weight 1 / (b + 1); dominant: 90 % in
// bucket 0, the rest uniform; runs: runs of 1..4096 equal ids, each run's bucket the next one.
inline constexpr std::array<std::string_view, 4> bucket_distributions = {"uniform", "zipf", "dominant", "runs"};

inline std::vector<std::uint8_t> make_bucket_ids(std::size_t n, unsigned buckets, std::string_view dist,
                                                 std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> ids(n);
  auto uniform = [&] { return static_cast<std::uint8_t>((rng() >> 32) % buckets); };
  if (dist == "uniform") {
    for (auto& x : ids) x = uniform();
  } else if (dist == "zipf") {
    std::vector<double> w(buckets);
    for (unsigned b = 0; b < buckets; ++b) w[b] = 1.0 / (b + 1);
    std::discrete_distribution<unsigned> d(w.begin(), w.end());
    for (auto& x : ids) x = static_cast<std::uint8_t>(d(rng));
  } else if (dist == "dominant") {
    for (auto& x : ids) x = (rng() % 10 == 0) ? uniform() : 0;
  } else if (dist == "runs") {
    std::uint8_t b = uniform();
    for (std::size_t i = 0; i < n;) {
      const std::size_t len = 1 + rng() % 4096;
      for (std::size_t j = 0; j < len && i < n; ++j) ids[i++] = b;
      b = static_cast<std::uint8_t>((b + 1) % buckets);
    }
  } else {
    throw error("bucket distribution '" + std::string(dist) + "': uniform, zipf, dominant or runs");
  }
  return ids;
}

// The stable split as a permutation: order[j] is the input index of output slot j; offsets has
// buckets + 1 entries.
struct split_reference {
  std::vector<std::uint32_t> order;
  std::vector<std::uint64_t> offsets;
};

inline split_reference reference_split(const std::vector<std::uint8_t>& ids, std::size_t n, unsigned buckets) {
  split_reference r;
  r.offsets.assign(buckets + 1, 0);
  for (std::size_t i = 0; i < n; ++i) ++r.offsets[ids[i] + 1];
  std::partial_sum(r.offsets.begin(), r.offsets.end(), r.offsets.begin());
  r.order.resize(n);
  std::vector<std::uint64_t> next(r.offsets.begin(), r.offsets.end() - 1);
  for (std::size_t i = 0; i < n; ++i) r.order[next[ids[i]]++] = static_cast<std::uint32_t>(i);
  return r;
}

}  // namespace sieve::bench
