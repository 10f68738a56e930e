// The device builder: PLOC (Meister and Bittner, "Parallel Locally-Ordered Clustering for Bounding
// Volume Hierarchy Construction", TVCG 2018) over the Morton-ordered triangles, then every layout
// the traversals read, all on the device (or, the same per-item code on oneTBB, on the CPU):
//
//   1. Morton order (lbvh.hpp's morton_order: boxes, centroid bounds, codes, the library's radix sort).
//   2. Clustering: each triangle a cluster, in Morton order; each round every cluster finds its
//      nearest neighbour (the least surface area of the two boxes' union) among the `radius`
//      clusters before and after it (on the GPU from a block's copy of those boxes in shared
//      memory); mutual nearest neighbours merge (the lower position keeps the new cluster). One
//      prefix sum of the clusters' (merges, kept) flags numbers the new nodes and places the kept
//      clusters in the next round's order: no atomics, so the tree is the same every run. The last
//      rounds, of at most ploc_block_clusters clusters, run in one GPU block, with no launch or read
//      back between them. A node made by a merge gets at once what the layouts need from its
//      subtree: its box, its triangle count, its binary SAH cost (leaves of up to max_leaf
//      triangles), its 8-wide plan (node_steps.hpp: the collapse's cost table, the host collapse's
//      own step) and its shape (children, left count, the plan's choices: the wide walks' 16 bytes).
//   3. The 8-wide tree, level by level from the root: each wide node takes the slots its plan names
//      (leaf slots of at most cw_leaf_max triangles, at most cw_node_triangles in a node), a prefix
//      sum over the level places the children's nodes and leaf triangles, and the node is written in
//      the wide layout and in the compressed one (the same slots and boxes; the compressed meta); a
//      thread a leaf slot then writes its triangles. The walks also give every node its first
//      triangle in depth-first order.
//   4. The binary layouts: the nodes that stay inner (not inside a leaf) listed by the library's
//      compaction in creation order; the last made (the root) first, each writing its children as the
//      pair 1 + 2 rank (bvh_node) and as pair node `rank` (pair_node); leaves in depth-first order.
//
// Everything but the float sums of costs and areas is integer work, and those are computed in the
// same order by the same code on both (the renderer's device code is built without contracted
// multiply-adds), so the CPU and the GPU build the same tree bit for bit.
#pragma once

#include "../core/atomic.hpp"
#include "bvh.hpp"
#include "node_encoding.hpp"
#include "lbvh.hpp"
#include "node_steps.hpp"

#include <exec/exec.hpp>

#include <sieve/compaction/error.hpp>
#include <sieve/compaction/record.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace sieve::render {

// What a build took, in milliseconds: device time by CUDA events (the CPU run: wall clock) for the
// Morton order, the clustering (the binary tree), the 8-wide collapse with its compressed encoding,
// and the binary layouts; device_ms their sum, from the triangles in device memory to every layout
// there; with_copies_ms: the same plus copying the triangles in (and, for a tree brought back to the
// host, everything back).
struct ploc_timing {
  double morton_ms = 0, binary_ms = 0, collapse_ms = 0, layout_ms = 0, device_ms = 0, with_copies_ms = 0;
  // A device_tree's steps around the build (host wall clock): its outputs and scratch allocated, the
  // triangles copied in (exec/staged_copy.cuh), the scratch freed at its end.
  double allocate_ms = 0, copy_in_ms = 0, release_ms = 0;
  std::uint32_t rounds = 0, wide_levels = 0;  // clustering rounds, levels of 8-wide nodes
  // Asked for (the GPU's run): every launch, library call and read back timed between CUDA events,
  // by loop name in `loops` (the events cost time of their own: a build to look into, not to time).
  bool profile = false;
  std::vector<exec::loop_time> loops;
};

// The clustering's search radius when the options do not say (Meister and Bittner's 16; 8 measured
// against it in bench/results/h200/ploc-*.txt).
inline constexpr std::uint32_t ploc_default_radius = 16;

// A tree built by PLOC into the host's memory: on the CPU (oneTBB), or on the GPU and copied back
// (the tests, `sieve bench trace`). options: max_leaf 1..cw_leaf_max, traversal_cost, pairs/wide/cw
// (the layouts to make; the CPU's wide leaf blocks are made on the host), bins unused. Throws
// sieve::error for out-of-range options, more than 2^31 triangles, non-finite boxes, or a tree
// deeper than the traversals' stacks.
bvh build_ploc(std::span<const triangle> triangles, const bvh_build_options& options, lbvh_device device,
               ploc_timing* timing = nullptr, std::uint32_t radius = ploc_default_radius);

