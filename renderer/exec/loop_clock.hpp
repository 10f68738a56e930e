// The per-loop clock: what each parallel_for launch cost, keyed by the loop's name (the name that
// also labels its NVTX range). A profiled render hands one to its exec tag (exec::cpu::clock, and
// on the GPU exec::cuda::clock, which times launches with CUDA events and reports here); an exec tag
// without one times nothing, at the cost of a null-pointer check per launch.
//
// Both backends report the same rows: per loop name, the launches, the items launched over (on the
// GPU a wave captured as a graph launches over the queue's capacity, so these are slots, not live
// paths) and the milliseconds, in the order the loops first ran.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sieve::exec {

struct loop_time {
  std::string name;
  std::uint64_t launches = 0;
  std::uint64_t items = 0;
  double ms = 0;
};

// Adds `t` to the row of its name in `rows` (a new row at the end for a new name): how clocks, and
// the ranks of a split render, merge their loops.
inline void add_loop_time(std::vector<loop_time>& rows, const loop_time& t) {
  auto it = std::find_if(rows.begin(), rows.end(), [&](const loop_time& r) { return r.name == t.name; });
  if (it == rows.end()) it = rows.insert(rows.end(), loop_time{t.name, 0, 0, 0});
  it->launches += t.launches;
  it->items += t.items;
  it->ms += t.ms;
}

// The rows of one render, written where the owner points it (render_stats::loops).
class loop_clock {
 public:
  explicit loop_clock(std::vector<loop_time>& rows) : rows_(&rows) {}

  // One launch of loop `name` over n items that took ms.
  void add(std::string_view name, std::size_t n, double ms) { add_loop_time(*rows_, {std::string(name), 1, n, ms}); }
  const std::vector<loop_time>& rows() const { return *rows_; }

 private:
  std::vector<loop_time>* rows_;
};

}  // namespace sieve::exec
