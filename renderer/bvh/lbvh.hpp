// A linear BVH (Karras, HPG 2012), built from Morton codes on the GPU or on the CPU by the same
// per-item code (SIEVE_HD, run by exec::parallel_for), into the binary layout build.cpp's SAH
// builder emits (bvh_node: children adjacent; leaves of up to max_leaf triangles), so every
// traversal, the wide collapse and the compressed encoding take its tree unchanged.
//
// Steps (lbvh_run): each triangle's box and centroid; the centroids' bounds (a reduction in
// chunks); a 30-bit Morton code per centroid (10 bits an axis); the library's stable radix sort of
// (code, index) pairs; Karras's hierarchy over the sorted codes (n - 1 inner nodes, ties between
// equal codes broken by position); boxes bottom-up (each leaf climbs; the second of two children to
// arrive at a parent makes its box); every inner node whose range holds at most max_leaf triangles
// becomes a leaf; the kept inner nodes are ranked by decreasing range (a second radix sort), and each
// writes its two children to nodes 1 + 2 rank, 2 + 2 rank (the root is node 0). Everything but the float boxes is
// integer work, and boxes are unions (exact), so the CPU and the GPU build the same tree bit for bit.
#pragma once

#include "bvh.hpp"

#include <exec/exec.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace sieve::render {

// Where build_lbvh runs its steps. cuda in a build without CUDA, or without a device, is a sieve::error.
enum class lbvh_device { cpu, cuda };

// What a build took. device_ms: the steps above from the triangles in device memory to the binary
// nodes and leaf order in device memory (CUDA events; the CPU run: wall clock); with_copies_ms:
// the same plus copying the triangles in and the nodes and leaf order back (wall clock); finish_ms:
// the host's part, the DFS layout, the leaf triangles and the wide collapse (build.cpp's finish_bvh).
struct lbvh_timing {
  double device_ms = 0, with_copies_ms = 0, finish_ms = 0;
};

// Throws sieve::error for out-of-range options, more than 2^31 triangles, or a tree deeper than
// the traversal stack (dfs_depth_limit()). options.bins is unused.
bvh build_lbvh(std::span<const triangle> triangles, const bvh_build_options& options, lbvh_device device,
               lbvh_timing* timing = nullptr);

// ---- the per-item code and the driver, shared by lbvh.cpp (CPU) and lbvh_cuda.cu (GPU) ----

inline constexpr std::uint32_t lbvh_chunk = 256;       // items a reduction step folds in one thread
inline constexpr std::uint32_t lbvh_leaf_bit = 1U << 31;  // a child id with this bit: leaf (sorted position)

// Inner node i of Karras's tree: children as ids (inner node, or lbvh_leaf_bit | sorted position)
// and the range of sorted positions [first, last] it covers.
struct lbvh_inner {
  std::uint32_t left = 0, right = 0, first = 0, last = 0;
};

// The centroid boxes and every level of their reduction: n, then ceil(n / chunk), ceil of that / chunk, ... 1.
constexpr std::size_t lbvh_centroid_slots(std::size_t n) {
  std::size_t slots = n;
  for (std::size_t count = n; count > 1;) count = (count + lbvh_chunk - 1) / lbvh_chunk, slots += count;
  return slots;
}
static_assert(lbvh_centroid_slots(983050) == 983050 + 3841 + 16 + 1);

// Device (or host) memory for a build of n >= 2 triangles.
struct lbvh_buffers {
  const triangle* triangles = nullptr;  // n
  aabb* prim_box = nullptr;             // n
  aabb* centroid = nullptr;             // lbvh_centroid_slots(n): per-triangle centroid boxes, then the reduction's levels
  std::uint32_t* keys = nullptr;        // n
  std::uint32_t* ids = nullptr;         // n
  std::uint32_t* sorted_keys = nullptr; // n
  std::uint32_t* order = nullptr;       // n: triangle index by sorted position (the leaf order)
  lbvh_inner* inner = nullptr;          // n - 1
  aabb* inner_box = nullptr;            // n - 1
  std::uint32_t* parent = nullptr;      // 2n - 1: of inner node i at i, of sorted position j at n - 1 + j
  std::uint32_t* visits = nullptr;      // n - 1: arrivals in the climb, then the rank sort's values
  std::uint32_t* kept = nullptr;        // n - 1: 1 where the inner node stays inner
  std::uint32_t* rank = nullptr;        // n - 1: a kept inner node's place (its children: nodes 1 + 2 rank, 2 + 2 rank)
  std::uint32_t* count = nullptr;       // 1: the number of kept inner nodes
  bvh_node* nodes = nullptr;            // 2n - 1 at most
};

