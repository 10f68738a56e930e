// Breadth-first BVH traversal: a frontier of (ray, node) pairs. A step visits every pair of the
// frontier (or of its top chunk): the child boxes of the node are tested against the ray, the
// leaves it enters are intersected at once (the ray's closest hit is updated), and the inner children
// it enters before its closest hit so far survive into the next frontier. The tree is the binary
// one (a pair node's two children, dfs.hpp) or the 8-wide one (a wide node's up to eight children,
// wide.hpp: a third of the levels, and the ray and its node read once for eight boxes): the tree
// policies bfs_binary_tree and bfs_wide_tree below, A = 2 or 8 children a pair. Survivors get to
// the next frontier in one of two ways, the frontier queue's choice (bfs_driver.hpp):
//   - a library strategy: the step writes the A child slots of pair i to slots [A i, A i + A) and marks
//     them in the form the strategy takes (bit mask, byte flags or removal list); the compaction
//     library compacts the children into the next frontier (in place, or out of place);
//   - `append` (producer-side): the step appends the survivors to the next frontier itself (one
//     atomic per block of pairs on the GPU), no marks and no compaction pass.
//
// The per-pair work (visit_pair) is one SIEVE_HD function for CPU and GPU, and so is the loop
// (bfs_driver.hpp, a template over a backend). Closest hits are kept as packed (t, primitive) words
// updated by atomic minimum, so the result is the same whatever the order of the frontier: BFS
// equals DFS, hit for hit, for every compaction strategy, stable or not.
#pragma once

#include "../core/marks.hpp"
#include "../exec/loop_clock.hpp"
#include "cwbvh.hpp"
#include "dfs.hpp"
#include "wide.hpp"

#include <sieve/compaction.hpp>
#include <sieve/compaction/cuda.hpp>

#include <algorithm>
#include <atomic>
#include <memory>

namespace sieve::exec {
class cuda_loop_clock;  // exec/cuda.cuh
}
#include <span>
#include <string>
#include <vector>

namespace sieve::render {

// A frontier entry, packed into one 8-byte column (the compaction moves one array, not two):
// (node << 32) | ray: a pair node (the boxes of a binary inner node's two children, dfs.hpp) or a
// wide node (wide.hpp), as the tree policy says.
using bfs_pair = std::uint64_t;
SIEVE_HD constexpr bfs_pair bfs_make_pair(std::uint32_t ray, std::uint32_t node) {
  return (std::uint64_t{node} << 32) | ray;
}
SIEVE_HD constexpr std::uint32_t bfs_ray_of(bfs_pair p) { return static_cast<std::uint32_t>(p); }
SIEVE_HD constexpr std::uint32_t bfs_node_of(bfs_pair p) { return static_cast<std::uint32_t>(p >> 32); }

// The name that asks for producer-side append instead of a library strategy.
inline constexpr std::string_view bfs_append = "append";
// The names that ask for a tile frontier (GPU, the compressed tree): a block (`tile`) or each warp
// (`warp-tile`) holds a tile of rays and their pairs in shared memory while it traces them
// (bfs_tile_cuda.cu); no frontier in global memory.
inline constexpr std::string_view bfs_tile = "tile";
inline constexpr std::string_view bfs_warp_tile = "warp-tile";

// How the frontier shrinks, checked once (when a tracer is made): producer-side append, or a library
// strategy (looked up once) with the form the expansion marks and whether it compacts in place.
struct bfs_compaction {
  std::string name;          // as asked: "append", "auto" or a strategy's name
  bool append = false;
  sieve::strategy strategy;  // the library's (auto when appending: unused)
  sieve::form form = sieve::form::byte_flags;
  bool in_place = false;     // copy where the strategy offers it: no extra pass
  bool tile = false;         // a tile frontier (no compaction either)
  bool warp_tile = false;    // of which a warp's

