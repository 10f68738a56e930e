// The BFS traversal's CPU driver: levels of expand_pair through exec::parallel_for, and the
// frontier compacted through sieve::compact / sieve::compact_copy.
#include "bfs.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace sieve::render {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Grows `v` to at least n items, allocating exactly n (resize alone may double the capacity).
template <class T>
void grow(std::vector<T>& v, std::size_t n) {
  if (n <= v.size()) return;
  v.reserve(n);
  v.resize(n);
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
  if (stats) *stats = {{}, 0, 0, 0, strategy_, form_};
  const std::size_t n = rays.size();
  best_.resize(n);
  const ray* ry = rays.data();
  std::uint64_t* best = best_.data();
  // ray_[0]/node_[0]: the stack of pairs; ray_[1]/node_[1]: the children of a step.
  for (auto* v : {&ray_[0], &node_[0]}) grow(*v, n);
  bfs_begin(exec::cpu{}, n, ry, best, ray_[0].data(), node_[0].data());
  std::size_t stack = b.node_count > 0 ? n : 0;

  while (stack > 0) {
    const std::size_t m = bfs_chunk(stack, n), base = stack - m, slots = 2 * m;
    if (stats) stats->peak_pairs = std::max(stats->peak_pairs, stack);
    for (auto* v : {&ray_[1], &node_[1]}) grow(*v, slots);
    for (auto* v : {&ray_[0], &node_[0]}) grow(*v, base + slots);  // room for the survivors
    keep_marks marks;
    std::uint32_t removal_count = 0;
    switch (form_) {
      case sieve::form::byte_flags:
        grow(flags_, slots);
        marks.flags = flags_.data();
        break;
      case sieve::form::bit_mask:
        mask_.assign((slots + 31) / 32, 0);
        marks.mask = mask_.data();
        break;
      default:
        grow(removals_, slots);
        marks.removals = removals_.data();
        marks.removal_count = &removal_count;
    }
    const std::uint32_t *fr = ray_[0].data() + base, *fn = node_[0].data() + base;
    std::uint32_t *cr = ray_[1].data(), *cn = node_[1].data();
    bfs_expand(exec::cpu{}, m, b, ry, best, fr, fn, cr, cn, marks);

    // Compact the children into the place of the pairs they came from.
    const auto t0 = std::chrono::steady_clock::now();
    const sieve::record children(std::span(cr, slots), std::span(cn, slots));
    sieve::selection keep = sieve::byte_flags{std::span(flags_.data(), slots)};
    if (form_ == sieve::form::bit_mask) keep = sieve::bit_mask{mask_};
    if (form_ == sieve::form::removal_list) keep = sieve::removal_list{std::span(removals_.data(), removal_count)};
    const sieve::options unchecked{.checked = false};
    std::size_t kept = 0;
    if (in_place_) {
      kept = sieve::compact(strategy_, children, keep, unchecked);
    } else {
      const sieve::record frontier(std::span(ray_[0].data() + base, slots), std::span(node_[0].data() + base, slots));
      kept = sieve::compact_copy(strategy_, children, frontier, keep, unchecked);
    }
    const double ms = ms_since(t0);
    if (in_place_ && base == 0) {  // the whole stack was expanded: the children are the stack
      std::swap(ray_[0], ray_[1]);
      std::swap(node_[0], node_[1]);
    } else if (in_place_) {
      std::copy_n(cr, kept, ray_[0].data() + base);
      std::copy_n(cn, kept, node_[0].data() + base);
    }
    stack = base + kept;
    if (stats) {
      stats->levels.push_back({m, ms});
      stats->compact_ms += ms;
    }
  }

  bfs_finish(exec::cpu{}, n, b, ry, best, hits.data());
  if (stats) stats->total_ms = ms_since(start);
}

}  // namespace sieve::render
