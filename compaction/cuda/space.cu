// space (CUDA): Fett et al., "Accelerating Parallel Operation for Compacting Selected Elements on
// GPUs" (SPACE, Euro-Par 2022): a popcount per chunk of the keep bits, a prefix sum over the
// chunks, and a write-out that skips empty words and reads only the sectors that hold kept items.
// Two shapes, chosen by the capacity:
//   up to 2^17 items, one kernel (small queues: the call costs one launch). Each block takes a
//     tile of at most 64 in the input and counts the keep bits of every word before its tile
//     itself: the chunk prefix computed redundantly per block, from bits that sit in L2, instead of
//     a second kernel or a look-back between blocks. Then each lane moves its own kept items
//     (coalesced, every load of the warp in flight before the stores).
//   larger, two kernels and no serial step: (1) count: each block of 32K items sums the popcounts
//     of its words (byte flags are turned into bit-mask words once, into the workspace, so the
//     second pass reads 1 bit per item instead of 1 byte); (2) write-out: each block sums the
//     counts of the blocks before it (a few KB from L2), scans its words, and its warps write their
//     kept items through warp_write_out: sparse words as a list of item offsets with every load in
//     flight at once, dense ones word by word. The decoupled look-back this replaces moved its
//     prefix front by 32 tiles per status read, which bounded sparse selections at 2^28 items.
// Counts may live on the device (device_counts): every kernel reads n when it runs and blocks past
// it exit. Stable, out of place; byte flags and bit masks.
#include "select_common.cuh"