// A tree built by PLOC on the GPU that stays there: what the renderer traces. Its view's pointers
// are device pointers, the scene's triangles (for shading) included. Without CUDA or a device,
// constructing one throws sieve::error.
class device_tree {
 public:
  device_tree(std::span<const triangle> triangles, const bvh_build_options& options, ploc_timing* timing = nullptr,
              std::uint32_t radius = ploc_default_radius);
  ~device_tree();
  device_tree(const device_tree&) = delete;
  device_tree& operator=(const device_tree&) = delete;
  const bvh_view& view() const { return view_; }
  const bvh_stats& stats() const { return stats_; }
  // Every layout copied to the host (and the CPU's leaf blocks made there), as build_ploc returns it;
  // the copy's time added to timing->with_copies_ms when given.
  bvh to_host(ploc_timing* timing = nullptr) const;

 private:
  struct arrays;
  std::unique_ptr<arrays> arrays_;
  bvh_view view_;
  bvh_stats stats_;
};

// Device bytes per triangle a device_tree build needs at its peak, its layouts and its scratch
// together (the memory model's: core/memory.hpp says what they are).
inline constexpr std::uint64_t ploc_device_bytes_per_triangle = 760;

// ---- the per-item code and the driver, shared by ploc.cpp (CPU) and ploc_cuda.cu (GPU) ----

inline constexpr std::uint32_t ploc_none = ~0U;

// A node of the clustering's tree, in creation order: node j < n is the triangle at Morton position
// j (left: its index, right: ploc_none), then one node per merge. 48 bytes.
struct ploc_node {
  aabb box;
  std::uint32_t left = ploc_none, right = ploc_none;
  std::uint32_t count = 0;           // triangles below
  std::uint32_t parent = ploc_none;
  float bcost = 0;                   // the binary SAH cost of its subtree, leaves of up to max_leaf triangles
  std::uint32_t bleaf = 0;           // 1: that cost is the leaf's (the binary tree may end here)
};

// Where the walk of the wide levels found a node: its first triangle in depth-first order, its depth
// (the root 1).
struct ploc_place {
  std::uint32_t first = 0, depth = 0;
};

// A wide node to make (the level's tasks), and a slot of it (inner: a wide node of its own).
struct ploc_task {
  std::uint32_t node = 0, first = 0, depth = 0, count = 0;  // count: the node's triangles
};
struct ploc_kid {
  std::uint32_t node = ploc_none, first = 0, count = 0;
  std::uint16_t depth = 0;
  std::uint8_t inner = 0;
  std::uint8_t at = 0;  // a leaf slot's first triangle among its wide node's (ploc_emit_wide sets it)
};

// An inner node as the wide levels' walks read it, 16 bytes (one load a step): its children, its
// left child's triangles, and its plan's choices (bits: the left child's share of j slots at bits
// 4 (j - 2) for j = 2 .. 8, the leaf flag at bit 28, split8 from bit 29).
struct ploc_shape {
  std::uint32_t left = 0, right = 0, lcount = 0, bits = 0;
};

SIEVE_HD inline std::uint32_t ploc_shape_bits(const collapse_entry& e) {
  std::uint32_t bits = 0;
  for (int j = 2; j <= wide_arity; ++j) bits |= std::uint32_t{e.pick[j - 1]} << (4 * (j - 2));
  return bits | std::uint32_t{e.leaf} << 28 | std::uint32_t{e.split8} << 29;
}

struct ploc_settings {
  std::uint32_t max_leaf = 3, radius = ploc_default_radius;
  float traversal_cost = 1;
  bool pairs = true, wide = true, cw = true;
};

// What the rounds run by one team (ploc_block_rounds) leave: the next node's number, the rounds
// run, the clusters left (1, or more when a round merged none).
struct ploc_tail_state {
  std::uint32_t next = 0, rounds = 0, clusters = 0, unused = 0;
};

