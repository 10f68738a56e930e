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

struct bfs_level {
  std::size_t frontier = 0;  // pairs expanded at this level
  double compact_ms = 0;     // compaction of their children
};

struct bfs_stats {
  std::vector<bfs_level> levels;
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
