// The BFS traversal on the CPU: bfs_run (bfs_driver.hpp) over host memory, stages on oneTBB, the
// frontier compacted through sieve::compact / sieve::compact_copy.
#include "bfs_driver.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>

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

// The CPU backend of bfs_run: counts in host memory, so stages run over their live counts, read
// when they are launched (the stage before has finished), and the host drives the loop.
struct bfs_cpu_backend {
  bfs_stats* stats = nullptr;
  exec::loop_clock* clock = nullptr;
  double compact_ms = 0;  // of the step under way
  bool compacted = false;
  std::chrono::steady_clock::time_point step_start, compact_start;

  exec::cpu exec() const { return {clock}; }
  template <class Live>
  std::size_t extent(std::size_t, Live live) const {
    return static_cast<std::size_t>(live());
  }
  void zero(void* p, std::size_t bytes) const { std::memset(p, 0, bytes); }

  // bfs.expand for `append`: one atomic per pair with survivors.
  template <class Tree>
  void expand_appended(std::size_t bound, bfs_state* st, const bvh_view& b, const ray* rays, std::uint64_t* best,
                       const bfs_pair* in, bfs_pair* stack, bfs_pair* out) const {
    exec::parallel_for(exec(), "bfs.expand", bound, [=](std::uint32_t i) {
      if (i >= st->work) return;
      const bfs_pair p = bfs_take(*st, i, in, stack);
      if (i >= st->m) return;
      const auto c = Tree::visit(b, rays, best, p);
      if (c.keep == 0) return;
      bfs_put_children(out, std::atomic_ref<std::uint64_t>(st->kept).fetch_add(c.count(), std::memory_order_relaxed), c,
                       bfs_ray_of(p));
    });
  }

  void compact(const sieve::strategy& strategy, const sieve::record& children, const sieve::record* frontier,
               sieve::selection keep, const sieve::cuda::device_counts& live, std::uint64_t* kept) {
    const auto t0 = compact_start = std::chrono::steady_clock::now();
    const std::size_t n = *live.items;
    if (auto* r = std::get_if<sieve::removal_list>(&keep)) r->indices = r->indices.first(*live.removals);
    const sieve::options unchecked{.checked = false};  // the frontier's own marks
    *kept = frontier ? sieve::compact_copy(strategy, children.first(n), frontier->first(n), keep, unchecked)
                     : sieve::compact(strategy, children.first(n), keep, unchecked);
    compact_ms = ms_since(t0);
    compacted = true;
  }

  template <class Round>
  void loop(const bfs_state* st, Round round) {
    while (st->stack + st->kept > 0) round();
  }

  void step_begins() { step_start = compact_start = std::chrono::steady_clock::now(); }
  void stepped(const bfs_state* st) {
    if (!compacted) compact_start = std::chrono::steady_clock::now();  // `append`: no compaction
    const double expand_ms = std::chrono::duration<double, std::milli>(compact_start - step_start).count();
    if (stats && st->m > 0) {
      stats->levels.push_back({st->m, compact_ms, expand_ms});
      stats->pairs += st->m;
      stats->compact_ms += compact_ms;
      stats->expand_ms += expand_ms;
    }
    compact_ms = 0;
    compacted = false;
  }
};

struct bfs_tracer::buffers {
  bfs_sizes sizes;
  std::vector<bfs_pair> frontier[2], stack;
  std::vector<std::uint8_t> flags;
  std::vector<std::uint32_t> mask, removals;
  std::vector<std::uint64_t> best;
  bfs_state state;
};

bfs_tracer::bfs_tracer(std::string strategy, trace_tree tree)
    : c_(std::move(strategy), sieve::backend::cpu), tree_(tree), buf_(std::make_unique<buffers>()) {}

bfs_tracer::~bfs_tracer() = default;

void bfs_tracer::closest(const bvh_view& b, std::span<const ray> rays, std::span<hit> hits, bfs_stats* stats) {
  if (hits.size() != rays.size())
    throw sieve::error("BFS traversal: " + std::to_string(rays.size()) + " rays but room for " +
                       std::to_string(hits.size()) + " hits");
  const auto start = std::chrono::steady_clock::now();
  if (stats) {
    *stats = bfs_stats{};
    stats->strategy = c_.name;
    stats->form = c_.form;
    stats->timed = true;
  }
  const std::size_t n = rays.size();
  const bfs_queue q(c_);
  buffers& B = *buf_;
  B.sizes = bfs_sizes::for_rays(n, bfs_arity(tree_));
  const bfs_sizes& z = B.sizes;
  for (auto* v : {&B.frontier[0], &B.frontier[1]}) grow(*v, z.frontier);
  grow(B.stack, z.stack);
  grow(B.best, n);
  if (q.form() == sieve::form::byte_flags) grow(B.flags, z.frontier);
  if (q.form() == sieve::form::bit_mask) grow(B.mask, z.mask_words());
  if (q.form() == sieve::form::removal_list) grow(B.removals, z.frontier);
  const bfs_memory m{{B.frontier[0].data(), B.frontier[1].data()}, B.stack.data(), B.flags.data(), B.mask.data(),
                     B.removals.data(), B.best.data(), &B.state};
  const std::uint32_t count = static_cast<std::uint32_t>(n);
  bfs_cpu_backend be;
  be.stats = stats;
  be.clock = clock_;
  bfs_run(tree_, be, q, m, z, b, rays.data(), hits.data(), &count);
  if (stats) {
    stats->peak_pairs = B.state.peak;
    stats->total_ms = ms_since(start);
  }
}

}  // namespace sieve::render
