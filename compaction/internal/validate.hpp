// Checks every call makes before a strategy runs, on either backend (not installed).
#pragma once

#include <sieve/compaction/record.hpp>
#include <sieve/compaction/selection.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace sieve::detail {

// Throws sieve::error unless `in` and `out` have the same columns, the selection covers n = in.size()
// items, out has room for the result (n - k for a removal list of k: its indices are validated
// apart, in checked mode), no written column overlaps another column (nor, out of place, an input
// column), and n fits the removal-list index type.
void validate_call(const const_record& in, const record& out, const selection& keep, bool in_place);

// Number of items a removal list removes (0 for other forms).
std::size_t removed_count(const selection& keep);

// Checked mode's findings, worded once for both backends.
std::string removals_too_many(std::size_t k, std::size_t n);
std::string removal_out_of_range(std::uint32_t index, std::size_t position, std::size_t n);
std::string removal_twice(std::uint32_t index, std::size_t position);

}  // namespace sieve::detail
