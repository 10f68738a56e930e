// Counter-based random numbers: a number depends only on (pixel, sample, bounce, dimension, seed),
// never on the order in which paths are processed or where a path sits in a compacted queue. This
// is what makes every compaction strategy produce the same image.
#pragma once

#include <exec/exec.hpp>
#include <sieve/hash.hpp>  // mix64, SplitMix64's finaliser, applied to a packed key

#include <cstdint>

namespace sieve::render {

struct rng_key {
  std::uint32_t pixel = 0;
  std::uint32_t sample = 0;
  std::uint32_t bounce = 0;
  std::uint32_t seed = 0;
};

// Uniform in [0, 1) for one dimension of one path vertex.
SIEVE_HD constexpr float uniform(rng_key k, std::uint32_t dimension) {
  const std::uint64_t a = mix64((std::uint64_t{k.pixel} << 32 | k.sample) ^ 0x9E3779B97F4A7C15ULL * (k.seed + 1));
  const std::uint64_t b = mix64(a ^ (std::uint64_t{k.bounce} << 32 | dimension));
  return static_cast<float>(b >> 40) * (1.0f / 16777216.0f);  // 24 bits: exactly representable
}

}  // namespace sieve::render
