// Encoding the 8-wide tree (wide_bvh, from the collapse) in the GPU traversal's layout (cw_node,
// bvh.hpp; traversed by cwbvh.hpp).
//
// A wide node keeps its slots, its quantised boxes and so its octant order; only the leaves are
// re-encoded, as (offset, count) into the node's run of triangles, so that a node's leaf hits make one
// 32-bit mask. A leaf of more than cw_leaf_max triangles, or the largest leaves of a node whose
// leaves hold more than cw_node_triangles, become inner children: nodes of up to eight leaves over
// their triangles (sorted along the widest axis of their centroids, then cut in even runs). The
// builder's leaves are small (at most 4 x max_leaf triangles, 12 by default, unless their centroids
// coincide), so this is rare (none in the sphere room).
//
// Triangles are stored as the first vertex and two edges, with the primitive's index in v0's w.
//
// When no node needs such a split (the usual case) the compressed nodes are the wide nodes, same
// numbering, each encoded on its own in parallel, its triangles after those of the nodes before it
// (encode_in_parallel); otherwise a walk from the root encodes the tree (the encoder).
#include "bvh.hpp"
#include "dfs.hpp"
#include "node_steps.hpp"
#include "wide.hpp"

#include <sieve/compaction/error.hpp>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <string>

namespace sieve::render {
namespace {

// Triangles of the wide tree: list[first .. first + count) when list is set, else first .. first + count.
struct tri_run {
  const std::uint32_t* list = nullptr;
  std::uint32_t first = 0, count = 0;
  std::uint32_t at(std::uint32_t i) const { return list ? list[first + i] : first + i; }
};

// What a slot holds: nothing, a wide node (inner, run empty), a leaf (run), or a node of its own over
// a run (inner, run set).
struct child {
  bool inner = false;
  std::uint32_t wide = 0;
  tri_run run;
};

class encoder {
 public:
  encoder(const wide_bvh& w, cw_bvh& out) : w_(w), out_(out) {}

  // The node at out.nodes[at] (level `level`, the root's 1) and its subtree, from wide node wi.
  void wide(std::uint32_t wi, std::uint32_t at, std::size_t level) {
    const wide_node& n = w_.nodes[wi];
    const std::uint64_t counts = leaf_counts(n);
    child of[wide_arity];
    std::uint32_t kept = 0, next_wide = n.child_base;
    for (int s = 0; s < wide_arity; ++s) {
      if (n.inner_mask >> s & 1U) {
        of[s] = {true, next_wide++, {}};
      } else if (n.meta[s] != 0) {
        of[s].run = {nullptr, n.tri_base + leaf_offset(counts, s), n.meta[s]};
        of[s].inner = n.meta[s] > cw_leaf_max;
        if (!of[s].inner) kept += n.meta[s];
      }
    }
    while (kept > cw_node_triangles) {  // the largest leaves kept become nodes until the rest fit
      int big = -1;
      for (int s = 0; s < wide_arity; ++s)
        if (!of[s].inner && of[s].run.count && (big < 0 || of[s].run.count > of[big].run.count)) big = s;
      of[big].inner = true;
      kept -= of[big].run.count;
    }
    finish(header(n.origin, n.exponent, n.lo, n.hi), of, at, level);
  }

  // A node over a run of triangles: sorted along the widest axis of their centroids and cut into up
  // to eight even parts, leaves (or, for more than cw_node_triangles, nodes of their own).
  void range(const tri_run& run, std::uint32_t at, std::size_t level) {
    std::vector<std::uint32_t> order(run.count);
    for (std::uint32_t i = 0; i < run.count; ++i) order[i] = run.at(i);
    aabb centres;
    for (const std::uint32_t i : order) centres.grow(centre(i));
    const vec3 extent = centres.hi - centres.lo;
    const int axis = extent.x >= extent.y && extent.x >= extent.z ? 0 : extent.y >= extent.z ? 1 : 2;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return centre(a)[axis] < centre(b)[axis]; });
    const std::uint32_t parts = std::min<std::uint32_t>(wide_arity, run.count);
    child of[wide_arity];
    aabb boxes[wide_arity], box;
    bool used[wide_arity] = {};
    for (std::uint32_t p = 0; p < parts; ++p) {
      const std::uint32_t lo = run.count * p / parts, hi = run.count * (p + 1) / parts;
      of[p] = {run.count > cw_node_triangles, 0, {order.data(), lo, hi - lo}};
      for (std::uint32_t i = lo; i < hi; ++i)
        for (const quad& v : w_.triangles[order[i]].v) boxes[p].grow(vec3{v.x, v.y, v.z});
      used[p] = true;
      box.grow(boxes[p]);
    }
    wide_node q{};
    quantise_slots(box, boxes, used, q);
    finish(header(q.origin, q.exponent, q.lo, q.hi), of, at, level);  // `order` outlives the subtree
  }

  std::size_t depth() const { return depth_; }
  // Where each output triangle comes from (an index into the wide tree's triangles).
  const std::vector<std::uint32_t>& source() const { return source_; }

  static cw_node header(const float* origin, const std::int8_t* exponent, const std::uint8_t (*lo)[wide_arity],
                        const std::uint8_t (*hi)[wide_arity]) {
    cw_node c{};
    for (int k = 0; k < 3; ++k) {
      c.origin[k] = origin[k];
      c.exponent[k] = exponent[k];
      for (int s = 0; s < wide_arity; ++s) c.lo[k][s] = lo[k][s], c.hi[k][s] = hi[k][s];
    }
    return c;
  }