  // Throws sieve::error naming the strategies that fit on backend b.
  bfs_compaction(std::string asked, sieve::backend b)
      : name(std::move(asked)), append(name == bfs_append), tile(name == bfs_tile || name == bfs_warp_tile),
        warp_tile(name == bfs_warp_tile) {
    if (tile && b != sieve::backend::cuda)
      throw sieve::error("BFS traversal: the '" + name +
                         "' frontier runs on the GPU only (shared memory); on the CPU use append or a strategy");
    if (append || tile) return;
    strategy = sieve::strategy(name);
    form = marks_form_for(strategy, b, b == sieve::backend::cuda ? "BFS traversal (cuda)" : "BFS traversal");
    in_place = !strategy.info().out_of_place;
  }
  // The strategy the compaction of a frontier of n pairs, k of them removed, runs as ("auto"
  // resolved), or "append".
  std::string_view resolved(sieve::backend b, std::size_t n, std::size_t k) const {
    if (append) return bfs_append;
    if (tile) return warp_tile ? bfs_warp_tile : bfs_tile;
    return strategy.resolve(b, form, in_place, n, k, sizeof(bfs_pair)).name();
  }
};

// The children of a pair, one per child slot, and which of them survive (bit j: node[j]). Slots are
// only ever indexed by unrolled loops, so the array stays in registers on the GPU.
template <unsigned A>
struct bfs_children {
  std::uint32_t node[A] = {};
  std::uint32_t keep = 0;
  SIEVE_HD std::uint32_t count() const { return static_cast<std::uint32_t>(bit_count(keep)); }
};

// Visits pair p of the binary tree: tests the two child boxes of its pair node, intersects the
// triangles of the leaves the ray enters (the closest hit by atomic minimum of best[ray]), and says
// which inner children the ray enters before its closest hit so far (with the margin of cull_limit).
// The ray's closest hit is read once: a closer one that another pair of the same ray finds during
// this step only means less culling here, never another result (the atomic minimum decides;
// hit_triangle takes t <= tmax, so a tie is still tested and goes to the lower primitive).
SIEVE_HD inline bfs_children<2> visit_pair(const pair_view& b, const ray* rays, std::uint64_t* best, bfs_pair p) {
  const std::uint32_t r = bfs_ray_of(p);
  const ray ry = rays[r];
  const vec3 inv = reciprocal(ry.direction);
  float t = unpack_t(atomic_load_u64(&best[r]));
  const pair_step s = visit(b.nodes[bfs_node_of(p)], ry, inv, cull_limit(t));
  for (int c = 0; c < 2; ++c) {
    if (s.count[c] == 0 || !(s.t[c] <= cull_limit(t))) continue;
    for (std::uint32_t k = s.child[c]; k < s.child[c] + s.count[c]; ++k) {
      tri_hit h;
      if (!hit_triangle(b.triangles[k].get(), ry, t, h) || !accept_hit(b.alpha, ry, b.prims[k], h.u, h.v)) continue;
      atomic_min_u64(&best[r], pack_hit(h.t, b.prims[k]));
      t = h.t;  // hit_triangle took only t <= the old one
    }
  }
  const float limit = cull_limit(t);
  bfs_children<2> out;
  for (int c = 0; c < 2; ++c) {
    out.node[c] = s.child[c];
    if (s.count[c] == 0 && s.child[c] != no_child && s.t[c] <= limit) out.keep |= 1U << c;
  }
  return out;
}

// Visits pair p of the wide tree, the same way: the node's boxes in one pass, its leaf children
// intersected, its inner children that the ray enters before its closest hit so far kept.
SIEVE_HD inline bfs_children<wide_arity> visit_wide_pair(const wide_view& v, const alpha_view& alpha, const ray* rays,
                                                         std::uint64_t* best, bfs_pair p) {
  const std::uint32_t r = bfs_ray_of(p);
  const wide_ray w = prepare_wide(rays[r]);
  float t = unpack_t(atomic_load_u64(&best[r]));
  const wide_node n = load_wide(v.nodes + bfs_node_of(p));
  float enter[wide_arity];
  const std::uint32_t hits = scalar_boxes{}(n, w, cull_limit(t), enter);
  for_leaf_triangles(n, hits & ~std::uint32_t{n.inner_mask}, 0, [&](std::uint32_t k) {  // leaf_walk: wide.hpp
    tri_hit h;
    if (!hit_triangle(v.triangles[k].get(), w.r, t, h) || !accept_hit(alpha, w.r, v.prims[k], h.u, h.v)) return false;
    atomic_min_u64(&best[r], pack_hit(h.t, v.prims[k]));
    t = h.t;
    return false;
  });
  const float limit = cull_limit(t);
  bfs_children<wide_arity> out;
  const std::uint32_t inner = hits & n.inner_mask;
  SIEVE_UNROLL for (int s = 0; s < wide_arity; ++s) {
    out.node[s] = inner_child(n.child_base, n.inner_mask, s);
    if ((inner >> s & 1U) && enter[s] <= limit) out.keep |= 1U << s;
  }
  return out;
}

// The tree a BFS walks: its children per pair, how a pair is visited, whether it is empty.
struct bfs_binary_tree {
  static constexpr unsigned arity = 2;
  SIEVE_HD static bfs_children<2> visit(const bvh_view& b, const ray* rays, std::uint64_t* best, bfs_pair p) {
    return visit_pair(pairs_of(b), rays, best, p);
  }
  static bool empty(const bvh_view& b) { return b.pairs.node_count == 0; }
};
struct bfs_wide_tree {
  static constexpr unsigned arity = wide_arity;
  SIEVE_HD static bfs_children<wide_arity> visit(const bvh_view& b, const ray* rays, std::uint64_t* best, bfs_pair p) {
    return visit_wide_pair(b.wide, b.alpha, rays, best, p);
  }
  static bool empty(const bvh_view& b) { return b.wide.node_count == 0; }
};

// The compressed 8-wide tree (cwbvh.hpp): a pair's node is a compressed node, its child boxes
// quantised to 8 bits, its triangles stored as vertex and edges (cw_visit: one copy for this and
// for the tile frontier, bfs_tile_cuda.cu); child slots in the ray's octant order.
struct bfs_cw_tree {
  static constexpr unsigned arity = wide_arity;
  SIEVE_HD static bfs_children<wide_arity> visit(const bvh_view& b, const ray* rays, std::uint64_t* best, bfs_pair p) {
    const std::uint32_t r = bfs_ray_of(p);
    const ray ry = rays[r];
    const cw_ray w = prepare_cw(ry);
    const std::uint64_t g = cw_visit(cw_of(b), ry, w, &best[r], bfs_node_of(p));
    const auto base = static_cast<std::uint32_t>(g), imask = static_cast<std::uint32_t>(g >> 32) & 0xFFU;
    bfs_children<wide_arity> out;
    out.keep = static_cast<std::uint32_t>(g >> 40);
    SIEVE_UNROLL for (int k = 0; k < wide_arity; ++k) out.node[k] = inner_child(base, imask, k ^ static_cast<int>(w.oct));
    return out;
  }
  static bool empty(const bvh_view& b) { return b.cw.node_count == 0; }
};

// A ray's hit from its packed closest (t, primitive) word: the barycentrics recomputed from the
// triangle (bfs.finish, and the tile frontier's end).
SIEVE_HD inline hit bfs_final_hit(const bvh_view& b, const ray& r, std::uint64_t best) {
  const std::uint32_t prim = unpack_prim(best);
  if (prim == ~0U) return hit{};
  tri_hit th{};
  hit_triangle(b.triangles[prim], r, 1e30f, th);
  return {unpack_t(best), prim, th.u, th.v};
}

// A step's child slots per pair for the tree.
constexpr unsigned bfs_arity(trace_tree tree) {
  return tree == trace_tree::binary ? bfs_binary_tree::arity : bfs_wide_tree::arity;
}

// A library strategy's step: the A child slots of pair i to slots [A i, A i + A), the survivors marked.
template <class Tree>
SIEVE_HD void expand_marked(std::uint32_t i, bfs_pair p, const bvh_view& b, const ray* rays, std::uint64_t* best,
                            bfs_pair* children, const keep_marks& marks) {
  constexpr unsigned A = Tree::arity;
  const bfs_children<A> c = Tree::visit(b, rays, best, p);
  const std::uint32_t r = bfs_ray_of(p);
  SIEVE_UNROLL for (unsigned j = 0; j < A; ++j) {
    children[A * i + j] = bfs_make_pair(r, c.node[j]);
    marks.mark(A * i + j, (c.keep >> j & 1U) != 0);
  }
}

// The `append` step writes the surviving children of pair (r, .) from next[slot] on, side by side;
// the backend reserves the slots (bfs_driver.hpp: one atomic per pair with survivors on the CPU; on
// the GPU one per block of 256 pairs, the block's survivors counted by a warp scan).
template <unsigned A>
SIEVE_HD void bfs_put_children(bfs_pair* next, std::uint64_t slot, const bfs_children<A>& c, std::uint32_t r) {
  SIEVE_UNROLL for (unsigned j = 0; j < A; ++j)
    if (c.keep >> j & 1U) next[slot++] = bfs_make_pair(r, c.node[j]);
}

// The frontier's memory is bounded. Pairs wait on a stack, deepest on top; a step expands the top
// c pairs (the whole frontier while it fits, so an ordinary scene runs level by level) and puts the
// children that survive back on top, at most A a pair (A = 2 binary, 8 wide). With n rays:
//   c <= min(max(2n, bfs_min_chunk), 2^31 / A), and c <= (8n - stack) / (A - 1) while that is at least
//   bfs_min_chunk,
// so the stack holds at most 8n + (dfs_depth_limit() + 1) (A - 1) bfs_min_chunk pairs and a step's
// children Ac <= A max(min(2n, 8n / (A - 1)), bfs_min_chunk). The stack is kept as two parts (bfs_driver.hpp): its top,
// the frontier, in a buffer of Ac pairs at a fixed place (the compaction writes there), and the pairs
// below it on a spill stack; a step's children go to a second buffer of Ac. At 8 bytes a pair, a flag
// byte a child and 8 bytes of best hit per ray: at most 140 bytes per ray for the binary tree
// (8 * 8n + 2 * 8 * 4n + 4n + 8n) and 227 for the wide one (8 * 8n + 2 * 8 * 64n / 7 + 64n / 7 + 8n), plus a few MB; the unbounded frontier of a
// hairball took ~7 KB per ray (20K long triangles at 512 x 512: 2.0 GB). The order of steps does not
// change the result (closest hits are atomic minima).
inline constexpr std::uint64_t bfs_stack_per_ray = 8;    // pairs of stack per ray before chunks shrink
inline constexpr std::uint64_t bfs_chunk_per_ray = 2;    // pairs per step per ray, at most
inline constexpr std::uint64_t bfs_min_chunk = 1024;     // pairs per step, at least (progress)

// The most pairs a step expands whatever n: its A c slots fit a 32-bit index (2^30 binary).
SIEVE_HD constexpr std::uint64_t bfs_max_chunk(unsigned arity = 2) { return (std::uint64_t{1} << 31) / arity; }

// How many pairs of a stack of `stack` pairs the next step expands, for n rays and A = `arity`
// children a pair (on either side: the GPU plans its steps on the device).
SIEVE_HD constexpr std::uint64_t bfs_chunk(std::uint64_t stack, std::uint64_t n, unsigned arity = 2) {
  const std::uint64_t room = (bfs_stack_per_ray * n > stack ? bfs_stack_per_ray * n - stack : 0) / (arity - 1);
  const std::uint64_t most = room > bfs_min_chunk ? room : bfs_min_chunk;
  std::uint64_t c = bfs_chunk_per_ray * n > bfs_min_chunk ? bfs_chunk_per_ray * n : bfs_min_chunk;
  c = c < bfs_max_chunk(arity) ? c : bfs_max_chunk(arity);
  c = c < most ? c : most;
  return stack < c ? stack : c;
}

// The most pairs one step expands for n rays, whatever the stack (the chunk's capacity): 2n, and
// never more than the room of an empty stack, 8n / (A - 1).
SIEVE_HD constexpr std::uint64_t bfs_chunk_bound(std::uint64_t n, unsigned arity = 2) {
  std::uint64_t c = bfs_chunk_per_ray * n;
  const std::uint64_t room = bfs_stack_per_ray * n / (arity - 1);
  c = c < room ? c : room;
  c = c > bfs_min_chunk ? c : bfs_min_chunk;
  return c < bfs_max_chunk(arity) ? c : bfs_max_chunk(arity);
}

// The most pairs the stack holds for n rays (the bound above).
constexpr std::uint64_t bfs_stack_bound(std::uint64_t n, unsigned arity = 2) {
  return bfs_stack_per_ray * n + (dfs_depth_limit() + 1) * (arity - 1) * bfs_min_chunk;
}

struct bfs_level {
  std::size_t frontier = 0;  // pairs expanded at this step (a level, or a chunk of one)
  double compact_ms = 0;     // compaction of their children (0 for `append`)
  double expand_ms = 0;      // planning the step and expanding its pairs (marking, or appending)
};

// What a tile-frontier trace did (bfs_tile_cuda.cu), summed over its blocks.
struct bfs_tile_counts {
  unsigned long long pairs = 0;   // pairs visited (node visits)
  unsigned long long steps = 0;   // block steps (a step: up to a block's threads of pairs, three barriers)
  unsigned long long handed = 0;  // pairs whose children found the block's stack full: walked depth-first by their thread
  unsigned long long tiles = 0;   // blocks that traced rays
};

// How a tile-frontier trace runs: a block's tile or a warp's (then `cursor`: a device word the
// warps take tiles from, reset by the call), counters to add to (device memory; null: none), and a
// stack limit below the tile's own (tests: hand-offs to the depth-first walk; 0: the tile's stack).
struct bfs_tile_launch {
  bool warp = false;
  std::uint32_t* cursor = nullptr;
  bfs_tile_counts* counts = nullptr;
  unsigned stack_limit = 0;
};

// Enqueues the tile-frontier trace of rays[0, min(*d_count, capacity)) on `stream` (device pointers;
// capturable: a kernel, and for a warp's tile the cursor's reset): closest hits, as bfs.finish
// writes them. Throws sieve::error for a tree too large for its pairs or a stack limit out of range.
void bfs_tile_closest(const bvh_view& b, const ray* rays, hit* hits, std::size_t capacity, const std::uint32_t* d_count,
                      const bfs_tile_launch& how, sieve::cuda::stream_t stream);

struct bfs_stats {
  std::vector<bfs_level> levels;  // one per step: per level while the frontier fits a step
  std::size_t peak_pairs = 0;     // the most pairs waiting at once (<= bfs_stack_bound(n))
  double compact_ms = 0, expand_ms = 0, total_ms = 0;
  std::string strategy;       // the strategy as named ("auto" unresolved: see resolved_strategy()), or "append"
  sieve::form form = sieve::form::byte_flags;
  std::size_t host_syncs = 0;  // host synchronisations inside the trace (GPU; 0 on the CPU)
  bool timed = false;          // compact_ms measured (per step; the GPU's host-driven loop)
  std::size_t pairs = 0;       // pairs visited in all (node visits): the levels' sum, or the tile's count
  bfs_tile_counts tile;        // the tile frontier's counters (tile only)
};

// The BFS traversal on the CPU, with its frontier buffers kept between calls.
class bfs_tracer {
 public:
  // `strategy`: a library strategy that takes a bit mask, byte flags or a removal list on the CPU,
  // or "append"; `tree`: the binary tree or the 8-wide one (the view's `wide`). Throws sieve::error.
  explicit bfs_tracer(std::string strategy, trace_tree tree = trace_tree::binary);
  ~bfs_tracer();
  bfs_tracer(const bfs_tracer&) = delete;
  bfs_tracer& operator=(const bfs_tracer&) = delete;