// Memory for a build of n >= 2 triangles (device memory for the GPU's run).
struct ploc_buffers {
  const triangle* triangles = nullptr;    // n
  aabb* prim_box = nullptr;               // n
  aabb* centroid = nullptr;               // lbvh_centroid_slots(n)
  std::uint32_t* keys = nullptr;          // n
  std::uint32_t* ids = nullptr;           // n
  std::uint32_t* sorted_keys = nullptr;   // n
  std::uint32_t* order = nullptr;         // n: triangle by Morton position
  ploc_node* nodes = nullptr;             // 2n - 1
  collapse_entry* plan = nullptr;         // n - 1: the inner nodes' (node n + i's at i; a leaf's is plan_leaf's)
  ploc_shape* shape = nullptr;            // n - 1: the inner nodes' shapes (node n + i's at i)
  ploc_place* place = nullptr;            // 2n - 1
  std::uint32_t* cid[2] = {};             // n each: the clusters' nodes (this round's, the next's)
  aabb* cbox[2] = {};                     // n each: their boxes
  std::uint32_t* nn = nullptr;            // n: each cluster's nearest neighbour (position)
  std::uint64_t* words = nullptr;         // n + 1: each cluster's (merges << 32 | kept), then their exclusive sums
  ploc_tail_state* tail = nullptr;        // 1: what the rounds of one team left
  std::uint64_t* counts = nullptr;        // 2: the library's counts; [0] the first non-finite triangle
  std::uint32_t* depth = nullptr;         // 1: the binary tree's depth (atomic maximum)
  std::uint8_t* kept = nullptr;           // n - 1: inner node n + i stays inner in the binary tree
  std::uint32_t* kept_list = nullptr;     // n - 1: those nodes in creation order
  std::uint32_t* rank = nullptr;          // n - 1: a kept node's rank (the root 0)
  bvh_node* bin_nodes = nullptr;          // 2n - 1 at most (binary_bvh::nodes; the layouts below: their types' arrays)
  std::uint32_t* prims = nullptr;         // n: the binary tree's leaf order (depth-first)
  pair_node* pairs = nullptr;             // n at most (pairs)
  leaf_triangle* leaf_triangles = nullptr;  // n (pairs)
  std::uint32_t* wide_prims = nullptr;    // n (wide)
  leaf_triangle* wide_triangles = nullptr;  // n (wide)
  cw_triangle* cw_triangles = nullptr;    // n (cw)
  std::uint32_t n = 0;                    // triangles (nodes below n are leaves)
};

// What a run made: sizes and depths.
struct ploc_result {
  std::uint32_t bin_nodes = 0, pairs = 0, wide_nodes = 0, wide_depth = 0, depth = 0;
};

// The settings of a build with these options (radius: the search's), checked: a sieve::error names
// what is out of range.
ploc_settings ploc_settings_of(const bvh_build_options& options, std::uint32_t radius, std::size_t triangles);

// A run's arrays, in a bvh whose arrays were sized for the run's bounds: cut to what the run made,
// the CPU's wide leaf blocks made, the statistics filled.
void finish_ploc(bvh& out, const ploc_result& r, const ploc_settings& s);

// Cluster p's nearest neighbour among positions p - radius .. p + radius of c clusters: the least
// surface area of the union; ploc_none when every distance is NaN. Ties go to the nearer position,
// then to the pair whose lower position is even, then to the lower position: an order of pairs that
// both clusters of a pair see alike (so the least pair is mutual and every round merges), and that
// pairs (2k, 2k + 1) where boxes coincide, so equal boxes still merge by halves (a tree of log n
// levels, not a chain). cbox: the clusters' boxes by position (an array, or what holds those
// positions of it: the GPU's copy in shared memory).
template <class Boxes>
SIEVE_HD std::uint32_t ploc_nearest(const Boxes& cbox, std::uint32_t c, std::uint32_t p, std::uint32_t radius) {
  const aabb a = cbox[p];
  const std::uint32_t lo = p > radius ? p - radius : 0, hi = p + radius < c - 1 ? p + radius : c - 1;
  const auto tie = [p](std::uint32_t q) {
    const std::uint32_t low = q < p ? q : p;
    return std::uint64_t{q < p ? p - q : q - p} << 33 | std::uint64_t{low & 1U} << 32 | low;
  };
  float best = INFINITY;
  std::uint32_t best_q = ploc_none;
  for (std::uint32_t q = lo; q <= hi; ++q) {
    if (q == p) continue;
    aabb u = a;
    u.grow(cbox[q]);
    const float d = u.half_area();
    if (d < best || (d == best && tie(q) < tie(best_q))) best = d, best_q = q;
  }
  return best_q;
}

// A node's 8-wide plan: an inner node's as its merge made it, a leaf's (a triangle) plan_leaf's.
SIEVE_HD inline collapse_entry ploc_plan(const ploc_buffers& b, std::uint32_t x, float area, float traversal_cost) {
  if (x >= b.n) return b.plan[x - b.n];
  collapse_entry e;
  plan_leaf(area, 1, traversal_cost, e);
  return e;
}

// Cluster p's part in the round, from the nearest neighbours: (merges << 32 | kept), where it
// merges when it is the lower of a mutual pair and is kept unless it is the upper of one.
SIEVE_HD inline std::uint64_t ploc_flags(const std::uint32_t* nn, std::uint32_t p) {
  const std::uint32_t q = nn[p];
  const bool mutual = q != ploc_none && nn[q] == p;
  return std::uint64_t{mutual && p < q ? 1U : 0U} << 32 | (mutual && q < p ? 0U : 1U);
}

