// Validation and marking of removal lists, shared by the CPU strategies that take them.
#include "cpu_call.hpp"
#include "validate.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <memory>
#include <string>

namespace sieve::detail {

namespace {

// The indices seen so far, as n bits: for lists that are a sizable part of n.
class seen_bits {
 public:
  explicit seen_bits(std::size_t n) : words_(new std::uint64_t[(n + 63) / 64]()) {}
  // True when x was not seen before (and now is).
  bool insert(std::uint32_t x) {
    const std::uint64_t bit = std::uint64_t{1} << (x % 64);
    const std::uint64_t old = words_[x / 64];
    words_[x / 64] = old | bit;
    return !(old & bit);
  }
  // The same, for several threads at once.
  bool insert_shared(std::uint32_t x) {
    const std::uint64_t bit = std::uint64_t{1} << (x % 64);
    return !(std::atomic_ref<std::uint64_t>(words_[x / 64]).fetch_or(bit, std::memory_order_relaxed) & bit);
  }

 private:
  std::unique_ptr<std::uint64_t[]> words_;
};

// The indices seen so far, in an open-addressing hash set of at least 2k slots: for short lists
// over many items, where n bits would cost more to clear and to reach than the list to read.
class seen_set {
 public:
  explicit seen_set(std::size_t k)
      : mask_(std::bit_ceil(std::max<std::size_t>(2 * k, 2)) - 1),
        shift_(64 - std::bit_width(mask_)),
        slots_(std::make_unique_for_overwrite<std::uint32_t[]>(mask_ + 1)) {
    std::fill(slots_.get(), slots_.get() + mask_ + 1, empty);
  }
  // True when x was not seen before (and now is). x < n <= 2^32 - 1, so never `empty`.
  bool insert(std::uint32_t x) {
    for (std::size_t s = (x * 0x9E3779B97F4A7C15ULL) >> shift_;; s = (s + 1) & mask_) {
      if (slots_[s] == x) return false;
      if (slots_[s] == empty) {
        slots_[s] = x;
        return true;
      }
    }
  }

 private:
  static constexpr std::uint32_t empty = ~std::uint32_t{0};
  std::size_t mask_;
  int shift_;
  std::unique_ptr<std::uint32_t[]> slots_;
};

// Measured on 2 cores (n = 2^20 and 2^24, k/n = 0.1 % to 50 %): one thread setting plain bits is
// 2-3x faster than both threads with atomic ORs, and the hash set wins only below k/n = 0.2 %.
// So: n bits unless k < n / 512; threads only where enough of them outrun the atomics' cost.
bool use_bits(std::size_t k, std::size_t n) { return k >= n / 512; }
bool use_threads(std::size_t k) { return k >= (1 << 16) && tbb::this_task_arena::max_concurrency() >= 8; }

// False at the first index out of range or repeated.
template <class Seen>
bool all_distinct_below(std::span<const std::uint32_t> removals, std::size_t n, Seen&& seen) {
  for (const std::uint32_t x : removals)
    if (x >= n || !seen.insert(x)) return false;
  return true;
}

bool all_distinct_below_in_parallel(std::span<const std::uint32_t> removals, std::size_t n) {
  seen_bits seen(n);
  std::atomic<bool> bad{false};
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, removals.size(), 1 << 14), [&](const auto& r) {
    if (bad.load(std::memory_order_relaxed)) return;
    for (std::size_t i = r.begin(); i != r.end(); ++i)
      if (removals[i] >= n || !seen.insert_shared(removals[i])) return bad.store(true, std::memory_order_relaxed);
  });
  return !bad.load();
}

// The error for a list known to be bad, found again in order (cost is no concern here): the first
// index out of range, else the first position whose index appeared before it.
template <class Seen>
[[noreturn]] void throw_first_bad(std::span<const std::uint32_t> removals, std::size_t n, Seen&& seen) {
  for (std::size_t i = 0; i < removals.size(); ++i)
    if (removals[i] >= n) throw error(removal_out_of_range(removals[i], i, n));
  for (std::size_t i = 0; i < removals.size(); ++i)
    if (!seen.insert(removals[i])) throw error(removal_twice(removals[i], i));
  throw error("sieve: internal: a removal list was found bad and then good");
}

}  // namespace

void check_removals(std::span<const std::uint32_t> removals, std::size_t n) {
  const std::size_t k = removals.size();
  if (k > n) throw error(removals_too_many(k, n));
  if (k == 0) return;
  if (!use_bits(k, n)) {
    if (!all_distinct_below(removals, n, seen_set(k))) throw_first_bad(removals, n, seen_set(k));
  } else if (!(use_threads(k) ? all_distinct_below_in_parallel(removals, n)
                              : all_distinct_below(removals, n, seen_bits(n)))) {
    throw_first_bad(removals, n, seen_bits(n));
  }
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
