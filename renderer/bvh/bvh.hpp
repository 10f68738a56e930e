// The BVH as data: the binary tree over triangles that every builder makes (the binned SAH build on
// oneTBB, build.cpp; the linear and PLOC builders, lbvh.hpp, ploc.hpp) and the layouts made from it,
// each a type of its own with a view of its own:
//   binary_bvh  the binary nodes and the leaf order (what the others are made from; the SAH cost)
//   pair_bvh    the 64-byte pair nodes with their leaf triangles (the binary DFS and BFS)
//   wide_bvh    the 8-wide tree with the CPU's leaf blocks (the wide DFS)
//   cw_bvh      its compressed GPU encoding (the compressed DFS and BFS)
// A bvh holds the layouts one build made (bvh_build_options says which), its views a bvh_view; the
// traversals over them (renderer/trace/) each read the view of their own layout, chosen by the
// typed traversal choice (core/modes.hpp, trace/tracers.hpp). A new layout is a type here with its
// view, a member of bvh and bvh_view (for_each_layout lists them), and its builder.
#pragma once

#include "../core/alpha.hpp"
#include "../core/math.hpp"
#include "../core/triangle.hpp"
#include "../exec/fresh_memory.hpp"

#include <sieve/compaction/error.hpp>

#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

namespace sieve::render {

// 32 bytes. Inner node: count == 0, children at first and first + 1. Leaf: prims[first, first + count).
struct bvh_node {
  aabb bounds;
  std::uint32_t first = 0;
  std::uint32_t count = 0;
  SIEVE_HD constexpr bool leaf() const { return count != 0; }
};

// The binary tree, as every builder makes it: every other layout is made from it (the traversals
// read those; the checks, the statistics and sah_cost read this).
struct binary_bvh {
  fresh_vector<bvh_node> nodes;       // nodes[0] is the root (absent for an empty scene)
  std::vector<std::uint32_t> prims;   // triangle indices in leaf order (a triangle in several leaves when split)
  template <class Self, class F>  // Self: binary_bvh, const or not (for_each_part)
  static void parts(Self& self, F&& f) { f(self.nodes), f(self.prims); }
};

struct binary_view {
  const bvh_node* nodes = nullptr;
  const std::uint32_t* prims = nullptr;
  std::uint32_t node_count = 0;
};

// The DFS traversal's layout (Aila & Laine's): one 64-byte node per inner node of the binary tree,
// holding both children's boxes, so a step reads one cache line and tests two boxes. Four 16-byte
// quads (vector loads on the GPU): (c0.lo.x, c0.hi.x, c0.lo.y, c0.hi.y), (c1.lo.x, c1.hi.x, c1.lo.y,
// c1.hi.y), (c0.lo.z, c0.hi.z, c1.lo.z, c1.hi.z), (child0, count0, child1, count1) as integer bits.
// count == 0: the child is pair node `child`; count > 0: a leaf of prims [child, child + count);
// child == ~0 with count 0: no child (a tree that is a single leaf).
struct alignas(16) quad {
  float x, y, z, w;
};
struct alignas(64) pair_node {
  quad q[4];
};
inline constexpr std::uint32_t no_child = ~0U;

// A triangle again, stored in leaf order and 16-byte aligned (three quads, w unused): a leaf's
// triangles sit side by side and each loads as three vector loads, without going through prims[].
struct alignas(16) leaf_triangle {
  quad v[3];
  SIEVE_HD static leaf_triangle of(const triangle& t) {
    return {{{t.v0.x, t.v0.y, t.v0.z, 0}, {t.v1.x, t.v1.y, t.v1.z, 0}, {t.v2.x, t.v2.y, t.v2.z, 0}}};
  }
  SIEVE_HD triangle get() const {
    const quad a = v[0], b = v[1], c = v[2];
    return {{a.x, a.y, a.z}, {b.x, b.y, b.z}, {c.x, c.y, c.z}};
  }
};

// The binary tree's DFS layout: a pair node per inner node (pairs[0]: the root's children), the
// leaf triangles in the binary tree's leaf order (triangles[i] = the triangle binary_bvh::prims[i]).
struct pair_bvh {
  fresh_vector<pair_node> nodes;
  fresh_vector<leaf_triangle> triangles;
  template <class Self, class F>
  static void parts(Self& self, F&& f) { f(self.nodes), f(self.triangles); }
};

struct pair_view {
  const pair_node* nodes = nullptr;
  const leaf_triangle* triangles = nullptr;
  const std::uint32_t* prims = nullptr;  // the binary tree's leaf order: a leaf triangle's primitive
  std::uint32_t node_count = 0;
  alpha_view alpha{};  // cut-outs (accept_hit); a bvh_view's own: pairs_of(bvh_view), dfs.hpp
};

// The deepest a built tree goes: the DFS traversal's fixed stack holds one entry per level.
constexpr int dfs_depth_limit() { return 60; }

// The 8-wide compressed layout (wide.hpp traverses it, wide_build.cpp collapses the binary tree
// into it). Ylitie, Karras and Laine (HPG 2017) style: each child box quantised to 8 bits per bound
// relative to the node's origin, with a power-of-two step per axis.
inline constexpr int wide_arity = 8;
inline constexpr std::uint32_t wide_leaf_max = 31;  // triangles per leaf child (8 x 31 fits a byte)
inline constexpr std::uint8_t wide_meta_inner = 0x80;

// 80 bytes (five 16-byte loads). Child slot s:
//   meta[s] == 0: empty; meta[s] == 0x80: inner child, node child_base + (inner slots before s);
//   meta[s] in 1..31: a leaf of meta[s] triangles from tri_base + (leaf triangles of the slots before s).
// Its box: origin[a] + q * 2^exponent[a] for q = lo[a][s] .. hi[a][s]; the builder quantises
// outwards with a margin of one step, so the box always holds the child's.
// Slots are ordered by direction (octant order): a ray whose direction has sign bits `oct` (bit a:
// negative along axis a) visits slot k ^ oct k-th, roughly front to back.
struct alignas(16) wide_node {
  float origin[3];
  std::int8_t exponent[3];
  std::uint8_t inner_mask;   // bit s: slot s is an inner child
  std::uint32_t child_base;  // the first inner child (inner children are consecutive nodes)
  std::uint32_t tri_base;    // the first triangle of the leaf children (consecutive too)
  std::uint8_t meta[wide_arity];
  std::uint8_t lo[3][wide_arity], hi[3][wide_arity];
};
static_assert(sizeof(wide_node) == 80, "the wide node is five 16-byte quads");

// The CPU traversal's copy of the wide tree's leaf triangles (encode_leaf_blocks): eight triangles
// a block, each as its first vertex and two edges (hit_triangle_edges), coordinate by coordinate:
// 36 bytes a triangle, nine aligned 32-byte loads for eight. Triangle i (of wide_bvh::triangles) is
// lane i % 8 of block i / 8: every node's tri_base is a multiple of 8, and the lanes after a node's
// last leaf triangle are padding (zero: degenerate, never hit; prims ~0).
struct alignas(32) leaf_block {
  float v0[3][8], e1[3][8], e2[3][8];
};
static_assert(sizeof(leaf_block) == 288, "eight triangles of 36 bytes");

struct wide_bvh {
  fresh_vector<wide_node> nodes;          // nodes[0] is the root (absent for an empty scene)
  std::vector<std::uint32_t> prims;       // triangle indices in the wide tree's leaf order (~0: padding)
  fresh_vector<leaf_triangle> triangles;  // triangles[i] = the triangle prims[i]
  fresh_vector<leaf_block> blocks;        // the same triangles eight a block (the CPU's AVX2 test)
  std::size_t depth = 0;                  // levels of wide nodes
  double seconds = 0;                     // the collapse alone
  template <class Self, class F>
  static void parts(Self& self, F&& f) {
    f(self.nodes), f(self.prims), f(self.triangles), f(self.blocks), f(self.depth), f(self.seconds);
  }
};

struct wide_view {
  const wide_node* nodes = nullptr;
  const std::uint32_t* prims = nullptr;
  const leaf_triangle* triangles = nullptr;
  std::uint32_t node_count = 0;
  const leaf_block* blocks = nullptr;     // host memory only: the GPU reads `triangles`
};

// The traversal layout of the 8-wide tree on the GPU (cwbvh.hpp traverses it, cwbvh_build.cpp
// encodes it from wide_bvh): the same 80-byte node, its boxes as wide_node's (slots in octant order),
// with what a traversal needs to keep the node's hits as two bit masks in registers (Ylitie et al.):
//   inner slot s: meta[s] == cw_meta_inner, node child_base + (inner slots before s);
//   leaf slot s: meta[s] = count << 5 | offset: triangles tri_base + offset .. + count - 1, count 1..7,
//                offset + count <= 32 (a node's leaf triangles are bits 0..31 of one mask);
//   empty slot: meta[s] == 0.
inline constexpr std::uint8_t cw_meta_inner = 1;
inline constexpr std::uint32_t cw_leaf_max = 7, cw_node_triangles = 32;

struct alignas(16) cw_node {
  float origin[3];
  std::int8_t exponent[3];
  std::uint8_t inner_mask;
  std::uint32_t child_base;
  std::uint32_t tri_base;
  std::uint8_t meta[wide_arity];
  std::uint8_t lo[3][wide_arity], hi[3][wide_arity];
};
static_assert(sizeof(cw_node) == 80, "the compressed node is five 16-byte quads");

// A triangle as the first vertex and its two edges (v1 - v0, v2 - v0), three 16-byte loads; v0's w
// holds the primitive's index (its bits), so a hit reads no index array.
struct alignas(16) cw_triangle {
  quad v0, e1, e2;
};

struct cw_bvh {
  fresh_vector<cw_node> nodes;           // nodes[0] is the root (absent for an empty scene)
  fresh_vector<cw_triangle> triangles;   // in leaf order
  std::size_t depth = 0;                 // levels of nodes
  double seconds = 0;                    // the encoding alone
  template <class Self, class F>
  static void parts(Self& self, F&& f) { f(self.nodes), f(self.triangles), f(self.depth), f(self.seconds); }
};

struct cw_view {
  const cw_node* nodes = nullptr;
  const cw_triangle* triangles = nullptr;
  std::uint32_t node_count = 0;
  alpha_view alpha{};  // cut-outs (accept_hit); a bvh_view's own: cw_of(bvh_view), cwbvh.hpp
};

struct bvh_build_options {
  std::uint32_t bins = 16;      // SAH bins per axis
  // Split any node with more primitives (unless their centroids coincide); below that the SAH decides,
  // up to 4 x max_leaf. 3 rather than 4: half the triangle tests per ray for 5..8 % more node visits,
  // the compressed tree's GPU rates +7..17 % (bench/results/h100-80gb-hbm3/cwbvh-designs-3.txt).
  std::uint32_t max_leaf = 3;
  float traversal_cost = 1.0f;  // SAH cost of visiting a node, relative to one triangle test
  // The layouts to make from the binary tree (bvh::binary, always made):
  bool wide = true;             // the 8-wide tree (bvh::wide)
  bool pairs = true;            // the binary DFS's and BFS's layout (bvh::pairs)
  bool cw = true;               // the 8-wide tree's GPU layout (bvh::cw), when wide
  bool simd = true;             // the AVX2 binning and partition where the processor has AVX2 (same tree)
  float split_budget = 0;       // extra references, as a fraction of the triangles, for splitting large triangles
                                // (split.hpp) before the build: a triangle may then sit in several leaves; 0: none
};

// CPU seconds of the process (all its threads) in each phase of a build: with one thread, the
// build's own per-core cost.
struct bvh_phases {
  double refs = 0;            // the primitive references (a box per triangle)
  double binary = 0;          // the binary SAH tree (binning, sweep, partition)
  double pairs = 0;           // the pair nodes and the leaf triangles (the binary DFS's layout)
  double collapse = 0;        // the 8-wide tree, its triangles gathered
  double cw = 0;              // the GPU's compressed encoding
  double total() const { return refs + binary + pairs + collapse + cw; }
};

struct bvh_stats {
  std::size_t nodes = 0, leaves = 0, max_depth = 0, max_leaf_size = 0;
  std::size_t references = 0;  // entries of prims[]: the triangles, more with split_budget
  double seconds = 0;
  bvh_phases cpu;             // CPU seconds per phase (bvh_phases)
  bvh_phases wall;            // wall-clock seconds per phase
};

// The build of the 8-wide tree alone, for the CPU traversal (wide_cpu.cpp): no pair nodes, no
// binary leaf triangles, no GPU encoding.
inline constexpr bvh_build_options cpu_wide_only() {
  bvh_build_options o;
  o.pairs = false, o.cw = false;
  return o;
}

// The layouts one build made (the options say which; the others empty), and its statistics.
struct bvh {
  binary_bvh binary;                  // the tree every builder makes
  pair_bvh pairs;                     // its DFS layout
  wide_bvh wide;                      // the same tree, 8-wide
  cw_bvh cw;                          // the 8-wide tree in the GPU traversal's layout
  bvh_stats stats;                    // seconds: the whole build, the layouts included
};

// f(layout) for each layout of b (const or not), lowest first.
template <class B, class F>
void for_each_layout(B& b, F&& f) {
  f(b.binary), f(b.pairs), f(b.wide), f(b.cw);
}

// Every part of a built tree (B: bvh or const bvh), for code that copies or compares one as bytes
// (the processes of a split render share one build): f(part) for each array (a std::vector of
// trivially copyable elements) and each trivially copyable value, each layout's as its parts() lists them.
template <class B, class F>
void for_each_part(B& b, F&& f) {
  for_each_layout(b, [&](auto& layout) { std::remove_const_t<std::remove_reference_t<decltype(layout)>>::parts(layout, f); });
  f(b.stats);
}

// What the traversals read: raw pointers, so the same view works over device copies. Each
// traversal reads its own layout's view (and the cut-outs): trace/tracers.hpp picks it by the
// typed choice.
struct bvh_view {
  binary_view binary;                   // the binary tree (no traversal reads it: its node count says whether there is a tree)
  pair_view pairs;                      // the 64-byte layout (binary DFS and BFS)
  wide_view wide;                       // the 8-wide layout (wide DFS)
  cw_view cw;                           // the 8-wide tree's GPU layout (cwbvh.hpp)
  const triangle* triangles = nullptr;  // the scene's, for shading and the hits' barycentrics
  alpha_view alpha{};                   // cut-outs: every traversal asks accept_hit (core/alpha.hpp) before it keeps a hit
};

// Throws sieve::error for out-of-range options or more than 2^31 triangles.
bvh build_bvh(std::span<const triangle> triangles, const bvh_build_options& options = {});

// What every builder does after its binary tree (b.binary): boxes widened by a float step, and as
// the options ask, the layouts made from it (make_pairs, collapse_wide, encode_cw; their CPU time
// added to stats.cpu). build_bvh calls it; so does the linear builder (lbvh.hpp).
void finish_bvh(bvh& b, std::span<const triangle> triangles, const bvh_build_options& options);

// The DFS pair layout of a binary tree over `triangles` (build.cpp): one pair node per inner node,
// in the binary nodes' order (the root's first), and the leaf triangles.
pair_bvh make_pairs(const binary_bvh& b, std::span<const triangle> triangles);

// The wide tree of a built binary BVH over `triangles` (the collapse of least SAH cost: wide_build.cpp). Throws
// sieve::error if it would be deeper than the traversal stack (not seen in practice: it is never
// deeper than the binary tree plus the levels that split leaves of more than 31 triangles).
wide_bvh collapse_wide(const binary_bvh& b, std::span<const triangle> triangles, float traversal_cost = 1.0f);

// Lays out the leaf triangles of a collapsed wide tree for the CPU traversal (wide_blocks.cpp):
// each node's run of leaf triangles moved to start at a multiple of 8 (tri_base updated, prims and
// triangles padded likewise), and `blocks` filled. The second form is the collapse's: w.prims hold
// indices into leaf_prims (the binary tree's leaf order), w.triangles is not made yet; the
// triangles are read from `triangles`.
void encode_leaf_blocks(wide_bvh& w);
void encode_leaf_blocks(wide_bvh& w, std::span<const std::uint32_t> leaf_prims, std::span<const triangle> triangles);

// The surface-area cost of a tree: the expected work of a ray through it, relative to the root's
// box: sum over inner nodes of area(node) / area(root) * traversal_cost, plus sum over leaves of
// area(leaf) / area(root) * its triangles (one triangle test costs 1). The wide tree's is counted
// on its quantised child boxes, each wide node costing one traversal_cost. 0 for an empty tree.
double sah_cost(const binary_bvh& b, float traversal_cost = 1.0f);
double sah_cost(const wide_bvh& w, float traversal_cost = 1.0f);

// Quantises the boxes of the used slots of a wide node against their union `box` (wide_node's
// encoding: origin, exponent, lo, hi); slots and used hold wide_arity entries. The collapse and the
// encoder of cw_bvh call it.
void quantise_slots(const aabb& box, const aabb* slots, const bool* used, wide_node& node);

// The 8-wide tree in the GPU traversal's layout (cwbvh_build.cpp): the slots and boxes of `w` kept,
// leaves of more than cw_leaf_max triangles, or nodes of more than cw_node_triangles, split into
// nodes of their own. Throws sieve::error if that would be deeper than the traversal stack.
cw_bvh encode_cw(const wide_bvh& w);

// Each layout's view (pair_bvh's with the binary tree's leaf order), and a build's.
inline binary_view view_of(const binary_bvh& b) {
  return {b.nodes.data(), b.prims.data(), static_cast<std::uint32_t>(b.nodes.size())};
}

inline pair_view view_of(const pair_bvh& p, const binary_bvh& b) {
  return {p.nodes.data(), p.triangles.data(), b.prims.data(), static_cast<std::uint32_t>(p.nodes.size())};
}

inline cw_view view_of(const cw_bvh& c) {
  return {c.nodes.data(), c.triangles.data(), static_cast<std::uint32_t>(c.nodes.size())};
}

inline wide_view view_of(const wide_bvh& w) {
  return {w.nodes.data(), w.prims.data(), w.triangles.data(), static_cast<std::uint32_t>(w.nodes.size()), w.blocks.data()};
}

inline bvh_view view_of(const bvh& b, std::span<const triangle> triangles) {
  return {view_of(b.binary), view_of(b.pairs, b.binary), view_of(b.wide), view_of(b.cw), triangles.data()};
}

}  // namespace sieve::render
