// space (CUDA): Fett et al., "Accelerating Parallel Operation for Compacting Selected Elements on
// GPUs" (SPACE, Euro-Par 2022), past its variant 8. SPACE's three phases (popcount per chunk,
// prefix sum, a write-out that skips empty chunks and reads only the sectors that hold selected
// items) become one pass: each tile of 8192 items counts its keep bits, gets its output offset by
// decoupled look-back (Merrill & Garland) instead of a separate prefix-sum kernel, and writes its
// items out word by word, skipping words with no kept item; within a word only the lanes of kept
// items load, so a sector without a kept item is never read. The keep bits come from a bit mask or,
// with the same write-out, from byte flags (32 flags per thread, two 16-byte loads): the
// skip-by-flags that CCCL issue #326 asks of CUB. Stable, out of place.
#include "../src/strategy_table.hpp"
#include "select_common.cuh"

namespace sieve::detail {
namespace {

constexpr unsigned threads = 256;
constexpr std::size_t tile_items = threads * 32;  // one keep word per thread
constexpr unsigned batch = 4;                     // loads in flight per lane before the stores

template <class Words, class Move>
__global__ void __launch_bounds__(threads) space_select(Words words, Move move, unsigned* counter,
                                                        unsigned long long* status, std::uint64_t* d_count,
                                                        unsigned tiles) {
  __shared__ unsigned tile_slot;
  __shared__ unsigned warp_sums[threads / 32];
  __shared__ unsigned long long tile_base;
  const unsigned tile = take_tile(counter, &tile_slot);
  const std::size_t first_word = std::size_t{tile} * threads;
  const std::uint32_t bits = words(first_word + threadIdx.x);

  unsigned tile_count;
  const unsigned before = block_exclusive_sum<threads>(static_cast<unsigned>(__popc(bits)), tile_count, warp_sums);
  if (threadIdx.x < 32) {
    const unsigned long long base = look_back(status, tile, tile_count);
    if (threadIdx.x == 0) {
      tile_base = base;
      if (tile == tiles - 1) *d_count = base + tile_count;
    }
  }
  __syncthreads();
  const unsigned long long base = tile_base;

  // Write-out: the warp walks its 32 words (1024 items), the nonzero ones only.
  const unsigned lane = lane_id();
  const std::size_t warp_word = first_word + (threadIdx.x & ~31U);
  unsigned nonzero = __ballot_sync(0xffffffffU, bits != 0);
  while (nonzero) {
    if constexpr (split_mover<Move>) {
      typename Move::value_type v[batch];
      std::size_t to[batch];
      bool take[batch];
#pragma unroll
      for (unsigned q = 0; q < batch; ++q) {
        take[q] = false;
        if (!nonzero) continue;
        const int j = __ffs(nonzero) - 1;
        nonzero &= nonzero - 1;
        const std::uint32_t w = __shfl_sync(0xffffffffU, bits, j);
        const unsigned off = __shfl_sync(0xffffffffU, before, j);
        take[q] = (w >> lane) & 1U;
        to[q] = base + off + __popc(w & lanes_below());
        if (take[q]) v[q] = move.load((warp_word + j) * 32 + lane);
      }
#pragma unroll
      for (unsigned q = 0; q < batch; ++q)
        if (take[q]) move.store(to[q], v[q]);
    } else {
      const int j = __ffs(nonzero) - 1;
      nonzero &= nonzero - 1;
      const std::uint32_t w = __shfl_sync(0xffffffffU, bits, j);
      const unsigned off = __shfl_sync(0xffffffffU, before, j);
      if ((w >> lane) & 1U) move(base + off + __popc(w & lanes_below()), (warp_word + j) * 32 + lane);
    }
  }
}

}  // namespace

std::size_t cuda_space(const cuda_call& call) {
  const std::size_t n = call.in.size();
  const auto tiles = static_cast<unsigned>((n + tile_items - 1) / tile_items);
  const std::size_t status_bytes = std::size_t{tiles} * sizeof(unsigned long long);
  const std::size_t bytes = status_bytes + 256;  // statuses, then the tile counter
  if (call.query) return bytes;
  auto* status = static_cast<unsigned long long*>(call.workspace);
  auto* counter = reinterpret_cast<unsigned*>(static_cast<std::byte*>(call.workspace) + status_bytes);
  SIEVE_CUDA_CHECK(cudaMemsetAsync(call.workspace, 0, bytes, call.stream));
  if (n == 0) {
    SIEVE_CUDA_CHECK(cudaMemsetAsync(call.d_count, 0, sizeof *call.d_count, call.stream));
    return 0;
  }
  with_device_mover(call.in, call.out, [&](const auto& move) {
    if (form_of(call.keep) == form::bit_mask) {
      const mask_words words{std::get<bit_mask>(call.keep).words.data(), n};
      space_select<<<tiles, threads, 0, call.stream>>>(words, move, counter, status, call.d_count, tiles);
    } else {
      const std::uint8_t* flags = std::get<byte_flags>(call.keep).keep.data();
      const flag_words words{flags, n, reinterpret_cast<std::uintptr_t>(flags) % 16 == 0};
      space_select<<<tiles, threads, 0, call.stream>>>(words, move, counter, status, call.d_count, tiles);
    }
  });
  SIEVE_CUDA_CHECK(cudaGetLastError());
  return 0;
}

}  // namespace sieve::detail
