// Binned SAH BVH build on oneTBB.
//
// Primitive references are 32-byte records (the box with its lower corner negated, so one 8-lane
// max grows both corners of a bin or a bound; the triangle's index in the spare lane), partitioned
// in place. Each node bins its references' centroids into `bins` slots per axis, sweeps the bins
// for the split of least surface-area cost and partitions its range on that split, measuring both
// sides' bounds and centroid bounds on the way (the children's, exact). The binning and the
// partition are the builder's two hot loops: each is one kernel (kernels below), compiled for AVX2
// (chosen at run time when the processor has it) and for any processor (portable); both round alike,
// so both build the same tree.
//
// Nodes of many primitives (the top levels) bin an evenly strided sample of their references, not
// all of them: the split they choose is that of the sample, the bounds still exact (the partition
// measures them), and the top levels cost a partition each instead of a binning and a partition.
// Small nodes bin into fewer slots (no more than they have primitives, at least four), so the sweep
// does not outweigh their binning.
//
// Every core works from the root down: a node of many references is partitioned by all threads
// (parallel_partition: fixed blocks of references each partitioned in place, then the references
// on the wrong side of the split swapped pairwise, in parallel), and the two children of a node of
// many primitives build in parallel (tbb::parallel_invoke). Nothing depends on the thread count or
// on timing: the blocks are fixed, the bounds are maxima, and a node's place is a function of its
// range: the children of the node split at reference m (a split point is never shared) sit at
// 2m - 1 and 2m of a sparse array that the end compacts in split order (an in-order layout). The
// same tree, the same arrays, whatever the threads. No counter is shared by the threads while the
// tree grows: a subtree's leaf counts are returned up the recursion (counters on one cache line,
// taken by every core at each leaf, held the binary tree to 6x on 16 threads).
#include "bvh.hpp"
#include "node_steps.hpp"
#include "sah_kernels.hpp"
#include "split.hpp"

#include "../exec/fresh_memory.hpp"
#include "../exec/stop.hpp"

#include <sieve/compaction/error.hpp>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <memory>
#include <string>
#include <utility>
#include <ctime>

namespace sieve::render {
namespace {

using namespace sah;

class builder {
 public:
  builder(std::span<const triangle> tris, const bvh_build_options& opt, bvh& out)
      : opt_(opt), out_(out), k_(pick_kernels(opt.simd)) {
    // References: one a triangle, or with split_budget, the pieces of the split ones (split.hpp).
    std::vector<std::uint32_t> first;
    if (opt.split_budget > 0) {
      first = split_counts(tris, opt.split_budget);
      std::uint64_t sum = 0;
      for (std::uint32_t& c : first) sum += std::exchange(c, static_cast<std::uint32_t>(sum));
      if (sum >= (std::uint64_t{1} << 31)) throw error("BVH: too many references after splitting (" + std::to_string(sum) + ")");
      count_ = static_cast<std::uint32_t>(sum);
    } else {
      count_ = static_cast<std::uint32_t>(tris.size());
    }
    refs_ = fresh_array<prim_ref>(count_);
    prim_ref* refs = refs_.get();
    auto put = [](prim_ref& p, const aabb& box, std::uint32_t index) {
      p.lane[0] = -box.lo.x, p.lane[1] = -box.lo.y, p.lane[2] = -box.lo.z;
      std::memcpy(&p.lane[3], &index, sizeof index);
      p.lane[4] = box.hi.x, p.lane[5] = box.hi.y, p.lane[6] = box.hi.z, p.lane[7] = empty_lane;
    };
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, tris.size(), 1 << 14), [&](const auto& r) {
      aabb pieces[split_pieces_max];
      for (std::size_t i = r.begin(); i != r.end(); ++i) {
        const triangle& t = tris[i];
        const auto index = static_cast<std::uint32_t>(i);
        if (first.empty()) {
          put(refs[i], {min(min(t.v0, t.v1), t.v2), max(max(t.v0, t.v1), t.v2)}, index);
          continue;
        }
        const std::uint32_t at = first[i], want = (i + 1 < tris.size() ? first[i + 1] : count_) - at;
        const std::uint32_t made = split_triangle(t, want, pieces);
        // A piece rounding could not cut repeats the first: the slot is used, its copy harmless
        // (a leaf keeps one reference of a triangle).
        for (std::uint32_t k = 0; k < want; ++k) put(refs[at + k], pieces[k < made ? k : 0], index);
      }
    });
    // Room for the most nodes a tree can have (2n - 1), uninitialised; the nodes built are copied
    // out at the end.
    nodes_ = fresh_array<bvh_node>(std::max<std::size_t>(2 * std::size_t{count_}, 1));
  }

