// Collapsing the binary SAH tree into the 8-wide compressed layout (wide.hpp).
//
// The collapse that minimises the tree's SAH cost (Ylitie, Karras and Laine, HPG 2017), by dynamic
// programming over the binary tree, bottom-up: cost(n, j) is the least cost of the subtree of n
// given as at most j slots of a wide node: as one slot (a leaf of all its triangles when they are
// few enough, or a wide node of its own), or as slots shared between its two children (the best
// k and j - k). A wide node then takes the eight slots its binary node's best distribution names.
// Costs: area x traversal cost per wide node, area x triangles per leaf slot (sah_cost's model).
// Binary leaves of more than 31 triangles (rare: coincident centroids, the depth limit) are split
// by halves of their range, the larger boxes first, as the slots allow.
//
// Children go to slots by a greedy assignment: slot s is for rays of octant s, so it prefers the
// child lying furthest back along the octant's diagonal (least centroid . diagonal).
// Subtrees of many triangles collapse in parallel (tbb::task_group), each into its own arrays;
// the arrays are stitched in tree order at the end.
#include "node_steps.hpp"
#include "../exec/fresh_memory.hpp"
#include "node_encoding.hpp"

#include <sieve/compaction/error.hpp>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>

namespace sieve::render {
namespace {

constexpr std::uint32_t none = ~0U;
constexpr std::uint32_t collapse_leaf_max = 8;  // triangles: a subtree this small may become one leaf slot

// What the emission reads of a binary node's plan (collapse_entry without its costs).
struct collapse_choice {
  std::uint8_t pick[wide_arity];
  std::uint8_t leaf, split8;
};

// A node of the tree being collapsed: a binary node, or a range of a leaf too big for one slot.
struct vnode {
  aabb box;
  std::uint32_t node = none;   // binary node (inner or leaf), or none for a range
  std::uint32_t first = 0, count = 0;  // leaf: its triangles (indices into the binary prims[])
};

// The part of the output one task builds: its nodes numbered locally (node 0 is its root), its
// triangles (indices into the binary leaf order) too; subtrees handed to other tasks are pieces of
// their own, whose roots fill the placeholder nodes reserved for them. stitch() joins them.
struct piece {
  std::vector<wide_node> nodes;
  std::vector<std::uint32_t> prims;
  struct subtask {
    std::uint32_t placeholder;  // the local node reserved for the subtree's root
    std::unique_ptr<piece> sub;
  };
  std::vector<subtask> subtasks;
  std::size_t depth = 0;  // the deepest level (the whole tree's root: 1) of its nodes
};

class collapser {
 public:
  collapser(const binary_bvh& b, std::span<const triangle> tris, float traversal_cost) : b_(b), tris_(tris), traversal_cost_(traversal_cost) {}

  // The dynamic programme, bottom-up (a node after its children, the subtrees near the root in
  // parallel), a node's plan (node_steps.hpp: its costs, picks and leaf choice) from its children's.
  // A node's costs go up the recursion by value; only its choice (the picks, 10 bytes) stays, for
  // the emission: 14 bytes a binary node, not the 52 of the whole plan and a first triangle.
  void plan() {
    const std::size_t count = b_.nodes.size();
    // Uninitialised (every entry is written once, by the parallel walk): zeroing them would be a
    // serial pass as long as the plan.
    range_of_ = fresh_array<std::uint32_t>(count);
    choice_ = fresh_array<collapse_choice>(count);
    plan(0, 0);
  }

