// The library is safe by default (issue #13): with default options, in every build type, a bad
// removal list is a sieve::error before anything moves (never a write past the items or the
// output), output sizes are checked against the validated k, a predicate's exception reaches the
// caller from every strategy, and compact_copy refuses overlapping input and output. Each case
// crashed, corrupted memory or gave a wrong result before. options{.checked = false} opts out.
#include "compaction_test_support.hpp"

#include <tbb/task_arena.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <new>
#include <cstdint>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using sieve::backend;
using sieve::form;

using sieve_test::contains;
using sieve_test::error_of;
using sieve_test::numbered;
using user = sieve_test::strategy_mode;

std::vector<user> users_of(form f) { return sieve_test::cpu_users_of(f); }

// Default options: whatever the library does unless told otherwise.
void expect_refused_by_default(const user& u, std::size_t n, std::size_t room, std::vector<std::uint32_t> removals,
                               const std::string& what) {
  sieve_test::expect_rejected(u, n, std::move(removals), {}, what, room);
}

TEST(SafeByDefault, CheckedIsTheDefaultInEveryBuild) {
  // Nothing in this program switches it: this is the library's own default (Release included).
  EXPECT_TRUE(sieve::checked_default());
}

// Was: an index >= n wrote past the heap buffer and crashed redzone, std and auto (Release).
TEST(SafeByDefault, IndexPastTheItemsIsRefused) {
  for (const auto& u : users_of(form::removal_list)) {
    expect_refused_by_default(u, 10, 10, {1, 10}, "index 10 at position 1 is out of range (n = 10)");
    std::vector<std::uint32_t> big(60000);
    std::iota(big.begin(), big.end(), 1000U);
    big[40000] = 4'000'000'000U;
    big[50000] = 200000;
    expect_refused_by_default(u, 200000, 200000, big, "index 4000000000 at position 40000 is out of range");
  }
}

// Was: duplicates made compact_copy write 99 items into a 90-item output (the size check trusted k).
TEST(SafeByDefault, DuplicatesCannotOverflowTheOutput) {
  for (const auto& u : users_of(form::removal_list)) {
    if (u.in_place) continue;
    std::vector<std::uint32_t> removals(10, 7);  // k = 10, one distinct index: 99 would be kept
    expect_refused_by_default(u, 100, 90, removals, "index 7 appears more than once (again at position 1)");
  }
}

// Was: 40K duplicates crashed Redzone's parallel phase 3; a few silently dropped a kept item.
TEST(SafeByDefault, DuplicatesAreRefusedLargeAndSmall) {
  for (const auto& u : users_of(form::removal_list)) {
    std::vector<std::uint32_t> many(40000);
    for (std::size_t i = 0; i < many.size(); ++i) many[i] = static_cast<std::uint32_t>((i * 7919) % 20000);
    expect_refused_by_default(u, 100000, 100000, many, "appears more than once (again at position 20000)");
    expect_refused_by_default(u, 10, 10, {2, 5, 2}, "index 2 appears more than once (again at position 2)");
    // Both kinds of scratch: n bits (k a sizable part of n) and a hash set (k << n).
    expect_refused_by_default(u, 1 << 20, 1 << 20, {5, 900000, 17, 900000},
                              "index 900000 appears more than once (again at position 3)");
    std::vector<std::uint32_t> spread(10000);  // k < n / 512: the hash set
    for (std::size_t i = 0; i < spread.size(); ++i) spread[i] = static_cast<std::uint32_t>(i * 131);
    spread[9999] = spread[1234];
    expect_refused_by_default(u, 1 << 23, 1 << 23, spread, "appears more than once (again at position 9999)");
  }
}

