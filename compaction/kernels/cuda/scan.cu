// scan (CUDA): the textbook baseline (GPU Gems 3, ch. 39, as course projects build it): an exclusive prefix sum
// of the keep flags by Blelloch's work-efficient scan, then a scatter. Each block scans 512 flags in
// shared memory (up-sweep builds the sum tree in place, the root is cleared, the down-sweep pushes
// prefixes back to the leaves; indices padded by one word per 32 so the tree's strided accesses
// avoid bank conflicts) and writes its total; the totals are scanned the same way, level by level,
// until one block holds them all, and each level but the first gets its block's offset added back.
// The scatter adds the first level's block offsets itself: item i, if kept, goes to
// local[i] + offset[i / 512]. Byte flags and bit masks; stable; out of place. Three passes over n
// (flags -> 4-byte local indices -> scatter), as the baseline it is.
#include "internal/select_common.cuh"

#include <vector>

namespace sieve::detail {
namespace {

constexpr unsigned threads = 256;
constexpr unsigned tile = 2 * threads;  // items per block: two per thread

__host__ __device__ constexpr unsigned padded(unsigned i) { return i + (i >> 5); }

// The keep flag of item i as 0/1 (first level), or a value of the level below (the others).
struct level_values {
  const std::uint32_t* values;
  __device__ std::uint32_t operator()(std::size_t i) const { return values[i]; }
};
template <class Keep>
struct keep_values {
  Keep keep;
  live_count live;  // items past the live count are not kept
  __device__ std::uint32_t operator()(std::size_t i) const { return i < live.get() && keep(i) ? 1U : 0U; }
};

// out[i] = exclusive prefix of in over its block's 512 items; sums[block] = the block's total.
// out may be the array `in` reads (each block reads its items before it writes them).
template <class In>
__global__ void __launch_bounds__(threads) blelloch_block(In in, std::size_t n, std::uint32_t* out,
                                                          std::uint32_t* sums) {
  __shared__ std::uint32_t tree[padded(tile)];
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * tile;
  const unsigned t = threadIdx.x, a = t, b = t + threads;
  tree[padded(a)] = base + a < n ? in(base + a) : 0;
  tree[padded(b)] = base + b < n ? in(base + b) : 0;

  unsigned offset = 1;
  for (unsigned d = tile / 2; d > 0; d /= 2) {  // up-sweep: partial sums up the tree
    __syncthreads();
    if (t < d) {
      const unsigned left = offset * (2 * t + 1) - 1, right = offset * (2 * t + 2) - 1;
      tree[padded(right)] += tree[padded(left)];
    }
    offset *= 2;
  }
  if (t == 0) {
    sums[blockIdx.x] = tree[padded(tile - 1)];
    tree[padded(tile - 1)] = 0;
  }
  for (unsigned d = 1; d < tile; d *= 2) {  // down-sweep: prefixes down to the leaves
    offset /= 2;
    __syncthreads();
    if (t < d) {
      const unsigned left = offset * (2 * t + 1) - 1, right = offset * (2 * t + 2) - 1;
      const std::uint32_t l = tree[padded(left)];
      tree[padded(left)] = tree[padded(right)];
      tree[padded(right)] += l;
    }
  }
  __syncthreads();
  if (base + a < n) out[base + a] = tree[padded(a)];
  if (base + b < n) out[base + b] = tree[padded(b)];
}

// values[i] += offsets[i / tile]: a level's block prefixes become global.
__global__ void add_block_offsets(std::uint32_t* values, std::size_t n, const std::uint32_t* offsets) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * threads + threadIdx.x;
  if (i < n) values[i] += offsets[i / tile];
}

template <class Keep, class Move>
__global__ void scatter(Keep keep, live_count live, const std::uint32_t* local, const std::uint32_t* offsets,
                        bool one_block, Move move, std::uint64_t* d_count) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * threads + threadIdx.x;
  const std::size_t n = live.get();
  if (n == 0 && i == 0) *d_count = 0;
  if (i >= n) return;
  const bool kept = keep(i);
  const std::uint64_t to = std::uint64_t{local[i]} + (one_block ? 0 : offsets[i / tile]);
  if (kept) move(to, i);
  if (i == n - 1) *d_count = to + (kept ? 1 : 0);
}

unsigned blocks_for(std::size_t n, unsigned per_block) { return static_cast<unsigned>((n + per_block - 1) / per_block); }

// The levels: level 0 holds n values (the local indices), level k + 1 one per block of level k,
// down to a single value (at least two levels).
std::vector<std::size_t> level_sizes(std::size_t n) {
  std::vector<std::size_t> s = {n};
  do s.push_back((s.back() + tile - 1) / tile);
  while (s.back() > 1);
  return s;
}

template <class Keep, class Move>
void run(const cuda_call& call, Keep keep, const Move& move) {
  const std::size_t n = call.in.size();  // the capacity: the levels cover it, the live count masks the flags
  const live_count live{call.live_n, n};
  const auto sizes = level_sizes(n);
  std::vector<std::uint32_t*> level(sizes.size());
  auto* p = static_cast<std::byte*>(call.workspace);
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    level[k] = reinterpret_cast<std::uint32_t*>(p);
    p += align_up(4 * sizes[k]);
  }
  // Scan each level in place (the first from the flags), its block totals into the next.
  blelloch_block<<<blocks_for(n, tile), threads, 0, call.stream>>>(keep_values<Keep>{keep, live}, n, level[0], level[1]);
  SIEVE_CUDA_CHECK(cudaGetLastError());
  for (std::size_t k = 1; k + 1 < sizes.size(); ++k) {
    blelloch_block<<<blocks_for(sizes[k], tile), threads, 0, call.stream>>>(level_values{level[k]}, sizes[k],
                                                                          level[k], level[k + 1]);
    SIEVE_CUDA_CHECK(cudaGetLastError());
  }
  // Back down: a level's values get their block's offset from the level above (which is complete).
  for (std::size_t k = sizes.size() - 2; k >= 1; --k) {
    if (sizes[k + 1] > 1) {
      add_block_offsets<<<blocks_for(sizes[k], threads), threads, 0, call.stream>>>(level[k], sizes[k], level[k + 1]);
      SIEVE_CUDA_CHECK(cudaGetLastError());
    }
  }
  scatter<<<blocks_for(n, threads), threads, 0, call.stream>>>(keep, live, level[0], level[1], sizes[1] == 1, move,
                                                               call.d_count);
  SIEVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

std::size_t cuda_scan(const cuda_call& call) {
  const std::size_t n = call.in.size();
  if (call.query) {
    std::size_t bytes = 0;
    for (std::size_t s : level_sizes(n)) bytes += align_up(4 * s);
    return bytes;
  }
  if (n == 0) {
    write_count_async(call.d_count, 0, call.stream);
    return 0;
  }
  with_device_mover(call.in, call.out, [&](const auto& move) {
    if (form_of(call.keep) == form::bit_mask)
      run(call, device_mask{std::get<bit_mask>(call.keep).words.data()}, move);
    else
      run(call, device_flags{std::get<byte_flags>(call.keep).keep.data()}, move);
  });
  return 0;
}

}  // namespace sieve::detail
