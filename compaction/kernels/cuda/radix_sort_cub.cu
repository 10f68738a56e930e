// radix sort, cub (CUDA): the baseline, cub::DeviceRadixSort::SortPairs (CUB's own onesweep on
// sm_70 and later), out of place over the bit range; its temporaries are the workspace. Stable.
#include "internal/device.cuh"

#include "internal/radix_sort_table.hpp"

#include <cub/device/device_radix_sort.cuh>

#include <climits>

namespace sieve::detail {

std::size_t cuda_radix_sort_cub(const cuda_sort_call& c) {
  std::size_t bytes = c.query ? 0 : c.workspace_bytes;
  void* temp = c.query ? nullptr : c.workspace;
  // 32-bit item counts where they fit: CUB's offsets follow the count's type.
  if (c.n <= static_cast<std::size_t>(INT_MAX))
    SIEVE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, bytes, c.keys_in, c.keys_out, c.values_in, c.values_out,
                                                     static_cast<int>(c.n), c.begin_bit, c.end_bit, c.stream));
  else
    SIEVE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, bytes, c.keys_in, c.keys_out, c.values_in, c.values_out,
                                                     static_cast<std::int64_t>(c.n), c.begin_bit, c.end_bit,
                                                     c.stream));
  return c.query ? bytes : 0;
}

}  // namespace sieve::detail