  // Closest hits of `rays` (same semantics as closest_hit: (0, tmax], ties to the lower index).
  void closest(const bvh_view& b, std::span<const ray> rays, std::span<hit> hits, bfs_stats* stats = nullptr);
  // The loop clock closest() times its loops (bfs.*) with; null (the default): untimed.
  void time_loops(exec::loop_clock* clock) { clock_ = clock; }

  sieve::form form() const { return c_.form; }
  bool appends() const { return c_.append; }
  // The strategy the frontier's compaction runs as for a frontier of n pairs ("auto" resolved).
  std::string_view resolved_strategy(std::size_t n) const { return c_.resolved(sieve::backend::cpu, n, 0); }

 private:
  struct buffers;
  bfs_compaction c_;
  trace_tree tree_;
  exec::loop_clock* clock_ = nullptr;
  std::unique_ptr<buffers> buf_;
};

// The BFS traversal on the GPU: the same loop, its sizes and counts in device memory. The loop runs
// on the device as a CUDA graph with a WHILE conditional node (no host synchronisation inside a
// trace), or, for timing each step's compaction, driven by the host (one synchronisation a step).
class bfs_tracer_cuda {
 public:
  enum class loop { graph, host };

  // `strategy` and `tree` as for bfs_tracer, on CUDA; throws sieve::error (also in builds without CUDA).
  explicit bfs_tracer_cuda(std::string strategy, trace_tree tree = trace_tree::binary);
  ~bfs_tracer_cuda();
  bfs_tracer_cuda(const bfs_tracer_cuda&) = delete;
  bfs_tracer_cuda& operator=(const bfs_tracer_cuda&) = delete;

