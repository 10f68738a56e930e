// Validation and marking of removal lists, shared by the CPU strategies that take them.
#include "detail.hpp"
#include "../src/validate.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <memory>
#include <string>

namespace sieve::detail {

namespace {

// Below this many indices the check runs on the calling thread (waking the pool costs more).
constexpr std::size_t serial_below = 1 << 14;

// body(begin, end) over [0, k): in parallel for long lists. Exceptions propagate.
template <class Body>
void for_list(std::size_t k, const Body& body) {
  if (k < serial_below) return body(std::size_t{0}, k);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, k, serial_below),
                    [&](const auto& r) { body(r.begin(), r.end()); });
}

// The indices seen so far, as n bits: for lists that are a sizable part of n.
class seen_bits {
 public:
  explicit seen_bits(std::size_t n) : words_(std::make_unique_for_overwrite<std::uint64_t[]>((n + 63) / 64)) {
    const std::size_t w = (n + 63) / 64;
    for_list(w, [&](std::size_t b, std::size_t e) { std::fill(words_.get() + b, words_.get() + e, 0); });
  }
  // True when x was not seen before (and now is).
  bool insert(std::uint32_t x) {
    const std::uint64_t bit = std::uint64_t{1} << (x % 64);
    return !(std::atomic_ref<std::uint64_t>(words_[x / 64]).fetch_or(bit, std::memory_order_relaxed) & bit);
  }

 private:
  std::unique_ptr<std::uint64_t[]> words_;
};

// The indices seen so far, in an open-addressing hash set of at least 2k slots: for short lists
// over many items, where n bits would cost more to clear than the list to read.
class seen_set {
 public:
  explicit seen_set(std::size_t k)
      : shift_(64 - std::bit_width(std::bit_ceil(std::max<std::size_t>(2 * k, 2)) - 1)),
        mask_((std::size_t{1} << (64 - shift_)) - 1),
        slots_(std::make_unique_for_overwrite<std::uint32_t[]>(mask_ + 1)) {
    for_list(mask_ + 1, [&](std::size_t b, std::size_t e) { std::fill(slots_.get() + b, slots_.get() + e, empty); });
  }
  // True when x was not seen before (and now is). x < n <= 2^32 - 1, so never `empty`.
  bool insert(std::uint32_t x) {
    for (std::size_t s = (x * 0x9E3779B97F4A7C15ULL) >> shift_;; s = (s + 1) & mask_) {
      std::atomic_ref<std::uint32_t> slot(slots_[s]);
      std::uint32_t v = slot.load(std::memory_order_relaxed);
      if (v == empty && slot.compare_exchange_strong(v, x, std::memory_order_relaxed)) return true;
      if (v == x) return false;
    }
  }

 private:
  static constexpr std::uint32_t empty = ~std::uint32_t{0};
  int shift_;
  std::size_t mask_;
  std::unique_ptr<std::uint32_t[]> slots_;
};

// n bits cost n/8 bytes to clear, the hash set 8k to 16k bytes: bits while n <= 64k.
bool use_bits(std::size_t k, std::size_t n) { return n <= 64 * k; }

// Inserts the list into `seen` in parallel; false at the first index out of range or repeated.
template <class Seen>
bool all_distinct_below(std::span<const std::uint32_t> removals, std::size_t n, Seen&& seen) {
  std::atomic<bool> bad{false};
  for_list(removals.size(), [&](std::size_t b, std::size_t e) {
    if (bad.load(std::memory_order_relaxed)) return;
    for (std::size_t i = b; i != e; ++i)
      if (removals[i] >= n || !seen.insert(removals[i])) return bad.store(true, std::memory_order_relaxed);
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

template <class Make>
void check_with(std::span<const std::uint32_t> removals, std::size_t n, const Make& make) {
  if (!all_distinct_below(removals, n, make())) throw_first_bad(removals, n, make());
}

}  // namespace

void check_removals(std::span<const std::uint32_t> removals, std::size_t n) {
  const std::size_t k = removals.size();
  if (k > n) throw error(removals_too_many(k, n));
  if (k == 0) return;
  if (use_bits(k, n))
    check_with(removals, n, [n] { return seen_bits(n); });
  else
    check_with(removals, n, [k] { return seen_set(k); });
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
