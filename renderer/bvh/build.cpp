// Binned SAH BVH build on oneTBB. Each node bins its primitives' centroids into `bins` slots per
// axis, sweeps the bins for the split of least surface-area cost, and partitions its primitive
// references (box, centroid, index) in place; the children's bounds come from the bins; nodes with many
// primitives bin in parallel (tbb::parallel_reduce) and build their children in parallel
// (tbb::parallel_invoke). Children of a node are adjacent (first, first + 1), reserved from an
// atomic counter, so the flat node array needs no relinking.
#include "bvh.hpp"

#include <sieve/compaction/error.hpp>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <numeric>
#include <string>

namespace sieve::render {
namespace {

constexpr std::uint32_t max_bins = 32;
constexpr std::uint32_t parallel_above = 1 << 12;  // primitives: parallel binning and recursion
constexpr int max_depth = dfs_depth_limit();

// A primitive as the builder moves it: its box, centroid and index together, partitioned in place
// (nodes read their primitives contiguously, not through an index array into scattered boxes).
struct prim_ref {
  aabb box;
  vec3 centroid;
  std::uint32_t index;
};

struct range_bounds {
  aabb bounds, centroids;
  void add(const range_bounds& o) {
    bounds.grow(o.bounds);
    centroids.grow(o.centroids);
  }
  void add(const prim_ref& r) {
    bounds.grow(r.box);
    centroids.grow(r.centroid);
  }
};

// Per axis and bin: the count and the bounds of the primitives binned there. Only the first n of the
// max_bins slots are cleared and used: most nodes are small, and clearing and copying all 96 boxes
// took more of the build than binning their primitives.
struct bins {
  struct slot {  // no member initialisers: reset() clears what is used
    vec3 lo, hi;
    std::uint32_t count;
  };
  slot at[3][max_bins];

