// The linear BVH builder's CPU run (lbvh_run on oneTBB) and what both runs share: the checks, the
// trivial trees, the tree's statistics and build.cpp's finish_bvh. See lbvh.hpp.
#include "lbvh.hpp"

#include <sieve/compaction/error.hpp>
#include <sieve/compaction/radix_sort.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <utility>

namespace sieve::render {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

struct cpu_sync {
  std::uint32_t arrive(std::uint32_t* counter) const {
    return std::atomic_ref<std::uint32_t>(*counter).fetch_add(1, std::memory_order_acq_rel);
  }
  aabb load(const aabb& box) const { return box; }
};

struct cpu_backend {
  static void sort(const std::uint32_t* keys, const std::uint32_t* values, std::uint32_t* keys_out,
                   std::uint32_t* values_out, std::uint32_t n, int bits) {
    sort_pairs_cpu(keys, values, keys_out, values_out, n, bits);
  }
  static std::uint32_t read(const std::uint32_t* p) { return *p; }
};

binary_bvh build_cpu(std::span<const triangle> triangles, std::uint32_t max_leaf, lbvh_timing& timing) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto n = static_cast<std::uint32_t>(triangles.size());
  std::vector<aabb> prim_box(n), centroid(lbvh_centroid_slots(n)), inner_box(n - 1);
  std::vector<std::uint32_t> keys(n), ids(n), sorted(n), parent(2 * std::size_t{n} - 1), visits(n - 1), kept(n - 1),
      rank(n - 1), count(1);
  std::vector<lbvh_inner> inner(n - 1);
  binary_bvh out;
  out.nodes.resize(2 * std::size_t{n} - 1);
  out.prims.resize(n);
  const lbvh_buffers b{triangles.data(), prim_box.data(), centroid.data(), keys.data(),   ids.data(),
                       sorted.data(),    out.prims.data(), inner.data(),  inner_box.data(), parent.data(),
                       visits.data(),    kept.data(),     rank.data(),   count.data(), out.nodes.data()};
  cpu_backend backend;
  out.nodes.resize(lbvh_run(exec::cpu{}, backend, b, n, max_leaf, cpu_sync{}));
  timing.device_ms = timing.with_copies_ms = ms_since(t0);
  return out;
}

// Leaves, largest leaf and depth, by a walk from the root; a tree deeper than the traversal stack
// is refused.
void measure(bvh& out) {
  bvh_stats& s = out.stats;
  s.nodes = out.binary.nodes.size();
  std::vector<std::pair<std::uint32_t, std::uint32_t>> todo{{0, 1}};
  while (!todo.empty()) {
    const auto [at, depth] = todo.back();
    todo.pop_back();
    s.max_depth = std::max<std::size_t>(s.max_depth, depth);
    const bvh_node& node = out.binary.nodes[at];
    if (node.leaf()) {
      ++s.leaves, s.max_leaf_size = std::max<std::size_t>(s.max_leaf_size, node.count);
      continue;
    }
    todo.push_back({node.first, depth + 1});
    todo.push_back({node.first + 1, depth + 1});
  }
  if (s.max_depth > static_cast<std::size_t>(dfs_depth_limit()))
    throw error("BVH (lbvh): the tree is " + std::to_string(s.max_depth) + " levels deep, more than the traversal's " +
                std::to_string(dfs_depth_limit()) + "; build this scene with the SAH builder");
}

}  // namespace

void sort_pairs_cpu(const std::uint32_t* keys, const std::uint32_t* values, std::uint32_t* keys_out,
                    std::uint32_t* values_out, std::uint32_t n, int bits) {
  std::copy(keys, keys + n, keys_out);
  std::copy(values, values + n, values_out);
  radix_sort_pairs({keys_out, n}, {values_out, n}, 0, bits);
}

bvh build_lbvh(std::span<const triangle> triangles, const bvh_build_options& options, lbvh_device device,
               lbvh_timing* timing) {
  if (options.max_leaf < 1) throw error("BVH: max_leaf must be at least 1");
  if (triangles.size() >= (std::size_t{1} << 31)) throw error("BVH: too many triangles (" + std::to_string(triangles.size()) + ")");
  const auto t0 = std::chrono::steady_clock::now();
  lbvh_timing t;
  bvh out;
  const auto n = static_cast<std::uint32_t>(triangles.size());
  if (n == 1) {
    out.binary.nodes = {bvh_node{{min(min(triangles[0].v0, triangles[0].v1), triangles[0].v2),
                                  max(max(triangles[0].v0, triangles[0].v1), triangles[0].v2)}, 0, 1}};
    out.binary.prims = {0};
  } else if (n > 1) {
    out.binary = device == lbvh_device::cuda ? lbvh_build_cuda(triangles, options.max_leaf, t)
                                             : build_cpu(triangles, options.max_leaf, t);
  }
  const auto f0 = std::chrono::steady_clock::now();
  if (n) measure(out);
  out.stats.references = out.binary.prims.size();  // one reference a triangle: the linear build never splits
  finish_bvh(out, triangles, options);
  t.finish_ms = ms_since(f0);
  out.stats.seconds = ms_since(t0) * 1e-3;
  if (timing) *timing = t;
  return out;
}

}  // namespace sieve::render
