// space (CUDA): Fett et al., "Accelerating Parallel Operation for Compacting Selected Elements on
// GPUs" (SPACE, Euro-Par 2022), past its variant 8. SPACE's three phases (popcount per chunk,
// prefix sum, a write-out that skips empty chunks and reads only the sectors that hold selected
// items) become one pass: each tile of 8192 items counts its keep bits, gets its output offset by
// decoupled look-back (Merrill & Garland) instead of a separate prefix-sum kernel, and writes its
// items out word by word, skipping words with no kept item; within a word only the lanes of kept
// items load, so a sector without a kept item is never read. Tiles are 8K items. The keep bits come from a bit mask or,
// with the same write-out, from byte flags (32 flags per thread, two 16-byte loads): the
// skip-by-flags that CCCL issue #326 asks of CUB. Stable, out of place.
#include "select_common.cuh"

namespace sieve::detail {
namespace {

constexpr unsigned threads = 256;
constexpr unsigned batch = 4;  // loads in flight per lane before the stores

// Words per thread: a tile is threads * Words * 32 items. The look-back's prefix front moves a
// window of tiles per status read, so fewer, larger tiles keep it off the critical path when most
// tiles have little to write; smaller tiles keep more of the GPU busy on dense inputs.
template <unsigned Words>
constexpr std::size_t tile_items = std::size_t{threads} * Words * 32;

template <unsigned Words, class WordSource, class Move>
__global__ void __launch_bounds__(threads) space_select(WordSource source, Move move, unsigned* counter,
                                                        unsigned long long* status, std::uint64_t* d_count,
                                                        unsigned tiles) {
  __shared__ unsigned tile_slot;
  __shared__ unsigned warp_sums[threads / 32];
  __shared__ unsigned long long tile_base;
  const unsigned tile = take_tile(counter, &tile_slot);
  // Thread t owns words [first, first + Words) of the tile, i.e. items [32 first, 32 (first + Words)).
  const std::size_t first = (std::size_t{tile} * threads + threadIdx.x) * Words;
  std::uint32_t bits[Words];
  unsigned count = 0;
#pragma unroll
  for (unsigned q = 0; q < Words; ++q) {
    bits[q] = source(first + q);
    count += __popc(bits[q]);
  }

  unsigned tile_count;
  const unsigned before = block_exclusive_sum<threads>(count, tile_count, warp_sums);
  if (threadIdx.x < 32) {
    const unsigned long long base = look_back(status, tile, tile_count);
    if (threadIdx.x == 0) {
      tile_base = base;
      if (tile == tiles - 1) *d_count = base + tile_count;
    }
  }
  __syncthreads();

  // Output slot of word q's first kept item.
  unsigned long long slot[Words];
  slot[0] = tile_base + before;
#pragma unroll
  for (unsigned q = 1; q < Words; ++q) slot[q] = slot[q - 1] + __popc(bits[q - 1]);

  // Write-out: for each q, the warp walks the nonzero q-th words of its 32 threads.
  const std::size_t warp_first = first - std::size_t{lane_id()} * Words;  // lane 0's first word
#pragma unroll
  for (unsigned q = 0; q < Words; ++q)
    warp_write_words<batch>(move, bits[q], slot[q],
                            [&](int j) { return (warp_first + std::size_t(j) * Words + q) * 32; });
}

template <unsigned Words>
void launch(const cuda_call& call) {
  const std::size_t n = call.in.size();
  const auto tiles = static_cast<unsigned>((n + tile_items<Words> - 1) / tile_items<Words>);
  auto* status = static_cast<unsigned long long*>(call.workspace);
  auto* counter = reinterpret_cast<unsigned*>(status + tiles);
  SIEVE_CUDA_CHECK(cudaMemsetAsync(call.workspace, 0, std::size_t{tiles} * 8 + 256, call.stream));
  with_device_mover(call.in, call.out, [&](const auto& move) {
    if (form_of(call.keep) == form::bit_mask) {
      const mask_words source{std::get<bit_mask>(call.keep).words.data(), n};
      space_select<Words><<<tiles, threads, 0, call.stream>>>(source, move, counter, status, call.d_count, tiles);
    } else {
      const std::uint8_t* flags = std::get<byte_flags>(call.keep).keep.data();
      const flag_words source{flags, n, reinterpret_cast<std::uintptr_t>(flags) % 16 == 0};
      space_select<Words><<<tiles, threads, 0, call.stream>>>(source, move, counter, status, call.d_count, tiles);
    }
  });
  SIEVE_CUDA_CHECK(cudaGetLastError());
}

// One keep word per thread (8K-item tiles). Measured on an H100 at n = 2^28 u32 (2026-11-22):
// 2 or 4 words per thread make 1 %-kept inputs up to 2.3x faster and 99 %-kept ones up to 1.8x
// slower (bench/results/h100-80gb-hbm3/space-words-*.csv); dense inputs decide.
constexpr unsigned words_per_thread = 1;

}  // namespace

std::size_t cuda_space(const cuda_call& call) {
  const std::size_t n = call.in.size();
  const std::size_t tile = std::size_t{threads} * 32 * words_per_thread;
  const std::size_t bytes = (n + tile - 1) / tile * 8 + 256;  // statuses, then the tile counter
  if (call.query) return bytes;
  if (n == 0) {
    write_count_async(call.d_count, 0, call.stream);
    return 0;
  }
  launch<words_per_thread>(call);
  return 0;
}

}  // namespace sieve::detail
