// atomic (CUDA): warp-aggregated atomics. Each warp ballots its keep bits, one lane reserves room
// for the warp's kept items with a single atomicAdd on the global count, and every kept item goes
// to that base plus its rank in the ballot. One read of the input, no prefix pass; the order of the
// warps' reservations, and so the output order, varies from run to run (unstable). With counts on
// the device the grid covers the capacity and reads n when it runs: a memset of the count and one
// kernel.
#include "../src/strategy_table.hpp"
#include "device.cuh"

namespace sieve::detail {
namespace {

template <class Keep>
__global__ void atomic_compact(live_count live, Keep keep, device_mover move, unsigned long long* count) {
  const unsigned lane = threadIdx.x % 32;
  const std::size_t n = live.get();
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  // The loop bound is the same for the whole block, so every lane reaches the ballot.
  for (std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x; base < n; base += stride) {
    const std::size_t i = base + threadIdx.x;
    const bool kept = i < n && keep(i);
    const unsigned ballot = __ballot_sync(0xffffffffU, kept);
    unsigned long long start = 0;
    if (lane == 0 && ballot != 0) start = atomicAdd(count, static_cast<unsigned long long>(__popc(ballot)));
    start = __shfl_sync(0xffffffffU, start, 0);
    if (kept) move(start + __popc(ballot & ((1U << lane) - 1U)), i);
  }
}

template <class Keep>
void launch(const cuda_call& call, Keep keep) {
  constexpr unsigned threads = 256;
  const std::size_t capacity = call.in.size();
  auto* count = reinterpret_cast<unsigned long long*>(call.d_count);
  SIEVE_CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof *count, call.stream));
  if (capacity == 0) return;
  const device_mover move{device_record::of(call.in), device_record::of(call.out)};
  atomic_compact<<<grid_blocks(capacity, threads), threads, 0, call.stream>>>(live_count{call.live_n, capacity}, keep,
                                                                              move, count);
  SIEVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

std::size_t cuda_atomic(const cuda_call& call) {
  if (call.query) return 0;
  if (form_of(call.keep) == form::bit_mask)
    launch(call, device_mask{std::get<bit_mask>(call.keep).words.data()});
  else
    launch(call, device_flags{std::get<byte_flags>(call.keep).keep.data()});
  return 0;
}

}  // namespace sieve::detail
