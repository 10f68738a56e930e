// The decoupled look-back of Merrill & Garland's single-pass scan ("Single-pass Parallel Prefix Scan
// with Decoupled Look-back", 2016), the one copy every CUDA kernel of the library uses (not installed):
// the selection strategies (one count per tile, select_common.cuh's look_back) and the onesweep radix
// sort (one count per digit and tile).
//
// Tiles are taken in launch order from an atomic counter (take_tile), so every tile waited on is
// running. Each tile publishes a status word per counter: its own count (aggregate), then the count of
// every tile up to and including it (inclusive prefix). A tile's exclusive prefix is found by walking
// back over the statuses of earlier tiles, adding aggregates until the nearest inclusive prefix.
// The walk is done by a group of Lanes threads (1: one thread per counter; 32: a whole warp, each
// lane reading one status, so one step covers 32 tiles).
#pragma once

#include <cuda/atomic>

#include <cstdint>

namespace sieve::detail {

// A status word of Word (32 or 64 bits): the top two bits say what the rest holds.
template <class Word>
struct tile_status {
  static constexpr unsigned flag_shift = 8 * sizeof(Word) - 2;
  static constexpr Word aggregate = Word{1} << flag_shift;  // the tile's own count
  static constexpr Word prefix = Word{2} << flag_shift;     // every tile's count up to and including it
  static constexpr Word value_bits = (Word{1} << flag_shift) - 1;
  __device__ static bool published(Word s) { return (s >> flag_shift) != 0; }
  __device__ static bool is_prefix(Word s) { return (s & ~value_bits) == prefix; }
};

template <class Word>
using status_ref = ::cuda::atomic_ref<Word, ::cuda::thread_scope_device>;

// Publishes `flag | value` as the status of a tile.
template <class Word>
__device__ inline void publish(Word& status, Word flag, Word value) {
  status_ref<Word>(status).store(flag | value, ::cuda::memory_order_relaxed);
}

// The tile index of this block, in the order blocks start (thread 0 asks; all threads get it).
__device__ inline unsigned take_tile(unsigned* counter, unsigned* shared_slot) {
  if (threadIdx.x == 0) *shared_slot = atomicAdd(counter, 1U);
  __syncthreads();
  return *shared_slot;
}

// The collective operations of a look-back group: one thread, or one whole warp.
template <unsigned Lanes>
struct look_back_group;
template <>
struct look_back_group<1> {
  __device__ static unsigned lane() { return 0; }
  __device__ static bool any(bool p) { return p; }
  __device__ static unsigned ballot(bool p) { return p ? 1U : 0U; }
  template <class T>
  __device__ static T sum(T v) { return v; }
};
template <>
struct look_back_group<32> {
  __device__ static unsigned lane() { return threadIdx.x % 32; }
  __device__ static bool any(bool p) { return __any_sync(0xffffffffU, p); }
  __device__ static unsigned ballot(bool p) { return __ballot_sync(0xffffffffU, p); }
  template <class T>
  __device__ static T sum(T v) {
#pragma unroll
    for (int d = 16; d >= 1; d /= 2) v += __shfl_xor_sync(0xffffffffU, v, d);
    return v;
  }
};

// The exclusive prefix of tile `tile` (> 0) for one counter whose status of tile t is
// status[t * stride]: the sum of the counts of every earlier tile. Called by every thread of a group
// of Lanes (the whole warp for 32), which all get the result. Lane L reads tile window_end - L (the
// nearest first); the group spins until every status of its window is published. Measured on an
// H100 (2026-11-22): a lane reading 4 statuses a step was slower than 1, for sparse and dense
// selections alike (more L2 traffic from the spinning warps).
template <unsigned Lanes, class Word>
__device__ inline Word look_back_prefix(const Word* status, std::size_t stride, unsigned tile) {
  using group = look_back_group<Lanes>;
  using st = tile_status<Word>;
  const unsigned lane = group::lane();
  auto read = [&](long long t) {
    return t >= 0 ? status_ref<Word>(const_cast<Word&>(status[static_cast<std::size_t>(t) * stride]))
                        .load(::cuda::memory_order_relaxed)
                  : st::prefix;
  };
  Word exclusive = 0;
  long long window_end = static_cast<long long>(tile) - 1;  // the nearest tile of the current window
  while (true) {
    const long long t = window_end - static_cast<long long>(lane);
    Word s = read(t);
    while (group::any(!st::published(s))) {
      if (!st::published(s)) s = read(t);
    }
    // Lanes up to and including the nearest lane with a prefix contribute.
    const bool has_prefix = st::is_prefix(s);
    const unsigned prefixes = group::ballot(has_prefix);
    const unsigned nearest = prefixes ? __ffs(prefixes) - 1 : Lanes - 1;
    exclusive += group::sum(lane > nearest ? Word{0} : Word(s & st::value_bits));
    if (prefixes) return exclusive;
    window_end -= Lanes;
  }
}

}  // namespace sieve::detail
