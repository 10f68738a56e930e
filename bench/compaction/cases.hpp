// One point of the compaction benchmark's grid, its inputs, and the check of a strategy's output.
#pragma once

#include "digest.hpp"

#include <sieve/compaction.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sieve::bench {

struct item_type {
  std::string name;  // u8 u16 u32 u64 float double struct32 paths48
  std::uint32_t width;
  // A struct of arrays: the widths of its columns (summing to width), moved as one record; empty
  // for one column. paths48 is the renderer's path queue: 4, 28, 12 and 4 bytes (CUDA only).
  std::vector<std::uint32_t> columns = {};
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

// Points whose items take at most this many bytes are checked byte by byte against the kept rows
// (`expected`); larger ones on the CUDA backend by the count and the digest of the kept rows, so a
// 1 GiB point neither builds the reference rows nor copies the output back. The CPU backend, and
// records of several columns on either, always check byte by byte.
inline constexpr std::size_t exact_check_bytes = std::size_t{64} << 20;

struct case_inputs {
  std::size_t n = 0;             // the shape `items` holds: row i's bytes depend only on i and width
  std::uint32_t width = 0;
  std::vector<std::byte> items;  // n rows of width bytes
  std::vector<std::uint32_t> removals;
  std::vector<std::uint8_t> flags;
  std::vector<std::uint32_t> mask;
  std::vector<std::uint8_t> keep;  // 1 per kept item for the removal and mask forms (flags holds it for flags)
  bool exact = true;                // `expected` holds the kept rows; otherwise only `digest` describes them
  std::vector<std::byte> expected;  // the kept rows in input order
  row_digest digest;                // of the kept rows in input order (made for the CUDA backend only)
  std::size_t kept = 0;
};
// `reuse`: the previous point's inputs, whose buffers are recycled (their items kept as they are when
// n and the width match): a grid of 1 GiB points neither regenerates the items nor touches fresh pages.
case_inputs make_inputs(const bench_case& c, std::uint64_t seed, case_inputs reuse = {});

// The digest of rows.size() / width rows in this order, as digest.cu computes it on the device.
row_digest digest_rows(std::span<const std::byte> rows, std::uint32_t width);

// "" when out[0, m) holds exactly the expected rows (in order when `stable`, as a multiset when not),
// else what is wrong. Byte by byte when in.exact, by digest otherwise.
std::string check_output(const case_inputs& in, std::span<const std::byte> out, std::size_t m, std::uint32_t width,
                         bool stable);
// The same for a digest of the output computed elsewhere (the device): "" when it matches.
std::string check_digest(const case_inputs& in, const row_digest& got, std::size_t m, bool stable);

// The bytes a strategy must touch at least: for a removal list the O(k) floor (read the k indices and
// the k red-zone items, write k items); otherwise read the selection and all n items, write the kept.
double nominal_bytes(const bench_case& c, std::size_t kept);

}  // namespace sieve::bench
