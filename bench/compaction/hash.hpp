// The compaction benchmark's integer hash: SplitMix64's finaliser (Steele, Lea and Flood, "Fast
// splittable pseudorandom number generators", OOPSLA 2014), a bijection of 64-bit words. The case
// generators' permutations (cases.cpp) and the output digests (digest.hpp) use it, on the host and
// the device. The benchmark keeps its own copy so that it depends on the library alone, not on the
// renderer's random numbers (renderer/core/rng.hpp mixes its counters the same way).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define SIEVE_BENCH_HD __host__ __device__
#else
#define SIEVE_BENCH_HD
#endif

namespace sieve::bench {

SIEVE_BENCH_HD constexpr std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace sieve::bench