// Cluster p's step of the round (flags: ploc_flags'; before: the exclusive sums of the clusters'
// flags before p): the lower of a merging pair makes node next + (merges before it) from its node
// (the left child) and its neighbour's, every kept cluster goes to position (kept before it) of the
// next round's clusters (to, to_box).
SIEVE_HD inline void ploc_step(const ploc_buffers& b, const std::uint32_t* cid, const aabb* cbox, std::uint32_t* to,
                               aabb* to_box, std::uint32_t p, std::uint64_t before, std::uint64_t flags,
                               std::uint32_t next, const ploc_settings& s) {
  const auto at = static_cast<std::uint32_t>(before);
  if (!(flags >> 32)) {
    if (flags & 1U) to[at] = cid[p], to_box[at] = cbox[p];
    return;
  }
  const std::uint32_t x = next + static_cast<std::uint32_t>(before >> 32);
  const std::uint32_t l = cid[p], r = cid[b.nn[p]];
  const ploc_node a = b.nodes[l], c = b.nodes[r];
  aabb box = a.box;
  box.grow(c.box);
  const float area = box.half_area();
  const std::uint32_t count = a.count + c.count;
  const float as_leaf = count <= s.max_leaf ? area * static_cast<float>(count) : 1e38f;
  const float inner = area * s.traversal_cost + a.bcost + c.bcost;
  b.nodes[x] = {box, l, r, count, ploc_none, as_leaf <= inner ? as_leaf : inner, as_leaf <= inner ? 1U : 0U};
  b.nodes[l].parent = x;
  b.nodes[r].parent = x;
  const collapse_entry pl = ploc_plan(b, l, a.bcost, s.traversal_cost), pr = ploc_plan(b, r, c.bcost, s.traversal_cost);
  collapse_entry plan;
  plan_inner(area, count, cw_leaf_max, s.traversal_cost, pl, pr, plan);
  b.plan[x - b.n] = plan;
  b.shape[x - b.n] = {l, r, a.count, ploc_shape_bits(plan)};
  to[at] = x;
  to_box[at] = box;
}

// The rounds from c clusters (positions in cid[from], cbox[from]) down to one, run by one team of
// threads that wait for each other (team.sync()) and sum their values (team.exclusive_sum(v, total),
// which waits too): a GPU block for the last rounds, whose clusters fit it (no launch or read back
// per round), or one CPU thread. The team takes the positions a stripe of team.size() at a time
// (neighbouring threads, neighbouring positions); a stripe's steps follow its sum at once. The same
// steps as the rounds of the whole device; what is left goes to *b.tail.
template <class Team>
SIEVE_HD void ploc_block_rounds(Team& team, const ploc_buffers& b, std::uint32_t c, std::uint32_t next, int from,
                                const ploc_settings& s) {
  std::uint32_t rounds = 0;
  const std::uint32_t size = team.size(), rank = team.rank();
  while (c > 1) {
    const std::uint32_t* cid = b.cid[from];
    const aabb* cbox = b.cbox[from];
    for (std::uint32_t p = rank; p < c; p += size) b.nn[p] = ploc_nearest(cbox, c, p, s.radius);
    team.sync();
    std::uint64_t done = 0;  // the flags' sum over the stripes before
    for (std::uint32_t base = 0; base < c; base += size) {
      const std::uint32_t p = base + rank;
      const std::uint64_t w = p < c ? ploc_flags(b.nn, p) : 0;
      std::uint64_t total = 0;
      const std::uint64_t before = done + team.exclusive_sum(w, total);
      if (p < c) ploc_step(b, cid, cbox, b.cid[from ^ 1], b.cbox[from ^ 1], p, before, w, next, s);
      done += total;
    }
    team.sync();
    if (static_cast<std::uint32_t>(done) >= c) break;  // nothing merged (the same answer for all): nothing made
    next += static_cast<std::uint32_t>(done >> 32), c = static_cast<std::uint32_t>(done), from ^= 1, ++rounds;
  }
  if (rank == 0) *b.tail = {next, rounds, c, 0};
}

