// Where a stage writes which items of a queue survive, in the form the chosen compaction strategy
// takes: byte flags, a bit mask (zeroed beforehand) or a removal list (an atomic counter appends).
// The BFS traversal marks its child pairs with it, the shade stage its paths. One copy for CPU and GPU.
#pragma once

#include "atomic.hpp"

#include <sieve/compaction.hpp>

#include <cstdint>
#include <string>

namespace sieve::render {

struct keep_marks {
  std::uint8_t* flags = nullptr;      // byte flags, or
  std::uint32_t* mask = nullptr;      // bit mask (zeroed before the stage), or
  std::uint32_t* removals = nullptr;  // removal list, with its length in
  std::uint32_t* removal_count = nullptr;

  SIEVE_HD void mark(std::uint32_t j, bool keep) const {
    if (flags) flags[j] = keep;
    if (mask && keep) atomic_or_u32(&mask[j / 32], 1U << (j % 32));
    if (removals && !keep) append_aggregated(removals, removal_count, j);
  }
};

// A queue's mark buffers, used in the form its strategy takes (those of the other forms may be
// null): the marks a stage writes, and the selection the strategy then reads. The path queue and
// the BFS frontier both mark and compact through it.
struct marked_entries {
  sieve::form form = sieve::form::byte_flags;
  std::uint8_t* flags = nullptr;
  std::uint32_t* mask = nullptr;
  std::uint32_t* removals = nullptr;

  // What the marking stage writes into (the bit mask zeroed and *removal_count set to 0 first).
  keep_marks marks(std::uint32_t* removal_count) const {
    keep_marks m;
    if (form == sieve::form::byte_flags) m.flags = flags;
    if (form == sieve::form::bit_mask) m.mask = mask;
    if (form == sieve::form::removal_list) {
      m.removals = removals;
      m.removal_count = removal_count;
    }
    return m;
  }
  // What the strategy reads for n entries (a removal list: its span; the live count comes apart).
  sieve::selection selection(std::size_t n) const {
    if (form == sieve::form::bit_mask) return sieve::bit_mask{std::span<const std::uint32_t>(mask, (n + 31) / 32)};
    if (form == sieve::form::removal_list) return sieve::removal_list{std::span<std::uint32_t>(removals, n)};
    return sieve::byte_flags{std::span<const std::uint8_t>(flags, n)};
  }
};

// The form a producer writes for `strategy` on backend `b`: the first it takes of bit mask (the
// fewest bytes), byte flags, removal list. Throws sieve::error naming the strategies that fit.
inline sieve::form marks_form_for(const sieve::strategy& strategy, sieve::backend b, const char* who) {
  const auto& info = strategy.info();
  for (const sieve::form f : {sieve::form::bit_mask, sieve::form::byte_flags, sieve::form::removal_list})
    if (info.takes(b, f)) return f;
  throw sieve::error(std::string(who) + ": strategy '" + std::string(strategy.name()) + "' takes no bit mask, byte flags or removal list on " +
                     std::string(sieve::to_string(b)) + "; use one of: " +
                     sieve::strategies_that_fit(b, sieve::form::byte_flags, false));
}

}  // namespace sieve::render