  void run() {
    fresh_resize(out_.binary.prims, count_);
    if (count_ == 0) {
      out_.binary.nodes.clear();
      return;
    }
    // used_[m - 1]: the node split at reference m has put its children at 2m - 1 and 2m.
    used_.reset(new std::uint8_t[count_]);
    tbb::parallel_for(tbb::blocked_range<std::uint32_t>(0, count_, 1 << 16), [&](const auto& r) {
      std::fill(used_.get() + r.begin(), used_.get() + r.end(), std::uint8_t{0});
    });
    const tree_stats st = build(0, 0, count_, 1, measure(0, count_));
    compact_nodes();
    const prim_ref* refs = refs_.get();
    if (st.dropped == 0) {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, count_, 1 << 14), [&](const auto& r) {
        for (std::size_t i = r.begin(); i != r.end(); ++i) out_.binary.prims[i] = refs[i].index();
      });
    } else {
      compact_leaves();
    }
    out_.stats.nodes = out_.binary.nodes.size();
    out_.stats.leaves = st.leaves;
    out_.stats.max_depth = st.depth;
    out_.stats.max_leaf_size = st.largest_leaf;
    out_.stats.references = out_.binary.prims.size();
    refs_.reset(), nodes_.reset(), used_.reset();  // the scratch freed before the layouts are made
  }

 private:
  // A subtree's counts, summed up the recursion (no counter shared by the threads: a leaf's update
  // of one would move its cache line between the cores on every leaf).
  struct tree_stats {
    std::size_t leaves = 0, depth = 0, largest_leaf = 0, dropped = 0;
    tree_stats& operator+=(const tree_stats& o) {
      leaves += o.leaves, dropped += o.dropped;
      depth = std::max(depth, o.depth), largest_leaf = std::max(largest_leaf, o.largest_leaf);
      return *this;
    }
  };

  tree_stats make_leaf(std::uint32_t node, std::uint32_t begin, std::uint32_t end, int depth) {
    const std::uint32_t kept = opt_.split_budget > 0 ? dedupe(begin, end) : end;
    nodes_[node].first = begin;
    nodes_[node].count = kept - begin;
    return {1, static_cast<std::size_t>(depth), kept - begin, end - kept};
  }

  // A leaf's references in triangle order, each triangle once: the repeats (pieces of one triangle)
  // go to the end of the range and are dropped (marked by an index of ~0). Returns the new end.
  std::uint32_t dedupe(std::uint32_t begin, std::uint32_t end) {
    prim_ref* r = refs_.get();
    std::sort(r + begin, r + end, [](const prim_ref& a, const prim_ref& b) { return a.index() < b.index(); });
    std::uint32_t kept = begin;
    for (std::uint32_t i = begin; i < end; ++i)
      if (i == begin || r[i].index() != r[kept - 1].index()) std::swap(r[kept++], r[i]);
    constexpr std::uint32_t none = ~0U;
    for (std::uint32_t i = kept; i < end; ++i) std::memcpy(&r[i].lane[3], &none, sizeof none);
    return kept;
  }

  // prims[] without the dropped references, the leaves' first moved to match.
  void compact_leaves() {
    const prim_ref* refs = refs_.get();
    std::vector<std::uint32_t> moved(count_);
    std::uint32_t live = 0;
    for (std::uint32_t i = 0; i < count_; ++i) {
      moved[i] = live;
      if (refs[i].index() != ~0U) out_.binary.prims[live++] = refs[i].index();
    }
    out_.binary.prims.resize(live);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, out_.binary.nodes.size(), 1 << 14), [&](const auto& r) {
      for (std::size_t n = r.begin(); n != r.end(); ++n)
        if (out_.binary.nodes[n].leaf()) out_.binary.nodes[n].first = moved[out_.binary.nodes[n].first];
    });
  }

  // The sparse node array made dense (out_.binary.nodes): the root, then the child pairs in the order of
  // their parents' split points; an inner node's `first` renumbered to match.
  void compact_nodes() {
    const std::uint32_t pairs = count_ - 1;  // split points 1 .. count_ - 1
    const std::uint8_t* used = used_.get();
    const fresh_ptr<std::uint32_t> rank = fresh_array<std::uint32_t>(pairs);
    const std::uint32_t inner = parallel_ranks(pairs, rank.get(), [&](std::size_t p) { return used[p] != 0; });
    fresh_resize(out_.binary.nodes, 1 + 2 * std::size_t{inner});
    bvh_node* out = out_.binary.nodes.data();
    auto moved = [&](bvh_node n) {
      if (!n.leaf()) n.first = 1 + 2 * rank[(n.first + 1) / 2 - 1];
      return n;
    };
    out[0] = moved(nodes_[0]);
    tbb::parallel_for(tbb::blocked_range<std::uint32_t>(0, pairs, partition_block), [&](const auto& r) {
      for (std::uint32_t p = r.begin(); p != r.end(); ++p) {
        if (!used[p]) continue;
        const std::size_t slot = 2 * std::size_t{p} + 1;
        out[1 + 2 * std::size_t{rank[p]}] = moved(nodes_[slot]);
        out[2 + 2 * std::size_t{rank[p]}] = moved(nodes_[slot + 1]);
      }
    });
  }

  // The bounds of [begin, end): by blocks in parallel when it is long.
  range_bounds measure(std::uint32_t begin, std::uint32_t end) const {
    range_bounds all;
    if (end - begin < 2 * partition_block) {
      k_.measure(refs_.get(), begin, end, all);
      return all;
    }
    return tbb::parallel_reduce(
        tbb::blocked_range<std::uint32_t>(begin, end, partition_block), all,
        [&](const auto& r, range_bounds acc) {
          k_.measure(refs_.get(), r.begin(), r.end(), acc);
          return acc;
        },
        [](range_bounds a, const range_bounds& b) {
          a.add(b);
          return a;
        });
  }

  // partition_kernel over [begin, end) by every thread: each fixed block partitioned in place, then
  // the references on the wrong side of the split (a block's right part below the split point, its
  // left part above) swapped pairwise; both sides' bounds are the blocks' (maxima, in any order).
  std::uint32_t parallel_partition(std::uint32_t begin, std::uint32_t end, int axis, std::int32_t split, const binner& bn,
                                   range_bounds& left, range_bounds& right) {
    const std::uint32_t blocks = (end - begin + partition_block - 1) / partition_block;
    std::vector<std::uint32_t> cut(blocks);
    std::vector<range_bounds> lb(blocks), rb(blocks);
    prim_ref* refs = refs_.get();
    tbb::parallel_for(std::uint32_t{0}, blocks, [&](std::uint32_t b) {
      const std::uint32_t lo = begin + b * partition_block, hi = std::min(end, lo + partition_block);
      cut[b] = k_.partition(refs, lo, hi, axis, split, bn, lb[b], rb[b]);
    });
    std::uint64_t lefts = 0;
    for (std::uint32_t b = 0; b < blocks; ++b) {
      left.add(lb[b]), right.add(rb[b]);
      lefts += cut[b] - (begin + b * partition_block);
    }
    const auto mid = static_cast<std::uint32_t>(begin + lefts);
    // Runs of misplaced references, in order: right ones below mid, left ones at or above it.
    struct run {
      std::uint32_t first, count;
    };
    std::vector<run> high, low;  // belong right (sit below mid), belong left (sit above)
    for (std::uint32_t b = 0; b < blocks; ++b) {
      const std::uint32_t lo = begin + b * partition_block, hi = std::min(end, lo + partition_block);
      if (cut[b] < mid && cut[b] < hi) high.push_back({cut[b], std::min(hi, mid) - cut[b]});
      if (cut[b] > mid && lo < cut[b]) low.push_back({std::max(lo, mid), cut[b] - std::max(lo, mid)});
    }
    swap_runs(high, low);
    return mid;
  }

  // Swaps the k-th reference of the runs `a` with the k-th of `b` (as many in both), in parallel.
  template <class Run>
  void swap_runs(const std::vector<Run>& a, const std::vector<Run>& b) {
    auto starts = [](const std::vector<Run>& runs) {
      std::vector<std::uint64_t> s(runs.size() + 1, 0);
      for (std::size_t i = 0; i < runs.size(); ++i) s[i + 1] = s[i] + runs[i].count;
      return s;
    };
    const std::vector<std::uint64_t> sa = starts(a), sb = starts(b);
    prim_ref* refs = refs_.get();
    // Position of the k-th reference of `runs` (its run found by bisection), then steps on.
    struct cursor {
      const std::vector<Run>* runs;
      std::size_t run;
      std::uint32_t at;
      void step() {
        if (++at == (*runs)[run].first + (*runs)[run].count && run + 1 < runs->size()) at = (*runs)[++run].first;
      }
    };
    auto find = [](const std::vector<Run>& runs, const std::vector<std::uint64_t>& s, std::uint64_t k) {
      const std::size_t r = static_cast<std::size_t>(std::upper_bound(s.begin(), s.end(), k) - s.begin()) - 1;
      return cursor{&runs, r, static_cast<std::uint32_t>(runs[r].first + (k - s[r]))};
    };
    tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, sa.back(), partition_block), [&](const auto& r) {
      cursor x = find(a, sa, r.begin()), y = find(b, sb, r.begin());
      for (std::uint64_t k = r.begin(); k != r.end(); ++k, x.step(), y.step()) std::swap(refs[x.at], refs[y.at]);
    });
  }

  // SIEVE_SAH_PARTITION=serial: every node's partition on one thread (the children still build in
  // parallel), for measuring what the parallel partition of the top levels gives (another tree:
  // the references end in another order).
  static bool serial_partition() {
    static const bool serial = [] {
      const char* v = std::getenv("SIEVE_SAH_PARTITION");
      return v != nullptr && std::string(v) == "serial";
    }();
    return serial;
  }

  std::uint32_t partition(std::uint32_t begin, std::uint32_t end, int axis, std::int32_t split, const binner& bn,
                          range_bounds& left, range_bounds& right) {
    if (end - begin >= parallel_partition_above && !serial_partition())
      return parallel_partition(begin, end, axis, split, bn, left, right);
    return k_.partition(refs_.get(), begin, end, axis, split, bn, left, right);
  }

  // rb: the bounds of the node's references and of their centroids.
  tree_stats build(std::uint32_t node, std::uint32_t begin, std::uint32_t end, int depth, const range_bounds& rb) {
    nodes_[node].bounds = rb.bounds.box();
    const std::uint32_t count = end - begin;
    const box8& c2 = rb.centroids;
    // Depth is bounded so the fixed traversal stacks cannot overflow; coincident centroids cannot split.
    if (count <= opt_.max_leaf || depth >= max_depth || (c2.extent(0) <= 0 && c2.extent(1) <= 0 && c2.extent(2) <= 0))
      return make_leaf(node, begin, end, depth);

    if (count >= parallel_above) stop_point();  // a large node: a stop asked for ends the build here
    const std::uint32_t n = std::clamp(count, 4U, opt_.bins);
    const binner bn = binner_of(c2, n);
    const std::uint32_t stride = count > sample_above ? count / sample_size : 1;
    const split s = k_.bin(refs_.get(), begin, end, stride, bn, n);
    std::uint32_t mid;
    range_bounds left, right;
    if (s.axis >= 0) {
      const float parent = rb.bounds.half_area();
      const float cost = opt_.traversal_cost + (parent > 0 ? s.cost / parent : 0);  // in triangle tests
      if (cost >= static_cast<float>(count) && count <= 4 * opt_.max_leaf) return make_leaf(node, begin, end, depth);
      mid = partition(begin, end, s.axis, s.bin, bn, left, right);
    } else {  // every bin split leaves one side empty: median on the widest centroid axis
      const int axis = c2.extent(0) >= c2.extent(1) && c2.extent(0) >= c2.extent(2) ? 0 : (c2.extent(1) >= c2.extent(2) ? 1 : 2);
      mid = begin + count / 2;
      std::nth_element(refs_.get() + begin, refs_.get() + mid, refs_.get() + end,
                       [&](const prim_ref& a, const prim_ref& c) { return a.centroid2(axis) < c.centroid2(axis); });
      left = measure(begin, mid);
      right = measure(mid, end);
    }

    const std::uint32_t children = 2 * mid - 1;  // mid is this node's alone (the header)
    used_[mid - 1] = 1;
    nodes_[node].first = children;
    nodes_[node].count = 0;
    tree_stats a, b;
    if (count >= parallel_above)
      tbb::parallel_invoke([&] { a = build(children, begin, mid, depth + 1, left); },
                           [&] { b = build(children + 1, mid, end, depth + 1, right); });
    else {
      a = build(children, begin, mid, depth + 1, left);
      b = build(children + 1, mid, end, depth + 1, right);
    }
    return a += b;
  }

  const bvh_build_options& opt_;
  bvh& out_;
  const kernels k_;
  fresh_ptr<prim_ref> refs_;
  fresh_ptr<bvh_node> nodes_;             // sparse: the children of the node split at m at 2m - 1, 2m
  std::unique_ptr<std::uint8_t[]> used_;  // per split point (compact_nodes)
  std::uint32_t count_ = 0;
};