 private:
  vec3 centre(std::uint32_t i) const {
    const quad* v = w_.triangles[i].v;
    return vec3{v[0].x + v[1].x + v[2].x, v[0].y + v[1].y + v[2].y, v[0].z + v[1].z + v[2].z};
  }

  // Writes node c (its boxes set) at `at` with the slots' children: leaves appended to the
  // triangles, inner children reserved as consecutive nodes and then built.
  void finish(cw_node c, const child* of, std::uint32_t at, std::size_t level) {
    depth_ = std::max(depth_, level);
    if (level >= static_cast<std::size_t>(dfs_stack_size))
      throw error("BVH: the compressed wide tree would be more than " + std::to_string(dfs_stack_size - 1) + " levels deep");
    c.child_base = static_cast<std::uint32_t>(out_.nodes.size());
    c.tri_base = static_cast<std::uint32_t>(source_.size());
    int inner = 0;
    for (int s = 0; s < wide_arity; ++s) {
      if (of[s].inner) {
        c.meta[s] = cw_meta_inner;
        c.inner_mask = static_cast<std::uint8_t>(c.inner_mask | (1U << s));
        ++inner;
      } else if (of[s].run.count) {
        const auto offset = static_cast<std::uint32_t>(source_.size()) - c.tri_base;
        c.meta[s] = static_cast<std::uint8_t>(of[s].run.count << 5 | offset);
        for (std::uint32_t i = 0; i < of[s].run.count; ++i) source_.push_back(of[s].run.at(i));
      }
    }
    out_.nodes.resize(out_.nodes.size() + static_cast<std::size_t>(inner));
    out_.nodes[at] = c;
    std::uint32_t next = c.child_base;
    for (int s = 0; s < wide_arity; ++s) {
      if (!of[s].inner) continue;
      if (of[s].run.count == 0) wide(of[s].wide, next++, level + 1);
      else range(of[s].run, next++, level + 1);
    }
  }

  const wide_bvh& w_;
  cw_bvh& out_;
  std::vector<std::uint32_t> source_;
  std::size_t depth_ = 0;
};

// Whether every wide node encodes as one compressed node (no leaf above cw_leaf_max triangles, no
// node's leaves above cw_node_triangles): then the nodes keep the wide tree's numbering and are
// encoded all at once, in parallel (encode_in_parallel); else the walk above (rare).
bool one_to_one(const wide_bvh& w) {
  return tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, w.nodes.size(), 1 << 14), true,
      [&](const auto& r, bool ok) {
        for (std::size_t i = r.begin(); ok && i != r.end(); ++i) {
          const wide_node& n = w.nodes[i];
          ok = leaf_total(n) <= cw_node_triangles;
          for (int s = 0; ok && s < wide_arity; ++s) ok = n.meta[s] == wide_meta_inner || n.meta[s] <= cw_leaf_max;
        }
        return ok;
      },
      [](bool a, bool b) { return a && b; });
}

// Node i of the output is wide node i; its triangles follow those of the nodes before it. Returns
// where each output triangle comes from (an index into the wide tree's triangles).
std::vector<std::uint32_t> encode_in_parallel(const wide_bvh& w, cw_bvh& out) {
  const std::size_t count = w.nodes.size();
  constexpr std::size_t block = std::size_t{1} << 12;
  const std::size_t blocks = (count + block - 1) / block;
  std::vector<std::uint32_t> first(blocks + 1, 0);  // the first triangle of each block of nodes
  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
    std::uint32_t sum = 0;
    for (std::size_t i = b * block; i < std::min(count, (b + 1) * block); ++i) sum += leaf_total(w.nodes[i]);
    first[b + 1] = sum;
  });
  for (std::size_t b = 0; b < blocks; ++b) first[b + 1] += first[b];
  out.nodes.resize(count);
  std::vector<std::uint32_t> source(first[blocks]);
  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
    std::uint32_t at = first[b];
    for (std::size_t i = b * block; i < std::min(count, (b + 1) * block); ++i) {
      const wide_node& n = w.nodes[i];
      cw_node c = encoder::header(n.origin, n.exponent, n.lo, n.hi);
      c.inner_mask = n.inner_mask;
      c.child_base = n.child_base;
      c.tri_base = at;
      const std::uint64_t counts = leaf_counts(n);
      for (int s = 0; s < wide_arity; ++s) {
        if (n.meta[s] == wide_meta_inner) {
          c.meta[s] = cw_meta_inner;
        } else if (n.meta[s] != 0) {
          const std::uint32_t offset = leaf_offset(counts, s);
          c.meta[s] = static_cast<std::uint8_t>(n.meta[s] << 5 | offset);
          for (std::uint32_t t = 0; t < n.meta[s]; ++t) source[at + offset + t] = n.tri_base + offset + t;
        }
      }
      at += leaf_total(n);
      out.nodes[i] = c;
    }
  });
  out.depth = w.depth;
  return source;
}

}  // namespace

cw_bvh encode_cw(const wide_bvh& w) {
  const auto t0 = std::chrono::steady_clock::now();
  cw_bvh out;
  if (w.nodes.empty()) return out;
  encoder e(w, out);
  std::vector<std::uint32_t> in_parallel;
  const bool parallel = one_to_one(w);
  if (parallel) {
    in_parallel = encode_in_parallel(w, out);
  } else {
    out.nodes.resize(1);
    e.wide(0, 0, 1);
    out.depth = e.depth();
  }
  const std::vector<std::uint32_t>& source = parallel ? in_parallel : e.source();
  out.triangles.resize(source.size());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, source.size(), 1 << 14), [&](const auto& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) {
      out.triangles[i] = cw_triangle_of(w.triangles[source[i]].get(), w.prims[source[i]]);
    }
  });
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace sieve::render
