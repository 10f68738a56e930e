// The CUDA radix sort entry points: validate, handle the trivial cases, size and check the
// workspace, dispatch to the algorithm. Built only with the CUDA backend (cuda_missing.cpp stands in
// otherwise).
#include <sieve/compaction/cuda_check.hpp>
#include <sieve/compaction/error.hpp>
#include <sieve/compaction/radix_sort.hpp>

#include "internal/radix_sort_table.hpp"

#include <cuda_runtime_api.h>

#include <array>
#include <string>

namespace sieve::cuda {
namespace {

constexpr std::array<std::string_view, 2> names = {"onesweep", "cub"};

detail::cuda_sort_fn algorithm_named(std::string_view name) {
  if (name == "onesweep") return &detail::cuda_radix_sort_onesweep;
  if (name == "cub") return &detail::cuda_radix_sort_cub;
  throw error("unknown radix sort algorithm '" + std::string(name) + "'; algorithms: onesweep, cub");
}

void check_bits(int begin_bit, int end_bit) {
  if (begin_bit < 0 || end_bit > 32 || begin_bit > end_bit)
    throw error("cuda radix_sort_pairs: bit range [" + std::to_string(begin_bit) + ", " + std::to_string(end_bit) +
                ") is not inside [0, 32)");
}

void check_n(std::string_view name, std::size_t n) {
  if (name == "onesweep" && n > detail::onesweep_max_n)
    throw error("cuda radix_sort_pairs 'onesweep': " + std::to_string(n) + " pairs; it sorts at most 2^30 - 1 (use cub)");
  if (n > (std::size_t{1} << 32) - 1) throw error("cuda radix_sort_pairs: " + std::to_string(n) + " pairs; at most 2^32 - 1");
}

// Nothing to reorder: fewer than two pairs, or no key bits.
bool trivial(std::size_t n, int begin_bit, int end_bit) { return n < 2 || begin_bit == end_bit; }

bool overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  return a_bytes && b_bytes && x < y + b_bytes && y < x + a_bytes;
}

}  // namespace

std::span<const std::string_view> radix_sort_algorithms() { return names; }

std::size_t radix_sort_workspace_bytes(std::string_view algorithm, std::size_t n, int begin_bit, int end_bit) {
  const detail::cuda_sort_fn fn = algorithm_named(algorithm);
  check_bits(begin_bit, end_bit);
  check_n(algorithm, n);
  if (trivial(n, begin_bit, end_bit)) return 0;
  detail::cuda_sort_call q;
  q.n = n;
  q.begin_bit = begin_bit;
  q.end_bit = end_bit;
  q.query = true;
  return fn(q);
}

void radix_sort_pairs_async(std::string_view algorithm, std::span<const std::uint32_t> keys_in,
                            std::span<const std::uint32_t> values_in, std::span<std::uint32_t> keys_out,
                            std::span<std::uint32_t> values_out, int begin_bit, int end_bit, workspace ws,
                            stream_t stream) {
  const detail::cuda_sort_fn fn = algorithm_named(algorithm);
  const std::size_t n = keys_in.size();
  if (values_in.size() != n || keys_out.size() != n || values_out.size() != n)
    throw error("cuda radix_sort_pairs: lengths differ (keys in " + std::to_string(n) + ", values in " +
                std::to_string(values_in.size()) + ", keys out " + std::to_string(keys_out.size()) +
                ", values out " + std::to_string(values_out.size()) + ")");
  check_bits(begin_bit, end_bit);
  check_n(algorithm, n);
  const std::size_t bytes = 4 * n;
  for (const void* out : {static_cast<const void*>(keys_out.data()), static_cast<const void*>(values_out.data())})
    for (const void* in : {static_cast<const void*>(keys_in.data()), static_cast<const void*>(values_in.data())})
      if (overlap(out, bytes, in, bytes)) throw error("cuda radix_sort_pairs: an output overlaps an input (the sort is out of place)");
  if (overlap(keys_out.data(), bytes, values_out.data(), bytes))
    throw error("cuda radix_sort_pairs: keys_out and values_out overlap");
  if (n == 0) return;
  if (trivial(n, begin_bit, end_bit)) {
    SIEVE_CUDA_CHECK(cudaMemcpyAsync(keys_out.data(), keys_in.data(), bytes, cudaMemcpyDeviceToDevice, stream));
    SIEVE_CUDA_CHECK(cudaMemcpyAsync(values_out.data(), values_in.data(), bytes, cudaMemcpyDeviceToDevice, stream));
    return;
  }
  detail::cuda_sort_call call;
  call.keys_in = keys_in.data();
  call.values_in = values_in.data();
  call.keys_out = keys_out.data();
  call.values_out = values_out.data();
  call.n = n;
  call.begin_bit = begin_bit;
  call.end_bit = end_bit;
  call.stream = stream;
  call.query = true;
  const std::size_t need = fn(call);
  if (ws.bytes < need || (need > 0 && ws.data == nullptr))
    throw error("cuda radix_sort_pairs '" + std::string(algorithm) + "': workspace of " + std::to_string(ws.bytes) +
                " bytes, needs " + std::to_string(need) + " (ask sieve::cuda::radix_sort_workspace_bytes)");
  call.query = false;
  call.workspace = ws.data;
  call.workspace_bytes = ws.bytes;
  fn(call);
}

}  // namespace sieve::cuda
