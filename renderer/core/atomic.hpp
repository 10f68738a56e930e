// Atomics on the CPU (std::atomic_ref) and on the GPU: minimum of a 64-bit word, maximum, or and add
// of 32-bit words, and the aggregated forms.
#pragma once

#include "math.hpp"  // float_bits, bits_float
#include <exec/exec.hpp>

#if defined(__CUDACC__)
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#endif

#include <atomic>
#include <bit>
#include <cstdint>

namespace sieve::render {

SIEVE_HD inline void atomic_min_u64(std::uint64_t* address, std::uint64_t value) {
#if defined(__CUDA_ARCH__)
  atomicMin(reinterpret_cast<unsigned long long*>(address), static_cast<unsigned long long>(value));
#else
  std::atomic_ref<std::uint64_t> a(*address);
  std::uint64_t seen = a.load(std::memory_order_relaxed);
  while (value < seen && !a.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
#endif
}

SIEVE_HD inline std::uint64_t atomic_load_u64(const std::uint64_t* address) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const volatile unsigned long long*>(address);
#else
  return std::atomic_ref<const std::uint64_t>(*address).load(std::memory_order_relaxed);
#endif
}

SIEVE_HD inline void atomic_or_u32(std::uint32_t* address, std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  atomicOr(address, bits);
#else
  std::atomic_ref<std::uint32_t>(*address).fetch_or(bits, std::memory_order_relaxed);
#endif
}

SIEVE_HD inline void atomic_max_u32(std::uint32_t* address, std::uint32_t value) {
#if defined(__CUDA_ARCH__)
  atomicMax(address, value);
#else
  std::atomic_ref<std::uint32_t> a(*address);
  std::uint32_t seen = a.load(std::memory_order_relaxed);
  while (value > seen && !a.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
#endif
}

SIEVE_HD inline std::uint32_t atomic_add_u32(std::uint32_t* address, std::uint32_t value) {
#if defined(__CUDA_ARCH__)
  return atomicAdd(address, value);
#else
  return std::atomic_ref<std::uint32_t>(*address).fetch_add(value, std::memory_order_relaxed);
#endif
}

// Adds v to *address once per group of threads that arrive together (one atomic per warp on the
// GPU, where thousands of threads count into one word). For counters whose order does not matter.
SIEVE_HD inline void atomic_add_aggregated(std::uint32_t* address, std::uint32_t v) {
#if defined(__CUDA_ARCH__)
  namespace cg = cooperative_groups;
  const cg::coalesced_group g = cg::coalesced_threads();
  const std::uint32_t sum = cg::reduce(g, v, cg::plus<std::uint32_t>());
  if (g.thread_rank() == 0) atomicAdd(address, sum);
#else
  atomic_add_u32(address, v);
#endif
}

// A slot of its own in a list whose length is *count, for each thread that calls (in no particular
// order; the threads may have diverged): one atomic per group of threads that arrive together on the
// GPU, each taking the next of the group's slots.
SIEVE_HD inline std::uint32_t append_slot_aggregated(std::uint32_t* count) {
#if defined(__CUDA_ARCH__)
  namespace cg = cooperative_groups;
  const cg::coalesced_group g = cg::coalesced_threads();
  std::uint32_t base = 0;
  if (g.thread_rank() == 0) base = atomicAdd(count, g.size());
  return g.shfl(base, 0) + g.thread_rank();
#else
  return atomic_add_u32(count, 1U);
#endif
}

// Appends value to list[0, *count) (in no particular order): one atomic per warp on the GPU.
SIEVE_HD inline void append_aggregated(std::uint32_t* list, std::uint32_t* count, std::uint32_t value) {
  list[append_slot_aggregated(count)] = value;
}

// The low 32-bit word of a 64-bit count: the stages' and the marks' counters are 32-bit, the
// library's device counts 64-bit; a count below 2^32 (every queue here) reads the same through both.
SIEVE_HD inline std::uint32_t* low_word(std::uint64_t* p) {
  static_assert(std::endian::native == std::endian::little, "the counts' low words come first");
  return reinterpret_cast<std::uint32_t*>(p);
}
SIEVE_HD inline const std::uint32_t* low_word(const std::uint64_t* p) { return low_word(const_cast<std::uint64_t*>(p)); }

// (t, primitive) packed so that the smaller word is the closer hit (t >= 0: its bits order as
// integers), ties going to the lower primitive index.
SIEVE_HD inline std::uint64_t pack_hit(float t, std::uint32_t prim) {
  return (std::uint64_t{float_bits(t)} << 32) | prim;
}
SIEVE_HD inline float unpack_t(std::uint64_t packed) { return bits_float(static_cast<std::uint32_t>(packed >> 32)); }
SIEVE_HD inline std::uint32_t unpack_prim(std::uint64_t packed) { return static_cast<std::uint32_t>(packed); }

}  // namespace sieve::render