// The slots of wide node t.node (its plan's eight, in depth-first order), each with its first
// triangle, triangles and depth (written to `place` for every node the expansion passes). Leaves of
// more than cw_node_triangles in all: the largest leaf slots become wide nodes until they fit.
// Returns (inner slots << 32) | leaf triangles.
SIEVE_HD inline std::uint64_t ploc_expand(const ploc_buffers& b, const ploc_task& t, ploc_kid* kids) {
  ploc_task stack[wide_arity];
  std::uint8_t want[wide_arity];
  int top = 0, n = 0;
  const ploc_shape root = b.shape[t.node - b.n];
  b.place[t.node] = {t.first, t.depth};
  const std::uint32_t k8 = root.bits >> 29;
  stack[top] = {root.right, t.first + root.lcount, t.depth + 1, t.count - root.lcount}, want[top++] = static_cast<std::uint8_t>(wide_arity - k8);
  stack[top] = {root.left, t.first, t.depth + 1, root.lcount}, want[top++] = static_cast<std::uint8_t>(k8);
  while (top > 0) {
    const ploc_task e = stack[--top];
    const int j = want[top];
    b.place[e.node] = {e.first, e.depth};
    const bool leaf = e.node < b.n;  // a triangle: one leaf slot
    const ploc_shape x = leaf ? ploc_shape{} : b.shape[e.node - b.n];
    const std::uint32_t k = leaf || j == 1 ? collapse_one_slot : x.bits >> (4 * (j - 2)) & 15U;
    if (k == collapse_one_slot) {
      kids[n++] = {e.node, e.first, e.count, static_cast<std::uint16_t>(e.depth), static_cast<std::uint8_t>(leaf || (x.bits >> 28 & 1U) ? 0 : 1)};
      continue;
    }
    stack[top] = {x.right, e.first + x.lcount, e.depth + 1, e.count - x.lcount}, want[top++] = static_cast<std::uint8_t>(j - static_cast<int>(k));
    stack[top] = {x.left, e.first, e.depth + 1, x.lcount}, want[top++] = static_cast<std::uint8_t>(k);
  }
  std::uint32_t inner = 0, tris = 0;
  for (int i = 0; i < n; ++i) inner += kids[i].inner, tris += kids[i].inner ? 0 : kids[i].count;
  while (tris > cw_node_triangles) {  // the largest leaf slot (at least 5 of over 32 in 8 slots: a subtree) opened
    int big = -1;
    for (int i = 0; i < n; ++i)
      if (!kids[i].inner && (big < 0 || kids[i].count > kids[big].count)) big = i;
    kids[big].inner = 1, ++inner, tris -= kids[big].count;
  }
  for (int i = n; i < wide_arity; ++i) kids[i] = {};
  return std::uint64_t{inner} << 32 | tris;
}

// The triangles of leaf slot `kid`, in depth-first order, to the wide and compressed layouts from
// position at (and each to its depth-first place in the binary tree's leaf order); nodes placed.
SIEVE_HD inline void ploc_leaf_triangles(const ploc_buffers& b, const ploc_kid& kid, std::uint32_t at) {
  ploc_task stack[cw_leaf_max + 1];
  int top = 0;
  stack[top++] = {kid.node, kid.first, std::uint32_t{kid.depth}, kid.count};
  while (top > 0) {
    const ploc_task e = stack[--top];
    b.place[e.node] = {e.first, e.depth};
    if (e.node < b.n) {
      const std::uint32_t tri = b.order[e.node];
      const triangle t = b.triangles[tri];
      const std::uint32_t i = at + (e.first - kid.first);
      b.prims[e.first] = tri;
      if (b.wide_prims) b.wide_prims[i] = tri, b.wide_triangles[i] = leaf_triangle::of(t);
      if (b.cw_triangles) b.cw_triangles[i] = cw_triangle_of(t, tri);
      continue;
    }
    const ploc_shape x = b.shape[e.node - b.n];
    stack[top++] = {x.right, e.first + x.lcount, e.depth + 1, e.count - x.lcount};
    stack[top++] = {x.left, e.first, e.depth + 1, x.lcount};
  }
}

