// One grid point of the sort benchmark: validate each algorithm's output against the reference,
// then time it. measure_sort.cpp (CUDA) or measure_sort_missing.cpp (builds without CUDA).
#pragma once

#include "../report_names.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace sieve::bench {

struct sort_measurement {
  std::string algorithm;
  stats ms;
  std::size_t workspace_bytes = 0;
  bool validated = false;
  std::string error;
};

// keys/values: the input; want_keys/want_values: the stable sort of it on bits [b, e).
std::vector<sort_measurement> measure_sorts(const std::vector<std::string>& algorithms,
                                            const std::vector<std::uint32_t>& keys,
                                            const std::vector<std::uint32_t>& values,
                                            const std::vector<std::uint32_t>& want_keys,
                                            const std::vector<std::uint32_t>& want_values, int begin_bit,
                                            int end_bit, int warmup, int repeats);

// Device-to-device copy bandwidth, GB/s (read + written); 0 without CUDA.
double sort_copy_gbps();

}  // namespace sieve::bench