// The binary tree a run leaves (nodes and leaf order), before build.cpp's finish_bvh.
struct lbvh_tree {
  fresh_vector<bvh_node> nodes;
  std::vector<std::uint32_t> prims;
};
// The library's stable radix sort of (key, value) pairs on the CPU: the CPU runs' Backend::sort.
void sort_pairs_cpu(const std::uint32_t* keys, const std::uint32_t* values, std::uint32_t* keys_out,
                    std::uint32_t* values_out, std::uint32_t n, int bits);

// The GPU's run (lbvh_cuda.cu; without CUDA or a device, a sieve::error). n >= 2.
lbvh_tree lbvh_build_cuda(std::span<const triangle> triangles, std::uint32_t max_leaf, lbvh_timing& timing);

SIEVE_HD inline int lbvh_clz(std::uint32_t x) {
#if defined(__CUDA_ARCH__)
  return __clz(static_cast<int>(x));
#else
  return x == 0 ? 32 : __builtin_clz(x);
#endif
}

// 10 bits spread to every third bit.
SIEVE_HD inline std::uint32_t lbvh_spread(std::uint32_t v) {
  v = (v * 0x00010001U) & 0xFF0000FFU;
  v = (v * 0x00000101U) & 0x0F00F00FU;
  v = (v * 0x00000011U) & 0xC30C30C3U;
  v = (v * 0x00000005U) & 0x49249249U;
  return v;
}

SIEVE_HD inline std::uint32_t lbvh_morton(vec3 c, const aabb& bounds) {
  std::uint32_t q[3];
  for (int a = 0; a < 3; ++a) {
    const float lo = bounds.lo[a], extent = bounds.hi[a] - lo;
    const float t = extent > 0 ? (c[a] - lo) * (1024.0f / extent) : 0.0f;
    q[a] = t <= 0 ? 0U : t >= 1023.0f ? 1023U : static_cast<std::uint32_t>(t);
  }
  return lbvh_spread(q[0]) << 2 | lbvh_spread(q[1]) << 1 | lbvh_spread(q[2]);
}

// Karras's delta: the common prefix of sorted positions i and j (codes, then positions); -1 outside.
SIEVE_HD inline int lbvh_delta(const std::uint32_t* keys, std::uint32_t n, std::uint32_t i, std::int64_t j) {
  if (j < 0 || j >= static_cast<std::int64_t>(n)) return -1;
  const std::uint32_t a = keys[i], b = keys[j];
  return a != b ? lbvh_clz(a ^ b) : 32 + lbvh_clz(i ^ static_cast<std::uint32_t>(j));
}

