// Template body of detail::count_prefix_move (see detail.hpp).
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <algorithm>
#include <vector>

namespace sieve::detail {

template <class Source, class Move>
std::size_t count_prefix_move(const Source& src, const Move& move, std::size_t n, std::size_t parts,
                              bool static_parts, phase_times* times) {
  stopwatch clock;
  parts = std::clamp<std::size_t>(parts, 1, std::max<std::size_t>(n, 1));
  const std::size_t span = (n + parts - 1) / parts;
  auto range_of = [&](std::size_t p) { return std::pair{std::min(p * span, n), std::min((p + 1) * span, n)}; };

  auto for_parts = [&](auto&& body) {
    const tbb::blocked_range<std::size_t> all(0, parts, 1);
    auto run = [&](const tbb::blocked_range<std::size_t>& r) {
      for (std::size_t p = r.begin(); p != r.end(); ++p) body(p);
    };
    if (static_parts)
      tbb::parallel_for(all, run, tbb::static_partitioner{});
    else
      tbb::parallel_for(all, run);
  };

  // Count per part, then an exclusive prefix over the parts (sequential: parts is small).
  std::vector<std::size_t> offset(parts + 1, 0);
  for_parts([&](std::size_t p) {
    const auto [b, e] = range_of(p);
    offset[p + 1] = src.count(b, e);
  });
  for (std::size_t p = 0; p < parts; ++p) offset[p + 1] += offset[p];
  if (times) times->phase2_ms = clock.lap();

  // Move: each part writes its kept items, in order, from its offset on.
  for_parts([&](std::size_t p) {
    const auto [b, e] = range_of(p);
    std::size_t to = offset[p];
    src.for_each_kept(b, e, [&](std::size_t i) { move(to++, i); });
  });
  if (times) times->phase3_ms = clock.lap();
  return offset[parts];
}

}  // namespace sieve::detail