  collapse_entry plan(std::uint32_t i, int depth) {
    const bvh_node& n = b_.nodes[i];
    const float area = n.bounds.half_area();
    collapse_entry e;
    if (n.leaf()) {
      range_of_[i] = n.count;
      plan_leaf(area, n.count, traversal_cost_, e);
    } else {
      const std::uint32_t l = n.first, r = n.first + 1;
      collapse_entry el, er;
      if (depth < parallel_plan_depth_)
        tbb::parallel_invoke([&] { el = plan(l, depth + 1); }, [&] { er = plan(r, depth + 1); });
      else
        el = plan(l, depth + 1), er = plan(r, depth + 1);
      range_of_[i] = range_of_[l] + range_of_[r];
      plan_inner(area, range_of_[i], collapse_leaf_max, traversal_cost_, el, er, e);
    }
    collapse_choice& c = choice_[i];
    std::copy(e.pick, e.pick + wide_arity, c.pick);
    c.leaf = e.leaf, c.split8 = e.split8;
    return e;
  }

  // The first triangle (in the binary leaf order) of node i's subtree: its leftmost leaf's (the
  // leaves lie in tree order).
  std::uint32_t start_of(std::uint32_t i) const {
    while (!b_.nodes[i].leaf()) i = b_.nodes[i].first;
    return b_.nodes[i].first;
  }

  // The slots the subtree of binary node i fills when given at most j of them.
  void expand(std::uint32_t i, int j, vnode* kids, int& n) const {
    const std::uint8_t k = choice_[i].pick[j - 1];
    if (k == collapse_one_slot) {
      const bvh_node& b = b_.nodes[i];
      kids[n++] = choice_[i].leaf && !b.leaf() ? vnode{b.bounds, none, start_of(i), range_of_[i]} : from_binary(i);
      return;
    }
    const std::uint32_t l = b_.nodes[i].first;
    expand(l, k, kids, n);
    expand(l + 1, j - k, kids, n);
  }

  bool is_inner(const vnode& v) const {
    return (v.node != none && !b_.nodes[v.node].leaf()) || v.count > wide_leaf_max;
  }

  vnode from_binary(std::uint32_t i) const {
    const bvh_node& n = b_.nodes[i];
    return {n.bounds, i, n.leaf() ? n.first : 0, n.leaf() ? n.count : 0};
  }

  aabb range_box(std::uint32_t first, std::uint32_t count) const {
    aabb box;
    for (std::uint32_t i = first; i < first + count; ++i) {
      const triangle& t = tris_[b_.prims[i]];
      box.grow(t.v0);
      box.grow(t.v1);
      box.grow(t.v2);
    }
    return box;
  }

  std::array<vnode, 2> open(const vnode& v) const {
    if (v.node != none && !b_.nodes[v.node].leaf()) {
      const std::uint32_t c = b_.nodes[v.node].first;
      return {from_binary(c), from_binary(c + 1)};
    }
    const std::uint32_t half = v.count / 2;
    return {vnode{range_box(v.first, half), none, v.first, half},
            vnode{range_box(v.first + half, v.count - half), none, v.first + half, v.count - half}};
  }

