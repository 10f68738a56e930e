#pragma once

#include <sieve/compaction/record.hpp>
#include <sieve/compaction/selection.hpp>
#include <sieve/compaction/strategies.hpp>

#include <cstddef>
#include <optional>
#include <string_view>

namespace sieve {

// Checked mode validates removal lists (every index < n, no index twice) before anything is
// moved, so bad input is an error (sieve::error naming the first bad index and its position) and
// never silent corruption. On by default in every build. It costs one pass over the list, with n
// bits of scratch when the list is a sizable part of the items, else a hash set of the k indices.
// options{.checked = false} (or set_checked_default(false)) opts out: a removal list with an index
// >= n or an index twice is then undefined behaviour (memory past the items may be written).
bool checked_default();
void set_checked_default(bool on);

// Time per phase of the last call, in milliseconds. Phase 1 is the marking of a removal list
// (Redzone marks its red zone; stencil-based strategies mark a stencil), zero for other forms.
struct phase_times {
  double phase1_ms = 0;
  double phase2_ms = 0;
  double phase3_ms = 0;
};

struct options {
  std::optional<bool> checked;     // unset: checked_default() (true unless switched off)
  phase_times* times = nullptr;    // filled when set
};

// In place: the kept items end up in items[0, m), m returned. Items past m are unspecified.
// Throws sieve::error for an unknown strategy, a form or mode it lacks, or invalid input, before
// anything moves. An exception thrown by a predicate propagates out of every strategy (with `std`,
// the only in-place one that takes predicates, before anything moves). A record of const spans
// does not compile here.
std::size_t compact(const strategy& s, record items, const selection& keep, const options& opt = {});

// Out of place: the kept items are written to out[0, m), m returned; `in` is only read (a removal
// list is still used as scratch). `out` has the same columns as `in` and room for m items (n - k
// for a removal list of k, n for the other forms); no column of `out` may overlap a column of `in`
// (for in place, call compact()).
std::size_t compact_copy(const strategy& s, const_record in, record out, const selection& keep,
                         const options& opt = {});

}  // namespace sieve
