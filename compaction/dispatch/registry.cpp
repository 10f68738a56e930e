// The strategy registry: names -> capabilities and entry points.
#include "strategy_table.hpp"

#include "crossover.hpp"

#include <sieve/compaction/backend.hpp>
#include <sieve/compaction/cuda.hpp>
#include <sieve/compaction/names.hpp>

#include <array>
#include <string>

namespace sieve {
namespace {

constexpr std::uint8_t bit(form f) { return static_cast<std::uint8_t>(1U << static_cast<unsigned>(f)); }
constexpr std::uint8_t removals = bit(form::removal_list), flags = bit(form::byte_flags),
                       mask = bit(form::bit_mask), pred = bit(form::predicate);
constexpr std::uint8_t every_form = removals | flags | mask | pred;

#ifdef SIEVE_HAVE_CUDA
constexpr bool cuda_built = true;
constexpr std::uint8_t on_cuda(std::uint8_t forms) { return forms; }
#define SIEVE_CUDA_FN(f) &detail::f
#else
constexpr bool cuda_built = false;
constexpr std::uint8_t on_cuda(std::uint8_t) { return 0; }
#define SIEVE_CUDA_FN(f) nullptr
#endif

using detail::strategy_entry;

const std::array table{
    strategy_entry{{"auto", "picks a strategy per backend, form, n and k/n", every_form,
                    on_cuda(removals | flags | mask), false, true, true}},
    strategy_entry{{"redzone",
                    "Bontes & Gain's O(k) removal: fills holes from the list's tail (Algorithm 2 across all "
                    "cores; Algorithm 1 for small k)",
                    removals, on_cuda(removals), false, true, false},
                   &detail::cpu_redzone, SIEVE_CUDA_FN(cuda_redzone)},
    strategy_entry{{"redzone-serial", "Redzone's Algorithm 1 on one thread: the reference", removals, 0, false, true,
                    false},
                   &detail::cpu_redzone_serial},
    strategy_entry{{"stencil",
                    "Bernabé's Stencil: mark a Boolean stencil, count per thread, prefix, compact",
                    removals | flags, 0, true, false, true},
                   &detail::cpu_stencil},
    strategy_entry{{"std", "std::remove_if / std::copy_if with std::execution::par", every_form, 0, true, true, true},
                   &detail::cpu_std},
    strategy_entry{{"scan",
                    "prefix sum of the keep flags, then scatter (tbb::parallel_scan; CUDA: Blelloch's "
                    "work-efficient scan, block sums scanned level by level)",
                    flags | mask | pred, on_cuda(flags | mask), true, false, true},
                   &detail::cpu_scan, SIEVE_CUDA_FN(cuda_scan)},
    strategy_entry{{"billeter",
                    "Billeter et al.: count per virtual processor, prefix over P, move per processor (CUDA: a warp "
                    "per processor, ballot + popc, staged or scattered output per warp by density)",
                    flags | mask | pred, on_cuda(flags | mask), true, false, true},
                   &detail::cpu_billeter, SIEVE_CUDA_FN(cuda_billeter)},
    strategy_entry{{"space",
                    "SPACE (Fett et al.): popcount per block of keep words, each block's prefix summed from the counts "
                    "before it (one kernel up to 2^17 items), a write-out that skips empty words and reads only "
                    "sectors with kept items; byte flags too",
                    0, on_cuda(flags | mask), true, false, true},
                   nullptr, SIEVE_CUDA_FN(cuda_space)},
    strategy_entry{{"cub", "cub::DeviceSelect::Flagged; a removal list is marked into n flags first", 0,
                    on_cuda(removals | flags | mask), true, true, true},
                   nullptr, SIEVE_CUDA_FN(cuda_cub)},
    strategy_entry{{"thrust", "thrust::copy_if / thrust::remove_if with a stencil; a removal list is marked first", 0,
                    on_cuda(removals | flags | mask), true, true, true, /*host_counts=*/true},
                   nullptr, SIEVE_CUDA_FN(cuda_thrust)},
    strategy_entry{{"atomic", "aggregated atomics: one atomicAdd on the count per block of 256 items (per round), kept items "
                    "to the block's share by their rank in the warps' ballots; unstable", 0,
                    on_cuda(flags | mask), false, false, true},
                   nullptr, SIEVE_CUDA_FN(cuda_atomic)},
};

std::array<strategy_info, table.size()> make_infos() {
  std::array<strategy_info, table.size()> infos{};
  for (std::size_t i = 0; i < table.size(); ++i) infos[i] = table[i].info;
  return infos;
}
const std::array infos = make_infos();

std::string known_names() {
  std::string s;
  for (const auto& e : table) s += (s.empty() ? "" : ", ") + std::string(e.info.name);
  return s;
}

}  // namespace

std::string_view to_string(form f) {
  switch (f) {
    case form::removal_list: return "removal list";
    case form::byte_flags: return "byte flags";
    case form::bit_mask: return "bit mask";
    case form::predicate: return "predicate";
  }
  return "?";
}

std::string_view short_name(form f) {
  switch (f) {
    case form::removal_list: return "removal";
    case form::byte_flags: return "flags";
    case form::bit_mask: return "mask";
    case form::predicate: return "predicate";
  }
  return "?";
}

form form_from_short_name(std::string_view name) {
  for (std::size_t f = 0; f < form_count; ++f)
    if (short_name(static_cast<form>(f)) == name) return static_cast<form>(f);
  throw error("unknown form '" + std::string(name) + "'; forms: removal, flags, mask, predicate");
}

std::string_view to_string(backend b) { return b == backend::cpu ? "cpu" : "cuda"; }

backend backend_from_string(std::string_view name) {
  if (name == "cpu") return backend::cpu;
  if (name == "cuda") return backend::cuda;
  throw error("unknown backend '" + std::string(name) + "'; backends: cpu, cuda");
}

std::string resolve_backend(const std::string& name) {
  if (name == "cpu") return name;
  if (name == "auto") return cuda::available() ? "cuda" : "cpu";
  if (name != "cuda") throw usage_error("--backend " + name + ": expected auto, cpu or cuda");
  if (!cuda::available()) throw error("--backend cuda needs a GPU: " + cuda::device_description());
  return name;
}

std::span<const strategy_info> compaction_strategies() { return infos; }

const detail::strategy_entry& detail::strategy_entry_for(std::string_view name) {
  for (const auto& e : table)
    if (e.info.name == name) return e;
  std::vector<std::string_view> names;
  for (const auto& e : table) names.push_back(e.info.name);
  throw error("unknown compaction strategy '" + std::string(name) + "'" + did_you_mean(name, names) +
              "; strategies: " + known_names());
}

const detail::strategy_entry& detail::strategy_entry_for(const strategy& s) { return table[s.index()]; }

static_assert(table.size() <= 256, "strategy keeps its index in a byte");

strategy::strategy(std::string_view name)
    : index_(static_cast<std::uint8_t>(&detail::strategy_entry_for(name) - table.data())) {}

const strategy_info& strategy::info() const { return infos[index_]; }  // as compaction_strategies() lists it

strategy strategy::resolve(backend b, form f, bool in_place, std::size_t n, std::size_t k, std::size_t item_bytes) const {
  if (!is_auto()) return *this;
  return strategy(detail::resolve_auto(b, f, in_place, n, k,
                                       b == backend::cuda ? detail::cuda_device_name() : std::string_view{}, item_bytes));
}

std::span<const detail::strategy_entry> detail::strategy_table() { return table; }

const strategy_info& compaction_strategy(std::string_view name) { return detail::strategy_entry_for(name).info; }

std::string strategies_that_fit(backend b, form f, bool in_place) {
  std::string s;
  for (const auto& e : table) {
    const auto& i = e.info;
    if (i.takes(b, f) && (in_place ? i.in_place : i.out_of_place)) s += (s.empty() ? "" : ", ") + std::string(i.name);
  }
  return s.empty() ? "none" : s;
}

const strategy_info& require_strategy(const strategy& s, backend b, form f, bool in_place) {
  const strategy_info& i = s.info();
  if (i.takes(b, f) && (in_place ? i.in_place : i.out_of_place)) return i;  // the messages only on failure
  const std::string name(i.name);
  const std::string fit = strategies_that_fit(b, f, in_place);
  const std::string mode = in_place ? "in place" : "out of place";
  const std::string what = std::string(to_string(f)) + " " + mode + " on " + std::string(to_string(b));
  if (!i.runs_on(b))
    throw error("strategy '" + std::string(name) + "' does not run on " + std::string(to_string(b)) +
                (b == backend::cuda && !cuda_built ? " (this build has no CUDA backend)" : "") +
                "; for " + what + " use: " + fit);
  if (!i.takes(b, f))
    throw error("strategy '" + std::string(name) + "' does not take a " + std::string(to_string(f)) + " on " +
                std::string(to_string(b)) + "; for " + what + " use: " + fit);
  if (in_place ? !i.in_place : !i.out_of_place)
    throw error("strategy '" + std::string(name) + "' does not work " + mode + "; for " + what + " use: " + fit);
  return i;
}

std::string_view resolve_strategy(const strategy& s, backend b, form f, bool in_place, std::size_t n, std::size_t k,
                                  std::size_t item_bytes) {
  return s.resolve(b, f, in_place, n, k, item_bytes).name();
}

std::string_view detail::resolve_auto(backend b, form f, bool in_place, std::size_t n, std::size_t k,
                                      std::string_view device, std::size_t item_bytes) {
  if (b == backend::cuda) {
    const std::string_view measured = crossover_pick(b, device, f, n, n ? static_cast<double>(k) / n : 0, item_bytes,
                                                     [&](std::string_view name) {
                                                       if (name == "auto") return false;
                                                       for (const auto& e : table)
                                                         if (e.info.name == name)
                                                           return e.info.takes(b, f) && (in_place ? e.info.in_place : e.info.out_of_place);
                                                       return false;
                                                     });
    if (!measured.empty()) return measured;
    // No table: Redzone for removal lists, CUB for selections in place, SPACE out of place.
    if (f == form::removal_list) return in_place ? "redzone" : "cub";
    return in_place ? "cub" : "space";
  }
  switch (f) {
    case form::removal_list:
      if (!in_place) return "stencil";
      return 2 * k <= n ? "redzone" : "std";  // Redzone pays while k/n < 1/2 (its section 6)
    case form::byte_flags:
    case form::bit_mask:
    case form::predicate: return in_place ? "std" : "billeter";
  }
  return "std";
}

}  // namespace sieve
