// Binned SAH BVH build on oneTBB. Each node bins its primitives' centroids into `bins` slots per
// axis, sweeps the bins for the split of least surface-area cost, and partitions; nodes with many
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

struct bins {
  aabb bounds[3][max_bins];
  std::uint32_t count[3][max_bins] = {};
};

struct range_bounds {
  aabb bounds, centroids;
  void add(const range_bounds& o) {
    bounds.grow(o.bounds);
    centroids.grow(o.centroids);
  }
};

class builder {
 public:
  builder(std::span<const triangle> tris, const bvh_build_options& opt, bvh& out)
      : opt_(opt), out_(out), box_(tris.size()), centroid_(tris.size()) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, tris.size(), 1 << 14), [&](const auto& r) {
      for (std::size_t i = r.begin(); i != r.end(); ++i) {
        aabb b;
        b.grow(tris[i].v0);
        b.grow(tris[i].v1);
        b.grow(tris[i].v2);
        box_[i] = b;
        centroid_[i] = b.center();
      }
    });
    out_.prims.resize(tris.size());
    std::iota(out_.prims.begin(), out_.prims.end(), 0U);
    out_.nodes.resize(std::max<std::size_t>(2 * tris.size(), 1));
  }

  void run() {
    if (box_.empty()) {
      out_.nodes.clear();
      return;
    }
    build(0, 0, static_cast<std::uint32_t>(box_.size()), 1);
    out_.nodes.resize(next_.load());
    out_.stats.nodes = out_.nodes.size();
    out_.stats.leaves = leaves_.load();
    out_.stats.max_depth = depth_.load();
    out_.stats.max_leaf_size = largest_leaf_.load();
  }

 private:
  range_bounds measure(std::uint32_t begin, std::uint32_t end) const {
    auto body = [&](std::uint32_t b, std::uint32_t e, range_bounds acc) {
      for (std::uint32_t i = b; i < e; ++i) {
        const std::uint32_t p = out_.prims[i];
        acc.bounds.grow(box_[p]);
        acc.centroids.grow(centroid_[p]);
      }
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

  std::uint32_t bin_of(vec3 c, const aabb& cb, int axis) const {
    const float lo = cb.lo[axis], extent = cb.hi[axis] - lo;
    const auto b = static_cast<std::uint32_t>((c[axis] - lo) / extent * static_cast<float>(opt_.bins));
    return std::min(b, opt_.bins - 1);
  }

  bins bin(std::uint32_t begin, std::uint32_t end, const aabb& cb) const {
    auto body = [&](std::uint32_t b, std::uint32_t e, bins acc) {
      for (std::uint32_t i = b; i < e; ++i) {
        const std::uint32_t p = out_.prims[i];
        for (int axis = 0; axis < 3; ++axis) {
          if (cb.hi[axis] <= cb.lo[axis]) continue;
          const std::uint32_t k = bin_of(centroid_[p], cb, axis);
          acc.bounds[axis][k].grow(box_[p]);
          ++acc.count[axis][k];
        }
      }
      return acc;
    };
    if (end - begin < parallel_above) return body(begin, end, {});
    return tbb::parallel_reduce(
        tbb::blocked_range<std::uint32_t>(begin, end, parallel_above / 4), bins{},
        [&](const auto& r, bins acc) { return body(r.begin(), r.end(), acc); },
        [&](bins a, const bins& b) {
          for (int axis = 0; axis < 3; ++axis)
            for (std::uint32_t k = 0; k < opt_.bins; ++k) {
              a.bounds[axis][k].grow(b.bounds[axis][k]);
              a.count[axis][k] += b.count[axis][k];
            }
          return a;
        });
  }

  void make_leaf(std::uint32_t node, std::uint32_t begin, std::uint32_t end) {
    out_.nodes[node].first = begin;
    out_.nodes[node].count = end - begin;
    ++leaves_;
    std::size_t seen = largest_leaf_.load();
    while (end - begin > seen && !largest_leaf_.compare_exchange_weak(seen, end - begin)) {
    }
  }

  void build(std::uint32_t node, std::uint32_t begin, std::uint32_t end, int depth) {
    std::size_t deepest = depth_.load();
    while (static_cast<std::size_t>(depth) > deepest && !depth_.compare_exchange_weak(deepest, depth)) {
    }
    const range_bounds rb = measure(begin, end);
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
        acc.grow(b.bounds[axis][k]);
        n += b.count[axis][k];
        right_cost[k] = acc.half_area() * static_cast<float>(n);
      }
      acc = aabb{};
      n = 0;
      for (std::uint32_t k = 0; k + 1 < opt_.bins; ++k) {
        acc.grow(b.bounds[axis][k]);
        n += b.count[axis][k];
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
    if (best_axis >= 0) {
      if (split_cost >= static_cast<float>(count) && count <= 4 * opt_.max_leaf) return make_leaf(node, begin, end);
      const aabb& cb = rb.centroids;
      mid = static_cast<std::uint32_t>(
          std::partition(out_.prims.begin() + begin, out_.prims.begin() + end,
                         [&](std::uint32_t p) { return bin_of(centroid_[p], cb, best_axis) < best_split; }) -
          out_.prims.begin());
    } else {  // every bin split leaves one side empty: median on the widest centroid axis
      const int axis = ce.x >= ce.y && ce.x >= ce.z ? 0 : (ce.y >= ce.z ? 1 : 2);
      mid = begin + count / 2;
      std::nth_element(out_.prims.begin() + begin, out_.prims.begin() + mid, out_.prims.begin() + end,
                       [&](std::uint32_t a, std::uint32_t c) { return centroid_[a][axis] < centroid_[c][axis]; });
    }

    const std::uint32_t children = next_.fetch_add(2);
    out_.nodes[node].first = children;
    out_.nodes[node].count = 0;
    if (count >= parallel_above)
      tbb::parallel_invoke([&] { build(children, begin, mid, depth + 1); },
                           [&] { build(children + 1, mid, end, depth + 1); });
    else {
      build(children, begin, mid, depth + 1);
      build(children + 1, mid, end, depth + 1);
    }
  }

  const bvh_build_options& opt_;
  bvh& out_;
  std::vector<aabb> box_;
  std::vector<vec3> centroid_;
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
  if (options.wide) out.wide = collapse_wide(out);
  out.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace sieve::render
