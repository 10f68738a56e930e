// The CUDA radix sorts (not installed): what each algorithm's entry point receives. Adding one:
// write kernels/cuda/radix_sort_<name>.cu, declare its function here, add it to the table in
// dispatch/cuda_radix_sort.cpp and list the file in compaction/CMakeLists.txt.
#pragma once

#include <cstddef>
#include <cstdint>

struct CUstream_st;

namespace sieve::detail {

// Device pointers of n pairs; 0 <= begin_bit < end_bit <= 32 and n >= 2 (the dispatcher copies the
// trivial cases itself). With `query` set the algorithm only returns the workspace bytes it needs;
// otherwise it enqueues the sort on `stream` and returns 0.
struct cuda_sort_call {
  const std::uint32_t* keys_in = nullptr;
  const std::uint32_t* values_in = nullptr;
  std::uint32_t* keys_out = nullptr;
  std::uint32_t* values_out = nullptr;
  std::size_t n = 0;
  int begin_bit = 0, end_bit = 32;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  CUstream_st* stream = nullptr;
  bool query = false;
};
using cuda_sort_fn = std::size_t (*)(const cuda_sort_call&);

std::size_t cuda_radix_sort_onesweep(const cuda_sort_call&);
std::size_t cuda_radix_sort_cub(const cuda_sort_call&);

// The most pairs onesweep sorts (its look-back statuses hold 30-bit counts).
constexpr std::size_t onesweep_max_n = (std::size_t{1} << 30) - 1;

}  // namespace sieve::detail
