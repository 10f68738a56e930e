// redzone (CUDA): Bontes & Gain, "Redzone stream compaction: removing k items from a list in
// parallel O(k) time" (2024). Items R[i] (distinct indices) are removed from A in place; the holes
// in A[0, z), z = n - k, are filled from the red zone Z = A[z, n).
//
// Small k (Algorithm 1, one block): the red-zone marks and both orphan lists live in shared memory;
//   one launch, no workspace.
// Large k (Algorithm 2, every SM):
//   phase 1  mark: one bit per red-zone slot, set for each r >= z (k^2/n atomics on average);
//   phase 2  fill holes: tiles of 2048 (R[i], Z[i]) pairs, every thread loading its R entries,
//            marks and red-zone items before the first write (the paper's prefetch). Case A moves
//            Z[i] to A[R[i]]; destination orphans (case C) and source orphans (case D) collect in
//            shared memory and pair up inside the tile at once (section 6's early pairing); only
//            the surplus, of one kind, is parked in the tile's own slice of R (the in-place orphan
//            lists of the paper, as indices). The tile's two surplus counts are packed in one word
//            and summed across tiles by decoupled look-back, giving every tile its prefix;
//   phase 3  the t-th parked source fills the t-th parked destination; each thread finds both by
//            binary search over the tiles' prefixes (Algorithm 3's load balancing).
// Marking uses a bit array, not a spare value of T, so any record works. Unstable, in place.
#include "internal/select_common.cuh"

#include "internal/redzone_cases.hpp"

