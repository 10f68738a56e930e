// Shared machinery of the CPU strategies (not installed): the call they receive, movers that copy
// item i of a record to slot j, sources that answer "keep item i?", removal-list marking and
// validation, and phase timing. Each strategy file (kernels/cpu/<name>.cpp) is written against these.
#pragma once

#include <sieve/compaction/compact.hpp>
#include <sieve/compaction/error.hpp>
#include <sieve/compaction/record.hpp>
#include <sieve/compaction/selection.hpp>

#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

namespace sieve::detail {

// What every CPU strategy receives. For in-place calls `out` views the same memory as `in`. The
// call is validated (compact.cpp): shapes, sizes, no overlap, and in checked mode the removal list.
struct cpu_call {
  record in;
  record out;
  const selection& keep;
  bool in_place = false;
  phase_times* times = nullptr;
};

using cpu_strategy_fn = std::size_t (*)(const cpu_call&);

// The CPU strategies (kernels/cpu/<name>.cpp), reached through the registry's table.
std::size_t cpu_redzone(const cpu_call&);
std::size_t cpu_redzone_serial(const cpu_call&);
std::size_t cpu_stencil(const cpu_call&);
std::size_t cpu_std(const cpu_call&);
std::size_t cpu_scan(const cpu_call&);
std::size_t cpu_billeter(const cpu_call&);

// ---- movers: copy item `from` of the input record to slot `to` of the output record ------------

// Widths with a fixed-size copy (and, for `std`, a value type). Other widths use a memcpy of
// run-time length.
template <std::size_t W>
struct blob {
  std::byte bytes[W];
};

#define SIEVE_FOR_EACH_FIXED_WIDTH(X) X(1) X(2) X(4) X(8) X(12) X(16) X(24) X(32) X(48) X(64)

inline void copy_bytes(std::byte* dst, const std::byte* src, std::uint32_t width) {
  switch (width) {
#define SIEVE_COPY_CASE(W) \
  case W: std::memcpy(dst, src, W); return;
    SIEVE_FOR_EACH_FIXED_WIDTH(SIEVE_COPY_CASE)
#undef SIEVE_COPY_CASE
    default: std::memcpy(dst, src, width);
  }
}

// One column of a width known at compile time.
template <std::size_t W>
struct column_mover {
  const std::byte* src;
  std::byte* dst;
  void operator()(std::size_t to, std::size_t from) const { std::memcpy(dst + to * W, src + from * W, W); }
};

// Any record: every column in turn.
struct record_mover {
  record in, out;
  void operator()(std::size_t to, std::size_t from) const {
    for (std::size_t c = 0; c < in.columns(); ++c) {
      const std::uint32_t w = in[c].width;
      copy_bytes(out[c].data + to * w, in[c].data + from * w, w);
    }
  }
};

// Calls f(mover) with the fastest mover for the record's shape.
template <class F>
decltype(auto) with_mover(const record& in, const record& out, F&& f) {
  if (in.columns() == 1) {
    switch (in[0].width) {
#define SIEVE_MOVER_CASE(W) \
  case W: return f(column_mover<W>{in[0].data, out[0].data});
      SIEVE_FOR_EACH_FIXED_WIDTH(SIEVE_MOVER_CASE)
#undef SIEVE_MOVER_CASE
      default: break;
    }
  }
  return f(record_mover{in, out});
}

// ---- sources: which items survive, for the forms that give an answer per item ------------------

// Number of nonzero bytes among the 8 bytes of x.
inline int nonzero_bytes(std::uint64_t x) {
  constexpr std::uint64_t low7 = 0x7f7f7f7f7f7f7f7fULL;
  return std::popcount((((x & low7) + low7) | x) & ~low7);
}

struct flag_source {
  const std::uint8_t* flags;
  bool operator()(std::size_t i) const { return flags[i] != 0; }
  std::size_t count(std::size_t begin, std::size_t end) const {
    std::size_t c = 0, i = begin;
    for (; i < end && i % 8 != 0; ++i) c += flags[i] != 0;
    for (; i + 8 <= end; i += 8) {
      std::uint64_t x;
      std::memcpy(&x, flags + i, 8);
      c += static_cast<std::size_t>(nonzero_bytes(x));
    }
    for (; i < end; ++i) c += flags[i] != 0;
    return c;
  }
  template <class Fn>
  void for_each_kept(std::size_t begin, std::size_t end, Fn&& fn) const {
    for (std::size_t i = begin; i < end; ++i)
      if (flags[i]) fn(i);
  }
};

struct mask_source {
  const std::uint32_t* words;
  bool operator()(std::size_t i) const { return (words[i / 32] >> (i % 32)) & 1U; }
  // Bits [begin, end) of the mask, word by word.
  template <class Fn>
  void for_each_word(std::size_t begin, std::size_t end, Fn&& fn) const {
    for (std::size_t w = begin / 32; w * 32 < end; ++w) {
      std::uint32_t bits = words[w];
      const std::size_t base = w * 32;
      if (base < begin) bits &= ~0U << (begin - base);
      if (end - base < 32) bits &= (1U << (end - base)) - 1U;
      fn(base, bits);
    }
  }
  std::size_t count(std::size_t begin, std::size_t end) const {
    std::size_t c = 0;
    for_each_word(begin, end, [&](std::size_t, std::uint32_t bits) { c += std::popcount(bits); });
    return c;
  }
  // Skips empty words: the cost is one read per 32 items plus one step per kept item.
  template <class Fn>
  void for_each_kept(std::size_t begin, std::size_t end, Fn&& fn) const {
    for_each_word(begin, end, [&](std::size_t base, std::uint32_t bits) {
      while (bits) {
        fn(base + static_cast<std::size_t>(std::countr_zero(bits)));
        bits &= bits - 1;
      }
    });
  }
};

struct predicate_source {
  predicate keep;
  bool operator()(std::size_t i) const { return keep(i); }
  std::size_t count(std::size_t begin, std::size_t end) const {
    std::size_t c = 0;
    for (std::size_t i = begin; i < end; ++i) c += keep(i);
    return c;
  }
  template <class Fn>
  void for_each_kept(std::size_t begin, std::size_t end, Fn&& fn) const {
    for (std::size_t i = begin; i < end; ++i)
      if (keep(i)) fn(i);
  }
};

// Calls f(source) for byte flags, a bit mask or a predicate. A removal list has no per-item
// answer until it is marked: callers mark it first (mark_removals) and pass the flags.
template <class F>
decltype(auto) with_source(const selection& keep, F&& f) {
  switch (form_of(keep)) {
    case form::byte_flags: return f(flag_source{std::get<byte_flags>(keep).keep.data()});
    case form::bit_mask: return f(mask_source{std::get<bit_mask>(keep).words.data()});
    case form::predicate: return f(predicate_source{std::get<predicate>(keep)});
    case form::removal_list: break;
  }
  throw error("sieve: internal: a removal list has no per-item source; mark it first");
}

// ---- removal lists ---------------------------------------------------------------------------

// Checked mode: throws sieve::error if the list is longer than n, an index is >= n or one appears
// twice, naming the first bad position. One pass over the list (in parallel on 8 threads or more);
// scratch is n bits unless k < n / 512, then a hash set of 2k to 4k slots.
void check_removals(std::span<const std::uint32_t> removals, std::size_t n);

// Phase 1 of the O(n) competitors: a byte stencil over all n items, 1 = keep, 0 at each index of
// the removal list.
std::vector<std::uint8_t> mark_removals(std::span<const std::uint32_t> removals, std::size_t n);

// ---- count / prefix / move -------------------------------------------------------------------

// The three-phase O(n) compaction that Billeter et al. (count per virtual processor, prefix over
// the P counts, move) and Bernabé's Stencil (count per thread, prefix, compact) share on the CPU:
// the input is cut into `parts` contiguous ranges; each part's kept items go, in order, after the
// kept items of the parts before it. Stable, out of place. Returns the number kept.
// `static_parts` pins one part per thread (Stencil); otherwise TBB balances the parts.
template <class Source, class Move>
std::size_t count_prefix_move(const Source& src, const Move& move, std::size_t n, std::size_t parts,
                              bool static_parts, phase_times* times);

// ---- timing ----------------------------------------------------------------------------------

class stopwatch {
 public:
  stopwatch() : start_(std::chrono::steady_clock::now()) {}
  // Milliseconds since the last lap (or construction).
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - start_).count();
    start_ = now;
    return ms;
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace sieve::detail

#include "count_prefix_move.ipp"