  // Allocates the frontier, marks, counts and compaction workspace for up to `capacity` rays (kept;
  // never shrinks). closest() calls it; closest_async() needs it beforehand. Growing moves the
  // arrays: capture closest_async() into a graph after the last reserve().
  void reserve(std::size_t capacity);
  std::size_t capacity() const;

  // Enqueues on `stream` the closest hits of rays[0, *d_count) into hits (d_count: device memory,
  // written by an earlier kernel or copy in stream order, at most `capacity`; rays and hits hold
  // `capacity` items). No allocation, no host synchronisation: when `stream` is being captured, the
  // trace (its level loop a WHILE conditional node) goes into the caller's graph, so it can be part
  // of a wave's graph; otherwise the tracer captures and launches its own graph (kept and reused
  // while the arguments stay the same). Needs reserve(capacity) first; throws sieve::error for a
  // larger capacity and for a strategy that cannot be captured (`thrust` reads its counts back).
  void closest_async(const bvh_view& b, const ray* rays, hit* hits, std::size_t capacity, const std::uint32_t* d_count,
                     sieve::cuda::stream_t stream);

  // Closest hits of the n device rays into the n device hits; `b` holds device pointers. Returns
  // when done (stream synchronised). With `stats`, or with loop::host, the host drives the loop: one
  // synchronisation per step and each step's compaction timed by events; otherwise (and for the
  // same result) the device does, with one synchronisation at the end.
  void closest(const bvh_view& b, const ray* rays, hit* hits, std::size_t n, sieve::cuda::stream_t stream,
               bfs_stats* stats = nullptr);

  void set_loop(loop l) { loop_ = l; }
  // The loop clock closest()'s host-driven loop times its loops (bfs.*) with (its events are read at
  // the clock owner's collect()); null (the default): untimed. The device-driven loop and
  // closest_async() are never timed: a conditional node's body holds no event record nodes.
  void time_loops(exec::cuda_loop_clock* clock) { clock_ = clock; }
  bool appends() const { return c_.append; }
  // Host synchronisations of the last closest() call (the final one included).
  std::size_t host_syncs() const { return host_syncs_; }

 private:
  struct buffers;
  bfs_compaction c_;
  trace_tree tree_;
  loop loop_ = loop::graph;
  exec::cuda_loop_clock* clock_ = nullptr;
  std::size_t host_syncs_ = 0;
  std::unique_ptr<buffers> buf_;
};

}  // namespace sieve::render
