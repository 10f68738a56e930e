// std (CPU): the standard library's own algorithm, std::copy_if (in place: into scratch memory,
// then copied back), with the parallel execution policy (libstdc++ runs it on oneTBB). Stable.
// A removal list or a predicate is first marked in a byte stencil (phase 1), as every O(n)
// competitor must for a list; a record of several arrays runs the algorithm once per array with
// the same decisions. Items of 1, 2, 4, 8, 12, 16, 24, 32, 48 or 64 bytes move as values; other
// widths through an index list.
#include "internal/cpu_call.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <memory>
#include <execution>
#include <numeric>
#include <vector>
#include <string>

namespace sieve::detail {
namespace {

template <class T, class Keep>
std::size_t run_column(const cpu_call& call, std::size_t c, const Keep& keep) {
  const std::size_t n = call.in.size();
  auto* in = reinterpret_cast<T*>(call.in[c].data);
  auto* out = reinterpret_cast<T*>(call.out[c].data);
  auto index = [in](const T& x) { return static_cast<std::size_t>(&x - in); };
  return static_cast<std::size_t>(
      std::copy_if(std::execution::par, in, in + n, out, [&](const T& x) { return keep(index(x)); }) - out);
}

// Any other width: std::copy_if picks the kept indices, then the column is gathered through them
// (in place, from a copy of the input).
template <class Keep>
std::size_t run_column_any_width(const cpu_call& call, std::size_t c, const Keep& keep) {
  const std::size_t n = call.in.size(), w = call.in[c].width;
  std::vector<std::size_t> all(n), kept(n);
  std::iota(all.begin(), all.end(), std::size_t{0});
  const std::size_t m = static_cast<std::size_t>(
      std::copy_if(std::execution::par, all.begin(), all.end(), kept.begin(), [&](std::size_t i) { return keep(i); }) -
      kept.begin());
  std::vector<std::byte> copy;
  const std::byte* src = call.in[c].data;
  if (call.in_place) {
    copy.assign(src, src + n * w);
    src = copy.data();
  }
  std::byte* dst = call.out[c].data;
  std::for_each(std::execution::par, kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(m),
                [&](const std::size_t& i) { copy_bytes(dst + static_cast<std::size_t>(&i - kept.data()) * w, src + i * w,
                                                       static_cast<std::uint32_t>(w)); });
  return m;
}

template <class Keep>
std::size_t run(const cpu_call& call, const Keep& keep) {
  std::size_t kept = 0;
  for (std::size_t c = 0; c < call.in.columns(); ++c) {
    switch (call.in[c].width) {
#define SIEVE_STD_CASE(W) \
  case W: kept = run_column<blob<W>>(call, c, keep); break;
      SIEVE_FOR_EACH_FIXED_WIDTH(SIEVE_STD_CASE)
#undef SIEVE_STD_CASE
      default: kept = run_column_any_width(call, c, keep);
    }
  }
  return kept;
}

}  // namespace

std::size_t cpu_std(const cpu_call& call) {
  const std::size_t n = call.in.size();
  stopwatch clock;
  std::vector<std::uint8_t> marked;
  const form f = form_of(call.keep);
  // A removal list has no per-item answer until marked. A predicate is marked too: evaluated once
  // per item (not once per array) and outside the std::execution::par algorithms, which call
  // std::terminate when it throws; tbb::parallel_for hands its exception to the caller, before
  // anything has moved.
  const bool mark = f == form::removal_list || f == form::predicate;
  if (mark) {
    if (f == form::removal_list) {
      marked = mark_removals(std::get<removal_list>(call.keep).indices, n);
    } else {
      marked.resize(n);
      const predicate keep = std::get<predicate>(call.keep);
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1 << 14), [&](const auto& r) {
        for (std::size_t i = r.begin(); i != r.end(); ++i) marked[i] = keep(i);
      });
    }
    if (call.times) call.times->phase1_ms = clock.lap();
  }
  // In place, the items are first compacted into scratch memory taken here, then copied back: the
  // parallel std::remove_if takes its temporary buffer itself and ends the process (std::terminate)
  // when it cannot, where this allocation throws std::bad_alloc before any item has moved.
  std::unique_ptr<std::byte[]> scratch;
  cpu_call into = call;
  std::array<column, record::max_columns> cols{};
  if (call.in_place && n > 0) {
    scratch = std::make_unique_for_overwrite<std::byte[]>(n * call.in.item_bytes());
    std::size_t at = 0;
    for (std::size_t c = 0; c < call.in.columns(); ++c) {
      cols[c] = {scratch.get() + at, call.in[c].width};
      at += n * call.in[c].width;
    }
    into.out = record(std::span<const column>(cols.data(), call.in.columns()), n);
    into.in_place = false;
  }
  // `mark`, not marked.empty(): with n = 0 the stencil is empty too.
  const std::size_t kept = mark ? run(into, flag_source{marked.data()})
                                : with_source(call.keep, [&](const auto& keep) { return run(into, keep); });
  if (scratch)
    for (std::size_t c = 0; c < call.in.columns(); ++c)
      std::copy_n(cols[c].data, kept * cols[c].width, call.in[c].data);
  if (call.times) call.times->phase2_ms = clock.lap();
  return kept;
}

}  // namespace sieve::detail
