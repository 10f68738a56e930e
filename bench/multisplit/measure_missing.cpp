// The multisplit benchmark in a build without CUDA: the CPU rows only.
#include "measure.hpp"

#include <sieve/compaction/error.hpp>

namespace sieve::bench {

double multisplit_copy_gbps() { return 0; }

std::vector<multisplit_measurement> measure_multisplit_cuda(const std::vector<std::string>&, const multisplit_point&,
                                                            const std::vector<std::uint8_t>&, const split_reference&,
                                                            multisplit_plan) {
  throw error("sieve bench multisplit: this build has no CUDA backend (use --backend cpu)");
}

}  // namespace sieve::bench
