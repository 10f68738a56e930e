#pragma once

// sieve::mix64: SplitMix64's finaliser (Steele, Lea and Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014), a bijection of 64-bit words that spreads every input bit over the whole
// output. One copy for all layers, host and device: the renderer's counter-based random numbers
// (renderer/core/rng.hpp) and the compaction benchmark's permutations and output digests hash with it.
// Needs nothing but <sieve/hd.hpp>.

#include <sieve/hd.hpp>

#include <cstdint>

namespace sieve {

SIEVE_HD constexpr std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace sieve
