// billeter (CPU): Billeter, Olsson & Assarsson, "Efficient Stream Compaction on Wide SIMD Many-Core
// Architectures" (HPG 2009), Listing 2 on oneTBB: the input is split over P virtual processors
// (many more than threads, so TBB can balance them); each counts its kept items (byte flags eight
// at a time with a SWAR popcount, bit masks a word at a time), a prefix sum over the P counts gives
// every processor its output offset, and each moves its kept items there in order (bit masks skip
// empty words). Stable, out of place. The SIMD-width parts of the paper (ballot, POPC) belong to
// the CUDA version.
#include "internal/cpu_call.hpp"

namespace sieve::detail {

std::size_t cpu_billeter(const cpu_call& call) {
  constexpr std::size_t items_per_processor = 1 << 15;
  const std::size_t n = call.in.size();
  const std::size_t processors = (n + items_per_processor - 1) / items_per_processor;
  return with_source(call.keep, [&](const auto& src) {
    return with_mover(call.in, call.out, [&](const auto& move) {
      return count_prefix_move(src, move, n, processors, /*static_parts=*/false, call.times);
    });
  });
}

}  // namespace sieve::detail
