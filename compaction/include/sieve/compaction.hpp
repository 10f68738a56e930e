// sieve: stream compaction on the CPU (oneTBB) and the GPU (CUDA).
//
//   #include <sieve/compaction.hpp>
//
//   std::vector<float> x = ...;              // items
//   std::vector<std::uint8_t> keep = ...;    // 1 = keep
//   std::vector<float> out(x.size());
//   std::size_t m = sieve::compact_copy("billeter", std::span(x), std::span(out), sieve::byte_flags{keep});
//
//   std::vector<std::uint32_t> dead = {3, 17, 4};   // distinct indices; used as scratch
//   m = sieve::compact("redzone", std::span(x), sieve::removal_list{dead});   // in place, O(k)
//
// See README.md for the strategies, their input forms and trade-offs.
#pragma once

#include <sieve/version.hpp>
#include <sieve/compaction/error.hpp>
#include <sieve/compaction/record.hpp>
#include <sieve/compaction/selection.hpp>
#include <sieve/compaction/strategies.hpp>
#include <sieve/compaction/compact.hpp>
#include <sieve/compaction/cuda.hpp>
#include <sieve/compaction/radix_sort.hpp>
#include <sieve/compaction/multisplit.hpp>
