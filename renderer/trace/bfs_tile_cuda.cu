// The BFS traversal's tile frontiers on the GPU (bfs.hpp: the strategies `tile` and `warp-tile`, the
// compressed tree). A group of threads holds a tile of rays in shared memory for as long as they
// are traced: each ray's origin, direction and reciprocal direction, its closest hit so far as a
// packed (t, primitive) word, and a stack of its pairs, 4 bytes each ((node << ray bits) | the ray's
// slot in the tile). A step pops the top pairs, up to one a thread, visits them (cw_visit,
// cwbvh.hpp: the same per-pair code as the global frontier's), and pushes the children the rays
// enter, placed by a scan of the counts. The deepest pairs are on top, so the stack stays small
// (depth-first between steps, breadth-first within one); a pair whose children would overflow it is
// handed to its thread, which walks the rest of that subtree depth-first (cw_walk::start_at).
// Nothing but the rays, the tree and the hits touches global memory; one launch a trace.
//   - tile: a block of 256 threads and 512 rays, its steps separated by barriers;
//   - warp-tile: each warp on its own tile of 64 rays, its stack's top in a register, steps
//     separated by __syncwarp alone; persistent warps take the next tile from a counter.
#include <exec/cuda.cuh>

#include "bfs.hpp"

#include <sieve/compaction/cuda_check.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <string>

namespace sieve::render {
namespace {

constexpr unsigned tile_threads = 256;
constexpr unsigned tile_warps = tile_threads / 32;

// Rays and stack of a block tile, and of a warp's tile.
constexpr unsigned block_ray_bits = 9, block_rays = 1U << block_ray_bits, block_stack = 4096;
constexpr unsigned warp_ray_bits = 6, warp_rays = 1U << warp_ray_bits, warp_stack = 512;
static_assert(block_rays == tile_warps * warp_rays && block_stack == tile_warps * warp_stack,
              "both kernels hold the same shared memory: 512 rays and 4096 pairs a block");

struct tile_ray {
  vec3 origin, direction, inv;
};

// The tile's shared memory (both kernels; the warp kernel gives each warp an eighth).
struct tile_memory {
  tile_ray rays[block_rays];
  std::uint64_t best[block_rays];
  std::uint32_t stack[block_stack];
};

__device__ SIEVE_FORCE_INLINE unsigned warp_inclusive(unsigned count) {
  const unsigned lane = threadIdx.x % 32;
  unsigned upto = count;
#pragma unroll
  for (unsigned d = 1; d < 32; d <<= 1) {
    const unsigned y = __shfl_up_sync(~0U, upto, d);
    if (lane >= d) upto += y;
  }
  return upto;
}

// The warp's sum and maximum (one instruction from sm_80 on; shuffles before).
__device__ SIEVE_FORCE_INLINE unsigned warp_sum(unsigned x) {
#if __CUDA_ARCH__ >= 800
  return __reduce_add_sync(~0U, x);
#else
  for (unsigned d = 16; d; d >>= 1) x += __shfl_xor_sync(~0U, x, d);
  return x;
#endif
}
__device__ SIEVE_FORCE_INLINE unsigned warp_max(unsigned x) {
#if __CUDA_ARCH__ >= 800
  return __reduce_max_sync(~0U, x);
#else
  for (unsigned d = 16; d; d >>= 1) {
    const unsigned y = __shfl_xor_sync(~0U, x, d);
    x = x > y ? x : y;
  }
  return x;
#endif
}

// Tile rays [0, here) from rays[first, first + here), each with its root pair, by `lanes` threads.
template <unsigned RayBits>
__device__ void load_tile(const ray* rays, std::uint32_t first, std::uint32_t here, unsigned lane, unsigned lanes,
                          tile_ray* tr, std::uint64_t* best, std::uint32_t* stack) {
  for (std::uint32_t i = lane; i < here; i += lanes) {
    const ray r = rays[first + i];
    tr[i] = {r.origin, r.direction, reciprocal(r.direction)};
    best[i] = pack_hit(r.tmax, ~0U);
    stack[i] = i;  // (the root, ray i)
  }
}

// One thread's part of a step: visits pair p (when `mine`), then pushes the children its ray enters
// at stack[at, at + count) when they fit under `limit`, or walks them depth-first. Returns the
// end of what it pushed (0: nothing).
template <unsigned RayBits>
struct tile_step {
  std::uint64_t group = 0;  // the children entered (cw_visit)
  std::uint32_t slot = 0, oct = 0;
  ray r{};

  __device__ SIEVE_FORCE_INLINE unsigned visit(const cw_view& v, const tile_ray* tr, std::uint64_t* best, std::uint32_t p,
                                                bool mine) {
    slot = p & ((1U << RayBits) - 1);
    const tile_ray q = tr[slot];
    r = {q.origin, q.direction, 0.0f};  // the test's bound is the best word's t
    oct = cw_octant(q.direction);
    if (mine) group = cw_visit(v, r, {q.origin, q.inv, oct}, &best[slot], p >> RayBits);
    return static_cast<unsigned>(__popc(static_cast<std::uint32_t>(group >> 40)));
  }

