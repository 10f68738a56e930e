// The BFS traversal's CPU driver: levels of expand_pair through exec::parallel_for, and the
// frontier compacted through sieve::compact / sieve::compact_copy.
#include "bfs.hpp"

#include <chrono>
#include <cstring>

namespace sieve::render {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

bfs_tracer::bfs_tracer(std::string strategy) : strategy_(std::move(strategy)), form_(marks_form_for(strategy_, sieve::backend::cpu, "BFS traversal")) {
  const auto& info = sieve::compaction_strategy(strategy_);
  in_place_ = !info.out_of_place;
}

void bfs_tracer::closest(const bvh_view& b, std::span<const ray> rays, std::span<hit> hits, bfs_stats* stats) {
  if (hits.size() != rays.size())
    throw sieve::error("BFS traversal: " + std::to_string(rays.size()) + " rays but room for " +
                       std::to_string(hits.size()) + " hits");
  const auto start = std::chrono::steady_clock::now();
  if (stats) *stats = {{}, 0, 0, strategy_, form_};
  const std::size_t n = rays.size();
  best_.resize(n);
  const ray* ry = rays.data();
  std::uint64_t* best = best_.data();
  for (auto& v : ray_) v.resize(std::max(ray_[0].size(), 2 * n));
  for (auto& v : node_) v.resize(std::max(node_[0].size(), 2 * n));
  bfs_begin(exec::cpu{}, n, ry, best, ray_[0].data(), node_[0].data());
  std::size_t m = b.node_count > 0 ? n : 0;

  while (m > 0) {
    const std::size_t slots = 2 * m;
    for (int s = 0; s < 2; ++s) {
      if (ray_[s].size() < slots) ray_[s].resize(slots);
      if (node_[s].size() < slots) node_[s].resize(slots);
    }
    keep_marks marks;
    std::uint32_t removal_count = 0;
    switch (form_) {
      case sieve::form::byte_flags:
        flags_.resize(slots);
        marks.flags = flags_.data();
        break;
      case sieve::form::bit_mask:
        mask_.assign((slots + 31) / 32, 0);
        marks.mask = mask_.data();
        break;
      default:
        removals_.resize(slots);
        marks.removals = removals_.data();
        marks.removal_count = &removal_count;
    }
    const std::uint32_t *fr = ray_[0].data(), *fn = node_[0].data();
    std::uint32_t *cr = ray_[1].data(), *cn = node_[1].data();
    bfs_expand(exec::cpu{}, m, b, ry, best, fr, fn, cr, cn, marks);

    // Compact the children into the next frontier.
    const auto t0 = std::chrono::steady_clock::now();
    const sieve::record children(std::span(ray_[1].data(), slots), std::span(node_[1].data(), slots));
    sieve::selection keep = sieve::byte_flags{std::span(flags_.data(), slots)};
    if (form_ == sieve::form::bit_mask) keep = sieve::bit_mask{mask_};
    if (form_ == sieve::form::removal_list) keep = sieve::removal_list{std::span(removals_.data(), removal_count)};
    const sieve::options unchecked{.checked = false};
    if (in_place_) {
      m = sieve::compact(strategy_, children, keep, unchecked);
      std::swap(ray_[0], ray_[1]);
      std::swap(node_[0], node_[1]);
    } else {
      const sieve::record frontier(std::span(ray_[0].data(), slots), std::span(node_[0].data(), slots));
      m = sieve::compact_copy(strategy_, children, frontier, keep, unchecked);
    }
    const double ms = ms_since(t0);
    if (stats) {
      stats->levels.push_back({slots / 2, ms});
      stats->compact_ms += ms;
    }
  }

  bfs_finish(exec::cpu{}, n, b, ry, best, hits.data());
  if (stats) stats->total_ms = ms_since(start);
}

}  // namespace sieve::render
