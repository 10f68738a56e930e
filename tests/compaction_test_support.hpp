// Helpers shared by the CPU compaction tests of errors and safety.
#pragma once

#include <sieve/compaction.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <span>
#include <string>
#include <vector>

namespace sieve_test {

// Runs f, which must throw sieve::error; returns its message ("" and a failure otherwise).
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const sieve::error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw something other than sieve::error: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no sieve::error";
  return "";
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// n items numbered from 100.
inline std::vector<std::uint32_t> numbered(std::size_t n) {
  std::vector<std::uint32_t> v(n);
  std::iota(v.begin(), v.end(), 100U);
  return v;
}

// Restores the checked default when a test ends.
struct checked_default_guard {
  bool saved = sieve::checked_default();
  ~checked_default_guard() { sieve::set_checked_default(saved); }
};

// A strategy and a mode it works in.
struct strategy_mode {
  std::string name;
  bool in_place;
};

// Every (strategy, mode) that takes `f` on the CPU, `auto` included.
inline std::vector<strategy_mode> cpu_users_of(sieve::form f) {
  std::vector<strategy_mode> u;
  for (const auto& s : sieve::compaction_strategies()) {
    if (!s.takes(sieve::backend::cpu, f)) continue;
    if (s.in_place) u.push_back({std::string(s.name), true});
    if (s.out_of_place) u.push_back({std::string(s.name), false});
  }
  return u;
}

// Calls the strategy with `removals` over items numbered(n) (out of place: into an output of
// `room` slots, n if 0, followed by guard slots); it must throw sieve::error whose message contains
// `what`, and leave the items, the output and the memory after it as they were.
inline void expect_rejected(const strategy_mode& u, std::size_t n, std::vector<std::uint32_t> removals,
                            const sieve::options& opt, const std::string& what, std::size_t room = 0) {
  SCOPED_TRACE(u.name + (u.in_place ? " in place" : " out of place") + ", n=" + std::to_string(n) +
               ", k=" + std::to_string(removals.size()));
  constexpr std::uint32_t guard = 0xDEADBEEF;
  if (room == 0) room = n;
  auto items = numbered(n);
  const auto copy = items;
  std::vector<std::uint32_t> out(room + 64, guard);
  const std::string m = error_of([&] {
    if (u.in_place)
      sieve::compact(u.name, std::span(items), sieve::removal_list{removals}, opt);
    else
      sieve::compact_copy(u.name, std::span<const std::uint32_t>(items), std::span(out).first(room),
                          sieve::removal_list{removals}, opt);
  });
  EXPECT_TRUE(contains(m, what)) << m;
  EXPECT_TRUE(items == copy) << "items changed by a rejected call";
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](std::uint32_t x) { return x == guard; }))
      << "output (or the memory after it) written by a rejected call";
}

// A valid removal list ({9, 0, 4} from 10 numbered items) through u with opt: 7 kept, the other seven.
inline void expect_valid_list_removed(const strategy_mode& u, const sieve::options& opt) {
  SCOPED_TRACE(u.name);
  auto items = numbered(10);
  std::vector<std::uint32_t> removals = {9, 0, 4};
  std::vector<std::uint32_t> out(7);
  const std::size_t m =
      u.in_place ? sieve::compact(u.name, std::span(items), sieve::removal_list{removals}, opt)
                 : sieve::compact_copy(u.name, std::span<const std::uint32_t>(items), std::span(out),
                                       sieve::removal_list{removals}, opt);
  ASSERT_EQ(m, 7U);
  std::vector<std::uint32_t> got(u.in_place ? items.begin() : out.begin(), (u.in_place ? items.begin() : out.begin()) + 7);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::uint32_t>{101, 102, 103, 105, 106, 107, 108}));
}

}  // namespace sieve_test