namespace sieve::detail {
namespace {

// ---- Algorithm 1 -------------------------------------------------------------------------------

constexpr unsigned single_threads = 1024;
constexpr std::size_t single_block_most = 8192;  // k at most this: one block

// The live n and k of a call (a k above n is taken as n); true when k fits Algorithm 1's one block.
struct live_sizes {
  live_count n, k;
  __device__ bool read(std::size_t& n_out, std::size_t& k_out) const {
    n_out = n.get();
    k_out = k.get();
    if (k_out > n_out) k_out = n_out;
    return k_out <= single_block_most;
  }
};

template <class Move>
__global__ void __launch_bounds__(single_threads) redzone_single_block(const std::uint32_t* R, live_sizes sizes,
                                                                       Move move, std::uint64_t* d_count) {
  __shared__ std::uint32_t dead[single_block_most / 32];
  __shared__ std::uint32_t destinations[single_block_most / 2], sources[single_block_most / 2];
  __shared__ unsigned n_destinations, n_sources;
  std::size_t n, k;
  if (!sizes.read(n, k)) return;  // Algorithm 2's kernels take this call
  const std::size_t z = n - k;
  for (unsigned w = threadIdx.x; w < (k + 31) / 32; w += blockDim.x) dead[w] = 0;
  if (threadIdx.x == 0) {
    n_destinations = n_sources = 0;
    *d_count = z;
  }
  __syncthreads();
  for (unsigned i = threadIdx.x; i < k; i += blockDim.x)  // phase 1
    if (R[i] >= z) atomicOr(&dead[(R[i] - z) / 32], 1U << ((R[i] - z) % 32));
  __syncthreads();
  for (unsigned i = threadIdx.x; i < k; i += blockDim.x) {  // phase 2
    const std::size_t r = R[i];
    switch (redzone_pair(r, z, (dead[i / 32] >> (i % 32)) & 1U)) {
      case redzone_case::fill: move(r, z + i); break;
      case redzone_case::drop: break;
      case redzone_case::destination_orphan: destinations[atomicAdd(&n_destinations, 1U)] = static_cast<std::uint32_t>(r); break;
      case redzone_case::source_orphan: sources[atomicAdd(&n_sources, 1U)] = static_cast<std::uint32_t>(z + i); break;
    }
  }
  __syncthreads();
  for (unsigned t = threadIdx.x; t < n_sources; t += blockDim.x) move(destinations[t], sources[t]);  // phase 3
}

// ---- Algorithm 2 -------------------------------------------------------------------------------

constexpr unsigned threads = 256;
constexpr unsigned per_thread = 8;
constexpr std::size_t tile_pairs = threads * per_thread;
constexpr unsigned count_bits = 31;  // a tile's (sources, destinations) surplus packed as s << 31 | d
constexpr unsigned long long low_count = (1ULL << count_bits) - 1;

__global__ void redzone_mark(const std::uint32_t* R, live_sizes sizes, std::uint32_t* dead) {
  std::size_t n, k;
  if (sizes.read(n, k)) return;  // Algorithm 1 took this call
  const std::size_t z = n - k;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < k; i += stride) {
    const std::size_t r = R[i];
    if (r >= z) atomicOr(&dead[(r - z) / 32], 1U << ((r - z) % 32));
  }
}

template <class Move>
__global__ void __launch_bounds__(threads) redzone_fill(std::uint32_t* R, live_sizes sizes, const std::uint32_t* dead,
                                                        Move move, unsigned* counter, unsigned long long* status,
                                                        std::uint64_t* d_count) {
  __shared__ unsigned tile_slot;
  __shared__ std::uint32_t destinations[tile_pairs], sources[tile_pairs];
  __shared__ unsigned n_destinations, n_sources;
  std::size_t n, k;
  if (sizes.read(n, k)) return;  // Algorithm 1 took this call
  const std::size_t z = n - k;
  const unsigned tile = take_tile(counter, &tile_slot);
  if (std::size_t{tile} * tile_pairs >= k) return;  // past the live list (tiles are taken in order)
  if (threadIdx.x == 0) {
    n_destinations = n_sources = 0;
    if (tile == 0) *d_count = z;
  }
  const std::size_t first = std::size_t{tile} * tile_pairs;

  // Prefetch: every R entry, mark and needed red-zone item of this thread before any write.
  std::uint32_t r[per_thread];
  redzone_case pair[per_thread];
#pragma unroll
  for (unsigned q = 0; q < per_thread; ++q) {
    const std::size_t i = first + q * threads + threadIdx.x;
    r[q] = i < k ? R[i] : 0;
    pair[q] = i < k ? redzone_pair(r[q], z, (dead[i / 32] >> (i % 32)) & 1U) : redzone_case::drop;
  }
  __syncthreads();  // the counters are reset, and every R entry of the tile has been read
  if constexpr (split_mover<Move>) {
    typename Move::value_type v[per_thread];
#pragma unroll
    for (unsigned q = 0; q < per_thread; ++q) {
      const std::size_t i = first + q * threads + threadIdx.x;
      if (pair[q] == redzone_case::fill) v[q] = move.load(z + i);
    }
#pragma unroll
    for (unsigned q = 0; q < per_thread; ++q)
      if (pair[q] == redzone_case::fill) move.store(r[q], v[q]);
  }
#pragma unroll
  for (unsigned q = 0; q < per_thread; ++q) {
    const std::size_t i = first + q * threads + threadIdx.x;
    switch (pair[q]) {
      case redzone_case::fill:
        if constexpr (!split_mover<Move>) move(r[q], z + i);  // split movers moved it above
        break;
      case redzone_case::drop: break;  // also every slot past k
      case redzone_case::destination_orphan: destinations[atomicAdd(&n_destinations, 1U)] = r[q]; break;
      case redzone_case::source_orphan: sources[atomicAdd(&n_sources, 1U)] = static_cast<std::uint32_t>(z + i); break;
    }
  }
  __syncthreads();

  // Early pairing inside the tile; park the surplus (one kind only) at the start of the tile's R slice.
  const unsigned s = n_sources, d = n_destinations, m = s < d ? s : d;
  for (unsigned t = threadIdx.x; t < m; t += threads) move(destinations[t], sources[t]);
  const unsigned surplus = s + d - 2 * m;
  const std::uint32_t* parked = s > d ? sources : destinations;
  for (unsigned t = threadIdx.x; t < surplus; t += threads) R[first + t] = parked[m + t];
  if (threadIdx.x < 32) {
    const unsigned long long packed = (static_cast<unsigned long long>(s - m) << count_bits) | (d - m);
    look_back(status, tile, packed);
  }
}

// Tile holding the t-th parked orphan of one kind: the first tile whose inclusive prefix exceeds t.
__device__ inline unsigned tile_of(const unsigned long long* status, unsigned tiles, unsigned long long t,
                                   bool sources, unsigned long long& before) {
  unsigned lo = 0, hi = tiles - 1;
  auto prefix = [&](unsigned tile) {
    const unsigned long long v = status[tile] & tile_status<unsigned long long>::value_bits;
    return sources ? v >> count_bits : v & low_count;
  };
  while (lo < hi) {
    const unsigned mid = (lo + hi) / 2;
    if (prefix(mid) > t) hi = mid;
    else lo = mid + 1;
  }
  before = lo == 0 ? 0ULL : prefix(lo - 1);  // the orphans of this kind in the tiles before it
  return lo;
}

template <class Move>
__global__ void redzone_orphans(const std::uint32_t* R, live_sizes sizes, const unsigned long long* status, Move move) {
  std::size_t n, k;
  if (sizes.read(n, k)) return;  // Algorithm 1 took this call
  const auto tiles = static_cast<unsigned>((k + tile_pairs - 1) / tile_pairs);
  const unsigned long long total_word = status[tiles - 1] & tile_status<unsigned long long>::value_bits;
  const unsigned long long total = total_word >> count_bits;  // == the destinations' total (Lemma 4.2)
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += stride) {
    unsigned long long s_before, d_before;
    const unsigned ts = tile_of(status, tiles, t, true, s_before);
    const unsigned td = tile_of(status, tiles, t, false, d_before);
    move(R[std::size_t{td} * tile_pairs + (t - d_before)], R[std::size_t{ts} * tile_pairs + (t - s_before)]);
  }
}

