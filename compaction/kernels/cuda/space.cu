// space (CUDA): Fett et al., "Accelerating Parallel Operation for Compacting Selected Elements on
// GPUs" (SPACE, Euro-Par 2022): a popcount per chunk of the keep bits, a prefix sum over the
// chunks, and a write-out that skips empty words and reads only the sectors that hold kept items.
// Two shapes, chosen by the capacity:
//   up to 2^17 items, one kernel (small queues: the call costs one launch). Each block takes a
//     tile (at most 128 of them) and counts the keep bits of every word before its tile itself:
//     the chunk prefix computed redundantly per block, from bits that sit in L2, instead of a
//     second kernel or a look-back between blocks. Each lane moves its own kept items; their loads
//     are in flight while the prefix is counted.
//   larger, two kernels and no serial step: (1) count: each block of 8K items (32K past 2^22)
//     sums the popcounts of its words (byte flags are turned into bit-mask words once, into the workspace, so the
//     second pass reads 1 bit per item instead of 1 byte); (2) write-out: each block sums the
//     counts of the blocks before it (past 512 blocks, also per group of 64, summed atomically by
//     (1) into a zeroed array: a memset more), and its warps write their kept items through
//     warp_write_out: sparse words as a list of item offsets with every load in flight at once,
//     dense ones word by word. The decoupled look-back this replaces moved its prefix front by 32
//     tiles per status read, which bounded sparse selections at 2^28 items.
// Counts may live on the device (device_counts): every kernel reads n when it runs and blocks past
// it exit. Stable, out of place; byte flags and bit masks.
#include "internal/select_common.cuh"

namespace sieve::detail {
namespace {

constexpr unsigned batch = 8;  // loads in flight per lane before their stores

// ---- one kernel ------------------------------------------------------------------------------------

constexpr std::size_t one_kernel_most = std::size_t{1} << 17;
constexpr unsigned small_threads = 256;
constexpr unsigned small_warps = small_threads / 32;
constexpr std::size_t small_tiles = 128;  // at most: the last block reads every earlier keep bit

// Kept items among the first `items` (a multiple of 32) of a selection, summed over the block's
// threads (each returns its part). Byte flags: nonzero bytes, 16 at a time where aligned.
__device__ inline unsigned kept_before(const mask_words& s, std::size_t items) {
  unsigned c = 0;
#pragma unroll 8
  for (std::size_t w = threadIdx.x; w < items / 32; w += blockDim.x) c += __popc(s.words[w]);
  return c;
}
__device__ inline unsigned kept_before(const flag_words& s, std::size_t items) {
  unsigned c = 0;
  if (s.vector_ok) {
    const auto* v = reinterpret_cast<const uint4*>(s.flags);
#pragma unroll 8
    for (std::size_t q = threadIdx.x; q < items / 16; q += blockDim.x) {
      const uint4 x = v[q];
      c += __popc(nonzero_nibble(x.x) | nonzero_nibble(x.y) << 4 | nonzero_nibble(x.z) << 8 | nonzero_nibble(x.w) << 12);
    }
    return c;
  }
  for (std::size_t i = threadIdx.x; i < items; i += blockDim.x) c += s.flags[i] != 0;
  return c;
}

// Words keep words per warp, lane per item: a tile is small_threads * Words items. The kept items'
// loads go out first; the prefix (every keep bit before the tile) is counted while they are in
// flight; then one barrier, and the stores.
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

  // The warp's own words (lane q < Words reads word q), and the loads of its kept items.
  const std::size_t warp_word = first_word + std::size_t{warp} * Words;
  const std::uint32_t mine = lane < Words ? source(warp_word + lane) : 0;
  std::uint32_t bits[Words];
#pragma unroll
  for (unsigned q = 0; q < Words; ++q) bits[q] = __shfl_sync(0xffffffffU, mine, q);
  const std::size_t item0 = warp_word * 32 + lane;
  [[maybe_unused]] typename word_value<Move>::type v[Words];
  if constexpr (split_mover<Move>) {
#pragma unroll
    for (unsigned q = 0; q < Words; ++q)
      if ((bits[q] >> lane) & 1U) v[q] = move.load(item0 + q * 32);
  }

