// Breadth-first BVH traversal: a level-synchronous frontier of (ray, node) pairs. Each level expands
// every pair (a leaf tests its triangles and updates the ray's closest hit; an inner node emits its
// two children), marks which children survive (their box is hit before the ray's closest hit so
// far) in the form the chosen compaction strategy takes (bit mask, byte flags or removal list), and
// compacts the children into the next frontier through the compaction library.
//
// The per-pair work (expand_pair) is one SIEVE_HD function for CPU and GPU. Closest hits are kept
// as packed (t, primitive) words updated by atomic minimum, so the result is the same whatever the
// order of the frontier: BFS equals DFS for every compaction strategy, stable or not.
#pragma once

#include "../core/marks.hpp"
#include "dfs.hpp"

#include <sieve/compaction.hpp>
#include <sieve/compaction/cuda.hpp>

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace sieve::render {

// Pair i = (ray[i], node[i]) of the frontier; children go to slots 2i and 2i + 1.
SIEVE_HD inline void expand_pair(std::uint32_t i, const bvh_view& b, const ray* rays, std::uint64_t* best,
                                 const std::uint32_t* ray_of, const std::uint32_t* node_of, std::uint32_t* child_ray,
                                 std::uint32_t* child_node, const keep_marks& marks) {
  const std::uint32_t r = ray_of[i];
  const bvh_node& n = b.nodes[node_of[i]];
  const ray& ry = rays[r];
  child_ray[2 * i] = child_ray[2 * i + 1] = r;
  if (n.leaf()) {
    for (std::uint32_t k = n.first; k < n.first + n.count; ++k) {
      tri_hit h;
      if (hit_triangle(b.leaf_triangles[k].get(), ry, unpack_t(atomic_load_u64(&best[r])), h))
        atomic_min_u64(&best[r], pack_hit(h.t, b.prims[k]));
    }
    child_node[2 * i] = child_node[2 * i + 1] = 0;
    marks.mark(2 * i, false);
    marks.mark(2 * i + 1, false);
    return;
  }
  const vec3 inv = reciprocal(ry.direction);
  const float limit = cull_limit(unpack_t(atomic_load_u64(&best[r])));
  for (std::uint32_t c = 0; c < 2; ++c) {
    child_node[2 * i + c] = n.first + c;
    marks.mark(2 * i + c, hit_box(b.nodes[n.first + c].bounds, ry.origin, inv, limit) <= limit);
  }
}

// The BFS stages, for both drivers (exec::cpu here, exec::cuda in bfs_cuda.cu).
// bfs.begin: every ray's best hit is "none before tmax", and the frontier is (ray i, root) for all i.
template <class Exec>
void bfs_begin(Exec e, std::size_t n, const ray* rays, std::uint64_t* best, std::uint32_t* ray_of,
               std::uint32_t* node_of) {
  exec::parallel_for(e, "bfs.begin", n, [=] SIEVE_HD(std::uint32_t i) {
    best[i] = pack_hit(rays[i].tmax, ~0U);
    ray_of[i] = i;
    node_of[i] = 0;  // the root's own box is tested when its children are: a pair says "visit this node"
  });
}

template <class Exec>
void bfs_expand(Exec e, std::size_t m, const bvh_view& b, const ray* rays, std::uint64_t* best,
                const std::uint32_t* ray_of, const std::uint32_t* node_of, std::uint32_t* child_ray,
                std::uint32_t* child_node, const keep_marks& marks) {
  exec::parallel_for(e, "bfs.expand", m, [=] SIEVE_HD(std::uint32_t i) {
    expand_pair(i, b, rays, best, ray_of, node_of, child_ray, child_node, marks);
  });
}

// bfs.finish: the winners' barycentrics (the packed word holds t and the primitive only).
template <class Exec>
void bfs_finish(Exec e, std::size_t n, const bvh_view& b, const ray* rays, const std::uint64_t* best, hit* hits) {
  exec::parallel_for(e, "bfs.finish", n, [=] SIEVE_HD(std::uint32_t i) {
    hit h;
    const std::uint32_t prim = unpack_prim(best[i]);
    if (prim != ~0U) {
      tri_hit th{};
      hit_triangle(b.triangles[prim], rays[i], 1e30f, th);
      h = {unpack_t(best[i]), prim, th.u, th.v};
    }
    hits[i] = h;
  });
}

// The frontier's memory is bounded. Pairs wait on a stack, deepest on top; a step expands the top
// c pairs (the whole frontier while it fits, so an ordinary scene runs level by level) and puts the
// children that survive back in their place. With n rays:
//   c <= min(max(2n, bfs_min_chunk), 2^30), and c <= (8n - stack) while that is at least bfs_min_chunk,
// so the stack holds at most 8n + (dfs_depth_limit() + 1) * bfs_min_chunk pairs and a step's children
// 2c <= max(4n, 2 bfs_min_chunk). At 8 bytes a pair and a flag byte a child, the tracer keeps at most
// 8 * 8n + 8 * 4n + 4n + 8n (best hits) = 108 bytes per ray, plus 0.5 MB; the unbounded frontier of a
// hairball took ~7 KB per ray (20K long triangles at 512 x 512: 2.0 GB). The renderer with DFS keeps
// ~165 bytes per path in flight (path queues, hits, shadow rays; measured), so a BFS render needs at
// most 1.7 times the memory of a DFS render (the factor; the hairball measured 88 MB vs 56 MB, 1.6).
// The order of steps does not change the result (closest hits are atomic minima).
inline constexpr std::size_t bfs_stack_per_ray = 8;    // pairs of stack per ray before chunks shrink
inline constexpr std::size_t bfs_chunk_per_ray = 2;    // pairs per step per ray, at most
inline constexpr std::size_t bfs_min_chunk = 1024;     // pairs per step, at least (progress)
inline constexpr std::size_t bfs_max_chunk = std::size_t{1} << 30;  // 2c slots fit a 32-bit index

// How many pairs of a stack of `stack` pairs the next step expands, for n rays.
inline std::size_t bfs_chunk(std::size_t stack, std::size_t n) {
  const std::size_t room = bfs_stack_per_ray * n > stack ? bfs_stack_per_ray * n - stack : 0;
  return std::min({stack, std::max(bfs_chunk_per_ray * n, bfs_min_chunk), bfs_max_chunk, std::max(room, bfs_min_chunk)});
}

// The most pairs the stack holds for n rays (the bound above).
inline std::size_t bfs_stack_bound(std::size_t n) {
  return bfs_stack_per_ray * n + (dfs_depth_limit() + 1) * bfs_min_chunk;
}

struct bfs_level {
  std::size_t frontier = 0;  // pairs expanded at this step (a level, or a chunk of one)
  double compact_ms = 0;     // compaction of their children
};

struct bfs_stats {
  std::vector<bfs_level> levels;  // one per step: per level while the frontier fits a step
  std::size_t peak_pairs = 0;     // the most pairs waiting at once (<= bfs_stack_bound(n))
  double compact_ms = 0, total_ms = 0;
  std::string strategy;       // the strategy that ran (auto resolved by the library)
  sieve::form form = sieve::form::byte_flags;
};

// The BFS traversal on the CPU, with its frontier buffers kept between calls.
class bfs_tracer {
 public:
  // `strategy` must take a bit mask, byte flags or a removal list on the CPU; throws sieve::error.
  explicit bfs_tracer(std::string strategy);

  // Closest hits of `rays` (same semantics as closest_hit: (0, tmax], ties to the lower index).
  void closest(const bvh_view& b, std::span<const ray> rays, std::span<hit> hits, bfs_stats* stats = nullptr);

  sieve::form form() const { return form_; }
  // The strategy the frontier's compaction runs as for a frontier of n pairs ("auto" resolved).
  std::string_view resolved_strategy(std::size_t n) const {
    return sieve::resolve_strategy(strategy_, sieve::backend::cpu, form_, in_place_, n, 0, 2 * sizeof(std::uint32_t));
  }

 private:
  std::string strategy_;
  sieve::form form_;
  bool in_place_;
  std::vector<std::uint32_t> ray_[2], node_[2];  // frontier and children, swapped each level
  std::vector<std::uint8_t> flags_;
  std::vector<std::uint32_t> mask_, removals_;
  std::vector<std::uint64_t> best_;
};

// The BFS traversal on the GPU: the same stages as kernels over device arrays, the frontier compacted
// by the library's CUDA strategies. Its buffers grow with the frontier and are kept between calls.
// The host reads the frontier's size back once per level (the library takes counts on the host).
class bfs_tracer_cuda {
 public:
  // `strategy` must take a bit mask, byte flags or a removal list on CUDA; throws sieve::error (also
  // in builds without CUDA).
  explicit bfs_tracer_cuda(std::string strategy);
  ~bfs_tracer_cuda();
  bfs_tracer_cuda(const bfs_tracer_cuda&) = delete;
  bfs_tracer_cuda& operator=(const bfs_tracer_cuda&) = delete;

  // Closest hits of the n device rays into the n device hits; `b` holds device pointers. Returns
  // when done (stream synchronised).
  void closest(const bvh_view& b, const ray* rays, hit* hits, std::size_t n, sieve::cuda::stream_t stream,
               bfs_stats* stats = nullptr);

 private:
  struct buffers;
  std::string strategy_;
  sieve::form form_;
  bool in_place_;
  std::unique_ptr<buffers> buf_;
};

}  // namespace sieve::render