namespace sieve::detail {
namespace {

constexpr unsigned batch = 8;  // loads in flight per lane before their stores

// ---- one kernel ------------------------------------------------------------------------------------

constexpr std::size_t one_kernel_most = std::size_t{1} << 17;
constexpr unsigned small_threads = 128;
constexpr unsigned small_warps = small_threads / 32;
constexpr std::size_t small_tiles = 64;  // at most: the last block reads every earlier keep bit

// Words keep words per warp: a tile is small_threads * Words items.
template <unsigned Words, class Source, class Move>
__global__ void __launch_bounds__(small_threads) space_one_kernel(Source source, live_count live, Move move,
                                                                  std::uint64_t* d_count) {
  constexpr std::size_t tile_words = std::size_t{small_warps} * Words;
  __shared__ unsigned sums[2][small_warps];
  const std::size_t n = live.get();
  const std::size_t words = (n + 31) / 32;
  const std::size_t first_word = std::size_t{blockIdx.x} * tile_words;
  if (blockIdx.x > 0 && first_word >= words) return;  // the whole block: past the live items
  source.n = n;
  const unsigned warp = threadIdx.x / 32, lane = lane_id();

  // The kept items before the tile, from every earlier word.
  unsigned before = 0;
#pragma unroll 4
  for (std::size_t w = threadIdx.x; w < first_word; w += small_threads) before += __popc(source(w));
  // The warp's own words: lane q < Words reads word q; the warp's count.
  const std::size_t warp_word = first_word + std::size_t{warp} * Words;
  const std::uint32_t mine = lane < Words ? source(warp_word + lane) : 0;
  unsigned count = __popc(mine);
#pragma unroll
  for (int d = 16; d >= 1; d /= 2) {
    before += __shfl_xor_sync(0xffffffffU, before, d);
    count += __shfl_xor_sync(0xffffffffU, count, d);
  }
  if (lane == 0) {
    sums[0][warp] = before;
    sums[1][warp] = count;
  }
  __syncthreads();
  unsigned long long slot = 0, tile_end = 0;
#pragma unroll
  for (unsigned w = 0; w < small_warps; ++w) {
    slot += sums[0][w] + (w < warp ? sums[1][w] : 0);
    tile_end += sums[0][w] + sums[1][w];
  }
  const std::size_t last_tile = words == 0 ? 0 : (words - 1) / tile_words;
  if (blockIdx.x == last_tile && threadIdx.x == 0) *d_count = tile_end;

  // Lane-per-item write-out of the warp's words.
  std::uint32_t bits[Words];
  unsigned long long to[Words];
#pragma unroll
  for (unsigned q = 0; q < Words; ++q) {
    bits[q] = __shfl_sync(0xffffffffU, mine, q);
    to[q] = slot + __popc(bits[q] & lanes_below());
    slot += __popc(bits[q]);
  }
  const std::size_t item0 = warp_word * 32 + lane;
  if constexpr (split_mover<Move>) {
    typename Move::value_type v[Words];
#pragma unroll
    for (unsigned q = 0; q < Words; ++q)
      if ((bits[q] >> lane) & 1U) v[q] = move.load(item0 + q * 32);
#pragma unroll
    for (unsigned q = 0; q < Words; ++q)
      if ((bits[q] >> lane) & 1U) move.store(to[q], v[q]);
  } else {
#pragma unroll
    for (unsigned q = 0; q < Words; ++q)
      if ((bits[q] >> lane) & 1U) move(to[q], item0 + q * 32);
  }
}

template <unsigned Words, class Source, class Move>
void launch_one_kernel(const cuda_call& call, const Source& source, const live_count& live, const Move& move) {
  const std::size_t tile = std::size_t{small_threads} * Words;
  const auto tiles = static_cast<unsigned>(std::max<std::size_t>(1, (live.capacity + tile - 1) / tile));
  space_one_kernel<Words><<<tiles, small_threads, 0, call.stream>>>(source, live, move, call.d_count);
}

// Words per warp for a capacity: as few as keep the tiles at most small_tiles.
template <class Source, class Move>
void one_kernel(const cuda_call& call, const Source& source, const live_count& live, const Move& move) {
  const std::size_t words_per_warp = (live.capacity + small_tiles * small_threads - 1) / (small_tiles * small_threads);
  if (words_per_warp <= 1) launch_one_kernel<1>(call, source, live, move);
  else if (words_per_warp <= 2) launch_one_kernel<2>(call, source, live, move);
  else if (words_per_warp <= 4) launch_one_kernel<4>(call, source, live, move);
  else if (words_per_warp <= 8) launch_one_kernel<8>(call, source, live, move);
  else launch_one_kernel<16>(call, source, live, move);
}

// ---- two kernels -----------------------------------------------------------------------------------

constexpr unsigned threads = 256;
constexpr unsigned warps = threads / 32;
constexpr unsigned steps = 4;  // 32-word steps per warp
constexpr std::size_t block_words = std::size_t{warps} * steps * 32;
constexpr std::size_t block_items = block_words * 32;

// (1) counts[b] = the kept items of block b's words; with words_out, the words are written there.
template <class Source>
__global__ void __launch_bounds__(threads) space_count(Source source, live_count live, std::uint32_t* words_out,
                                                       std::uint32_t* counts) {
  __shared__ unsigned warp_sums[warps];
  const std::size_t n = live.get();
  const std::size_t words = (n + 31) / 32, first = std::size_t{blockIdx.x} * block_words;
  if (first >= words) return;
  source.n = n;
  unsigned count = 0;
#pragma unroll
  for (unsigned j = 0; j < warps * steps; j += warps) {
    const std::size_t w = first + std::size_t{j} * 32 + threadIdx.x;
    const std::uint32_t bits = source(w);
    if (words_out && w < words) words_out[w] = bits;
    count += __popc(bits);
  }
  count = block_sum<threads>(count, warp_sums);
  if (threadIdx.x == 0) counts[blockIdx.x] = count;
}

// (2) the write-out: the block's output offset from the counts before it, then per warp 4 x 32 words.
template <class Move>
__global__ void __launch_bounds__(threads) space_write(mask_words source, live_count live,
                                                       const std::uint32_t* counts, Move move, std::uint64_t* d_count) {
  __shared__ unsigned long long warp_sums[warps];
  __shared__ std::uint32_t lists[warps][write_out_list];
  const std::size_t n = live.get();
  const std::size_t words = (n + 31) / 32, first = std::size_t{blockIdx.x} * block_words;
  const std::size_t blocks = (words + block_words - 1) / block_words;
  if (blockIdx.x > 0 && blockIdx.x >= blocks) return;
  source.n = n;
  unsigned long long before = 0;
  for (std::size_t b = threadIdx.x; b < blockIdx.x; b += threads) before += counts[b];
  before = block_sum<threads>(before, warp_sums);

  const unsigned warp = threadIdx.x / 32, lane = lane_id();
  const std::size_t warp_first = first + std::size_t{warp} * steps * 32;
  std::uint32_t bits[steps];
  unsigned count = 0;
#pragma unroll
  for (unsigned q = 0; q < steps; ++q) {
    bits[q] = source(warp_first + q * 32 + lane);
    count += __popc(bits[q]);
  }
#pragma unroll
  for (int d = 16; d >= 1; d /= 2) count += __shfl_xor_sync(0xffffffffU, count, d);
  if (lane == 0) warp_sums[warp] = count;
  __syncthreads();
  unsigned long long base = before, end = before;
#pragma unroll
  for (unsigned w = 0; w < warps; ++w) {
    base += w < warp ? warp_sums[w] : 0;
    end += warp_sums[w];
  }
  if (threadIdx.x == 0 && (blocks == 0 || blockIdx.x == blocks - 1)) *d_count = end;
  warp_write_out<steps, batch>(move, bits, base, warp_first * 32, lists[warp]);
}

struct two_kernel_layout {
  std::size_t blocks, counts_bytes, words_bytes;
};

two_kernel_layout layout_for(std::size_t capacity, bool flags) {
  two_kernel_layout l{};
  l.blocks = std::max<std::size_t>(1, (capacity + block_items - 1) / block_items);
  l.counts_bytes = align_up(4 * l.blocks);
  l.words_bytes = flags ? align_up(4 * ((capacity + 31) / 32)) : 0;
  return l;
}

}  // namespace

std::size_t cuda_space(const cuda_call& call) {
  const std::size_t capacity = call.in.size();
  const bool flags = form_of(call.keep) == form::byte_flags;
  const two_kernel_layout l = layout_for(capacity, flags);
  const bool one = capacity <= one_kernel_most;
  if (call.query) return one ? 0 : l.counts_bytes + l.words_bytes;
  const live_count live{call.live_n, capacity};
  const std::uint8_t* f = flags ? std::get<byte_flags>(call.keep).keep.data() : nullptr;
  const flag_words from_flags{f, capacity, reinterpret_cast<std::uintptr_t>(f) % 16 == 0};
  mask_words mask{flags ? nullptr : std::get<bit_mask>(call.keep).words.data(), capacity};
  with_device_mover(call.in, call.out, [&](const auto& move) {
    if (one) {
      if (flags) one_kernel(call, from_flags, live, move);
      else one_kernel(call, mask, live, move);
      return;
    }
    auto* counts = static_cast<std::uint32_t*>(call.workspace);
    const auto blocks = static_cast<unsigned>(l.blocks);
    if (flags) {
      auto* words = reinterpret_cast<std::uint32_t*>(static_cast<std::byte*>(call.workspace) + l.counts_bytes);
      space_count<<<blocks, threads, 0, call.stream>>>(from_flags, live, words, counts);
      mask.words = words;
    } else {
      space_count<<<blocks, threads, 0, call.stream>>>(mask, live, static_cast<std::uint32_t*>(nullptr), counts);
    }
    SIEVE_CUDA_CHECK(cudaGetLastError());
    space_write<<<blocks, threads, 0, call.stream>>>(mask, live, counts, move, call.d_count);
  });
  SIEVE_CUDA_CHECK(cudaGetLastError());
  return 0;
}

}  // namespace sieve::detail
