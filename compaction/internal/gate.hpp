// Checked mode on the device (not installed): the removal-list gate that cuda_api.cpp enqueues
// around a strategy and device.cu implements. Plain C++ (no CUDA keywords), for both sides.
#pragma once

#include <cstddef>
#include <cstdint>

struct CUstream_st;

namespace sieve::detail {

// Validates the first k (live) indices of a removal list against n (live) in stream order, without
// the host: the lowest position of an index >= n and of an index given twice (none: ~0), and the k
// a strategy may use: the live k when both are none, else 0 (nothing moves) with `valid` false.
// Lives in the call's workspace, beside removal_gate_seen_bytes(n) of scratch.
struct removal_gate {
  static constexpr unsigned long long none = ~0ULL;
  static constexpr std::uint64_t invalid_count = ~std::uint64_t{0};
  unsigned long long found[2];
  std::uint64_t k;
  std::uint64_t valid;
  unsigned done;  // blocks of the check that have finished
};

constexpr std::size_t removal_gate_seen_bytes(std::size_t n) { return (n + 2047) / 2048 * 256; }  // n bits, 256-aligned

// live_k / live_n: device counts or null (then k_capacity / n_capacity are the counts).
void gate_removals_async(const std::uint32_t* R, const std::uint64_t* live_k, std::size_t k_capacity,
                         const std::uint64_t* live_n, std::size_t n_capacity, std::uint32_t* seen, removal_gate* gate,
                         CUstream_st* stream);
// After the strategy: *d_count = invalid_count where the gate closed.
void gate_result_async(const removal_gate* gate, std::uint64_t* d_count, CUstream_st* stream);

}  // namespace sieve::detail