// Wide node `at` from its slots (kids, ploc_expand's): slots by octant, boxes quantised, inner
// children placed from child_base (and handed to the next level's tasks from next[0]), leaf
// triangles from tri_base (each leaf slot's first, from tri_base, to its `at`: ploc_leaf_triangles
// writes them).
SIEVE_HD inline void ploc_emit_wide(const ploc_buffers& b, ploc_kid* kids, std::uint32_t child_base, std::uint32_t tri_base,
                                    ploc_task* next, wide_node* wide, cw_node* cw) {
  aabb boxes[wide_arity], slots[wide_arity], box;
  int n = 0, slot_of[wide_arity], kid_in[wide_arity];
  bool used[wide_arity] = {};
  while (n < wide_arity && kids[n].node != ploc_none) boxes[n] = b.nodes[kids[n].node].box, box.grow(boxes[n]), ++n;
  assign_octant_slots(boxes, n, slot_of);
  for (int i = 0; i < n; ++i) used[slot_of[i]] = true, slots[slot_of[i]] = boxes[i], kid_in[slot_of[i]] = i;
  wide_node w{};
  quantise_wide_slots(box, slots, used, w);
  w.child_base = child_base, w.tri_base = tri_base;
  cw_node c{};
  std::uint32_t inner = 0, offset = 0;
  for (int s = 0; s < wide_arity; ++s) {
    if (!used[s]) continue;
    ploc_kid& kid = kids[kid_in[s]];
    if (kid.inner) {
      w.meta[s] = wide_meta_inner, c.meta[s] = cw_meta_inner;
      w.inner_mask = static_cast<std::uint8_t>(w.inner_mask | (1U << s));
      next[inner++] = {kid.node, kid.first, kid.depth, kid.count};
      continue;
    }
    const std::uint32_t count = kid.count;
    w.meta[s] = static_cast<std::uint8_t>(count), c.meta[s] = static_cast<std::uint8_t>(count << 5 | offset);
    kid.at = static_cast<std::uint8_t>(offset);
    offset += count;
  }
  for (int k = 0; k < 3; ++k) {
    c.origin[k] = w.origin[k], c.exponent[k] = w.exponent[k];
    for (int s = 0; s < wide_arity; ++s) c.lo[k][s] = w.lo[k][s], c.hi[k][s] = w.hi[k][s];
  }
  c.inner_mask = w.inner_mask, c.child_base = child_base, c.tri_base = tri_base;
  if (wide) *wide = w;
  if (cw) *cw = c;
}

// Whether inner node x stays inner in the binary tree: its subtree costs less than a leaf, and no
// node above it is a leaf (only nodes of at most max_leaf triangles can be).
SIEVE_HD inline bool ploc_kept(const ploc_node* nodes, std::uint32_t x, std::uint32_t max_leaf) {
  if (nodes[x].bleaf) return false;
  for (std::uint32_t y = nodes[x].parent; y != ploc_none && nodes[y].count <= max_leaf; y = nodes[y].parent)
    if (nodes[y].bleaf) return false;
  return true;
}

// Raises *depth to d: an atomic only where d is above the value seen (few are; millions of atomics
// on one word would wait for each other).
SIEVE_HD inline void ploc_raise_depth(std::uint32_t* depth, std::uint32_t d) {
#if defined(__CUDA_ARCH__)
  if (d <= *reinterpret_cast<const volatile std::uint32_t*>(depth)) return;
#else
  if (d <= std::atomic_ref<std::uint32_t>(*depth).load(std::memory_order_relaxed)) return;
#endif
  atomic_max_u32(depth, d);
}

// Kept node x (rank r): its two children as binary nodes 1 + 2r, 2 + 2r and as pair node r.
SIEVE_HD inline void ploc_emit_binary(const ploc_buffers& b, std::uint32_t n, std::uint32_t x, std::uint32_t r) {
  const ploc_node node = b.nodes[x];
  if (r == 0) b.bin_nodes[0] = {widened(node.box), 1, 0};
  for (int side = 0; side < 2; ++side) {
    const std::uint32_t c = side ? node.right : node.left;
    const ploc_node child = b.nodes[c];
    const aabb box = widened(child.box);
    std::uint32_t first = 0, count = 0, pair = 0;
    if (c >= n && b.kept[c - n]) {
      pair = b.rank[c - n], first = 1 + 2 * pair;
    } else {
      const ploc_place at = b.place[c];
      first = pair = at.first, count = child.count;
      ploc_raise_depth(b.depth, at.depth);
    }
    b.bin_nodes[1 + 2 * r + static_cast<std::uint32_t>(side)] = {box, first, count};
    if (b.pairs) set_pair_child(b.pairs[r], side, box, pair, count);
  }
}

// Clusters at which the rounds go to one team (ploc_block_rounds): a GPU block of
// ploc_block_threads runs them faster than the whole device's launches and read backs per round.
inline constexpr std::uint32_t ploc_block_clusters = 8192, ploc_block_threads = 1024;