  // Pushes (true) or, when they would pass `limit`, walks the children (false; `handed` counted).
  __device__ SIEVE_FORCE_INLINE bool place(const cw_view& v, std::uint64_t* best, std::uint32_t* stack, unsigned at,
                                           unsigned count, unsigned limit, unsigned& handed) const {
    if (count == 0) return false;
    if (at + count <= limit) {
      const auto base = static_cast<std::uint32_t>(group), imask = static_cast<std::uint32_t>(group >> 32) & 0xFFU;
      for (std::uint32_t left = static_cast<std::uint32_t>(group >> 40); left; left &= left - 1)
        stack[at++] = inner_child(base, imask, lowest_bit(left) ^ static_cast<int>(oct)) << RayBits | slot;
      return true;
    }
    const std::uint64_t packed = atomic_load_u64(&best[slot]);
    hit so_far;
    so_far.t = unpack_t(packed);
    so_far.prim = unpack_prim(packed);
    cw_walk<false> walk;
    cw_stack own;
    walk.start_at(v, r, group, so_far);
    while (walk.step(v, own)) {
    }
    if (walk.best().prim != ~0U) atomic_min_u64(&best[slot], pack_hit(walk.best().t, walk.best().prim));
    ++handed;
    return false;
  }
};

__device__ void add_counts(bfs_tile_counts* counts, unsigned pairs, unsigned handed, unsigned steps, unsigned tiles) {
  const unsigned all_pairs = warp_sum(pairs), all_handed = warp_sum(handed);
  const unsigned all_steps = warp_sum(steps), all_tiles = warp_sum(tiles);
  if (threadIdx.x % 32 != 0) return;
  atomicAdd(&counts->pairs, static_cast<unsigned long long>(all_pairs));
  if (all_handed) atomicAdd(&counts->handed, static_cast<unsigned long long>(all_handed));
  if (all_steps) atomicAdd(&counts->steps, static_cast<unsigned long long>(all_steps));
  if (all_tiles) atomicAdd(&counts->tiles, static_cast<unsigned long long>(all_tiles));
}

// A block a tile: pops up to 256 pairs a step; three barriers a step.
__global__ void __launch_bounds__(tile_threads, 4)
    bfs_tile_kernel(bvh_view b, const ray* rays, hit* hits, std::uint32_t capacity, const std::uint32_t* d_count,
                    bfs_tile_counts* counts, unsigned limit) {
  __shared__ tile_memory m;
  __shared__ std::uint32_t top;
  __shared__ unsigned warp_total[tile_warps];
  const std::uint32_t n = *d_count < capacity ? *d_count : capacity;
  const std::uint32_t first = blockIdx.x * block_rays;
  if (first >= n) return;  // the whole block
  const std::uint32_t here = n - first < block_rays ? n - first : block_rays;
  const cw_view v = cw_of(b);
  load_tile<block_ray_bits>(rays, first, here, threadIdx.x, tile_threads, m.rays, m.best, m.stack);
  if (threadIdx.x == 0) top = v.node_count ? here : 0;
  __syncthreads();
  const unsigned warp = threadIdx.x / 32;
  unsigned pairs = 0, handed = 0, steps = 0;
  for (;;) {
    const std::uint32_t t = top;
    if (t == 0) break;  // the same for the whole block (read after a barrier)
    const std::uint32_t c = t < tile_threads ? t : tile_threads, base = t - c;
    const bool mine = threadIdx.x < c;
    const std::uint32_t p = mine ? m.stack[base + threadIdx.x] : 0;
    steps += threadIdx.x == 0;
    __syncthreads();  // top and the popped pairs read: the stack from base on is free
    if (threadIdx.x == 0) top = base;
    tile_step<block_ray_bits> s;
    const unsigned count = s.visit(v, m.rays, m.best, p, mine);
    pairs += mine;
    const unsigned upto = warp_inclusive(count);
    if (threadIdx.x % 32 == 31) warp_total[warp] = upto;
    __syncthreads();  // the warps' totals written; top = base
    unsigned at = base + upto - count;
    for (unsigned w = 0; w < warp; ++w) at += warp_total[w];
    if (s.place(v, m.best, m.stack, at, count, limit, handed)) atomicMax(&top, at + count);  // a prefix of the threads
    __syncthreads();  // the pushes and hand-offs done: top is the next step's
  }
  for (std::uint32_t i = threadIdx.x; i < here; i += tile_threads)
    hits[first + i] = bfs_final_hit(b, rays[first + i], m.best[i]);
  if (counts) add_counts(counts, pairs, handed, steps, threadIdx.x == 0);
}

// A warp a tile, persistent: each warp takes tiles of 64 rays from *cursor until none is left,
// pops up to 32 pairs a step; no block barrier.
__global__ void __launch_bounds__(tile_threads, 4)
    bfs_warp_tile_kernel(bvh_view b, const ray* rays, hit* hits, std::uint32_t capacity, const std::uint32_t* d_count,
                         std::uint32_t* cursor, bfs_tile_counts* counts, unsigned limit) {
  __shared__ tile_memory m;
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  tile_ray* tr = m.rays + warp * warp_rays;
  std::uint64_t* best = m.best + warp * warp_rays;
  std::uint32_t* stack = m.stack + warp * warp_stack;
  const std::uint32_t n = *d_count < capacity ? *d_count : capacity;
  const cw_view v = cw_of(b);
  unsigned pairs = 0, handed = 0, steps = 0, tiles = 0;
  for (;;) {
    std::uint32_t tile = 0;
    if (lane == 0) tile = atomicAdd(cursor, 1U);
    tile = __shfl_sync(~0U, tile, 0);
    if (std::uint64_t{tile} * warp_rays >= n) break;
    const std::uint32_t first = tile * warp_rays, here = n - first < warp_rays ? n - first : warp_rays;
    load_tile<warp_ray_bits>(rays, first, here, lane, 32, tr, best, stack);
    tiles += lane == 0;
    std::uint32_t top = v.node_count ? here : 0;  // the same in every lane
    __syncwarp();
    while (top > 0) {
      const std::uint32_t c = top < 32 ? top : 32, base = top - c;
      const bool mine = lane < c;
      const std::uint32_t p = mine ? stack[base + lane] : 0;
      steps += lane == 0;
      __syncwarp();  // the popped pairs read: the stack from base on is free
      tile_step<warp_ray_bits> s;
      const unsigned count = s.visit(v, tr, best, p, mine);
      pairs += mine;
      const unsigned upto = warp_inclusive(count);
      const unsigned at = base + upto - count;
      const bool pushed = s.place(v, best, stack, at, count, limit, handed);
      top = warp_max(pushed ? at + count : base);  // the pushes: a prefix of the lanes
      __syncwarp();
    }
    for (std::uint32_t i = lane; i < here; i += 32) hits[first + i] = bfs_final_hit(b, rays[first + i], best[i]);
    __syncwarp();
  }
  if (counts) add_counts(counts, pairs, handed, steps, tiles);
}

}  // namespace

void bfs_tile_closest(const bvh_view& b, const ray* rays, hit* hits, std::size_t capacity, const std::uint32_t* d_count,
                      const bfs_tile_launch& how, sieve::cuda::stream_t stream) {
  const unsigned bits = how.warp ? warp_ray_bits : block_ray_bits;
  if (b.cw.node_count >= (1U << (32 - bits)))
    throw sieve::error("BFS traversal (tile): " + std::to_string(b.cw.node_count) +
                       " compressed nodes; its 4-byte pairs hold at most " + std::to_string((1U << (32 - bits)) - 1));
  if (b.cw.node_count == 0 && b.binary.node_count != 0)
    throw sieve::error("BFS traversal (tile): the BVH was built without the wide layout");
  const unsigned rays_per_tile = how.warp ? warp_rays : block_rays, stack = how.warp ? warp_stack : block_stack;
  const unsigned limit = how.stack_limit ? how.stack_limit : stack;
  if (limit < rays_per_tile || limit > stack)
    throw sieve::error("BFS traversal (tile): a stack limit of " + std::to_string(limit) + " pairs; " +
                       std::to_string(rays_per_tile) + " .. " + std::to_string(stack));
  if (capacity == 0) return;
  const auto cap = static_cast<std::uint32_t>(capacity);
  if (!how.warp) {
    const auto blocks = static_cast<unsigned>((capacity + block_rays - 1) / block_rays);
    bfs_tile_kernel<<<blocks, tile_threads, 0, stream>>>(b, rays, hits, cap, d_count, how.counts, limit);
    SIEVE_CUDA_CHECK(cudaGetLastError());
    return;
  }
  if (!how.cursor) throw sieve::error("BFS traversal (warp-tile): no tile cursor");
  static const unsigned resident = [] {  // persistent: the blocks the device holds at once
    int per_sm = 0, device = 0, sms = 0;
    SIEVE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, bfs_warp_tile_kernel, tile_threads, 0));
    SIEVE_CUDA_CHECK(cudaGetDevice(&device));
    SIEVE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return static_cast<unsigned>(std::max(1, per_sm * sms));
  }();
  const auto needed = static_cast<unsigned>((capacity + block_rays - 1) / block_rays);
  SIEVE_CUDA_CHECK(cudaMemsetAsync(how.cursor, 0, sizeof(std::uint32_t), stream));
  bfs_warp_tile_kernel<<<std::min(needed, resident), tile_threads, 0, stream>>>(b, rays, hits, cap, d_count, how.cursor,
                                                                               how.counts, limit);
  SIEVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace sieve::render
