// The CPU entry points: validate, resolve `auto`, dispatch to the strategy.
#include "strategy_table.hpp"
#include "internal/validate.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

namespace sieve {
namespace {

// Checked in every build: a bad removal list is an error unless the caller opts out.
std::atomic<bool> checked_by_default{true};

std::size_t run_cpu(const strategy& asked, const const_record& in, const record& out, const selection& keep,
                    bool in_place, const options& opt) {
  detail::validate_call(in, out, keep, in_place);
  const form f = form_of(keep);
  const strategy s = asked.resolve(backend::cpu, f, in_place, in.size(), detail::removed_count(keep));
  require_strategy(s, backend::cpu, f, in_place);
  // After this the list's k is what validate_call sized the output for: n - k items are kept.
  if (f == form::removal_list && opt.checked.value_or(checked_default()))
    detail::check_removals(std::get<removal_list>(keep).indices, in.size());
  if (opt.times) *opt.times = {};
  const detail::cpu_call call{detail::as_record(in), out, keep, in_place, opt.times};
  return detail::strategy_entry_for(s).cpu(call);
}

}  // namespace

bool checked_default() { return checked_by_default.load(std::memory_order_relaxed); }
void set_checked_default(bool on) { checked_by_default.store(on, std::memory_order_relaxed); }

std::size_t compact(const strategy& s, record items, const selection& keep, const options& opt) {
  return run_cpu(s, items, items, keep, true, opt);
}

std::size_t compact_copy(const strategy& s, const_record in, record out, const selection& keep, const options& opt) {
  return run_cpu(s, in, out, keep, false, opt);
}

std::string detail::removals_too_many(std::size_t k, std::size_t n) {
  return "removal list: " + std::to_string(k) + " indices for " + std::to_string(n) +
         " items (an index may appear once)";
}

std::string detail::removal_out_of_range(std::uint32_t index, std::size_t position, std::size_t n) {
  return "removal list: index " + std::to_string(index) + " at position " + std::to_string(position) +
         " is out of range (n = " + std::to_string(n) + ")";
}

std::string detail::removal_twice(std::uint32_t index, std::size_t position) {
  return "removal list: index " + std::to_string(index) + " appears more than once (again at position " +
         std::to_string(position) + "); indices must be distinct";
}

std::size_t detail::removed_count(const selection& keep) {
  return form_of(keep) == form::removal_list ? std::get<removal_list>(keep).indices.size() : 0;
}

namespace {

// The bytes [begin, end) a column of n items spans (addresses as integers: the columns are unrelated arrays).
struct byte_range {
  std::uintptr_t begin, end;
  bool overlaps(const byte_range& o) const { return begin < o.end && o.begin < end; }
};
byte_range range_of(const column& c, std::size_t n) {
  const auto b = reinterpret_cast<std::uintptr_t>(c.data);
  return {b, b + n * c.width};
}

// Where a selection's array lies (address as an integer) and how many of its bytes the call reads
// (0 for a predicate).
std::pair<std::uintptr_t, std::size_t> selection_bytes(const selection& keep, std::size_t n) {
  switch (form_of(keep)) {
    case form::removal_list: {
      const auto s = std::get<removal_list>(keep).indices;
      return {reinterpret_cast<std::uintptr_t>(s.data()), s.size_bytes()};
    }
    case form::byte_flags: {
      const auto s = std::get<byte_flags>(keep).keep;
      return {reinterpret_cast<std::uintptr_t>(s.data()), std::min(s.size(), n)};
    }
    case form::bit_mask: {
      const auto s = std::get<bit_mask>(keep).words;
      return {reinterpret_cast<std::uintptr_t>(s.data()), std::min(s.size(), (n + 31) / 32) * 4};
    }
    case form::predicate: break;
  }
  return {0, 0};
}

// Written columns must not share memory with each other, nor (out of place) with the input's.
void check_overlaps(const const_record& in, const record& out, bool in_place) {
  for (std::size_t a = 0; a < out.columns(); ++a)
    for (std::size_t b = a + 1; b < out.columns(); ++b)
      if (range_of(out[a], out.size()).overlaps(range_of(out[b], out.size())))
        throw error("compaction: columns " + std::to_string(a) + " and " + std::to_string(b) + " of the " +
                    (in_place ? "record" : "output record") + " overlap; every column needs its own memory");
  if (in_place) return;
  for (std::size_t a = 0; a < out.columns(); ++a)
    for (std::size_t b = 0; b < in.columns(); ++b)
      if (range_of(out[a], out.size()).overlaps(range_of(in[b], in.size())))
        throw error("compaction: output column " + std::to_string(a) + " overlaps input column " + std::to_string(b) +
                    "; compact_copy needs separate input and output memory (compact() works in place)");
}

// With n > 0 items, no column and no selection array may be a null pointer.
void check_pointers(const const_record& in, const record& out, const selection& keep, bool in_place) {
  const std::size_t n = in.size();
  if (n == 0) return;
  for (std::size_t c = 0; c < in.columns(); ++c)
    if (!in[c].data) throw error("compaction: column " + std::to_string(c) + " of the " + (in_place ? "record" : "input record") + " is a null pointer for " + std::to_string(n) + " items");
  if (!in_place && out.size() > 0)
    for (std::size_t c = 0; c < out.columns(); ++c)
      if (!out[c].data) throw error("compaction: column " + std::to_string(c) + " of the output record is a null pointer");
  const auto [data, bytes] = selection_bytes(keep, n);
  if (bytes > 0 && data == 0) throw error("compaction: the " + std::string(to_string(form_of(keep))) + " is a null pointer");
}

// The selection (removal list, flags or mask) is read while the items are written (and a removal
// list may be reordered by the strategy): it must not share memory with a written column.
void check_selection_apart(const record& out, const selection& keep, std::size_t n) {
  const auto [data, bytes] = selection_bytes(keep, n);
  if (bytes == 0) return;
  const byte_range sel{data, data + bytes};
  for (std::size_t c = 0; c < out.columns(); ++c)
    if (sel.overlaps(range_of(out[c], out.size())))
      throw error("compaction: the " + std::string(to_string(form_of(keep))) + "'s memory overlaps column " +
                  std::to_string(c) + " of the items written; it needs its own memory");
}

}  // namespace

void detail::validate_call(const const_record& in, const record& out, const selection& keep, bool in_place) {
  const std::size_t n = in.size();
  if (in.columns() == 0 && n > 0) throw error("compaction: the record has no columns");
  check_pointers(in, out, keep, in_place);
  check_overlaps(in, out, in_place);
  check_selection_apart(out, keep, n);
  if (!in_place) {
    if (!in.same_shape(out))
      throw error("compaction: output record has other columns than the input (" + std::to_string(out.columns()) +
                  " arrays, " + std::to_string(out.item_bytes()) + " bytes per item; input: " +
                  std::to_string(in.columns()) + " arrays, " + std::to_string(in.item_bytes()) + ")");
    const std::size_t need = n - std::min(n, removed_count(keep));
    if (out.size() < need)
      throw error("compaction: output has room for " + std::to_string(out.size()) + " items, needs " +
                  std::to_string(need) + (form_of(keep) == form::removal_list ? "" : " (n: every item may be kept)"));
  }
  switch (form_of(keep)) {
    case form::removal_list: {
      const std::size_t k = std::get<removal_list>(keep).indices.size();
      if (n > std::numeric_limits<std::uint32_t>::max())
        throw error("compaction: removal lists hold 32-bit indices; n = " + std::to_string(n) + " items is too many");
      if (k > n) throw error(removals_too_many(k, n));
      break;
    }
    case form::byte_flags: {
      const std::size_t f = std::get<byte_flags>(keep).keep.size();
      if (f < n) throw error("byte flags: " + std::to_string(f) + " flags for " + std::to_string(n) + " items");
      break;
    }
    case form::bit_mask: {
      const std::size_t w = std::get<bit_mask>(keep).words.size();
      if (w < (n + 31) / 32)
        throw error("bit mask: " + std::to_string(w) + " words for " + std::to_string(n) + " items (needs " +
                    std::to_string((n + 31) / 32) + ")");
      break;
    }
    case form::predicate: break;
  }
}

}  // namespace sieve
