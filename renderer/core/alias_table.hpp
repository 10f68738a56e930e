// Walker's alias method: a discrete distribution over n outcomes drawn in O(1) with one table read
// (and a second read of the outcome's own data), where a CDF's binary search takes log2(n) dependent
// reads. Next-event estimation draws the environment map's texels (a table of rows, one per row for
// the columns) and the light triangles by it. One copy for CPU and GPU.
//
// Exactness: the uniform u is 24-bit (core/rng.hpp), u = k / 2^24. The slot is k n / 2^24 and the
// slot's own share is decided on the 24-bit remainder of k n, in integers: each outcome's chance is
// its weight's to within 2^-24 (a CDF's binary search on 24-bit numbers is as exact), whatever n.
// The remainder, scaled into [0, 1), places the sample inside its outcome (a texel's area).
#pragma once

#include "math.hpp"

#include <cstdint>
#include <vector>

namespace sieve::render {

inline constexpr std::uint32_t alias_one = 1U << 24;  // a share of 1 (the whole slot)

struct alias_entry {
  std::uint32_t keep = alias_one;  // the slot's own share in units of 2^-24: remainders below it keep the slot
  std::uint32_t alias = 0;         // the outcome drawn otherwise
};

struct alias_pick {
  std::uint32_t index = 0;
  float rest = 0;  // uniform in [0, 1), independent of the outcome drawn
};

// Outcome of u in [0, 1) from table t of n > 0 entries.
SIEVE_HD inline alias_pick pick_alias(const alias_entry* t, std::uint32_t n, float u) {
  const std::uint64_t k = static_cast<std::uint64_t>(fminf(fmaxf(u, 0.0f), 1.0f) * static_cast<float>(alias_one));
  const std::uint64_t scaled = (k < alias_one ? k : alias_one - 1) * n;
  const auto slot = static_cast<std::uint32_t>(scaled >> 24);
  const auto r = static_cast<std::uint32_t>(scaled & (alias_one - 1));
  const alias_entry e = t[slot];
  if (r < e.keep) return {slot, static_cast<float>(r) / static_cast<float>(e.keep)};
  return {e.alias, static_cast<float>(r - e.keep) / static_cast<float>(alias_one - e.keep)};
}

// The table of weights w (finite, >= 0; n = w.size() > 0; all zero: uniform), Vose's construction
// in double precision.
std::vector<alias_entry> build_alias_table(const std::vector<double>& w);

}  // namespace sieve::render
