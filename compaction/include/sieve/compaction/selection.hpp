#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace sieve {

// The four input forms: how a caller says which items survive.
enum class form : std::uint8_t { removal_list, byte_flags, bit_mask, predicate };
inline constexpr std::size_t form_count = 4;
std::string_view to_string(form f);
// A form's one-word name, for options, file names and tables: removal, flags, mask, predicate.
std::string_view short_name(form f);
// The form of a one-word name (short_name's inverse); throws sieve::error naming the forms.
form form_from_short_name(std::string_view name);

// Distinct indices of the items to remove, each < n. Strategies use the array as scratch (Redzone
// keeps its orphan list in it, as in the paper): its contents are unspecified afterwards.
struct removal_list {
  std::span<std::uint32_t> indices;
};

// One byte per item: nonzero keeps the item (write 1), zero removes it. At least n bytes.
struct byte_flags {
  std::span<const std::uint8_t> keep;
};

// One bit per item: item i is bit (i % 32) of 32-bit word i / 32, 1 keeps it. At least
// ceil(n / 32) words; bits past n are ignored.
struct bit_mask {
  std::span<const std::uint32_t> words;
};

// A callable taking the item index (std::size_t) and returning true to keep the item. CPU only.
// Called at least once per item and possibly twice (count-then-move strategies ask in both
// passes), from several threads at once: it must be thread-safe and give the same answer each
// time. Holds a reference: keep the callable alive for the call.
class predicate {
 public:
  template <class F>
    requires(std::is_invocable_r_v<bool, const F&, std::size_t> && !std::is_same_v<std::decay_t<F>, predicate>)
  predicate(const F& f)  // NOLINT: implicit on purpose
      : object_(std::addressof(f)), call_([](const void* o, std::size_t i) {
          return static_cast<bool>((*static_cast<const F*>(o))(i));
        }) {}

  bool operator()(std::size_t i) const { return call_(object_, i); }

 private:
  const void* object_;
  bool (*call_)(const void*, std::size_t);
};

using selection = std::variant<removal_list, byte_flags, bit_mask, predicate>;

inline form form_of(const selection& s) { return static_cast<form>(s.index()); }

}  // namespace sieve