// Every node's box one float step wider on each side. A ray lying in the plane of a box's face (a
// direction component 0 and the origin on that plane: a camera's central column along a mesh's grid
// line) then still enters the box, where the slab test would give it no length and skip it: a
// triangle whose edge lies in that plane would be found by one traversal and missed by another (the
// compressed tree's quantised boxes are wider anyway), and hits tied on the edge chosen apart.
void widen_boxes(fresh_vector<bvh_node>& nodes) {
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nodes.size(), 1 << 14), [&](const auto& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) nodes[i].bounds = widened(nodes[i].bounds);
  });
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Adds the CPU and wall-clock time since the last lap to a phase of stats.cpu and stats.wall.
class phase_clock {
 public:
  explicit phase_clock(bvh_stats& s) : s_(s) {}
  void lap(double bvh_phases::*phase) {
    const double cpu = process_cpu_seconds();
    const auto wall = std::chrono::steady_clock::now();
    s_.cpu.*phase += cpu - cpu_;
    s_.wall.*phase += std::chrono::duration<double>(wall - wall_).count();
    cpu_ = cpu, wall_ = wall;
  }

 private:
  bvh_stats& s_;
  double cpu_ = process_cpu_seconds();
  std::chrono::steady_clock::time_point wall_ = std::chrono::steady_clock::now();
};

}  // namespace

