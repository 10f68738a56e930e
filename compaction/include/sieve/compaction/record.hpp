#pragma once

#include <sieve/compaction/error.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

namespace sieve {

// One array of a record: `width` bytes per item, items contiguous.
struct column {
  std::byte* data = nullptr;
  std::uint32_t width = 0;
};

// The items a compaction moves: one array of any trivially copyable type, or up to eight arrays
// of equal length (struct of arrays) whose i-th entries move together as item i. A record only
// views memory it does not own (host memory for the CPU backend, device memory for CUDA).
//
// Two kinds: `record` is written (compact's items, compact_copy's output) and is built from spans
// of mutable items only; `const_record` is only read (compact_copy's input) and takes spans of
// const items too. A span of const items passed where items are written does not compile.
template <bool Writable>
class basic_record {
 public:
  static constexpr std::size_t max_columns = 8;

  basic_record() = default;

  template <class... T>
    requires(sizeof...(T) >= 1 && sizeof...(T) <= max_columns)
  basic_record(std::span<T>... arrays) {  // NOLINT: implicit from a span on purpose
    static_assert(!Writable || (!std::is_const_v<T> && ...),
                  "sieve::record: a span of const items cannot be written; compact() and compact_copy()'s "
                  "output need mutable items (a span of const items can only be compact_copy()'s input, a "
                  "sieve::const_record)");
    (add(arrays), ...);
  }

  // A record over raw columns of n items each, for callers that know widths only at run time.
  basic_record(std::span<const column> arrays, std::size_t n) : size_(n) {
    if (arrays.size() > max_columns)
      throw error("sieve::record: " + std::to_string(arrays.size()) + " columns, at most " +
                  std::to_string(max_columns));
    for (const column& c : arrays) {
      if (c.width == 0) throw error("sieve::record: a column of width 0");
      columns_[count_++] = c;
    }
  }

  // Items that may be written may also be read: a record converts to a const_record.
  // (A template, so that it is never record's own copy constructor.)
  template <bool W>
    requires(W && !Writable)
  basic_record(const basic_record<W>& o)  // NOLINT: implicit on purpose
      : columns_(o.columns_), count_(o.count_), size_(o.size_) {}

  std::size_t size() const { return size_; }
  std::size_t columns() const { return count_; }
  const column& operator[](std::size_t c) const { return columns_[c]; }
  std::size_t item_bytes() const {
    std::size_t b = 0;
    for (std::size_t c = 0; c < count_; ++c) b += columns_[c].width;
    return b;
  }

  // The first n items of every column.
  basic_record first(std::size_t n) const {
    basic_record r = *this;
    r.size_ = n < size_ ? n : size_;
    return r;
  }

  // Same number of columns and the same width in each.
  template <bool W>
  bool same_shape(const basic_record<W>& o) const {
    if (count_ != o.columns()) return false;
    for (std::size_t c = 0; c < count_; ++c)
      if (columns_[c].width != o[c].width) return false;
    return true;
  }

 private:
  template <bool>
  friend class basic_record;

  template <class T>
  void add(std::span<T> a) {
    static_assert(std::is_trivially_copyable_v<std::remove_const_t<T>>,
                  "sieve::record: items must be trivially copyable");
    static_assert(sizeof(T) < (std::size_t{1} << 31));
    if (count_ > 0 && a.size() != size_)
      throw error("sieve::record: column " + std::to_string(count_) + " has " + std::to_string(a.size()) +
                  " items, column 0 has " + std::to_string(size_));
    size_ = a.size();
    columns_[count_++] = {reinterpret_cast<std::byte*>(const_cast<std::remove_const_t<T>*>(a.data())),
                          static_cast<std::uint32_t>(sizeof(T))};
  }

  std::array<column, max_columns> columns_{};
  std::size_t count_ = 0;
  std::size_t size_ = 0;
};

using record = basic_record<true>;
using const_record = basic_record<false>;

namespace detail {
// The library's own view of an input: strategies take records and only read `in`.
inline record as_record(const const_record& in) {
  std::array<column, record::max_columns> cols{};
  for (std::size_t c = 0; c < in.columns(); ++c) cols[c] = in[c];
  return record(std::span<const column>(cols.data(), in.columns()), in.size());
}
}  // namespace detail

}  // namespace sieve
