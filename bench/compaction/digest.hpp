// The checksums a compaction's output is validated by when it is too large to copy back and compare
// byte by byte: a 64-bit hash of each row, summed over the rows (the multiset: what an unstable
// strategy must keep) and summed with each row's output position mixed in (the sequence: what a
// stable one must keep). Written once, for the host (the expected sums, cases.cpp) and the device
// (the output's sums, digest.cu).
#pragma once

#include <sieve/hash.hpp>  // mix64, SIEVE_HD

#include <cstdint>

namespace sieve::bench {

struct row_digest {
  std::uint64_t ordered = 0;    // sum over output positions j of position_hash(row_hash(row j), j)
  std::uint64_t unordered = 0;  // sum over rows of row_hash(row)
  friend bool operator==(const row_digest&, const row_digest&) = default;
};

// A 64-bit hash of one row of `width` bytes, read as little-endian 8-byte words. Rows of up to 8
// bytes that differ hash differently (mix64 is a bijection).
SIEVE_HD constexpr std::uint64_t row_hash(const unsigned char* row, std::uint32_t width) {
  std::uint64_t h = mix64(0x243F6A8885A308D3ULL + width);
  for (std::uint32_t b = 0; b < width; b += 8) {
    std::uint64_t word = 0;
    for (std::uint32_t k = 0; k < 8 && b + k < width; ++k) word |= std::uint64_t{row[b + k]} << (8 * k);
    h = mix64(h ^ word);
  }
  return h;
}

// The term of a row with hash h at output position j in the ordered sum: two different rows
// swapped change the sum.
SIEVE_HD constexpr std::uint64_t position_hash(std::uint64_t h, std::uint64_t j) {
  return mix64(h + (j + 1) * 0x9E3779B97F4A7C15ULL);
}

// Adds the row with hash h at output position j.
SIEVE_HD constexpr void add_row(std::uint64_t h, std::uint64_t j, std::uint64_t& ordered, std::uint64_t& unordered) {
  ordered += position_hash(h, j);
  unordered += h;
}

}  // namespace sieve::bench
