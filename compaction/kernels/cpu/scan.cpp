// scan (CPU): the textbook stable compaction (the one taught with GPU Gems 3, ch. 39): an exclusive
// prefix sum of the keep flags gives every kept item its output slot, then a scatter. On oneTBB the
// two are fused in tbb::parallel_scan: the pre-scan pass counts, the final pass writes.
// Stable, out of place.
#include "internal/cpu_call.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_scan.h>

namespace sieve::detail {

std::size_t cpu_scan(const cpu_call& call) {
  const std::size_t n = call.in.size();
  stopwatch clock;
  const std::size_t kept = with_source(call.keep, [&](const auto& keep) {
    return with_mover(call.in, call.out, [&](const auto& move) {
      return tbb::parallel_scan(
          tbb::blocked_range<std::size_t>(0, n, 1 << 14), std::size_t{0},
          [&](const tbb::blocked_range<std::size_t>& r, std::size_t sum, bool final) {
            if (!final) return sum + keep.count(r.begin(), r.end());
            for (std::size_t i = r.begin(); i != r.end(); ++i)
              if (keep(i)) move(sum++, i);
            return sum;
          },
          [](std::size_t a, std::size_t b) { return a + b; });
    });
  });
  if (call.times) call.times->phase2_ms = clock.lap();
  return kept;
}

}  // namespace sieve::detail