  // Fills the wide node `at` of `out` (at tree level `level`) and its subtree from v (inner, or a
  // leaf root); returns the deepest level built by this task.
  std::size_t build(const vnode& v, std::uint32_t at, piece& out, std::size_t level) {
    vnode kids[wide_arity];
    int n = 0;
    if (v.node != none && !b_.nodes[v.node].leaf()) {  // the slots of the best distribution
      const std::uint32_t k = choice_[v.node].split8;
      expand(b_.nodes[v.node].first, static_cast<int>(k), kids, n);
      expand(b_.nodes[v.node].first + 1, wide_arity - static_cast<int>(k), kids, n);
    } else if (is_inner(v)) {  // a leaf too big for one slot
      const auto two = open(v);
      kids[n++] = two[0];
      kids[n++] = two[1];
    } else {
      kids[n++] = v;  // a tree that is one small leaf
    }
    // Leaves too big for one slot are opened, the largest first, while slots are free.
    while (n < wide_arity) {
      int pick = -1;
      float area = -1;
      for (int i = 0; i < n; ++i)
        if (kids[i].count > wide_leaf_max && kids[i].box.half_area() > area) area = kids[i].box.half_area(), pick = i;
      if (pick < 0) break;
      const auto two = open(kids[pick]);
      kids[pick] = two[0];
      kids[n++] = two[1];
    }
    vnode slots[wide_arity];
    bool used[wide_arity] = {};
    assign_slots(kids, n, slots, used);

    aabb box;
    for (int i = 0; i < n; ++i) box.grow(kids[i].box);
    wide_node node{};
    aabb slot_boxes[wide_arity];
    for (int s = 0; s < wide_arity; ++s) slot_boxes[s] = slots[s].box;
    quantise_slots(box, slot_boxes, used, node);
    node.child_base = static_cast<std::uint32_t>(out.nodes.size());
    node.tri_base = static_cast<std::uint32_t>(out.prims.size());
    std::uint32_t inner_slots[wide_arity];
    int inner = 0;
    for (int s = 0; s < wide_arity; ++s) {
      if (!used[s]) continue;
      if (is_inner(slots[s])) {
        node.meta[s] = wide_meta_inner;
        node.inner_mask = static_cast<std::uint8_t>(node.inner_mask | (1U << s));
        inner_slots[inner++] = static_cast<std::uint32_t>(s);
      } else {
        // A triangle split into pieces (split_budget) may sit in several binary leaves of one slot: once here.
        const std::size_t slot_first = out.prims.size();
        for (std::uint32_t i = slots[s].first; i < slots[s].first + slots[s].count; ++i)
          if (std::none_of(out.prims.begin() + static_cast<std::ptrdiff_t>(slot_first), out.prims.end(),
                           [&](std::uint32_t k) { return b_.prims[k] == b_.prims[i]; }))
            out.prims.push_back(i);
        node.meta[s] = static_cast<std::uint8_t>(out.prims.size() - slot_first);
      }
    }
    out.nodes.resize(out.nodes.size() + static_cast<std::size_t>(inner));
    out.nodes[at] = node;
    std::size_t depth = level;
    for (int i = 0; i < inner; ++i) {
      const vnode& c = slots[inner_slots[i]];
      const std::uint32_t child = node.child_base + static_cast<std::uint32_t>(i);
      const std::uint32_t tris = c.node != none ? subtree_triangles(c) : c.count;
      if (tris >= parallel_above_) {
        auto sub = std::make_unique<piece>();
        sub->nodes.resize(1);
        piece* p = sub.get();
        out.subtasks.push_back({child, std::move(sub)});
        group_.run([this, c, p, level] { p->depth = build(c, 0, *p, level + 1); });
      } else {
        depth = std::max(depth, build(c, child, out, level + 1));
      }
    }
    return depth;
  }

  std::uint32_t subtree_triangles(const vnode& v) const {
    if (v.node == none) return v.count;
    return range_of_[v.node];
  }

  static void assign_slots(const vnode* kids, int n, vnode* slots, bool* used) {
    aabb boxes[wide_arity];
    int slot_of[wide_arity];
    for (int i = 0; i < n; ++i) boxes[i] = kids[i].box;
    assign_octant_slots(boxes, n, slot_of);
    for (int i = 0; i < n; ++i) used[slot_of[i]] = true, slots[slot_of[i]] = kids[i];
  }

  void wait() { group_.wait(); }

