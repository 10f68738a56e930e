// The sort benchmark in a build without CUDA: nothing to time.
#include "measure.hpp"

#include <sieve/compaction/error.hpp>

namespace sieve::bench {

double sort_copy_gbps() { return 0; }

std::vector<sort_measurement> measure_sorts(const std::vector<std::string>&, const std::vector<std::uint32_t>&,
                                            const std::vector<std::uint32_t>&, const std::vector<std::uint32_t>&,
                                            const std::vector<std::uint32_t>&, int, int, int, int) {
  throw error("sieve bench sort: this build has no CUDA backend");
}

}  // namespace sieve::bench
