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
#include "bvh.hpp"
#include "dfs.hpp"
#include "node_steps.hpp"
#include "wide.hpp"

#include <sieve/compaction/error.hpp>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

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

 private:
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

}  // namespace

cw_bvh encode_cw(const wide_bvh& w) {
  const auto t0 = std::chrono::steady_clock::now();
  cw_bvh out;
  if (w.nodes.empty()) return out;
  encoder e(w, out);
  out.nodes.resize(1);
  e.wide(0, 0, 1);
  out.depth = e.depth();
  const std::vector<std::uint32_t>& source = e.source();
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