struct layout {
  std::size_t dead_bytes, status_bytes, total;
  unsigned tiles;
};

layout workspace_layout(std::size_t k) {
  layout l{};
  if (k <= single_block_most) return l;
  l.tiles = static_cast<unsigned>((k + tile_pairs - 1) / tile_pairs);
  l.dead_bytes = ((k + 31) / 32 * 4 + 255) / 256 * 256;
  l.status_bytes = std::size_t{l.tiles} * 8;
  l.total = l.dead_bytes + l.status_bytes + 256;  // marks, statuses, tile counter
  return l;
}

}  // namespace

std::size_t cuda_redzone(const cuda_call& call) {
  const std::size_t n = call.in.size();
  // The workspace is sized for the largest k the call may bring: k = n for a query by shape.
  const std::size_t k = call.query ? n : std::get<removal_list>(call.keep).indices.size();
  const layout l = workspace_layout(k);
  if (call.query) return l.total;
  std::uint32_t* R = std::get<removal_list>(call.keep).indices.data();
  const bool live = call.live_n || call.live_k;
  if (!live && (k == 0 || k == n)) {
    write_count_async(call.d_count, n - k, call.stream);
    return 0;
  }
  // With counts on the device both algorithms are enqueued (k decides on the device which one works).
  const live_sizes sizes{{call.live_n, n}, {call.live_k, k}};
  with_device_mover(call.in, call.out, [&](const auto& move) {
    if (live || k <= single_block_most)
      redzone_single_block<<<1, single_threads, 0, call.stream>>>(R, sizes, move, call.d_count);
    if (k <= single_block_most) return;
    auto* base = static_cast<std::byte*>(call.workspace);
    auto* dead = reinterpret_cast<std::uint32_t*>(base);
    auto* status = reinterpret_cast<unsigned long long*>(base + l.dead_bytes);
    auto* counter = reinterpret_cast<unsigned*>(base + l.dead_bytes + l.status_bytes);
    SIEVE_CUDA_CHECK(cudaMemsetAsync(base, 0, l.total, call.stream));
    redzone_mark<<<grid_blocks(k, threads), threads, 0, call.stream>>>(R, sizes, dead);
    redzone_fill<<<l.tiles, threads, 0, call.stream>>>(R, sizes, dead, move, counter, status, call.d_count);
    redzone_orphans<<<grid_blocks(k / 8, threads), threads, 0, call.stream>>>(R, sizes, status, move);
  });
  SIEVE_CUDA_CHECK(cudaGetLastError());
  return 0;
}

}  // namespace sieve::detail