// One pair node per inner binary node, in the binary nodes' order (the root's first), written in
// parallel; the leaf triangles likewise.
pair_bvh make_pairs(const binary_bvh& b, std::span<const triangle> triangles) {
  pair_bvh out;
  fresh_resize(out.triangles, b.prims.size());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, b.prims.size(), 1 << 14), [&](const auto& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) out.triangles[i] = leaf_triangle::of(triangles[b.prims[i]]);
  });
  const fresh_vector<bvh_node>& nodes = b.nodes;
  fresh_vector<pair_node>& pairs = out.nodes;
  if (nodes.empty()) return out;
  if (nodes[0].leaf()) {  // a single leaf: one pair node with one child
    pairs.emplace_back();
    set_pair_child(pairs[0], 0, nodes[0].bounds, nodes[0].first, nodes[0].count);
    set_pair_child(pairs[0], 1, aabb{{0, 0, 0}, {0, 0, 0}}, no_child, 0);
    return out;
  }
  const fresh_ptr<std::uint32_t> rank = fresh_array<std::uint32_t>(nodes.size());  // inner node -> its pair node
  const std::uint32_t inner = parallel_ranks(nodes.size(), rank.get(), [&](std::size_t i) { return !nodes[i].leaf(); });
  fresh_resize(pairs, inner);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nodes.size(), 1 << 14), [&](const auto& r) {
    for (std::size_t n = r.begin(); n != r.end(); ++n) {
      if (nodes[n].leaf()) continue;
      pair_node& p = pairs[rank[n]];
      for (int c = 0; c < 2; ++c) {
        const std::uint32_t at = nodes[n].first + static_cast<std::uint32_t>(c);
        const bvh_node& child = nodes[at];
        if (child.leaf()) set_pair_child(p, c, child.bounds, child.first, child.count);
        else set_pair_child(p, c, child.bounds, rank[at], 0);
      }
    }
  });
  return out;
}