  unsigned before = kept_before(source, first_word * 32);
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

#pragma unroll
  for (unsigned q = 0; q < Words; ++q) {
    if ((bits[q] >> lane) & 1U) {
      const unsigned long long to = slot + __popc(bits[q] & lanes_below());
      if constexpr (split_mover<Move>) move.store(to, v[q]);
      else move(to, item0 + q * 32);
    }
    slot += __popc(bits[q]);
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
  else launch_one_kernel<4>(call, source, live, move);
}

// ---- count and write-out -------------------------------------------------------------------------

constexpr unsigned threads = 256;
constexpr unsigned warps = threads / 32;
// WarpWords keep words per warp: 32 up to 2^22 items (blocks of 8K items), 128 above (blocks of
// 32K items: fewer, longer lists per warp for sparse selections). Measured on an H100 (2026-11-23):
// 128 made 1 %-kept selections at 2^28 1.3x faster than 32; 4 (more warps for mid sizes) made the
// 1M-item path queue 1.24x slower than 32.
constexpr std::size_t mid_most = std::size_t{1} << 22;
template <unsigned WarpWords>
constexpr std::size_t block_words = std::size_t{warps} * WarpWords;
// Above this many blocks the counts are also summed per group of `group` blocks (atomically, into a
// zeroed array), so a block's prefix reads at most blocks / group + group counts.
constexpr std::size_t flat_most = 512;
constexpr std::size_t group = 64;

// (1) counts[b] = the kept items of block b's words (and groups[b / group] += it when grouped);
// with words_out, the words are written there.
template <unsigned WarpWords, class Source>
__global__ void __launch_bounds__(threads) space_count(Source source, live_count live, std::uint32_t* words_out,
                                                       std::uint32_t* counts, unsigned long long* groups) {
  __shared__ unsigned warp_sums[warps];
  const std::size_t n = live.get();
  const std::size_t words = (n + 31) / 32, first = std::size_t{blockIdx.x} * block_words<WarpWords>;
  if (first >= words) return;
  source.n = n;
  unsigned count = 0;
#pragma unroll
  for (unsigned q = threadIdx.x; q < block_words<WarpWords>; q += threads) {
    const std::size_t w = first + q;
    const std::uint32_t bits = source(w);
    if (words_out && w < words) words_out[w] = bits;
    count += __popc(bits);
  }
  count = block_sum<threads>(count, warp_sums);
  if (threadIdx.x == 0) {
    counts[blockIdx.x] = count;
    if (groups) atomicAdd(&groups[blockIdx.x / group], static_cast<unsigned long long>(count));
  }
}

// (2) the write-out: the block's output offset from the counts before it, then each warp its words
// (lane l of step q holds word 32 q + l of the warp's) through warp_write_out.
template <unsigned WarpWords, class Move>
__global__ void __launch_bounds__(threads) space_write(mask_words source, live_count live, const std::uint32_t* counts,
                                                       const unsigned long long* groups, Move move,
                                                       std::uint64_t* d_count) {
  constexpr unsigned steps = WarpWords < 32 ? 1 : WarpWords / 32;
  __shared__ unsigned long long warp_sums[warps];
  __shared__ std::uint32_t lists[warps][write_out_list];
  __shared__ warp_stages<Move, warps, warp_stage_words> stages;
  const std::size_t n = live.get();
  const std::size_t words = (n + 31) / 32, first = std::size_t{blockIdx.x} * block_words<WarpWords>;
  const std::size_t blocks = (words + block_words<WarpWords> - 1) / block_words<WarpWords>;
  if (blockIdx.x > 0 && blockIdx.x >= blocks) return;
  source.n = n;
  const unsigned warp = threadIdx.x / 32, lane = lane_id();
  const std::size_t warp_first = first + std::size_t{warp} * WarpWords;
  std::uint32_t bits[steps];
  unsigned count = 0;
#pragma unroll
  for (unsigned q = 0; q < steps; ++q) {
    bits[q] = q * 32 + lane < WarpWords ? source(warp_first + q * 32 + lane) : 0;
    count += __popc(bits[q]);
  }

  unsigned long long before = 0;
  const std::size_t grouped = groups ? blockIdx.x / group : 0;  // whole groups before this block
  for (std::size_t g = threadIdx.x; g < grouped; g += threads) before += groups[g];
  for (std::size_t b = grouped * group + threadIdx.x; b < blockIdx.x; b += threads) before += counts[b];
  before = block_sum<threads>(before, warp_sums);

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
  warp_write_out<steps, batch>(move, bits, base, warp_first * 32, lists[warp], stages.of(warp));
}

struct two_kernel_layout {
  std::size_t blocks, counts_bytes, groups_bytes, words_bytes;
  unsigned warp_words;
};

two_kernel_layout layout_for(std::size_t capacity, bool flags) {
  two_kernel_layout l{};
  l.warp_words = capacity <= mid_most ? 32 : 128;
  const std::size_t block_items = (l.warp_words == 32 ? block_words<32> : block_words<128>) * 32;
  l.blocks = std::max<std::size_t>(1, (capacity + block_items - 1) / block_items);
  l.counts_bytes = align_up(4 * l.blocks);
  l.groups_bytes = l.blocks > flat_most ? align_up(8 * ((l.blocks + group - 1) / group)) : 0;
  l.words_bytes = flags ? align_up(4 * ((capacity + 31) / 32)) : 0;
  return l;
}

}  // namespace

std::size_t cuda_space(const cuda_call& call) {
  const std::size_t capacity = call.in.size();
  const bool flags = form_of(call.keep) == form::byte_flags;
  const two_kernel_layout l = layout_for(capacity, flags);
  const bool one = capacity <= one_kernel_most;
  if (call.query) return one ? 0 : l.counts_bytes + l.groups_bytes + l.words_bytes;
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
    auto* base = static_cast<std::byte*>(call.workspace);
    auto* counts = reinterpret_cast<std::uint32_t*>(base);
    auto* groups = l.groups_bytes ? reinterpret_cast<unsigned long long*>(base + l.counts_bytes) : nullptr;
    if (groups) SIEVE_CUDA_CHECK(cudaMemsetAsync(groups, 0, l.groups_bytes, call.stream));
    const auto blocks = static_cast<unsigned>(l.blocks);
    auto* words = flags ? reinterpret_cast<std::uint32_t*>(base + l.counts_bytes + l.groups_bytes) : nullptr;
    auto count_and_write = [&](auto steps) {
      constexpr unsigned S = decltype(steps)::value;
      if (flags) space_count<S><<<blocks, threads, 0, call.stream>>>(from_flags, live, words, counts, groups);
      else space_count<S><<<blocks, threads, 0, call.stream>>>(mask, live, words, counts, groups);
      SIEVE_CUDA_CHECK(cudaGetLastError());
      const mask_words written{flags ? words : mask.words, capacity};
      space_write<S><<<blocks, threads, 0, call.stream>>>(written, live, counts, groups, move, call.d_count);
    };
    if (l.warp_words == 32) count_and_write(std::integral_constant<unsigned, 32>{});
    else count_and_write(std::integral_constant<unsigned, 128>{});
  });
  SIEVE_CUDA_CHECK(cudaGetLastError());
  return 0;
}

}  // namespace sieve::detail
