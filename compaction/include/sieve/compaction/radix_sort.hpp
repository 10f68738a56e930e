#pragma once

#include <sieve/compaction/cuda.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace sieve {

// Stable LSD radix sort of (key, value) pairs by key bits [begin_bit, end_bit), on the CPU (oneTBB).
// Pairs whose keys agree on those bits keep their order. keys and values have equal length.
void radix_sort_pairs(std::span<std::uint32_t> keys, std::span<std::uint32_t> values, int begin_bit = 0,
                      int end_bit = 32);

}  // namespace sieve

namespace sieve::cuda {

// The same sort on the GPU, out of place: (keys_in, values_in) -> (keys_out, values_out), all device
// memory of one length n, outputs not overlapping inputs; the inputs are left as they were. Stable.
// Algorithms:
//   "onesweep"  sieve's own: one pass reads the keys once and builds every digit's histogram, then
//               one pass per 8-bit digit ranks a tile in shared memory, takes each digit's output
//               offset by decoupled look-back across tiles and writes the tile out (n < 2^30);
//   "cub"       cub::DeviceRadixSort::SortPairs, the baseline.
// Temporary storage is the caller's, as for compaction: ask radix_sort_workspace_bytes() with the same
// algorithm, n and bit range, pass a device buffer at least that large. Nothing allocates. Builds
// without CUDA throw sieve::error.
std::size_t radix_sort_workspace_bytes(std::string_view algorithm, std::size_t n, int begin_bit = 0,
                                       int end_bit = 32);

void radix_sort_pairs_async(std::string_view algorithm, std::span<const std::uint32_t> keys_in,
                            std::span<const std::uint32_t> values_in, std::span<std::uint32_t> keys_out,
                            std::span<std::uint32_t> values_out, int begin_bit, int end_bit, workspace ws,
                            stream_t stream = nullptr);

// The algorithms radix_sort_pairs_async takes: {"onesweep", "cub"}.
std::span<const std::string_view> radix_sort_algorithms();

}  // namespace sieve::cuda
