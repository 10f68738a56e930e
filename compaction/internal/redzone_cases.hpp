// Redzone's pairing cases (not installed): Bontes & Gain (2024), Table 1, the one copy the CPU
// strategy (kernels/cpu/redzone.cpp) and both CUDA algorithms (kernels/cuda/redzone.cu) switch on.
#pragma once

#include <sieve/hd.hpp>

#include <cstddef>

namespace sieve::detail {

// Phase 2 pairs Z[i] = A[z + i] (the i-th red-zone item) with R[i] (the i-th index to remove).
// `source_dead`: Z[i] is itself removed (some R[j] == z + i, marked in phase 1).
enum class redzone_case : unsigned char {
  fill,                // A: move Z[i] to A[R[i]]
  drop,                // B: R[i] is in the red zone and Z[i] is removed: nothing to do
  destination_orphan,  // C: the hole A[R[i]] waits for a source
  source_orphan,       // D: R[i] is in the red zone, Z[i] is kept: a source waiting for a hole
};

SIEVE_HD constexpr redzone_case redzone_pair(std::size_t r, std::size_t z, bool source_dead) {
  if (r >= z) return source_dead ? redzone_case::drop : redzone_case::source_orphan;
  return source_dead ? redzone_case::destination_orphan : redzone_case::fill;
}

}  // namespace sieve::detail