// Inner node i: its range, split and children (Karras 2012, figure 4); sets its children's parents.
SIEVE_HD inline void lbvh_split(const std::uint32_t* keys, std::uint32_t n, std::uint32_t i, lbvh_inner* inner,
                                std::uint32_t* parent) {
  const int d = lbvh_delta(keys, n, i, std::int64_t{i} + 1) > lbvh_delta(keys, n, i, std::int64_t{i} - 1) ? 1 : -1;
  const int min_delta = lbvh_delta(keys, n, i, std::int64_t{i} - d);
  std::int64_t len_max = 2;
  while (lbvh_delta(keys, n, i, i + len_max * d) > min_delta) len_max *= 2;
  std::int64_t len = 0;
  for (std::int64_t t = len_max / 2; t >= 1; t /= 2)
    if (lbvh_delta(keys, n, i, i + (len + t) * d) > min_delta) len += t;
  const std::int64_t j = i + len * d;
  const int node_delta = lbvh_delta(keys, n, i, j);
  std::int64_t s = 0;
  for (std::int64_t t = (len + 1) / 2;; t = (t + 1) / 2) {
    if (lbvh_delta(keys, n, i, i + (s + t) * d) > node_delta) s += t;
    if (t == 1) break;
  }
  const auto gamma = static_cast<std::uint32_t>(i + s * d + (d < 0 ? -1 : 0));
  const auto first = static_cast<std::uint32_t>(d > 0 ? i : j), last = static_cast<std::uint32_t>(d > 0 ? j : i);
  lbvh_inner node{first == gamma ? lbvh_leaf_bit | gamma : gamma, last == gamma + 1 ? lbvh_leaf_bit | (gamma + 1) : gamma + 1,
                  first, last};
  inner[i] = node;
  parent[node.left & lbvh_leaf_bit ? n - 1 + (node.left & ~lbvh_leaf_bit) : node.left] = i;
  parent[node.right & lbvh_leaf_bit ? n - 1 + (node.right & ~lbvh_leaf_bit) : node.right] = i;
}

// Sorted position j climbs towards the root: at each parent the first child to arrive stops, the
// second makes the parent's box. Sync: arrive(counter) returns the count before this arrival, with
// the ordering that makes the sibling's box visible to the second; load(box) reads a box another
// thread wrote.
template <class Sync>
SIEVE_HD void lbvh_climb(const lbvh_buffers& b, std::uint32_t n, std::uint32_t j, const Sync& sync) {
  std::uint32_t p = b.parent[n - 1 + j];
  for (;;) {
    if (sync.arrive(&b.visits[p]) == 0) return;
    const lbvh_inner in = b.inner[p];
    auto box_of = [&](std::uint32_t id) {
      return id & lbvh_leaf_bit ? b.prim_box[b.order[id & ~lbvh_leaf_bit]] : sync.load(b.inner_box[id]);
    };
    aabb box = box_of(in.left);
    box.grow(box_of(in.right));
    b.inner_box[p] = box;
    if (p == 0) return;
    p = b.parent[p];
  }
}

// The node a child id becomes: an inner node kept (its children's pair at 1 + 2 rank), or a leaf of
// its range of sorted positions.
SIEVE_HD inline bvh_node lbvh_node_of(const lbvh_buffers& b, std::uint32_t id) {
  if (id & lbvh_leaf_bit) {
    const std::uint32_t j = id & ~lbvh_leaf_bit;
    return {b.prim_box[b.order[j]], j, 1};
  }
  const lbvh_inner in = b.inner[id];
  if (b.kept[id]) return {b.inner_box[id], 1 + 2 * b.rank[id], 0};
  return {b.inner_box[id], in.first, in.last - in.first + 1};
}

// The Morton order of n >= 2 triangles (the first steps of both linear builders, lbvh_run and
// ploc_run): each triangle's box (prim_box) and centroid; the centroids' bounds (a reduction in
// chunks over `centroid`, lbvh_centroid_slots(n)); a 30-bit Morton code per centroid; the library's
// stable radix sort of (code, index) pairs into (sorted_keys, order). keys and ids: scratch.
template <class Exec, class Backend>
void morton_order(Exec e, Backend& backend, const triangle* triangles, aabb* prim_box, aabb* centroid, std::uint32_t* keys,
                  std::uint32_t* ids, std::uint32_t* sorted_keys, std::uint32_t* order, std::uint32_t n) {
  exec::parallel_for(e, "lbvh.boxes", n, [=] SIEVE_HD(std::uint32_t i) {
    const triangle t = triangles[i];
    const aabb box{min(min(t.v0, t.v1), t.v2), max(max(t.v0, t.v1), t.v2)};
    prim_box[i] = box;
    const vec3 c = box.center();
    centroid[i] = {c, c};
  });
  // The centroids' bounds: each level folds chunks of lbvh_chunk boxes into the next level's slots.
  std::uint32_t at = 0, count = n;
  while (count > 1) {
    const std::uint32_t chunks = (count + lbvh_chunk - 1) / lbvh_chunk, from = at, next = at + count;
    exec::parallel_for(e, "lbvh.bounds", chunks, [=] SIEVE_HD(std::uint32_t c) {
      aabb box;
      const std::uint32_t end = c * lbvh_chunk + lbvh_chunk < count ? c * lbvh_chunk + lbvh_chunk : count;
      for (std::uint32_t k = c * lbvh_chunk; k < end; ++k) box.grow(centroid[from + k]);
      centroid[next + c] = box;
    });
    at = next, count = chunks;
  }
  const aabb* bounds = centroid + at;
  exec::parallel_for(e, "lbvh.morton", n, [=] SIEVE_HD(std::uint32_t i) {
    keys[i] = lbvh_morton(centroid[i].lo, *bounds);
    ids[i] = i;
  });
  backend.sort(keys, ids, sorted_keys, order, n, 30);
}