 private:
  const binary_bvh& b_;
  std::span<const triangle> tris_;
  float traversal_cost_;
  fresh_ptr<std::uint32_t> range_of_;    // per binary node: its triangles
  fresh_ptr<collapse_choice> choice_;    // per binary node: its plan's choices
  tbb::task_group group_;
  static constexpr std::uint32_t parallel_above_ = 1 << 15;
  static constexpr int parallel_plan_depth_ = 12;  // levels of the binary tree whose subtrees plan in parallel
};

// Where each piece lands in the output: its first node (local node j > 0 lands at first + j - 1;
// its root at the node reserved for it) and its first triangle, in tree order.
struct placement {
  const piece* p;
  std::uint32_t root_at, first_node, first_prim;
};
void place(const piece& p, std::uint32_t root_at, std::uint32_t& nodes, std::uint32_t& prims, std::size_t& depth,
           std::vector<placement>& out) {
  out.push_back({&p, root_at, nodes, prims});
  const std::uint32_t start = nodes;
  nodes += static_cast<std::uint32_t>(p.nodes.size()) - 1;
  prims += static_cast<std::uint32_t>(p.prims.size());
  depth = std::max(depth, p.depth);
  for (const auto& t : p.subtasks) place(*t.sub, start + t.placeholder - 1, nodes, prims, depth, out);
}

// The pieces joined into the output (copied in parallel); returns the deepest level.
std::size_t stitch(const piece& root, wide_bvh& out) {
  std::vector<placement> where;
  std::uint32_t nodes = 1, prims = 0;
  std::size_t depth = 0;
  place(root, 0, nodes, prims, depth, where);
  fresh_resize(out.nodes, nodes);
  fresh_resize(out.prims, prims);
  tbb::parallel_for(std::size_t{0}, where.size(), [&](std::size_t k) {
    const placement& w = where[k];
    const piece& p = *w.p;
    std::vector<bool> reserved(p.nodes.size());  // placeholders: their pieces write them
    for (const auto& t : p.subtasks) reserved[t.placeholder] = true;
    for (std::size_t j = 0; j < p.nodes.size(); ++j) {
      if (reserved[j]) continue;
      wide_node n = p.nodes[j];
      n.tri_base += w.first_prim;
      n.child_base += w.first_node - 1;  // children are never a piece's node 0
      out.nodes[j == 0 ? w.root_at : w.first_node + j - 1] = n;
    }
    std::copy(p.prims.begin(), p.prims.end(), out.prims.begin() + w.first_prim);
  });
  return depth;
}

}  // namespace

void quantise_slots(const aabb& box, const aabb* slots, const bool* used, wide_node& node) {
  quantise_wide_slots(box, slots, used, node);
}

double sah_cost(const wide_bvh& w, float traversal_cost) {
  if (w.nodes.empty()) return 0;
  // Slot s's box, dequantised.
  auto slot_box = [](const wide_node& n, int s) {
    float lo[3], hi[3];
    for (int k = 0; k < 3; ++k) {
      const float step = std::ldexp(1.0f, n.exponent[k]);
      lo[k] = n.origin[k] + static_cast<float>(n.lo[k][s]) * step;
      hi[k] = n.origin[k] + static_cast<float>(n.hi[k][s]) * step;
    }
    return aabb{{lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]}};
  };
  double sum = 0;
  for (const wide_node& n : w.nodes)
    for (int s = 0; s < wide_arity; ++s)
      if (n.meta[s] != 0)
        sum += slot_box(n, s).half_area() * (n.meta[s] == wide_meta_inner ? traversal_cost : static_cast<double>(n.meta[s]));
  aabb root;  // the union of the root's slots
  for (int s = 0; s < wide_arity; ++s)
    if (w.nodes[0].meta[s] != 0) root.grow(slot_box(w.nodes[0], s));
  const double root_area = root.half_area();
  return root_area > 0 ? traversal_cost + sum / root_area : 0;
}

wide_bvh collapse_wide(const binary_bvh& b, std::span<const triangle> triangles, float traversal_cost) {
  const auto t0 = std::chrono::steady_clock::now();
  wide_bvh out;
  if (b.nodes.empty()) return out;
  piece root;
  root.nodes.resize(1);
  {
    collapser c(b, triangles, traversal_cost);
    c.plan();
    root.depth = c.build(c.from_binary(0), 0, root, 1);
    c.wait();
  }  // the plan freed before the layouts are made
  out.depth = stitch(root, out);
  if (out.depth >= static_cast<std::size_t>(dfs_stack_size))
    throw error("BVH: the wide tree is " + std::to_string(out.depth) + " levels deep, more than the traversal stack holds");
  encode_leaf_blocks(out, b.prims, triangles);  // out.prims: indices into the binary leaf order
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace sieve::render