double sah_cost(const binary_bvh& b, float traversal_cost) {
  if (b.nodes.empty()) return 0;
  const double root = b.nodes[0].bounds.half_area();
  if (root <= 0) return 0;
  double sum = 0;
  for (const bvh_node& n : b.nodes) sum += n.bounds.half_area() * (n.leaf() ? static_cast<double>(n.count) : traversal_cost);
  return sum / root;
}

bvh build_bvh(std::span<const triangle> triangles, const bvh_build_options& options) {
  if (options.bins < 2 || options.bins > max_bins)
    throw error("BVH: bins = " + std::to_string(options.bins) + " is out of range (2 .. " + std::to_string(max_bins) + ")");
  if (options.max_leaf < 1) throw error("BVH: max_leaf must be at least 1");
  if (!(options.split_budget >= 0 && options.split_budget <= 4))
    throw error("BVH: split_budget = " + std::to_string(options.split_budget) + " is out of range (0 .. 4)");
  if (triangles.size() >= (std::size_t{1} << 31)) throw error("BVH: too many triangles (" + std::to_string(triangles.size()) + ")");
  const auto start = std::chrono::steady_clock::now();
  const fresh_scope scratch;  // the build's freed scratch recycled into its later layouts (fresh_pool)
  bvh out;
  phase_clock clock(out.stats);
  builder b(triangles, options, out);
  clock.lap(&bvh_phases::refs);
  b.run();
  stop_point();
  clock.lap(&bvh_phases::binary);
  finish_bvh(out, triangles, options);
  out.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

void finish_bvh(bvh& out, std::span<const triangle> triangles, const bvh_build_options& options) {
  phase_clock clock(out.stats);
  widen_boxes(out.binary.nodes);
  clock.lap(&bvh_phases::binary);
  if (options.pairs) {
    out.pairs = make_pairs(out.binary, triangles);
    clock.lap(&bvh_phases::pairs);
  }
  if (options.wide) {
    stop_point();
    out.wide = collapse_wide(out.binary, triangles, options.traversal_cost);
    clock.lap(&bvh_phases::collapse);
    if (options.cw) {
      stop_point();
      out.cw = encode_cw(out.wide);
      clock.lap(&bvh_phases::cw);
    }
  }
}

}  // namespace sieve::render