// The check runs in parallel where 8 threads or more share it: the same errors, the same positions.
TEST(SafeByDefault, TheParallelCheckFindsTheFirstBadPosition) {
  tbb::task_arena eight(8);
  eight.execute([] {
    const std::size_t n = 1 << 20;
    std::vector<std::uint32_t> list(200000);
    for (std::size_t i = 0; i < list.size(); ++i) list[i] = static_cast<std::uint32_t>((i * 7) % n);
    for (const auto& u : users_of(form::removal_list)) {
      auto twice = list;
      twice[150000] = twice[3];
      twice[190000] = twice[4];
      expect_refused_by_default(u, n, n, twice, "index 21 appears more than once (again at position 150000)");
      auto past = list;
      past[199999] = n;
      past[160000] = n + 1;
      expect_refused_by_default(u, n, n, past, "index 1048577 at position 160000 is out of range");
    }
    auto items = numbered(n);
    EXPECT_EQ(sieve::compact("redzone", std::span(items), sieve::removal_list{list}), n - list.size());
  });
}

// Valid lists of every size pass the check (both kinds of scratch, serial and parallel) and compact.
TEST(SafeByDefault, ValidListsPassTheDefaultCheck) {
  for (const std::size_t n : {std::size_t{1}, std::size_t{64}, std::size_t{5000}, std::size_t{1} << 20}) {
    for (const std::size_t k : {std::size_t{1}, n / 64 + 1, n / 3, n}) {
      if (k > n) continue;
      SCOPED_TRACE("n=" + std::to_string(n) + " k=" + std::to_string(k));
      std::vector<std::uint32_t> removals(n);
      std::iota(removals.begin(), removals.end(), 0U);
      std::reverse(removals.begin(), removals.end());
      for (std::size_t i = 0; i < n; ++i) std::swap(removals[i], removals[(i * 2654435761U) % n]);
      removals.resize(k);
      auto items = numbered(n);
      auto list = removals;
      ASSERT_EQ(sieve::compact("redzone", std::span(items), sieve::removal_list{list}), n - k);
      std::vector<std::uint32_t> out(n - k);
      list = removals;
      ASSERT_EQ(sieve::compact_copy("stencil", std::span<const std::uint32_t>(numbered(n)), std::span(out),
                                    sieve::removal_list{list}),
                n - k);
    }
  }
}

// The explicit opt-out still works (for lists the caller vouches for), per call and as the default.
TEST(SafeByDefault, UncheckedIsAnExplicitOptOut) {
  const sieve::options unchecked{.checked = false};
  for (const auto& u : users_of(form::removal_list))
    ASSERT_NO_FATAL_FAILURE(sieve_test::expect_valid_list_removed(u, unchecked));
  const sieve_test::checked_default_guard guard;
  sieve::set_checked_default(false);
  auto items = numbered(10);
  std::vector<std::uint32_t> removals = {3};
  EXPECT_EQ(sieve::compact("redzone", std::span(items), sieve::removal_list{removals}), 9U);
}

// Was: a predicate that throws aborted the process (std::terminate) with std and auto.
TEST(SafeByDefault, PredicateExceptionsPropagateFromEveryStrategy) {
  struct boom : std::runtime_error {
    using std::runtime_error::runtime_error;
  };
  const auto users = users_of(form::predicate);
  ASSERT_GE(users.size(), 4U);
  for (const std::size_t n : {std::size_t{100}, std::size_t{300000}}) {
    for (const auto& u : users) {
      SCOPED_TRACE(u.name + (u.in_place ? " in place" : " out of place") + ", n=" + std::to_string(n));
      auto items = numbered(n);
      const auto copy = items;
      std::vector<std::uint32_t> out(n);
      const std::size_t bad = n - 3;
      auto keep = [bad](std::size_t i) {
        if (i == bad) throw boom("predicate failed at " + std::to_string(i));
        return i % 2 == 0;
      };
      std::vector<std::uint64_t> wide(n, 1);  // in place also with a second column: the record path
      for (const bool record_of_two : {false, true}) {
        if (record_of_two && !u.in_place) continue;
        try {
          if (record_of_two)
            sieve::compact(u.name, sieve::record(std::span(items), std::span(wide)), sieve::predicate(keep));
          else if (u.in_place)
            sieve::compact(u.name, std::span(items), sieve::predicate(keep));
          else
            sieve::compact_copy(u.name, std::span<const std::uint32_t>(items), std::span(out), sieve::predicate(keep));
          ADD_FAILURE() << "no exception";
        } catch (const boom& e) {
          EXPECT_EQ(std::string(e.what()), "predicate failed at " + std::to_string(bad));
        }
      }
      if (u.in_place) {
        EXPECT_TRUE(items == copy) << "in place, nothing moves before the predicate is done";
      }
    }
  }
}

