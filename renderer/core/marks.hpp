// Where a stage writes which items of a queue survive, in the form the chosen compaction strategy
// takes: byte flags, a bit mask (zeroed beforehand) or a removal list (an atomic counter appends).
// The BFS traversal marks its child pairs with it, the shade stage its paths. One copy for CPU and GPU;
// marked_queue below is the one "mark, then compact" both queues run.
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

// "Marks in the strategy's form, then compact", written once for the path queue and the BFS
// frontier: the strategy, its form and the mark buffers (those of the other forms may be null).
// begin() clears what the form needs and gives the marks the stage writes; compact() hands the
// strategy the selection those marks make, through the caller's backend.
struct marked_queue {
  sieve::strategy strategy;
  sieve::form form = sieve::form::byte_flags;
  std::uint8_t* flags = nullptr;
  std::uint32_t* mask = nullptr;
  std::uint32_t* removals = nullptr;

  // Before the marking stage, through the backend's zero(p, bytes): the bit mask's first mask_words
  // words, and for a removal list *clear_count (null where the caller resets the count itself). The
  // stage counts its removals in *removal_count.
  template <class Backend>
  keep_marks begin(const Backend& b, std::size_t mask_words, std::uint32_t* removal_count,
                   std::uint64_t* clear_count = nullptr) const {
    if (form == sieve::form::bit_mask) b.zero(mask, mask_words * sizeof(std::uint32_t));
    if (form == sieve::form::removal_list && clear_count) b.zero(clear_count, sizeof *clear_count);
    return marks(removal_count);
  }

  // The first n entries of `items` that the marks keep, in place (out null) or into *out, through
  // the backend's compact(strategy, items, out, selection, counts, kept): counts.items live of them,
  // counts.removals the removal list's length; *kept the survivors.
  template <class Backend>
  void compact(Backend& b, const sieve::record& items, const sieve::record* out, std::size_t n,
               const sieve::cuda::device_counts& counts, std::uint64_t* kept) const {
    b.compact(strategy, items, out, selection(n), counts, kept);
  }

  // What the marking stage writes into.
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
inline bool takes_marks(const sieve::strategy_info& info, sieve::backend b) {
  for (const sieve::form f : {sieve::form::bit_mask, sieve::form::byte_flags, sieve::form::removal_list})
    if (info.takes(b, f)) return true;
  return false;
}

// The strategies that can compact a queue on backend b ("auto" first), and, on the CPU, those that
// run on CUDA only (in a build without CUDA too): "auto, redzone, std, ... (cuda only: space, ...)".
inline std::string strategies_for_marks(sieve::backend b) {
  std::string fit, cuda_only;
  for (const auto& s : sieve::compaction_strategies()) {
    if (takes_marks(s, b)) fit += (fit.empty() ? "" : ", ") + std::string(s.name);
    else if (b == sieve::backend::cpu && !s.runs_on(sieve::backend::cpu))
      cuda_only += (cuda_only.empty() ? "" : ", ") + std::string(s.name);
  }
  return fit + (cuda_only.empty() ? "" : " (cuda only: " + cuda_only + ")");
}

inline sieve::form marks_form_for(const sieve::strategy& strategy, sieve::backend b, const char* who) {
  const auto& info = strategy.info();
  for (const sieve::form f : {sieve::form::bit_mask, sieve::form::byte_flags, sieve::form::removal_list})
    if (info.takes(b, f)) return f;
  const bool cuda_only = b == sieve::backend::cpu && !info.runs_on(sieve::backend::cpu);
  throw sieve::error(std::string(who) + ": strategy '" + std::string(strategy.name()) + "' " +
                     (cuda_only ? "runs on cuda only" : "takes no bit mask, byte flags or removal list on " +
                                                            std::string(sieve::to_string(b))) +
                     "; on " + std::string(sieve::to_string(b)) + " use one of: " + strategies_for_marks(b));
}

}  // namespace sieve::render
