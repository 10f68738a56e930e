// redzone (CPU): Bontes & Gain, "Redzone stream compaction: removing k items from a list in
// parallel O(k) time" (2024), Algorithm 2 on oneTBB, with Algorithm 1 run sequentially for small k
// and as the reference (strategy `redzone-serial`).
//
// The k items to remove are given as a list R of distinct indices. The last k slots of A, the red
// zone Z = A[z, n) with z = n - k, hold the items that fill the holes left in A[0, z):
//   phase 1  mark which red-zone items are themselves removed (a byte per red-zone slot: the paper
//            marks A in place with a spare value, which a generic T does not have);
//   phase 2  pair Z[i] with R[i]; the four cases of the paper's Table 1: move Z[i] to A[R[i]] (A),
//            drop both (B), keep R[i] as a destination orphan (C) or Z[i] as a source orphan (D).
//            Orphans are kept in place, in the slice of R and Z their thread owns;
//   phase 3  per-slice orphan counts -> two prefix sums -> pair the t-th source orphan with the
//            t-th destination orphan (Algorithm 3's load balancing, done once per TBB range).
// Section 6's early pairing is applied: each slice pairs min(#sources, #destinations) of its own
// orphans before phase 3, so only the imbalance crosses slices. |Z'| = |R'| (Lemma 4.2).
#include "internal/cpu_call.hpp"

#include "internal/redzone_cases.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>

namespace sieve::detail {
namespace {

// Orphans a slice leaves for phase 3: sources at Z[src, src + count), destinations at
// R[dst, dst + count) (in-place lists; slice-local counts differ, their totals agree).
struct orphans {
  std::size_t src = 0, src_count = 0;
  std::size_t dst = 0, dst_count = 0;
};

// Phase 2 over R[begin, end) and Z[begin, end), then early pairing of the slice's orphans.
template <class Move>
orphans fill_holes(const Move& move, std::uint32_t* R, const std::uint8_t* dead, std::size_t z, std::size_t begin,
                   std::size_t end) {
  std::size_t sources = begin, destinations = begin;  // next free slot of Z' and R'
  for (std::size_t i = begin; i < end; ++i) {
    const std::size_t r = R[i];
    switch (redzone_pair(r, z, dead[i] != 0)) {
      case redzone_case::fill: move(r, z + i); break;
      case redzone_case::drop: break;
      case redzone_case::destination_orphan: R[destinations++] = static_cast<std::uint32_t>(r); break;
      case redzone_case::source_orphan:  // kept in place, at the slice's next free slot of Z'
        if (sources != i) move(z + sources, z + i);
        ++sources;
        break;
    }
  }
  const std::size_t s = sources - begin, d = destinations - begin, m = std::min(s, d);
  for (std::size_t q = 0; q < m; ++q) move(R[begin + q], z + begin + q);
  return {begin + m, s - m, begin + m, d - m};
}

std::vector<std::uint8_t> mark_red_zone(std::span<const std::uint32_t> R, std::size_t z, bool parallel) {
  std::vector<std::uint8_t> dead(R.size(), 0);
  auto mark = [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i)
      if (R[i] >= z) dead[R[i] - z] = 1;
  };
  if (parallel)
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, R.size(), 1 << 14),
                      [&](const auto& r) { mark(r.begin(), r.end()); });
  else
    mark(0, R.size());
  return dead;
}

// Below this many removals one thread is faster than waking the pool (Algorithm 1's regime).
constexpr std::size_t serial_below = 1 << 15;
constexpr std::size_t slice_items = 1 << 14;

std::size_t redzone(const cpu_call& call, bool force_serial) {
  const std::span<std::uint32_t> R = std::get<removal_list>(call.keep).indices;
  const std::size_t n = call.in.size(), k = R.size();
  if (k == 0 || k == n) return n - k;
  const std::size_t z = n - k;
  const bool serial = force_serial || k < serial_below;

  stopwatch clock;
  const std::vector<std::uint8_t> dead = mark_red_zone(R, z, !serial);
  if (call.times) call.times->phase1_ms = clock.lap();

  with_mover(call.in, call.out, [&](const auto& move) {
    if (serial) {  // Algorithm 1: one slice; early pairing then pairs every orphan (Lemma 4.2)
      fill_holes(move, R.data(), dead.data(), z, 0, k);
      if (call.times) call.times->phase2_ms = clock.lap();
      return;
    }
    const std::size_t slices =
        std::min<std::size_t>((k + slice_items - 1) / slice_items,
                              4 * static_cast<std::size_t>(tbb::this_task_arena::max_concurrency()));
    const std::size_t step = (k + slices - 1) / slices;
    std::vector<orphans> left(slices);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, slices, 1), [&](const auto& r) {
      for (std::size_t p = r.begin(); p != r.end(); ++p)
        left[p] = fill_holes(move, R.data(), dead.data(), z, std::min(p * step, k), std::min((p + 1) * step, k));
    });
    if (call.times) call.times->phase2_ms = clock.lap();

    // Phase 3: the t-th source orphan (in slice order) fills the t-th destination orphan.
    std::vector<std::size_t> S(slices + 1, 0), D(slices + 1, 0);
    for (std::size_t p = 0; p < slices; ++p) {
      S[p + 1] = S[p] + left[p].src_count;
      D[p + 1] = D[p] + left[p].dst_count;
    }
    const std::size_t total = S[slices];  // == D[slices]
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, total, 1 << 12), [&](const auto& r) {
      // Load balancing (Algorithm 3), once per range: find the slices holding orphan r.begin().
      std::size_t ps = static_cast<std::size_t>(std::upper_bound(S.begin(), S.end(), r.begin()) - S.begin()) - 1;
      std::size_t pd = static_cast<std::size_t>(std::upper_bound(D.begin(), D.end(), r.begin()) - D.begin()) - 1;
      for (std::size_t t = r.begin(); t != r.end(); ++t) {
        while (t >= S[ps + 1]) ++ps;
        while (t >= D[pd + 1]) ++pd;
        move(R[left[pd].dst + (t - D[pd])], z + left[ps].src + (t - S[ps]));
      }
    });
    if (call.times) call.times->phase3_ms = clock.lap();
  });
  return z;
}

}  // namespace

std::size_t cpu_redzone(const cpu_call& call) { return redzone(call, false); }
std::size_t cpu_redzone_serial(const cpu_call& call) { return redzone(call, true); }

}  // namespace sieve::detail
