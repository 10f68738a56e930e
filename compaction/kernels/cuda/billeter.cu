// billeter (CUDA): Billeter, Olsson & Assarsson, "Efficient Stream Compaction on Wide SIMD Many-Core
// Architectures" (HPG 2009), with the warp as the paper's SIMD processor (S = 32) and P = 32 warps per
// SM as its virtual processors, each owning one contiguous range of the input:
//   1. count: each warp reads its range's keep bits 32 words at a time (a word = 32 items; byte flags
//      by two 16-byte loads per lane, turned into a word with a byte compare; a bit mask as it is)
//      and sums their popcounts. Byte flags leave their words in the workspace: the move pass reads
//      one bit per item instead of one byte (the paper's POPC variant keeps such words too);
//   2. prefix: one block scans the P counts into each warp's output offset (and the total);
//   3. move: each warp walks its range again, word by word (the compactSIMD of Listing 6 with ballot
//      words and POPC: an item goes to the warp's offset plus the kept items before it in the word),
//      skipping words with no kept item (their items are never read) and loading only kept items.
//      The output is "selective", per warp by the density that phase 1 measured: dense ranges write
//      each word's kept items straight out (scattered: already one contiguous run per word), sparse
//      ones gather them in a per-warp shared-memory buffer and write whole warps of 32 items at a time
//      (staged), instead of many writes of one or two items. Records that are not one typed column
//      always scatter.
// Stable; out of place; byte flags and bit masks.
#include "internal/select_common.cuh"

