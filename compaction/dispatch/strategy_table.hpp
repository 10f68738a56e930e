// The registry's table (dispatch layer, not installed): every strategy's description and its entry
// point per backend. Adding a strategy: write kernels/cpu/<name>.cpp and/or kernels/cuda/<name>.cu,
// declare its functions in internal/cpu_call.hpp (CPU) or internal/cuda_call.hpp (CUDA), add one row
// to the table in registry.cpp, and list the files in compaction/CMakeLists.txt.
#pragma once

#include "internal/cpu_call.hpp"
#include "internal/cuda_call.hpp"

#include <sieve/compaction/strategies.hpp>

#include <span>

namespace sieve::detail {

struct strategy_entry {
  strategy_info info;
  cpu_strategy_fn cpu = nullptr;
  cuda_strategy_fn cuda = nullptr;
};

std::span<const strategy_entry> strategy_table();
const strategy_entry& strategy_entry_for(std::string_view name);
const strategy_entry& strategy_entry_for(const strategy& s);  // no lookup: the handle holds its row

// The concrete strategy `auto` stands for on this backend, for this form and size: on CUDA the
// fastest that fits in the measured crossover table of `device` (crossover.hpp), else fixed rules.
std::string_view resolve_auto(backend b, form f, bool in_place, std::size_t n, std::size_t k,
                              std::string_view device = {}, std::size_t item_bytes = 4);

// The current CUDA device's name (the crossover tables are per device); empty without CUDA.
std::string_view cuda_device_name();

}  // namespace sieve::detail
