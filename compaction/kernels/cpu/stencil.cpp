// stencil (CPU): Bernabé & Acacio's Stencil compaction, as the Redzone paper's section 5.3
// describes it: phase 1 marks the removed items in an auxiliary Boolean stencil (for byte flags the
// flags are the stencil), phase 2 counts the kept items per thread and takes a prefix sum over the
// threads, phase 3 lets every thread copy its kept items to their place. Stable, out of place.
#include "internal/cpu_call.hpp"

#include <tbb/task_arena.h>

namespace sieve::detail {

std::size_t cpu_stencil(const cpu_call& call) {
  const std::size_t n = call.in.size();
  stopwatch clock;
  std::vector<std::uint8_t> marked;
  const std::uint8_t* stencil;
  if (form_of(call.keep) == form::removal_list) {
    const auto removals = std::get<removal_list>(call.keep).indices;
    marked = mark_removals(removals, n);
    stencil = marked.data();
    if (call.times) call.times->phase1_ms = clock.lap();
  } else {
    stencil = std::get<byte_flags>(call.keep).keep.data();
  }
  const auto threads = static_cast<std::size_t>(tbb::this_task_arena::max_concurrency());
  return with_mover(call.in, call.out, [&](const auto& move) {
    return count_prefix_move(flag_source{stencil}, move, n, threads, /*static_parts=*/true, call.times);
  });
}

}  // namespace sieve::detail
