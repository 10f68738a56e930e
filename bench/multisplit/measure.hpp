// One grid point of the multisplit benchmark: each algorithm's output validated against the
// reference split, then timed. measure_cuda.cu (the library's designs and CUB's baselines),
// measure_missing.cpp (builds without CUDA), suite.cpp (the CPU).
#pragma once

#include "../report_names.hpp"
#include "keys.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace sieve::bench {

// The items: "u32" (one 4-byte column holding each item's index) or "path" (the renderer's 48-byte
// path record as four columns of 4, 28, 12 and 4 bytes; word w of item i holds 16 i + w).
struct multisplit_point {
  std::size_t n = 0;
  unsigned buckets = 2;
  std::string dist, items;
};

struct multisplit_measurement {
  std::string algorithm;
  std::string timing;  // "events": one call between two events; "graph": the mean of graph replays
  stats ms;
  std::size_t workspace_bytes = 0;
  bool validated = false;
  std::string error;
};

struct multisplit_plan {
  int warmup = 3;
  int repeats = 25;
  bool graph = false;  // capture each call once and time replays (small n)
};

// The GPU algorithms at one point: the library's designs by name, and the baselines "cub_sort"
// (cub::DeviceRadixSort::SortPairs of 8-bit ids over the bucket bits; for records, of (id, index)
// pairs then a gather) and "cub_partition" (cub::DevicePartition::If three-way, u32 items, buckets <= 3);
// "<design>_gather" (records): the design splits a u32 index, then the columns are gathered.
std::vector<multisplit_measurement> measure_multisplit_cuda(const std::vector<std::string>& algorithms,
                                                            const multisplit_point& p,
                                                            const std::vector<std::uint8_t>& ids,
                                                            const split_reference& want, multisplit_plan plan);

// Device-to-device copy bandwidth, GB/s (read + written); 0 without CUDA.
double multisplit_copy_gbps();

}  // namespace sieve::bench
