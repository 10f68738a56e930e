// One point of the compaction benchmark's grid, its inputs, and the check of a strategy's output.
#pragma once

#include <sieve/compaction.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sieve::bench {

struct item_type {
  std::string name;  // u8 u16 u32 u64 float double struct32
  std::uint32_t width;
};
item_type item_type_named(const std::string& name);  // throws sieve::error naming the known types
form form_named(const std::string& name);            // removal, flags, mask
std::string form_short_name(form f);

// distribution: for removal lists "uniform" (distinct indices drawn from [0, n)) or "rNN" (exactly
// NN % of the k indices lie in the red zone [n - k, n), the Redzone paper's r); for flags and masks
// "uniform" (kept items drawn at random), "cluster" (one run of kept items) or "clusters32" (32
// runs), SPACE's three distributions. fraction: k / n for removal lists, the kept share otherwise.
struct bench_case {
  backend where = backend::cpu;
  std::string strategy;
  form f = form::removal_list;
  item_type type;
  std::size_t n = 0;
  double fraction = 0;
  std::string distribution;
  bool in_place = false;
};

void check_distribution(form f, const std::string& distribution);  // throws for one that does not fit

struct case_inputs {
  std::vector<std::byte> items;  // n rows of type.width bytes
  std::vector<std::uint32_t> removals;
  std::vector<std::uint8_t> flags;
  std::vector<std::uint32_t> mask;
  std::vector<std::byte> expected;  // the kept rows in input order
  std::size_t kept = 0;
};
case_inputs make_inputs(const bench_case& c, std::uint64_t seed);

// "" when out[0, m) holds exactly the expected rows (in order when `stable`, as a multiset when not),
// else what is wrong.
std::string check_output(const case_inputs& in, std::span<const std::byte> out, std::size_t m, std::uint32_t width,
                         bool stable);

// The bytes a strategy must touch at least: for a removal list the O(k) floor (read the k indices and
// the k red-zone items, write k items); otherwise read the selection and all n items, write the kept.
double nominal_bytes(const bench_case& c, std::size_t kept);

}  // namespace sieve::bench
