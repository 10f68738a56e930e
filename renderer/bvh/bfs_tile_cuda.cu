// The BFS traversal's tile frontier on the GPU (bfs.hpp: the strategy `tile`, the compressed tree):
// one block holds a tile of rays for the whole trace, in shared memory: each ray's origin, direction
// and reciprocal direction, its closest hit so far as a packed (t, primitive) word, and a stack of
// its pairs, 4 bytes each ((node << 9) | the ray's slot in the tile). A step pops the top pairs, up
// to one a thread, visits them (cw_visit, cwbvh.hpp: the same per-pair code as the global
// frontier's), and pushes the children the rays enter, placed by a block-wide scan of the counts.
// The deepest pairs are on top, so the stack stays small (depth-first between steps,
// breadth-first within one); a pair whose children would overflow it is handed to its thread,
// which walks the rest of that subtree depth-first (cw_walk::start_at). Nothing but the rays, the
// tree and the hits touches global memory; one launch a trace.
#include <exec/cuda.cuh>

#include "bfs.hpp"

#include <sieve/compaction/cuda_check.hpp>

#include <cuda_runtime.h>

#include <string>

namespace sieve::render {
namespace {

constexpr unsigned tile_threads = 256;
constexpr unsigned tile_ray_bits = 9;
constexpr unsigned tile_rays = 1U << tile_ray_bits;  // rays a block holds
constexpr unsigned tile_stack = 4096;                // pairs of its stack (16 KB)
constexpr unsigned tile_warps = tile_threads / 32;

struct tile_ray {
  vec3 origin, direction, inv;
};

// Thread 0..tile_threads-1's exclusive offset among the block's counts and the warp's inclusive
// one; totals of the warps through `warp_total` (written here, read after the caller's barrier).
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

__global__ void __launch_bounds__(tile_threads, 4)
    bfs_tile_kernel(bvh_view b, const ray* rays, hit* hits, std::uint32_t capacity, const std::uint32_t* d_count,
                    bfs_tile_counts* counts) {
  __shared__ tile_ray tr[tile_rays];
  __shared__ std::uint64_t best[tile_rays];
  __shared__ std::uint32_t stack[tile_stack];
  __shared__ std::uint32_t top;
  __shared__ unsigned warp_total[tile_warps];
  const std::uint32_t n = *d_count < capacity ? *d_count : capacity;
  const std::uint32_t first = blockIdx.x * tile_rays;
  if (first >= n) return;  // the whole block
  const std::uint32_t here = n - first < tile_rays ? n - first : tile_rays;
  const cw_view v = cw_of(b);
  for (std::uint32_t i = threadIdx.x; i < here; i += tile_threads) {
    const ray r = rays[first + i];
    tr[i] = {r.origin, r.direction, reciprocal(r.direction)};
    best[i] = pack_hit(r.tmax, ~0U);
    stack[i] = i;  // (the root, ray i)
  }
  if (threadIdx.x == 0) top = v.node_count ? here : 0;
  __syncthreads();
  const unsigned warp = threadIdx.x / 32;
  unsigned pairs = 0, handed = 0, steps = 0;
  for (;;) {
    const std::uint32_t t = top;
    if (t == 0) break;  // the same for the whole block (read after a barrier)
    const std::uint32_t c = t < tile_threads ? t : tile_threads, base = t - c;
    const bool mine = threadIdx.x < c;
    const std::uint32_t p = mine ? stack[base + threadIdx.x] : 0;
    ++steps;
    __syncthreads();  // top and the popped pairs read: the stack from base on is free
    if (threadIdx.x == 0) top = base;
    const std::uint32_t slot = p & (tile_rays - 1), node = p >> tile_ray_bits;
    const tile_ray q = tr[slot];
    const ray r{q.origin, q.direction, 0.0f};  // the test's bound is the best word's t
    const std::uint32_t oct = cw_octant(q.direction);
    std::uint64_t group = 0;
    if (mine) {
      group = cw_visit(v, r, {q.origin, q.inv, oct}, &best[slot], node);
      ++pairs;
    }
    const std::uint32_t kids = static_cast<std::uint32_t>(group >> 40);
    const unsigned count = static_cast<unsigned>(__popc(kids));
    const unsigned upto = warp_inclusive(count);
    if (threadIdx.x % 32 == 31) warp_total[warp] = upto;
    __syncthreads();  // the warps' totals written; top = base
    unsigned at = base + upto - count;
    for (unsigned w = 0; w < warp; ++w) at += warp_total[w];
    if (count != 0 && at + count <= tile_stack) {  // the block's pushes: a prefix of its threads
      const auto cbase = static_cast<std::uint32_t>(group), imask = static_cast<std::uint32_t>(group >> 32) & 0xFFU;
      for (std::uint32_t left = kids; left; left &= left - 1)
        stack[at++] = inner_child(cbase, imask, lowest_bit(left) ^ static_cast<int>(oct)) << tile_ray_bits | slot;
      atomicMax(&top, at);
    } else if (count != 0) {  // the stack is full: this thread walks the rest of the subtree itself
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
    }
    __syncthreads();  // the pushes and hand-offs done: top is the next step's
  }
  for (std::uint32_t i = threadIdx.x; i < here; i += tile_threads)
    hits[first + i] = bfs_final_hit(b, rays[first + i], best[i]);
  if (counts) {
    const unsigned all_pairs = __reduce_add_sync(~0U, pairs), all_handed = __reduce_add_sync(~0U, handed);
    if (threadIdx.x % 32 == 0) {
      atomicAdd(&counts->pairs, static_cast<unsigned long long>(all_pairs));
      if (all_handed) atomicAdd(&counts->handed, static_cast<unsigned long long>(all_handed));
    }
    if (threadIdx.x == 0) {
      atomicAdd(&counts->steps, static_cast<unsigned long long>(steps));
      atomicAdd(&counts->tiles, 1ULL);
    }
  }
}

}  // namespace

void bfs_tile_closest(const bvh_view& b, const ray* rays, hit* hits, std::size_t capacity, const std::uint32_t* d_count,
                      bfs_tile_counts* counts, sieve::cuda::stream_t stream) {
  if (b.cw.node_count >= (1U << (32 - tile_ray_bits)))
    throw sieve::error("BFS traversal (tile): " + std::to_string(b.cw.node_count) + " compressed nodes; its 4-byte pairs hold at most " +
                       std::to_string((1U << (32 - tile_ray_bits)) - 1));
  if (b.cw.node_count == 0 && b.node_count != 0)
    throw sieve::error("BFS traversal (tile): the BVH was built without the wide layout");
  if (capacity == 0) return;
  const auto blocks = static_cast<unsigned>((capacity + tile_rays - 1) / tile_rays);
  bfs_tile_kernel<<<blocks, tile_threads, 0, stream>>>(b, rays, hits, static_cast<std::uint32_t>(capacity), d_count, counts);
  SIEVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace sieve::render
