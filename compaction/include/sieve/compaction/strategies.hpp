#pragma once

#include <sieve/compaction/selection.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace sieve {

enum class backend : std::uint8_t { cpu, cuda };
std::string_view to_string(backend b);
backend backend_from_string(std::string_view name);  // "cpu" or "cuda"; throws sieve::error

// What a strategy can do. A strategy may take different forms on different backends (a predicate,
// for instance, is a host callable: CPU only).
struct strategy_info {
  std::string_view name;
  std::string_view summary;
  std::uint8_t cpu_forms = 0;   // bit (1 << form) set: the CPU backend takes that form
  std::uint8_t cuda_forms = 0;  // same for the CUDA backend (0 when CUDA was not built)
  bool stable = false;          // kept items keep their order
  bool in_place = false;        // compact(): output over the input
  bool out_of_place = false;    // compact_copy(): output to a second record
  // CUDA: reads the live counts back to the host during a call (device counts are copied out and
  // waited for), so its calls cannot be captured in a CUDA graph.
  bool host_counts = false;

  bool runs_on(backend b) const { return forms(b) != 0; }
  bool takes(backend b, form f) const { return (forms(b) >> static_cast<int>(f)) & 1; }
  std::uint8_t forms(backend b) const { return b == backend::cpu ? cpu_forms : cuda_forms; }
};

// Every strategy this build has, in a fixed order (`auto` first).
std::span<const strategy_info> compaction_strategies();

// A strategy of the registry, looked up by name once. Every compaction call takes one; a name
// converts to it implicitly (looked up at the call), so a caller that compacts many times with one
// strategy (a renderer's queue, every bounce) builds it once and passes it down.
class strategy {
 public:
  strategy() : strategy("auto") {}
  // Throws sieve::error naming the known strategies.
  strategy(std::string_view name);  // NOLINT(google-explicit-constructor): names are the usual way in
  strategy(const char* name) : strategy(std::string_view(name)) {}
  strategy(const std::string& name) : strategy(std::string_view(name)) {}

  const strategy_info& info() const;
  std::string_view name() const { return info().name; }
  bool is_auto() const { return index_ == 0; }
  std::size_t index() const { return index_; }  // its position in compaction_strategies()
  // The strategy that runs for this call shape: itself, or for `auto` the one it picks on backend b
  // for form f, in place or out of place, over n items of item_bytes bytes (all columns of a record)
  // with k of them removed (removal lists), on the current CUDA device for b = cuda. The same choice
  // the compaction calls make, so a tool can say what ran: "auto -> atomic".
  strategy resolve(backend b, form f, bool in_place, std::size_t n, std::size_t k = 0, std::size_t item_bytes = 4) const;

  friend bool operator==(const strategy& a, const strategy& b) { return a.index_ == b.index_; }

 private:
  std::uint8_t index_ = 0;
};

// The strategy called `name`'s description; throws sieve::error naming the known strategies.
const strategy_info& compaction_strategy(std::string_view name);

// Throws sieve::error unless `s` runs on `b`, takes form `f`, and (in_place or not) works that
// way. The message names the strategies that would fit.
const strategy_info& require_strategy(const strategy& s, backend b, form f, bool in_place);

// strategy::resolve's name (throws sieve::error for an unknown name).
std::string_view resolve_strategy(const strategy& s, backend b, form f, bool in_place, std::size_t n,
                                  std::size_t k = 0, std::size_t item_bytes = 4);

// Comma-separated names of the strategies that run on b, take f and work in place (or not).
std::string strategies_that_fit(backend b, form f, bool in_place);

}  // namespace sieve
