// Validation and marking of removal lists, shared by the CPU strategies that take them.
#include "detail.hpp"
#include "../src/validate.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <atomic>
#include <string>

namespace sieve::detail {

void check_removals(std::span<const std::uint32_t> removals, std::size_t n) {
  if (removals.size() > n) throw error(removals_too_many(removals.size(), n));
  std::vector<std::uint64_t> seen((n + 63) / 64, 0);
  std::atomic<std::size_t> bad_range{removals.size()}, bad_twice{removals.size()};
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, removals.size(), 1 << 14), [&](const auto& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) {
      const std::uint32_t x = removals[i];
      if (x >= n) {
        bad_range.store(i, std::memory_order_relaxed);
        return;
      }
      const std::uint64_t bit = std::uint64_t{1} << (x % 64);
      if (std::atomic_ref<std::uint64_t>(seen[x / 64]).fetch_or(bit, std::memory_order_relaxed) & bit) {
        bad_twice.store(i, std::memory_order_relaxed);
        return;
      }
    }
  });
  if (const std::size_t i = bad_range.load(); i < removals.size())
    throw error(removal_out_of_range(removals[i], i, n));
  if (const std::size_t i = bad_twice.load(); i < removals.size()) throw error(removal_twice(removals[i], i));
}

std::vector<std::uint8_t> mark_removals(std::span<const std::uint32_t> removals, std::size_t n) {
  std::vector<std::uint8_t> keep(n);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1 << 16), [&](const auto& r) {
    std::memset(keep.data() + r.begin(), 1, r.size());
  });
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, removals.size(), 1 << 14), [&](const auto& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) keep[removals[i]] = 0;
  });
  return keep;
}

}  // namespace sieve::detail
