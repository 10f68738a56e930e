// The measured crossover tables `auto` reads (not installed): for a device, a form and n (and k/n
// for removal lists) the strategies ranked by time, as `sieve bench compaction --crossover` wrote
// them into compaction/tuning/<device>.json and the build embedded them.
#pragma once

#include <sieve/compaction/strategies.hpp>

#include <cstddef>
#include <functional>
#include <string_view>

namespace sieve::detail {

// The fastest strategy for which fits(name) holds, from the table of `device` on backend b, at the
// row nearest to n and item_bytes (both in log2) and, for removal lists, to `fraction` = k/n. A device without a table
// of its own uses the first table of that backend (the rankings' shape carries over between GPUs
// better than no measurement at all). Empty when no table or no ranked strategy fits.
std::string_view crossover_pick(backend b, std::string_view device, form f, std::size_t n, double fraction,
                                std::size_t item_bytes, const std::function<bool(std::string_view)>& fits);

}  // namespace sieve::detail
