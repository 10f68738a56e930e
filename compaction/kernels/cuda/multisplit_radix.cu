// multisplit, radix (CUDA): the split as a reduced-bit radix sort. One kernel writes each item's
// bin as a 32-bit key and its index as the value (items past the live count get the largest key, so
// they sort last; checked mode notes the first id out of range), the library's onesweep radix sort
// (radix_sort_onesweep.cu) sorts the pairs over the bins' bits only, one kernel finds each bucket's
// first slot by binary search in the sorted keys, and one gathers the items in the sorted order.
// Stable (the sort is). It reads and writes 16 bytes of pairs per item per pass on top of the items.
#include "internal/device.cuh"
#include "internal/multisplit_count.cuh"
#include "internal/radix_sort_table.hpp"
#include "internal/select_common.cuh"

#include <bit>

namespace sieve::detail {
namespace {

constexpr unsigned threads = 256;

int bin_bits(const cuda_multisplit_call& c) {
  const unsigned bins = multisplit_bins(c.buckets, c.checked);
  return bins <= 1 ? 1 : std::bit_width(bins - 1);
}

__global__ void __launch_bounds__(threads) make_pairs(const std::uint8_t* __restrict__ ids, live_count live,
                                                      std::size_t capacity, unsigned buckets, bool checked,
                                                      std::uint32_t last_key, std::uint32_t* __restrict__ keys,
                                                      std::uint32_t* __restrict__ values, unsigned long long* bad) {
  const std::uint64_t n = live.get();
  for (std::size_t i = blockIdx.x * std::size_t{threads} + threadIdx.x; i < capacity;
       i += std::size_t{gridDim.x} * threads) {
    std::uint32_t key = last_key;
    if (i < n) {
      const unsigned id = ids[i];
      if (id >= buckets && checked) atomicMax(bad, ~static_cast<unsigned long long>(i));
      key = multisplit_bin(id, buckets) & last_key;
    }
    keys[i] = key;
    values[i] = static_cast<std::uint32_t>(i);
  }
}

// Thread b <= buckets: offsets[b], the first sorted slot whose key is >= b (the live items only).
__global__ void find_offsets(const std::uint32_t* __restrict__ keys, live_count live, unsigned buckets,
                             const unsigned long long* bad, std::uint64_t* offsets) {
  if (*bad) {
    write_invalid_offsets(offsets, buckets);
    return;
  }
  const std::uint64_t n = live.get();
  for (unsigned b = threadIdx.x; b <= buckets; b += blockDim.x) {
    std::uint64_t lo = 0, hi = n;
    while (lo < hi) {
      const std::uint64_t mid = (lo + hi) / 2;
      if (keys[mid] < b) lo = mid + 1; else hi = mid;
    }
    offsets[b] = lo;
  }
}

template <class Move>
__global__ void __launch_bounds__(threads) gather(Move move, const std::uint32_t* __restrict__ order, live_count live,
                                                   const unsigned long long* bad) {
  if (*bad) return;
  const std::uint64_t n = live.get();
  for (std::size_t j = blockIdx.x * std::size_t{threads} + threadIdx.x; j < n; j += std::size_t{gridDim.x} * threads)
    move(j, order[j]);
}

struct layout {
  std::size_t keys, values, sorted_keys, sorted_values, sort, total;
};

cuda_sort_call sort_call(const cuda_multisplit_call& c) {
  cuda_sort_call s;
  s.n = c.capacity;
  s.begin_bit = 0;
  s.end_bit = bin_bits(c);
  s.stream = c.stream;
  return s;
}

layout layout_of(const cuda_multisplit_call& c) {
  layout l{};
  const std::size_t words = align_up(4 * c.capacity);
  l.keys = 256;
  l.values = l.keys + words;
  l.sorted_keys = l.values + words;
  l.sorted_values = l.sorted_keys + words;
  l.sort = l.sorted_values + words;
  cuda_sort_call q = sort_call(c);
  q.query = true;
  l.total = l.sort + (c.capacity >= 2 ? align_up(cuda_radix_sort_onesweep(q)) : 0);
  return l;
}

}  // namespace

std::size_t cuda_multisplit_radix(const cuda_multisplit_call& c) {
  const layout l = layout_of(c);
  if (c.query) return l.total;
  auto* ws = static_cast<std::byte*>(c.workspace);
  auto* bad = reinterpret_cast<unsigned long long*>(ws);
  auto at = [&](std::size_t offset) { return reinterpret_cast<std::uint32_t*>(ws + offset); };
  SIEVE_CUDA_CHECK(cudaMemsetAsync(ws, 0, 8, c.stream));
  const live_count live{c.d_live, c.capacity};
  const std::uint32_t last_key = (1U << bin_bits(c)) - 1U;
  make_pairs<<<grid_blocks(c.capacity, threads), threads, 0, c.stream>>>(c.ids, live, c.capacity, c.buckets, c.checked,
                                                                         last_key, at(l.keys), at(l.values), bad);
  SIEVE_CUDA_CHECK(cudaGetLastError());
  const std::uint32_t* sorted_keys = at(l.keys);
  const std::uint32_t* order = at(l.values);
  if (c.capacity >= 2) {
    cuda_sort_call s = sort_call(c);
    s.keys_in = at(l.keys);
    s.values_in = at(l.values);
    s.keys_out = at(l.sorted_keys);
    s.values_out = at(l.sorted_values);
    s.workspace = ws + l.sort;
    s.workspace_bytes = c.workspace_bytes - l.sort;
    cuda_radix_sort_onesweep(s);
    sorted_keys = s.keys_out;
    order = s.values_out;
  }
  find_offsets<<<1, threads, 0, c.stream>>>(sorted_keys, live, c.buckets, bad, c.d_offsets);
  SIEVE_CUDA_CHECK(cudaGetLastError());
  with_device_mover(c.in, c.out, [&](auto move) {
    gather<<<grid_blocks(c.capacity, threads), threads, 0, c.stream>>>(move, order, live, bad);
    SIEVE_CUDA_CHECK(cudaGetLastError());
  });
  return 0;
}

}  // namespace sieve::detail
