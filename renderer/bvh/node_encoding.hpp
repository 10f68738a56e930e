// How the trees' nodes are encoded, in the few helpers that the builders (which write the nodes) and
// the traversals (which read them) share: the bit tricks over a wide node's slot masks, the decoding
// of its quantised boxes' scale and leaf counts, and the depth every traversal's stack holds.
#pragma once

#include "bvh.hpp"

#include <cstdint>
#include <cstring>

namespace sieve::render {

// The entries a traversal's fixed stack holds; the builders keep trees within dfs_depth_limit().
inline constexpr int dfs_stack_size = 64;
static_assert(dfs_depth_limit() < dfs_stack_size, "the builder must keep trees within the DFS stack");

SIEVE_HD inline float exp2_of(std::int8_t e) {  // 2^e for e in [-126, 127], exactly
  return bits_float(static_cast<std::uint32_t>(e + 127) << 23);
}

SIEVE_HD inline int lowest_bit(std::uint32_t m) {
#if defined(__CUDA_ARCH__)
  return __ffs(m) - 1;
#else
  return __builtin_ctz(m);
#endif
}

SIEVE_HD inline int bit_count(std::uint32_t m) {
#if defined(__CUDA_ARCH__)
  return __popc(m);
#else
  return __builtin_popcount(m);
#endif
}

// Bit k of the result is bit k ^ oct of m: a slot mask in the order a ray of octant oct visits it.
SIEVE_HD inline std::uint32_t octant_order(std::uint32_t m, std::uint32_t oct) {
  if (oct & 1) m = ((m & 0x55U) << 1) | ((m & 0xAAU) >> 1);
  if (oct & 2) m = ((m & 0x33U) << 2) | ((m & 0xCCU) >> 2);
  if (oct & 4) m = ((m & 0x0FU) << 4) | ((m & 0xF0U) >> 4);
  return m;
}

// The node's leaf triangle counts, one per byte (inner and empty slots 0); the first triangle of
// leaf slot s is tri_base + leaf_offset(counts, s).
SIEVE_HD inline std::uint64_t leaf_counts(const wide_node& n) {
  std::uint64_t m;
  std::memcpy(&m, n.meta, sizeof m);
  return m & 0x7F7F7F7F7F7F7F7FULL;  // inner slots (0x80) become 0
}
SIEVE_HD inline std::uint32_t leaf_total(const wide_node& n) {  // the node's leaf triangles (<= 248)
  return static_cast<std::uint32_t>((leaf_counts(n) * 0x0101010101010101ULL) >> 56);
}
SIEVE_HD inline std::uint32_t leaf_offset(std::uint64_t counts, int s) {
  return static_cast<std::uint32_t>((((counts << 8) * 0x0101010101010101ULL) >> (8 * s)) & 0xFF);
}

SIEVE_HD inline std::uint32_t inner_child(std::uint32_t child_base, std::uint32_t inner_mask, int s) {
  return child_base + static_cast<std::uint32_t>(bit_count(inner_mask & ((1U << s) - 1)));
}

}  // namespace sieve::render
