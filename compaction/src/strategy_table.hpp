// The registry's table (not installed): every strategy's description and its entry point per
// backend. Adding a strategy: write cpu/<name>.cpp and/or cuda/<name>.cu, declare its functions
// here, add one row to the table in registry.cpp, and list the files in compaction/CMakeLists.txt.
#pragma once

#include "../cpu/detail.hpp"

#include <sieve/compaction/strategies.hpp>

#include <span>

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

struct strategy_entry {
  strategy_info info;
  cpu_strategy_fn cpu = nullptr;
  cuda_strategy_fn cuda = nullptr;
};

std::span<const strategy_entry> strategy_table();
const strategy_entry& strategy_entry_for(std::string_view name);

// The concrete strategy `auto` stands for on this backend, for this form and size: on CUDA the
// fastest that fits in the measured crossover table of `device` (crossover.hpp), else fixed rules.
std::string_view resolve_auto(backend b, form f, bool in_place, std::size_t n, std::size_t k,
                              std::string_view device = {}, std::size_t item_bytes = 4);

// The current CUDA device's name (the crossover tables are per device); empty without CUDA.
std::string_view cuda_device_name();

// CPU strategies (cpu/<name>.cpp).
std::size_t cpu_redzone(const cpu_call&);
std::size_t cpu_redzone_serial(const cpu_call&);
std::size_t cpu_stencil(const cpu_call&);
std::size_t cpu_std(const cpu_call&);
std::size_t cpu_scan(const cpu_call&);
std::size_t cpu_billeter(const cpu_call&);

// CUDA strategies (cuda/<name>.cu); only in builds with CUDA.
std::size_t cuda_atomic(const cuda_call&);
std::size_t cuda_redzone(const cuda_call&);
std::size_t cuda_space(const cuda_call&);
std::size_t cuda_cub(const cuda_call&);
std::size_t cuda_thrust(const cuda_call&);
std::size_t cuda_scan(const cuda_call&);
std::size_t cuda_billeter(const cuda_call&);

}  // namespace sieve::detail