// The steps on `e` (exec::cpu or exec::cuda) for n >= 2 triangles. Backend (ploc.cpp, ploc_cuda.cu):
//   sort(keys, values, keys_out, values_out, count, bits)  the library's stable radix sort;
//   compact(in, out, flags, count, d_count)  the library's stable compaction of a record (const_record
//       in, record out) by byte flags, the count kept to *d_count (its memory);
//   scan(in, out, count)  exclusive prefix sum of 64-bit words (in == out: in place);
//   nearest(nn, cbox, c, radius)  nn[p] = ploc_nearest(cbox, c, p, radius) for every p < c;
//   block_rounds(b, c, next, from, s)  ploc_block_rounds by one team (a GPU block, a CPU thread);
//   read(p)  a value of its memory (waits for the work before it);
//   tasks(which, n), kids(n), words(which, n), wide_nodes(n), cw_nodes(n)  scratch and output arrays of at
//       least n items (wide and cw nodes keep their contents when they grow);
//   lap(ms)  adds the time since the last lap to *ms.
template <class Exec, class Backend>
ploc_result ploc_run(Exec e, Backend& be, const ploc_buffers& b, std::uint32_t n, const ploc_settings& s, ploc_timing& t) {
  exec::parallel_for(e, "ploc.start", 1, [=] SIEVE_HD(std::uint32_t) { b.counts[0] = ~std::uint64_t{0}; });
  exec::parallel_for(e, "ploc.check", n, [=] SIEVE_HD(std::uint32_t i) {
    const triangle& t = b.triangles[i];
    const float sum = t.v0.x + t.v0.y + t.v0.z + t.v1.x + t.v1.y + t.v1.z + t.v2.x + t.v2.y + t.v2.z;
    if (!(sum - sum == 0)) atomic_min_u64(b.counts, i);  // NaN or infinite (or their sum overflows)
  });
  morton_order(e, be, b.triangles, b.prim_box, b.centroid, b.keys, b.ids, b.sorted_keys, b.order, n);
  exec::parallel_for(e, "ploc.leaves", n, [=] SIEVE_HD(std::uint32_t j) {
    const std::uint32_t tri = b.order[j];
    const aabb box = b.prim_box[tri];
    b.nodes[j] = {box, tri, ploc_none, 1, ploc_none, box.half_area(), 1};
    b.cid[0][j] = j;
    b.cbox[0][j] = box;
  });
  if (const std::uint64_t bad = be.read(b.counts); bad != ~std::uint64_t{0})
    throw error("BVH (ploc): triangle " + std::to_string(bad) + " has a coordinate that is not finite (or too large to add)");
  be.lap(&t.morton_ms);
  std::uint32_t c = n, next = n;
  int from = 0;
  while (c > ploc_block_clusters) {  // the rounds over the whole device
    const std::uint32_t* cid = b.cid[from];
    const aabb* cbox = b.cbox[from];
    std::uint32_t* to = b.cid[from ^ 1];
    aabb* to_box = b.cbox[from ^ 1];
    be.nearest(b.nn, cbox, c, s.radius);
    exec::parallel_for(e, "ploc.flags", c + 1, [=] SIEVE_HD(std::uint32_t p) { b.words[p] = p < c ? ploc_flags(b.nn, p) : 0; });
    be.scan(b.words, b.words, c + 1);
    exec::parallel_for(e, "ploc.merge", c, [=] SIEVE_HD(std::uint32_t p) {
      const std::uint64_t before = b.words[p];
      ploc_step(b, cid, cbox, to, to_box, p, before, b.words[p + 1] - before, next, s);
    });
    const std::uint64_t total = be.read(b.words + c);
    const auto left = static_cast<std::uint32_t>(total);
    if (left >= c) break;  // reported below
    next += static_cast<std::uint32_t>(total >> 32), c = left, from ^= 1, ++t.rounds;
  }
  if (c > 1 && c <= ploc_block_clusters) {
    be.block_rounds(b, c, next, from, s);
    const ploc_tail_state tail = be.read(b.tail);
    next = tail.next, c = tail.clusters, t.rounds += tail.rounds;
  }
  if (c > 1)
    throw error("BVH (ploc): no clusters merged among " + std::to_string(c) + " (their boxes' areas are not finite: coordinates too large?)");
  be.lap(&t.binary_ms);
  const std::uint32_t root = next - 1;
  ploc_result out;
  // The 8-wide levels: the level's wide nodes are nodes `start` onwards, its leaf triangles from tri_start.
  std::uint32_t m = 1, start = 0, tri_start = 0, cur = 0;
  ploc_task* first = be.tasks(0, 1);
  exec::parallel_for(e, "ploc.root", 1, [=] SIEVE_HD(std::uint32_t) { *first = {root, 0, 1, n}; });
  while (m > 0) {
    if (++out.wide_depth >= static_cast<std::uint32_t>(dfs_stack_size))
      throw error("BVH (ploc): the wide tree would be more than " + std::to_string(dfs_stack_size - 1) + " levels deep");
    const ploc_task* tasks = be.tasks(cur, m);
    ploc_kid* kids = be.kids(std::size_t{wide_arity} * m);
    std::uint64_t* counts = be.words(0, m + 1);
    std::uint64_t* offsets = be.words(1, m + 1);
    exec::parallel_for(e, "ploc.wide_slots", m + 1, [=] SIEVE_HD(std::uint32_t i) {
      counts[i] = i == m ? 0 : ploc_expand(b, tasks[i], kids + std::size_t{wide_arity} * i);
    });
    be.scan(counts, offsets, m + 1);
    const std::uint64_t total = be.read(offsets + m);
    const auto m_next = static_cast<std::uint32_t>(total >> 32);
    wide_node* wide = s.wide ? be.wide_nodes(std::size_t{start} + m) : nullptr;
    cw_node* cw = s.cw ? be.cw_nodes(std::size_t{start} + m) : nullptr;
    ploc_task* next_tasks = be.tasks(cur ^ 1, m_next);
    const std::uint32_t child_start = start + m, level_tris = tri_start;
    exec::parallel_for(e, "ploc.wide_emit", m, [=] SIEVE_HD(std::uint32_t i) {
      const std::uint64_t o = offsets[i];
      const auto inner = static_cast<std::uint32_t>(o >> 32), tris = static_cast<std::uint32_t>(o);
      ploc_emit_wide(b, kids + std::size_t{wide_arity} * i, child_start + inner, level_tris + tris, next_tasks + inner,
                     wide ? wide + start + i : nullptr, cw ? cw + start + i : nullptr);
    });
    exec::parallel_for(e, "ploc.wide_leaves", std::size_t{wide_arity} * m, [=] SIEVE_HD(std::uint32_t j) {
      const ploc_kid kid = kids[j];
      if (kid.node != ploc_none && !kid.inner)
        ploc_leaf_triangles(b, kid, level_tris + static_cast<std::uint32_t>(offsets[j / wide_arity]) + kid.at);
    });
    start += m, tri_start += static_cast<std::uint32_t>(total), m = m_next, cur ^= 1;
  }
  out.wide_nodes = start;
  be.lap(&t.collapse_ms);
  // The binary layouts.
  const std::uint32_t max_leaf = s.max_leaf;
  exec::parallel_for(e, "ploc.kept", n - 1, [=] SIEVE_HD(std::uint32_t i) {
    b.kept[i] = ploc_kept(b.nodes, n + i, max_leaf) ? 1 : 0;
    b.ids[i] = n + i;
    if (i == 0) *b.depth = 1;
  });
  be.compact(const_record(std::span<const std::uint32_t>(b.ids, n - 1)), record(std::span<std::uint32_t>(b.kept_list, n - 1)),
             std::span<const std::uint8_t>(b.kept, n - 1), n - 1, b.counts);
  const auto k = static_cast<std::uint32_t>(be.read(b.counts));
  exec::parallel_for(e, "ploc.rank", k, [=] SIEVE_HD(std::uint32_t j) { b.rank[b.kept_list[j] - n] = k - 1 - j; });
  exec::parallel_for(e, "ploc.binary", k, [=] SIEVE_HD(std::uint32_t j) { ploc_emit_binary(b, n, b.kept_list[j], k - 1 - j); });
  if (k == 0)  // the root is a leaf of every triangle
    exec::parallel_for(e, "ploc.binary", 1, [=] SIEVE_HD(std::uint32_t) {
      const aabb box = widened(b.nodes[root].box);
      b.bin_nodes[0] = {box, 0, n};
      if (b.pairs) set_pair_child(b.pairs[0], 0, box, 0, n), set_pair_child(b.pairs[0], 1, aabb{{0, 0, 0}, {0, 0, 0}}, no_child, 0);
    });
  if (b.leaf_triangles)
    exec::parallel_for(e, "ploc.leaf_triangles", n, [=] SIEVE_HD(std::uint32_t i) { b.leaf_triangles[i] = leaf_triangle::of(b.triangles[b.prims[i]]); });
  out.depth = static_cast<std::uint32_t>(be.read(b.depth));
  be.lap(&t.layout_ms);
  out.bin_nodes = 1 + 2 * k;
  out.pairs = k > 0 ? k : 1;
  if (out.depth > static_cast<std::uint32_t>(dfs_depth_limit()))
    throw error("BVH (ploc): the tree is " + std::to_string(out.depth) + " levels deep, more than the traversal's " +
                std::to_string(dfs_depth_limit()) + "; build this scene with the SAH builder");
  t.device_ms = t.morton_ms + t.binary_ms + t.collapse_ms + t.layout_ms;
  return out;
}

}  // namespace sieve::render
