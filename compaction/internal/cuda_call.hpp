// What a CUDA strategy receives and the CUDA strategies' entry points (not installed): all that
// kernels/cuda/<name>.cu needs of the registry, without the CPU strategies' machinery (cpu_call.hpp, TBB).
#pragma once

#include <sieve/compaction/record.hpp>
#include <sieve/compaction/selection.hpp>

#include <cstddef>
#include <cstdint>

struct CUstream_st;

namespace sieve::detail {

// What every CUDA strategy receives. Pointers are device pointers. With `query` set the strategy
// only returns the workspace bytes it needs for this call's shape; otherwise it enqueues its work
// on `stream`, writes the kept count to *d_count (device) and returns 0.
struct cuda_call {
  record in;
  record out;
  const selection& keep;
  bool in_place = false;
  bool checked = false;
  std::uint64_t* d_count = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  CUstream_st* stream = nullptr;
  bool query = false;
  // Live counts in device memory (sieve::cuda::device_counts); null: in.size() and the removal
  // list's span size are the counts themselves.
  const std::uint64_t* live_n = nullptr;
  const std::uint64_t* live_k = nullptr;
};
using cuda_strategy_fn = std::size_t (*)(const cuda_call&);

// CUDA strategies (kernels/cuda/<name>.cu); only in builds with CUDA.
std::size_t cuda_atomic(const cuda_call&);
std::size_t cuda_redzone(const cuda_call&);
std::size_t cuda_space(const cuda_call&);
std::size_t cuda_cub(const cuda_call&);
std::size_t cuda_thrust(const cuda_call&);
std::size_t cuda_scan(const cuda_call&);
std::size_t cuda_billeter(const cuda_call&);

}  // namespace sieve::detail
