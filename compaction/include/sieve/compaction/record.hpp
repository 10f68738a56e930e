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
// A record built from spans of const T may only be read (the input of compact_copy).
class record {
 public:
  static constexpr std::size_t max_columns = 8;

  record() = default;

  template <class... T>
    requires(sizeof...(T) >= 1 && sizeof...(T) <= max_columns)
  record(std::span<T>... arrays) {  // NOLINT: implicit from a span on purpose
    (add(arrays), ...);
  }

  // A record over raw columns of n items each, for callers that know widths only at run time.
  record(std::span<const column> arrays, std::size_t n) : size_(n) {
    if (arrays.size() > max_columns)
      throw error("sieve::record: " + std::to_string(arrays.size()) + " columns, at most " +
                  std::to_string(max_columns));
    for (const column& c : arrays) {
      if (c.width == 0) throw error("sieve::record: a column of width 0");
      columns_[count_++] = c;
    }
  }

  std::size_t size() const { return size_; }
  std::size_t columns() const { return count_; }
  const column& operator[](std::size_t c) const { return columns_[c]; }
  std::size_t item_bytes() const {
    std::size_t b = 0;
    for (std::size_t c = 0; c < count_; ++c) b += columns_[c].width;
    return b;
  }

  // The first n items of every column.
  record first(std::size_t n) const {
    record r = *this;
    r.size_ = n < size_ ? n : size_;
    return r;
  }

  // Same number of columns and the same width in each.
  bool same_shape(const record& o) const {
    if (count_ != o.count_) return false;
    for (std::size_t c = 0; c < count_; ++c)
      if (columns_[c].width != o.columns_[c].width) return false;
    return true;
  }

 private:
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

}  // namespace sieve