// Was: compact_copy with overlapping input and output was accepted and gave wrong results.
TEST(SafeByDefault, OverlappingInputAndOutputAreRefused) {
  std::vector<std::uint8_t> flags(100, 1);
  flags[3] = 0;
  for (const auto& s : sieve::compaction_strategies()) {
    if (!s.out_of_place || !s.takes(backend::cpu, form::byte_flags)) continue;
    SCOPED_TRACE(std::string(s.name));
    auto items = numbered(200);
    const auto copy = items;
    const std::span<std::uint32_t> all(items);
    // The same memory, a shifted window, and a second column that overlaps the other's output.
    EXPECT_TRUE(contains(error_of([&] {
                           sieve::compact_copy(s.name, std::span<const std::uint32_t>(all.first(100)), all.first(100),
                                               sieve::byte_flags{flags});
                         }),
                         "output column 0 overlaps input column 0"));
    EXPECT_TRUE(contains(error_of([&] {
                           sieve::compact_copy(s.name, std::span<const std::uint32_t>(all.first(100)),
                                               all.subspan(20, 100), sieve::byte_flags{flags});
                         }),
                         "overlaps input column 0"));
    std::vector<std::uint32_t> a(100), b(100);
    EXPECT_TRUE(contains(error_of([&] {
                           sieve::compact_copy(s.name,
                                               sieve::const_record(std::span<const std::uint32_t>(all.first(100)),
                                                                   std::span<const std::uint32_t>(a)),
                                               sieve::record(std::span(b), all.subspan(99, 100)),
                                               sieve::byte_flags{flags});
                         }),
                         "output column 1 overlaps input column 0"));
    // Output columns sharing memory with each other.
    std::vector<std::uint32_t> in2(100);
    EXPECT_TRUE(contains(error_of([&] {
                           sieve::compact_copy(s.name,
                                               sieve::const_record(std::span<const std::uint32_t>(a),
                                                                   std::span<const std::uint32_t>(in2)),
                                               sieve::record(std::span(b), std::span(b)), sieve::byte_flags{flags});
                         }),
                         "columns 0 and 1 of the output record overlap"));
    EXPECT_EQ(items, copy) << "a refused call wrote";
    // Adjacent (touching, not overlapping) is fine.
    EXPECT_EQ(sieve::compact_copy(s.name, std::span<const std::uint32_t>(all.first(100)), all.subspan(100, 100),
                                  sieve::byte_flags{flags}),
              99U);
    EXPECT_EQ(items[100], 100U);
    EXPECT_EQ(items[103], 104U);
  }
  // In place: a record whose columns overlap would write one column over another.
  auto items = numbered(100);
  const std::span<std::uint32_t> all(items);
  EXPECT_TRUE(contains(error_of([&] {
                         sieve::compact("std", sieve::record(all.first(60), all.subspan(40, 60)),
                                        sieve::byte_flags{flags});
                       }),
                       "columns 0 and 1 of the record overlap"));
}