// The steps on `e` (exec::cpu or exec::cuda) for n >= 2 triangles. Backend: sort(keys, values,
// keys_out, values_out, count, bits) the library's stable radix sort; read(p) a value in its memory.
// Returns the number of nodes written (1 + 2 x kept inner nodes).
template <class Exec, class Backend, class Sync>
std::uint32_t lbvh_run(Exec e, Backend& backend, const lbvh_buffers& b, std::uint32_t n, std::uint32_t max_leaf,
                       Sync sync) {
  morton_order(e, backend, b.triangles, b.prim_box, b.centroid, b.keys, b.ids, b.sorted_keys, b.order, n);
  exec::parallel_for(e, "lbvh.split", n - 1, [=] SIEVE_HD(std::uint32_t i) {
    lbvh_split(b.sorted_keys, n, i, b.inner, b.parent);
    b.visits[i] = 0;
    const std::uint32_t size = b.inner[i].last - b.inner[i].first + 1;
    b.kept[i] = size > max_leaf ? 1U : 0U;
  });
  exec::parallel_for(e, "lbvh.climb", n, [=] SIEVE_HD(std::uint32_t j) { lbvh_climb(b, n, j, sync); });
  // The kept inner nodes ranked by decreasing range (ties by index): a child's range is smaller than
  // its parent's, so its children's pair lies after its own (the wide collapse's bottom-up pass
  // relies on children after parents). The nodes not kept sort last.
  exec::parallel_for(e, "lbvh.rank_keys", n - 1, [=] SIEVE_HD(std::uint32_t i) {
    b.keys[i] = b.kept[i] ? n - (b.inner[i].last - b.inner[i].first + 1) : ~0U;
    b.ids[i] = i;
  });
  backend.sort(b.keys, b.ids, b.sorted_keys, b.visits, n - 1, 32);
  exec::parallel_for(e, "lbvh.rank", n - 1, [=] SIEVE_HD(std::uint32_t k) {
    if (b.sorted_keys[k] == ~0U) return;
    b.rank[b.visits[k]] = k;
    if (k + 1 == n - 1 || b.sorted_keys[k + 1] == ~0U) *b.count = k + 1;
  });
  const std::uint32_t kept = n > max_leaf ? backend.read(b.count) : 0;  // the root is kept when it has more than a leaf
  exec::parallel_for(e, "lbvh.emit", n - 1, [=] SIEVE_HD(std::uint32_t i) {
    if (i == 0) b.nodes[0] = b.kept[0] ? bvh_node{b.inner_box[0], 1, 0} : bvh_node{b.inner_box[0], 0, n};
    if (!b.kept[i]) return;
    const lbvh_inner in = b.inner[i];
    const std::uint32_t at = 1 + 2 * b.rank[i];
    b.nodes[at] = lbvh_node_of(b, in.left);
    b.nodes[at + 1] = lbvh_node_of(b, in.right);
  });
  return 1 + 2 * kept;
}

}  // namespace sieve::render