  explicit bins(std::uint32_t n) {
    for (auto& axis : at)
      for (std::uint32_t k = 0; k < n; ++k) axis[k] = {{1e30f, 1e30f, 1e30f}, {-1e30f, -1e30f, -1e30f}, 0};
  }
  void add(int axis, std::uint32_t k, const aabb& box) {
    slot& s = at[axis][k];
    s.lo = min(s.lo, box.lo);
    s.hi = max(s.hi, box.hi);
    ++s.count;
  }
  void add(const bins& o, std::uint32_t n) {
    for (int axis = 0; axis < 3; ++axis)
      for (std::uint32_t k = 0; k < n; ++k) {
        slot& s = at[axis][k];
        s.lo = min(s.lo, o.at[axis][k].lo);
        s.hi = max(s.hi, o.at[axis][k].hi);
        s.count += o.at[axis][k].count;
      }
  }
  aabb box(int axis, std::uint32_t k) const { return {at[axis][k].lo, at[axis][k].hi}; }
  std::uint32_t count(int axis, std::uint32_t k) const { return at[axis][k].count; }
};

class builder {
 public:
  builder(std::span<const triangle> tris, const bvh_build_options& opt, bvh& out)
      : opt_(opt), out_(out), refs_(tris.size()) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, tris.size(), 1 << 14), [&](const auto& r) {
      for (std::size_t i = r.begin(); i != r.end(); ++i) {
        aabb b;
        b.grow(tris[i].v0);
        b.grow(tris[i].v1);
        b.grow(tris[i].v2);
        refs_[i] = {b, b.center(), static_cast<std::uint32_t>(i)};
      }
    });
    out_.nodes.resize(std::max<std::size_t>(2 * tris.size(), 1));
  }

  void run() {
    out_.prims.resize(refs_.size());
    if (refs_.empty()) {
      out_.nodes.clear();
      return;
    }
    build(0, 0, static_cast<std::uint32_t>(refs_.size()), 1, measure(0, static_cast<std::uint32_t>(refs_.size())));
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, refs_.size(), 1 << 14), [&](const auto& r) {
      for (std::size_t i = r.begin(); i != r.end(); ++i) out_.prims[i] = refs_[i].index;
    });
    out_.nodes.resize(next_.load());
    out_.stats.nodes = out_.nodes.size();
    out_.stats.leaves = leaves_.load();
    out_.stats.max_depth = depth_.load();
    out_.stats.max_leaf_size = largest_leaf_.load();
  }

 private:
  range_bounds measure(std::uint32_t begin, std::uint32_t end) const {
    auto body = [&](std::uint32_t b, std::uint32_t e, range_bounds acc) {
      for (std::uint32_t i = b; i < e; ++i) acc.add(refs_[i]);
      return acc;
    };
    if (end - begin < parallel_above) return body(begin, end, {});
    return tbb::parallel_reduce(
        tbb::blocked_range<std::uint32_t>(begin, end, parallel_above / 4), range_bounds{},
        [&](const auto& r, range_bounds acc) { return body(r.begin(), r.end(), acc); },
        [](range_bounds a, const range_bounds& b) {
          a.add(b);
          return a;
        });
  }

  // A node's binning: a centroid's bin on each axis of its centroid bounds (a multiply, not a
  // divide, per primitive and axis: the builder's innermost operation).
  struct binner {
    vec3 lo, scale;
    std::uint32_t last;
    std::uint32_t operator()(vec3 c, int axis) const {
      return std::min(static_cast<std::uint32_t>((c[axis] - lo[axis]) * scale[axis]), last);
    }
  };
  binner binner_of(const aabb& cb) const {
    const float n = static_cast<float>(opt_.bins);
    const vec3 e = cb.extent();
    auto scale = [&](float extent) { return extent > 0 ? n / extent : 0.0f; };
    return {cb.lo, {scale(e.x), scale(e.y), scale(e.z)}, opt_.bins - 1};
  }

  bins bin(std::uint32_t begin, std::uint32_t end, const aabb& cb) const {
    const binner bin_of = binner_of(cb);
    auto fill = [&](std::uint32_t b, std::uint32_t e, bins& acc) {
      for (std::uint32_t i = b; i < e; ++i) {
        const prim_ref& r = refs_[i];
        for (int axis = 0; axis < 3; ++axis)
          if (cb.hi[axis] > cb.lo[axis]) acc.add(axis, bin_of(r.centroid, axis), r.box);
      }
    };
    if (end - begin < parallel_above) {
      bins acc(opt_.bins);
      fill(begin, end, acc);
      return acc;
    }
    return tbb::parallel_reduce(
        tbb::blocked_range<std::uint32_t>(begin, end, parallel_above / 4), bins(opt_.bins),
        [&](const auto& r, bins acc) {
          fill(r.begin(), r.end(), acc);
          return acc;
        },
        [&](bins a, const bins& b) {
          a.add(b, opt_.bins);
          return a;
        });
  }

  // Puts the references of [begin, end) that go left first and returns where the right ones begin;
  // both sides' bounds are measured on the way (the children need them).
  template <class GoesLeft>
  std::uint32_t partition(std::uint32_t begin, std::uint32_t end, GoesLeft goes_left, range_bounds& left, range_bounds& right) {
    std::uint32_t i = begin, j = end;
    while (true) {
      while (i < j && goes_left(refs_[i])) left.add(refs_[i++]);
      while (i < j && !goes_left(refs_[j - 1])) right.add(refs_[--j]);
      if (i == j) return i;
      std::swap(refs_[i], refs_[j - 1]);
      left.add(refs_[i++]);
      right.add(refs_[--j]);
    }
  }

  void make_leaf(std::uint32_t node, std::uint32_t begin, std::uint32_t end) {
    out_.nodes[node].first = begin;
    out_.nodes[node].count = end - begin;
    ++leaves_;
    std::size_t seen = largest_leaf_.load();
    while (end - begin > seen && !largest_leaf_.compare_exchange_weak(seen, end - begin)) {
    }
  }

  // rb: the bounds of the node's primitives and of their centroids (from the parent's bins).
  void build(std::uint32_t node, std::uint32_t begin, std::uint32_t end, int depth, const range_bounds& rb) {
    std::size_t deepest = depth_.load();
    while (static_cast<std::size_t>(depth) > deepest && !depth_.compare_exchange_weak(deepest, depth)) {
    }
    out_.nodes[node].bounds = rb.bounds;
    const std::uint32_t count = end - begin;
    const vec3 ce = rb.centroids.extent();
    // Depth is bounded so the fixed traversal stacks cannot overflow; coincident centroids cannot split.
    if (count <= opt_.max_leaf || depth >= max_depth || (ce.x <= 0 && ce.y <= 0 && ce.z <= 0))
      return make_leaf(node, begin, end);

    // The cheapest binned split over the three axes.
    const bins b = bin(begin, end, rb.centroids);
    float best_cost = 1e30f;
    int best_axis = -1;
    std::uint32_t best_split = 0;
    for (int axis = 0; axis < 3; ++axis) {
      if (rb.centroids.hi[axis] <= rb.centroids.lo[axis]) continue;
      float right_cost[max_bins];
      aabb acc;
      std::uint32_t n = 0;
      for (std::uint32_t k = opt_.bins - 1; k > 0; --k) {
        acc.grow(b.box(axis, k));
        n += b.count(axis, k);
        right_cost[k] = acc.half_area() * static_cast<float>(n);
      }
      acc = aabb{};
      n = 0;
      for (std::uint32_t k = 0; k + 1 < opt_.bins; ++k) {
        acc.grow(b.box(axis, k));
        n += b.count(axis, k);
        const float cost = acc.half_area() * static_cast<float>(n) + right_cost[k + 1];
        if (n > 0 && n < count && cost < best_cost) {
          best_cost = cost;
          best_axis = axis;
          best_split = k + 1;
        }
      }
    }
    const float parent = rb.bounds.half_area();
    const float split_cost = opt_.traversal_cost + (parent > 0 ? best_cost / parent : 0);
    std::uint32_t mid;
    range_bounds left, right;
    if (best_axis >= 0) {
      if (split_cost >= static_cast<float>(count) && count <= 4 * opt_.max_leaf) return make_leaf(node, begin, end);
      const binner bin_of = binner_of(rb.centroids);
      mid = partition(begin, end, [&](const prim_ref& r) { return bin_of(r.centroid, best_axis) < best_split; }, left, right);
    } else {  // every bin split leaves one side empty: median on the widest centroid axis
      const int axis = ce.x >= ce.y && ce.x >= ce.z ? 0 : (ce.y >= ce.z ? 1 : 2);
      mid = begin + count / 2;
      std::nth_element(refs_.begin() + begin, refs_.begin() + mid, refs_.begin() + end,
                       [&](const prim_ref& a, const prim_ref& c) { return a.centroid[axis] < c.centroid[axis]; });
      left = measure(begin, mid);
      right = measure(mid, end);
    }

    const std::uint32_t children = next_.fetch_add(2);
    out_.nodes[node].first = children;
    out_.nodes[node].count = 0;
    if (count >= parallel_above)
      tbb::parallel_invoke([&] { build(children, begin, mid, depth + 1, left); },
                           [&] { build(children + 1, mid, end, depth + 1, right); });
    else {
      build(children, begin, mid, depth + 1, left);
      build(children + 1, mid, end, depth + 1, right);
    }
  }

  const bvh_build_options& opt_;
  bvh& out_;
  std::vector<prim_ref> refs_;
  std::atomic<std::uint32_t> next_{1};
  std::atomic<std::size_t> leaves_{0}, depth_{0}, largest_leaf_{0};
};