// A removal list in the items' own memory: redzone read indices the compaction was overwriting and
// kept the wrong items, even checked. Now refused before anything moves, in place and out of place.
TEST(SafeByDefault, SelectionSharingTheItemsMemoryIsRefused) {
  for (const auto& u : users_of(form::removal_list)) {
    if (!u.in_place) continue;
    std::vector<std::uint32_t> items(100);
    std::iota(items.begin(), items.end(), 0U);
    const std::vector<std::uint32_t> before = items;
    const std::span<std::uint32_t> list(items.data() + 10, 5);  // removes items 10 .. 14, read from items
    EXPECT_TRUE(contains(error_of([&] { sieve::compact(u.name, std::span(items), sieve::removal_list{list}); }),
                         "overlaps column 0"))
        << u.name;
    EXPECT_EQ(items, before) << u.name;
  }
  std::vector<std::uint8_t> bytes(64, 1);
  EXPECT_TRUE(contains(error_of([&] {
                         sieve::compact("std", std::span(bytes), sieve::byte_flags{std::span<const std::uint8_t>(bytes)});
                       }),
                       "overlaps column 0"));
}

// Null data with n > 0 crashed; now an error naming the column or the selection.
TEST(SafeByDefault, NullPointersAreRefused) {
  const sieve::column null_column{nullptr, 4};
  const sieve::record items(std::span<const sieve::column>(&null_column, 1), 10);
  std::vector<std::uint8_t> flags(10, 1);
  EXPECT_TRUE(contains(error_of([&] { sieve::compact("std", items, sieve::byte_flags{flags}); }), "null pointer"));
  std::vector<std::uint32_t> x(10);
  const std::span<std::uint32_t> null_list(static_cast<std::uint32_t*>(nullptr), 3);
  EXPECT_TRUE(contains(error_of([&] { sieve::compact("redzone", std::span(x), sieve::removal_list{null_list}); }),
                       "null pointer"));
}

#if defined(__SANITIZE_ADDRESS__)
#define SIEVE_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIEVE_TEST_ASAN 1
#endif
#endif

// std (and auto, where it picks std) in place took its temporary buffer inside the parallel
// std::remove_if, which ends the process when the allocation fails: the caller now gets
// std::bad_alloc, the items untouched. Run in a child whose address space is capped just above
// what it holds.
TEST(SafeByDefault, InPlaceStdFailsCleanlyWithoutMemory) {
#ifdef SIEVE_TEST_ASAN
  GTEST_SKIP() << "AddressSanitizer reserves more address space than the cap leaves";
#else
  for (const char* name : {"std", "auto"}) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      constexpr std::size_t n = std::size_t{1} << 25;  // 256 MiB of items
      std::vector<std::uint64_t> items(n);
      std::iota(items.begin(), items.end(), std::uint64_t{0});
      std::vector<std::uint8_t> keep(n);
      for (std::size_t i = 0; i < n; ++i) keep[i] = static_cast<std::uint8_t>(i % 3 != 0);
      std::vector<std::uint64_t> warm(1 << 16, 1);  // TBB's threads started before the cap
      std::vector<std::uint8_t> warm_keep(warm.size(), 1);
      sieve::compact(name, std::span(warm), sieve::byte_flags{warm_keep});
      std::ifstream statm("/proc/self/statm");
      std::size_t pages = 0;
      statm >> pages;
      const rlim_t cap = pages * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)) + (std::size_t{96} << 20);
      const rlimit lim{cap, cap};
      if (::setrlimit(RLIMIT_AS, &lim) != 0) ::_exit(4);
      int code = 2;
      try {
        sieve::compact(name, std::span(items), sieve::byte_flags{keep});
        code = 5;  // fitted after all: nothing to say
      } catch (const std::bad_alloc&) {
        code = 0;
      } catch (const sieve::error&) {
        code = 0;
      }
      if (code == 0)
        for (std::size_t i = 0; i < n; ++i)
          if (items[i] != i) code = 3;  // moved before it failed
      ::_exit(code);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status)) << name << ": ended by signal " << WTERMSIG(status);
    EXPECT_TRUE(WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 5) << name << ": exit " << WEXITSTATUS(status);
  }
#endif
}

}  // namespace
