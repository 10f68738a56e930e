// atomic (CUDA): aggregated atomics. Each warp ballots its keep bits, one thread per block reserves
// room for the block's kept items with a single atomicAdd on the global count, and every kept item
// goes to its warp's share of that room plus its rank in the ballots. One read of the input, no
// prefix pass; the order of the reservations, and so the output order, varies from run to run
// (unstable). With counts on
// the device the grid covers the capacity and reads n when it runs: a memset of the count and one
// kernel.
#include "internal/select_common.cuh"

namespace sieve::detail {
namespace {

constexpr unsigned threads = 256;
constexpr unsigned warps = threads / 32;
// Keep words per warp and round: 1 up to 2^22 items of capacity (small queues: many warps in
// flight), 8 above (fewer rounds: each waits on its barrier and its atomic): with 1 word, 2^28 u32
// items took 2.3x cub's time (H100).
constexpr std::size_t one_word_most = std::size_t{1} << 22;

// Each round a block takes 256 items: every warp ballots its word, the block sums the warps'
// counts, one thread reserves room for all of them with one atomicAdd, and each warp writes its
// kept items from its share of that room (warp_write_words: records of several columns through
// shared memory). One atomic per 256 items: one per warp cost 29 us at 1M u32 items (H100), the
// atomics on the one counter in series; 4 words per warp were slower for small queues (fewer warps
// in flight).
template <unsigned WarpWords, class Keep, class Move>
__global__ void __launch_bounds__(threads) atomic_compact(live_count live, Keep keep, Move move,
                                                          unsigned long long* count) {
  constexpr std::size_t round_items = std::size_t{threads} * WarpWords;  // a warp's words: 32 items each
  __shared__ unsigned warp_counts[2][warps];
  __shared__ unsigned long long block_base[2];
  __shared__ warp_stages<Move, warps, warp_stage_words> stages;
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::size_t n = live.get();
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * round_items;
  unsigned parity = 0;
  // The loop bound is the same for the whole block, so every thread reaches the barriers.
  for (std::size_t base = static_cast<std::size_t>(blockIdx.x) * round_items; base < n; base += stride, parity ^= 1U) {
    const std::size_t warp_first = base + std::size_t{warp} * WarpWords * 32;
    std::uint32_t mine = 0;  // lane q < WarpWords: the warp's word q
    unsigned c = 0;
#pragma unroll
    for (unsigned q = 0; q < WarpWords; ++q) {
      const std::size_t i = warp_first + q * 32 + lane;
      const std::uint32_t bits = __ballot_sync(0xffffffffU, i < n && keep(i));
      if (lane == q) mine = bits;
      c += __popc(bits);
    }
    if (lane == 0) warp_counts[parity][warp] = c;
    __syncthreads();
    if (threadIdx.x == 0) {
      unsigned total = 0;
      for (unsigned w = 0; w < warps; ++w) total += warp_counts[parity][w];
      block_base[parity] = total ? atomicAdd(count, static_cast<unsigned long long>(total)) : 0;
    }
    __syncthreads();
    unsigned long long slot = block_base[parity];
    for (unsigned w = 0; w < warp; ++w) slot += warp_counts[parity][w];
    const unsigned kept = __popc(mine), through = warp_inclusive_sum(kept);
    warp_write_words<WarpWords>(move, mine, slot + through - kept,
                                 [&](int j) { return warp_first + std::size_t(j) * 32; }, stages.of(warp));
  }
}

template <class Keep>
void launch(const cuda_call& call, Keep keep) {
  const std::size_t capacity = call.in.size();
  auto* count = reinterpret_cast<unsigned long long*>(call.d_count);
  SIEVE_CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof *count, call.stream));
  if (capacity == 0) return;
  const live_count live{call.live_n, capacity};
  with_device_mover(call.in, call.out, [&](const auto& move) {
    if (capacity <= one_word_most)
      atomic_compact<1><<<grid_blocks(capacity, threads), threads, 0, call.stream>>>(live, keep, move, count);
    else
      atomic_compact<8><<<grid_blocks(capacity / 8, threads), threads, 0, call.stream>>>(live, keep, move, count);
  });
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
