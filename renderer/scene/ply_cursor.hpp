// The PLY body's values (ply.cpp): where an item is, a binary value made a number, and the cursors
// over a binary or an ASCII body that the one per-item reader takes.
#pragma once

#include "ply_header.hpp"
#include "sections.hpp"

#include <cctype>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace sieve::render::detail::ply {

// Where an error is: the element's name and the item's number, made into text only on failure.
struct item_at {
  const std::string* file;
  const std::string* element;
  std::uint64_t item;
  std::string text() const { return *file + ": " + *element + " " + std::to_string(item); }
};

// A value of type t in the machine's byte order at `bytes`, made a To.
template <class To>
To value_as(const unsigned char* bytes, ply_type t) {
  auto as = [&](auto x) {
    std::memcpy(&x, bytes, sizeof x);
    return static_cast<To>(x);
  };
  switch (t) {
    case ply_type::i8: return as(std::int8_t{});
    case ply_type::u8: return as(std::uint8_t{});
    case ply_type::i16: return as(std::int16_t{});
    case ply_type::u16: return as(std::uint16_t{});
    case ply_type::i32: return as(std::int32_t{});
    case ply_type::u32: return as(std::uint32_t{});
    case ply_type::f32: return as(float{});
    default: return as(double{});
  }
}

// Values of a binary body, from `at` on (a block's first item).
class binary_cursor {
 public:
  binary_cursor(const unsigned char* at, const unsigned char* end, bool swap) : p_(at), end_(end), swap_(swap) {}
  double value(ply_type t, const item_at& where) {
    const std::size_t n = size_of(t);
    if (static_cast<std::size_t>(end_ - p_) < n) ends_inside(where);
    unsigned char v[8];
    std::memcpy(v, p_, n);
    p_ += n;
    if (swap_) std::reverse(v, v + n);
    return value_as<double>(v, t);
  }
  // A list's count (an integer type, the header checked).
  double count(ply_type t, const item_at& where) { return value(t, where); }
  void skip(ply_type t, std::uint64_t n, const item_at& where) {
    if (n > static_cast<std::uint64_t>(end_ - p_) / size_of(t)) ends_inside(where);
    p_ += n * size_of(t);
  }
  const unsigned char* at() const { return p_; }

 private:
  [[noreturn]] static void ends_inside(const item_at& where) { fail(*where.file + ": the file ends inside " + *where.element + " " + std::to_string(where.item)); }
  const unsigned char* p_;
  const unsigned char* end_;
  bool swap_;
};

// Words of an ASCII body; a line starting "comment" is skipped (hand-edited files have them).
// Integer properties take decimal integers in their type's range, others decimal numbers.
class ascii_cursor {
 public:
  ascii_cursor(const unsigned char* at, const unsigned char* end) : p_(at), end_(end) {}
  double value(ply_type t, const item_at& where) {
    const std::string_view w = word(where);
    bool finite = false;
    const bool hex = w.find_first_of("xX") != std::string_view::npos;
    const std::optional<double> v = hex ? std::nullopt : number_token(w, finite);
    if (!v) fail(where.text() + ": " + in_quotes(w) + " is not a number");
    // An integer property takes decimal digits (a sign allowed), within its type's range.
    const std::size_t digits = w.front() == '-' || w.front() == '+' ? 1 : 0;
    if (integral(t) && (w.size() == digits || w.find_first_not_of("0123456789", digits) != std::string_view::npos ||
                        *v < lowest(t) || *v > highest(t)))
      fail(where.text() + ": " + in_quotes(w) + " is not an integer of the property's type");
    return *v;
  }
  double count(ply_type t, const item_at& where) { return value(t, where); }
  void skip(ply_type t, std::uint64_t n, const item_at& where) {
    for (std::uint64_t i = 0; i < n; ++i) value(t, where);
  }

 private:
  static double lowest(ply_type t) {
    constexpr double v[] = {-128, 0, -32768, 0, -2147483648.0, 0};
    return v[static_cast<int>(t)];
  }
  static double highest(ply_type t) {
    constexpr double v[] = {127, 255, 32767, 65535, 2147483647.0, 4294967295.0};
    return v[static_cast<int>(t)];
  }
  std::string_view word(const item_at& where) {
    for (;;) {
      while (p_ < end_ && std::isspace(*p_)) ++p_;
      const unsigned char* start = p_;
      while (p_ < end_ && !std::isspace(*p_) && p_ - start < 64) ++p_;
      if (p_ == start) fail(*where.file + ": the file ends inside " + *where.element + " " + std::to_string(where.item));
      const std::string_view w(reinterpret_cast<const char*>(start), static_cast<std::size_t>(p_ - start));
      if (w != "comment") return w;
      while (p_ < end_ && *p_ != '\n') ++p_;
    }
  }
  const unsigned char* p_;
  const unsigned char* end_;
};

}  // namespace sieve::render::detail::ply