// The 64-byte layout: one pair node per inner binary node, numbered in depth-first order.
std::vector<pair_node> pair_layout(const std::vector<bvh_node>& nodes) {
  std::vector<pair_node> pairs;
  if (nodes.empty()) return pairs;
  auto bits = [](std::uint32_t v) {
    float f;
    std::memcpy(&f, &v, sizeof f);
    return f;
  };
  auto set_child = [&](pair_node& p, int c, const aabb& box, std::uint32_t child, std::uint32_t count) {
    quad& xy = p.q[c];
    xy = {box.lo.x, box.hi.x, box.lo.y, box.hi.y};
    (c == 0 ? p.q[2].x : p.q[2].z) = box.lo.z;
    (c == 0 ? p.q[2].y : p.q[2].w) = box.hi.z;
    (c == 0 ? p.q[3].x : p.q[3].z) = bits(child);
    (c == 0 ? p.q[3].y : p.q[3].w) = bits(count);
  };
  if (nodes[0].leaf()) {  // a single leaf: one pair node with one child
    pairs.emplace_back();
    set_child(pairs[0], 0, nodes[0].bounds, nodes[0].first, nodes[0].count);
    set_child(pairs[0], 1, aabb{{0, 0, 0}, {0, 0, 0}}, no_child, 0);
    return pairs;
  }
  pairs.reserve(nodes.size() / 2 + 1);
  // Iterative: (binary node, pair slot) pairs to fill.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> todo{{0, 0}};
  pairs.emplace_back();
  while (!todo.empty()) {
    const auto [n, slot] = todo.back();
    todo.pop_back();
    for (int c = 0; c < 2; ++c) {
      const bvh_node& child = nodes[nodes[n].first + c];
      if (child.leaf()) {
        set_child(pairs[slot], c, child.bounds, child.first, child.count);
      } else {
        const auto next = static_cast<std::uint32_t>(pairs.size());
        pairs.emplace_back();
        set_child(pairs[slot], c, child.bounds, next, 0);
        todo.push_back({nodes[n].first + c, next});
      }
    }
  }
  return pairs;
}

}  // namespace

bvh build_bvh(std::span<const triangle> triangles, const bvh_build_options& options) {
  if (options.bins < 2 || options.bins > max_bins)
    throw error("BVH: bins = " + std::to_string(options.bins) + " is out of range (2 .. " + std::to_string(max_bins) + ")");
  if (options.max_leaf < 1) throw error("BVH: max_leaf must be at least 1");
  if (triangles.size() >= (std::size_t{1} << 31)) throw error("BVH: too many triangles (" + std::to_string(triangles.size()) + ")");
  const auto start = std::chrono::steady_clock::now();
  bvh out;
  builder b(triangles, options, out);
  b.run();
  out.pairs = pair_layout(out.nodes);
  out.leaf_triangles.resize(out.prims.size());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, out.prims.size(), 1 << 14), [&](const auto& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) {
      const triangle& t = triangles[out.prims[i]];
      out.leaf_triangles[i] = {{{t.v0.x, t.v0.y, t.v0.z, 0}, {t.v1.x, t.v1.y, t.v1.z, 0}, {t.v2.x, t.v2.y, t.v2.z, 0}}};
    }
  });
  if (options.wide) {
    out.wide = collapse_wide(out);
    out.cw = encode_cw(out.wide);
  }
  out.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace sieve::render