namespace sieve::detail {
namespace {

constexpr unsigned warps_per_block = 4;  // the paper's 4 warps per block
constexpr unsigned threads = 32 * warps_per_block;
constexpr unsigned warps_per_sm = 32;    // P = 32 warps per SM (the paper: 480 on 30 SMs, 16 per SM)
constexpr unsigned batch = 4;            // words whose loads are in flight before their stores
// Ranges with fewer kept items than this share are staged; denser ones scatter.
constexpr double staged_below = 0.5;

// How the words are split among the virtual processors: `chunk` words each (a multiple of 32).
struct ranges {
  std::size_t words, chunk;
  unsigned processors;
};

ranges ranges_of(std::size_t n) {
  const std::size_t p = static_cast<std::size_t>(cuda::sm_count()) * warps_per_sm;
  ranges r{};
  r.words = (n + 31) / 32;
  r.chunk = ((r.words + p - 1) / p + 31) / 32 * 32;
  if (r.chunk == 0) r.chunk = 32;
  r.processors = static_cast<unsigned>((r.words + r.chunk - 1) / r.chunk);
  if (r.processors == 0) r.processors = 1;
  return r;
}

__device__ inline unsigned processor_id() { return blockIdx.x * warps_per_block + threadIdx.x / 32; }

// ---- 1. count -------------------------------------------------------------------------------------

template <class Source>
__global__ void __launch_bounds__(threads) count_words(Source source, live_count live, ranges r,
                                                       std::uint32_t* words_out, std::uint32_t* counts) {
  const unsigned p = processor_id();
  if (p >= r.processors) return;  // the whole warp
  source.n = live.get();          // words past the live items count none
  const std::size_t begin = p * r.chunk, end = begin + r.chunk < r.words ? begin + r.chunk : r.words;
  unsigned c = 0;
#pragma unroll 4
  for (std::size_t w = begin + lane_id(); w < end; w += 32) {
    const std::uint32_t bits = source(w);
    if (words_out) words_out[w] = bits;
    c += __popc(bits);
  }
#pragma unroll
  for (int d = 16; d >= 1; d /= 2) c += __shfl_xor_sync(0xffffffffU, c, d);
  if (lane_id() == 0) counts[p] = c;
}

// ---- 2. prefix over P -----------------------------------------------------------------------------

constexpr unsigned prefix_threads = 1024;

// counts[0, P) -> exclusive offsets, counts[P] = the total = *d_count.
__global__ void __launch_bounds__(prefix_threads) prefix(std::uint32_t* counts, unsigned processors,
                                                         std::uint64_t* d_count) {
  __shared__ std::uint32_t warp_sums[prefix_threads / 32];
  std::uint32_t carry = 0;
  for (unsigned base = 0; base < processors; base += prefix_threads) {
    const unsigned i = base + threadIdx.x;
    const std::uint32_t c = i < processors ? counts[i] : 0;
    std::uint32_t total;
    const std::uint32_t before = block_exclusive_sum<prefix_threads>(c, total, warp_sums);
    if (i < processors) counts[i] = carry + before;
    carry += total;
  }
  if (threadIdx.x == 0) {
    counts[processors] = carry;
    *d_count = carry;
  }
}

// ---- 3. move --------------------------------------------------------------------------------------

// Buffer of one warp for staged output: up to 63 items wait between flushes.
template <class Move>
struct stage_buffer {
  static constexpr bool usable = false;
};
template <class Move>
  requires split_mover<Move>
struct stage_buffer<Move> {
  static constexpr bool usable = true;
  typename Move::value_type items[warps_per_block][64];
};

template <class Move>
__global__ void __launch_bounds__(threads) move_out(mask_words source, live_count live, ranges r,
                                                    const std::uint32_t* offsets, Move move) {
  __shared__ stage_buffer<Move> stage;
  const unsigned p = processor_id();
  if (p >= r.processors) return;
  const std::size_t n = live.get();
  source.n = n;
  const unsigned lane = lane_id(), below = lanes_below();
  const std::size_t begin = p * r.chunk, end = begin + r.chunk < r.words ? begin + r.chunk : r.words;
  std::uint64_t to = offsets[p];
  const std::uint32_t kept = offsets[p + 1] - offsets[p];
  const std::size_t items = begin * 32 < n ? (end * 32 < n ? end * 32 : n) - begin * 32 : 0;
  const bool staged = stage_buffer<Move>::usable && static_cast<double>(kept) < staged_below * static_cast<double>(items);

  if constexpr (stage_buffer<Move>::usable) {
    using T = typename Move::value_type;
    if (staged) {
      T* buf = stage.items[threadIdx.x / 32];
      unsigned fill = 0;  // items waiting in buf (the same in every lane)
      for (std::size_t w0 = begin; w0 < end; w0 += 32) {
        const std::uint32_t mine = w0 + lane < end ? source(w0 + lane) : 0;
        unsigned nonzero = __ballot_sync(0xffffffffU, mine != 0);
        while (nonzero) {
          // Loads of up to `batch` words' kept items in flight, then into the buffer in order.
          T v[batch];
          std::uint32_t bits[batch];
#pragma unroll
          for (unsigned b = 0; b < batch; ++b) {
            bits[b] = 0;
            if (!nonzero) continue;
            const int j = __ffs(nonzero) - 1;
            nonzero &= nonzero - 1;
            bits[b] = __shfl_sync(0xffffffffU, mine, j);
            if ((bits[b] >> lane) & 1U) v[b] = move.load((w0 + j) * 32 + lane);
          }
#pragma unroll
          for (unsigned b = 0; b < batch; ++b) {
            if (!bits[b]) continue;
            if ((bits[b] >> lane) & 1U) buf[fill + __popc(bits[b] & below)] = v[b];
            fill += __popc(bits[b]);
            __syncwarp();
            if (fill >= 32) {  // flush a whole warp, keep the rest
              move.store(to + lane, buf[lane]);
              to += 32;
              fill -= 32;
              const bool more = lane < fill;
              T rest;
              if (more) rest = buf[32 + lane];
              __syncwarp();
              if (more) buf[lane] = rest;
              __syncwarp();
            }
          }
        }
      }
      if (lane < fill) move.store(to + lane, buf[lane]);
      return;
    }
  }

  // Scattered: each word's kept items straight to their slots.
  for (std::size_t w0 = begin; w0 < end; w0 += 32) {
    const std::uint32_t mine = w0 + lane < end ? source(w0 + lane) : 0;
    const unsigned kept = __popc(mine), through = warp_inclusive_sum(kept);
    warp_write_words<batch>(move, mine, to + through - kept, [&](int j) { return (w0 + j) * 32; });
    to += __shfl_sync(0xffffffffU, through, 31);
  }
}

}  // namespace

std::size_t cuda_billeter(const cuda_call& call) {
  const std::size_t n = call.in.size();  // the capacity: the ranges cover it, kernels read the live count
  const live_count live{call.live_n, n};
  const ranges r = ranges_of(n);
  const bool flags = form_of(call.keep) == form::byte_flags;
  const std::size_t counts_bytes = align_up(4 * (std::size_t{r.processors} + 1));
  if (call.query) return counts_bytes + (flags ? align_up(4 * r.words) : 0);
  if (n == 0) {
    write_count_async(call.d_count, 0, call.stream);
    return 0;
  }
  auto* counts = static_cast<std::uint32_t*>(call.workspace);
  auto* words = reinterpret_cast<std::uint32_t*>(static_cast<std::byte*>(call.workspace) + counts_bytes);
  const unsigned blocks = (r.processors + warps_per_block - 1) / warps_per_block;
  mask_words source{nullptr, n};
  if (flags) {
    const std::uint8_t* f = std::get<byte_flags>(call.keep).keep.data();
    const flag_words from_flags{f, n, reinterpret_cast<std::uintptr_t>(f) % 16 == 0};
    count_words<<<blocks, threads, 0, call.stream>>>(from_flags, live, r, words, counts);
    source.words = words;
  } else {
    source.words = std::get<bit_mask>(call.keep).words.data();
    count_words<<<blocks, threads, 0, call.stream>>>(source, live, r, static_cast<std::uint32_t*>(nullptr), counts);
  }
  SIEVE_CUDA_CHECK(cudaGetLastError());
  prefix<<<1, prefix_threads, 0, call.stream>>>(counts, r.processors, call.d_count);
  SIEVE_CUDA_CHECK(cudaGetLastError());
  with_device_mover(call.in, call.out, [&](const auto& move) {
    move_out<<<blocks, threads, 0, call.stream>>>(source, live, r, counts, move);
  });
  SIEVE_CUDA_CHECK(cudaGetLastError());
  return 0;
}

}  // namespace sieve::detail
