// Errors of the compaction API: every one a sieve::error, thrown before anything is changed, with a
// message that names the value at fault and what would have fitted.
#include "compaction_test_support.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <span>
#include <string>
#include <vector>

namespace {

using sieve::backend;
using sieve::form;

using sieve_test::contains;
using sieve_test::error_of;
using sieve_test::numbered;

using sieve_test::checked_default_guard;

// ---- strategies and forms -----------------------------------------------------------------------

TEST(CompactErrors, UnknownStrategyNamesTheKnownOnes) {
  auto items = numbered(10);
  std::vector<std::uint8_t> flags(10, 1);
  std::vector<std::uint32_t> out(10);
  const std::string m = error_of([&] { sieve::compact("no-such-strategy", std::span(items), sieve::byte_flags{flags}); });
  EXPECT_TRUE(contains(m, "no-such-strategy")) << m;
  EXPECT_TRUE(contains(m, "redzone")) << m;
  EXPECT_TRUE(contains(m, "billeter")) << m;
  const std::string m2 = error_of([&] {
    sieve::compact_copy("Redzone", std::span<const std::uint32_t>(items), std::span(out), sieve::byte_flags{flags});
  });
  EXPECT_TRUE(contains(m2, "redzone")) << m2;
  const std::string m3 = error_of([] { sieve::compaction_strategy("bogus"); });
  EXPECT_TRUE(contains(m3, "stencil")) << m3;
  EXPECT_EQ(items, numbered(10));
}

TEST(CompactErrors, FormTheStrategyLacksNamesTheStrategiesThatFit) {
  auto items = numbered(10);
  std::vector<std::uint8_t> flags(10, 1);
  const std::string m = error_of([&] { sieve::compact("redzone", std::span(items), sieve::byte_flags{flags}); });
  EXPECT_TRUE(contains(m, "redzone")) << m;
  EXPECT_TRUE(contains(m, "byte flags")) << m;
  EXPECT_TRUE(contains(m, "std")) << m;  // the in-place strategy for byte flags

  // A removal list out of place with scan: stencil and std fit.
  std::vector<std::uint32_t> removals = {1, 2};
  std::vector<std::uint32_t> out(10);
  const std::string m2 = error_of([&] {
    sieve::compact_copy("scan", std::span<const std::uint32_t>(items), std::span(out), sieve::removal_list{removals});
  });
  EXPECT_TRUE(contains(m2, "stencil")) << m2;
  EXPECT_TRUE(contains(m2, "std")) << m2;

  // A predicate with stencil.
  auto keep_even = [](std::size_t i) { return i % 2 == 0; };
  const std::string m3 = error_of([&] {
    sieve::compact_copy("stencil", std::span<const std::uint32_t>(items), std::span(out),
                        sieve::predicate(keep_even));
  });
  EXPECT_TRUE(contains(m3, "billeter")) << m3;
  EXPECT_EQ(items, numbered(10));
  EXPECT_EQ(out, std::vector<std::uint32_t>(10));
}

TEST(CompactErrors, InPlaceWithAnOutOfPlaceOnlyStrategy) {
  auto items = numbered(10);
  std::vector<std::uint8_t> flags(10, 0);
  for (const auto& s : sieve::compaction_strategies()) {
    if (s.in_place || !s.takes(backend::cpu, form::byte_flags)) continue;
    SCOPED_TRACE(std::string(s.name));
    const std::string m = error_of([&] { sieve::compact(s.name, std::span(items), sieve::byte_flags{flags}); });
    EXPECT_TRUE(contains(m, "in place")) << m;
    EXPECT_TRUE(contains(m, "std")) << m;
    EXPECT_EQ(items, numbered(10));
  }
  // And the other way round: Redzone only works in place.
  std::vector<std::uint32_t> removals = {3};
  std::vector<std::uint32_t> out(10);
  const std::string m = error_of([&] {
    sieve::compact_copy("redzone", std::span<const std::uint32_t>(items), std::span(out), sieve::removal_list{removals});
  });
  EXPECT_TRUE(contains(m, "out of place")) << m;
  EXPECT_TRUE(contains(m, "stencil")) << m;
}

TEST(CompactErrors, CudaOnlyStrategyOnTheCpu) {
  auto items = numbered(10);
  std::vector<std::uint8_t> flags(10, 1);
  std::vector<std::uint32_t> out(10);
  const std::string m = error_of([&] {
    sieve::compact_copy("atomic", std::span<const std::uint32_t>(items), std::span(out), sieve::byte_flags{flags});
  });
  EXPECT_TRUE(contains(m, "atomic")) << m;
  EXPECT_TRUE(contains(m, "cpu")) << m;
  EXPECT_TRUE(contains(m, "billeter")) << m;
  EXPECT_THROW(sieve::compact("atomic", std::span(items), sieve::byte_flags{flags}), sieve::error);
  EXPECT_EQ(out, std::vector<std::uint32_t>(10));
  // Any other strategy with no CPU forms must be refused the same way.
  for (const auto& s : sieve::compaction_strategies()) {
    if (s.runs_on(backend::cpu)) continue;
    SCOPED_TRACE(std::string(s.name));
    EXPECT_THROW(sieve::compact_copy(s.name, std::span<const std::uint32_t>(items), std::span(out),
                                     sieve::byte_flags{flags}),
                 sieve::error);
  }
}

// A strategy looked up once (sieve::strategy) is the same strategy as its name, everywhere a name is
// taken; `auto` resolves to what the name-taking calls pick; an unknown name fails when the handle is
// made, naming the known ones.
TEST(StrategyHandle, LooksUpOnceAndActsAsItsName) {
  const sieve::strategy redzone("redzone");
  EXPECT_EQ(redzone.name(), "redzone");
  EXPECT_EQ(&redzone.info(), &sieve::compaction_strategies()[redzone.index()]);
  EXPECT_FALSE(redzone.is_auto());
  EXPECT_TRUE(sieve::strategy().is_auto());
  EXPECT_TRUE(sieve::strategy("auto") == sieve::strategy());
  EXPECT_EQ(redzone.resolve(backend::cpu, form::removal_list, true, 1000, 10), redzone);
  for (const std::size_t k : {std::size_t{10}, std::size_t{900}})
    EXPECT_EQ(sieve::strategy().resolve(backend::cpu, form::removal_list, true, 1000, k).name(),
              sieve::resolve_strategy("auto", backend::cpu, form::removal_list, true, 1000, k));
  EXPECT_EQ(sieve::strategy().resolve(backend::cpu, form::removal_list, true, 1000, 10).name(), "redzone");
  EXPECT_EQ(sieve::strategy().resolve(backend::cpu, form::removal_list, true, 1000, 900).name(), "std");
  const std::string m = error_of([] { const sieve::strategy s("no-such-strategy"); });
  EXPECT_TRUE(contains(m, "no-such-strategy")) << m;
  EXPECT_TRUE(contains(m, "billeter")) << m;
  // The same result through the handle as through the name.
  auto by_name = numbered(100), by_handle = numbered(100);
  std::vector<std::uint32_t> r1 = {3, 50, 99}, r2 = r1;
  const std::size_t m1 = sieve::compact("redzone", std::span(by_name), sieve::removal_list{r1});
  const std::size_t m2 = sieve::compact(redzone, std::span(by_handle), sieve::removal_list{r2});
  EXPECT_EQ(m1, 97U);
  EXPECT_EQ(m2, m1);
  EXPECT_EQ(by_handle, by_name);
}

TEST(CompactErrors, RequireStrategyAndBackendNames) {
  EXPECT_EQ(sieve::require_strategy("std", backend::cpu, form::predicate, true).name, "std");
  EXPECT_THROW(sieve::require_strategy("redzone", backend::cpu, form::bit_mask, true), sieve::error);
  EXPECT_THROW(sieve::require_strategy("nope", backend::cpu, form::bit_mask, true), sieve::error);
  EXPECT_EQ(sieve::backend_from_string("cpu"), backend::cpu);
  EXPECT_EQ(sieve::backend_from_string("cuda"), backend::cuda);
  EXPECT_THROW(sieve::backend_from_string("gpu"), sieve::error);
}

// ---- checked mode -------------------------------------------------------------------------------

// Every (strategy, mode) that takes a removal list on the CPU.
using removal_user = sieve_test::strategy_mode;
std::vector<removal_user> removal_users() { return sieve_test::cpu_users_of(form::removal_list); }

using sieve_test::expect_rejected;

TEST(CheckedMode, DuplicateIndexIsRejectedBeforeAnythingMoves) {
  sieve::options opt;
  opt.checked = true;
  const auto users = removal_users();
  ASSERT_GE(users.size(), 4U);
  for (const auto& u : users) {
    expect_rejected(u, 10, {2, 5, 2}, opt, "more than once");
    expect_rejected(u, 10, {9, 8, 7, 6, 5, 4, 3, 2, 1, 9}, opt, "more than once");  // k = n, every slot red
    // Large enough for the parallel check and Redzone's parallel path; the duplicate comes last.
    const std::size_t n = 200000;
    std::vector<std::uint32_t> big(60000);
    std::iota(big.begin(), big.end(), 70000U);
    big.back() = 70000;
    expect_rejected(u, n, big, opt, "more than once");
  }
}

TEST(CheckedMode, OutOfRangeIndexIsRejectedBeforeAnythingMoves) {
  sieve::options opt;
  opt.checked = true;
  for (const auto& u : removal_users()) {
    expect_rejected(u, 10, {1, 10}, opt, "out of range");
    expect_rejected(u, 10, {0xFFFFFFFFU}, opt, "out of range");
    const std::size_t n = 200000;
    std::vector<std::uint32_t> big(60000);
    std::iota(big.begin(), big.end(), 100U);
    big[31337] = static_cast<std::uint32_t>(n);
    expect_rejected(u, n, big, opt, "out of range");
  }
}

TEST(CheckedMode, TheDefaultAppliesWhenOptionsLeaveItUnset) {
  checked_default_guard guard;
  sieve::set_checked_default(true);
  for (const auto& u : removal_users()) expect_rejected(u, 50, {4, 8, 4}, {}, "more than once");
  // An explicit options::checked overrides a false default.
  sieve::set_checked_default(false);
  sieve::options opt;
  opt.checked = true;
  for (const auto& u : removal_users()) expect_rejected(u, 50, {4, 50}, opt, "out of range");
}

TEST(CheckedMode, SetCheckedDefaultRoundTrips) {
  checked_default_guard guard;
  sieve::set_checked_default(true);
  EXPECT_TRUE(sieve::checked_default());
  sieve::set_checked_default(false);
  EXPECT_FALSE(sieve::checked_default());
  sieve::set_checked_default(true);
  EXPECT_TRUE(sieve::checked_default());
}

TEST(CheckedMode, ValidListsPassChecking) {
  sieve::options opt;
  opt.checked = true;
  for (const auto& u : removal_users()) ASSERT_NO_FATAL_FAILURE(sieve_test::expect_valid_list_removed(u, opt));
}

// ---- sizes and shapes ---------------------------------------------------------------------------

TEST(CompactErrors, MoreRemovalsThanItemsThrowsCheckedOrNot) {
  for (const bool checked : {true, false}) {
    sieve::options opt;
    opt.checked = checked;
    for (const auto& u : removal_users()) {
      std::vector<std::uint32_t> removals(11);
      std::iota(removals.begin(), removals.end(), 0U);
      expect_rejected(u, 10, removals, opt, "11");
      expect_rejected(u, 0, {0}, opt, "1");
    }
  }
}

TEST(CompactErrors, FlagsShorterThanTheItems) {
  auto items = numbered(100);
  std::vector<std::uint8_t> flags(99, 1);
  std::vector<std::uint32_t> out(100, 7);
  for (const auto& s : sieve::compaction_strategies()) {
    if (!s.takes(backend::cpu, form::byte_flags)) continue;
    SCOPED_TRACE(std::string(s.name));
    if (s.in_place) {
      const std::string m = error_of([&] { sieve::compact(s.name, std::span(items), sieve::byte_flags{flags}); });
      EXPECT_TRUE(contains(m, "99")) << m;
    }
    if (s.out_of_place) {
      const std::string m = error_of([&] {
        sieve::compact_copy(s.name, std::span<const std::uint32_t>(items), std::span(out), sieve::byte_flags{flags});
      });
      EXPECT_TRUE(contains(m, "99")) << m;
    }
  }
  EXPECT_EQ(items, numbered(100));
  EXPECT_EQ(out, std::vector<std::uint32_t>(100, 7));
}

TEST(CompactErrors, MaskTooShort) {
  auto items = numbered(33);  // needs 2 words
  std::vector<std::uint32_t> words = {~0U};
  std::vector<std::uint32_t> out(33, 7);
  for (const auto& s : sieve::compaction_strategies()) {
    if (!s.takes(backend::cpu, form::bit_mask)) continue;
    SCOPED_TRACE(std::string(s.name));
    if (s.in_place) {
      EXPECT_THROW(sieve::compact(s.name, std::span(items), sieve::bit_mask{words}), sieve::error);
    }
    if (s.out_of_place) {
      EXPECT_THROW(
          sieve::compact_copy(s.name, std::span<const std::uint32_t>(items), std::span(out), sieve::bit_mask{words}),
          sieve::error);
    }
  }
  EXPECT_EQ(items, numbered(33));
  EXPECT_EQ(out, std::vector<std::uint32_t>(33, 7));
  // Exactly ceil(33/32) = 2 words is enough.
  words.push_back(1);
  EXPECT_EQ(sieve::compact_copy("billeter", std::span<const std::uint32_t>(items), std::span(out),
                                sieve::bit_mask{words}),
            33U);
}

TEST(CompactErrors, OutputRecordTooSmall) {
  auto items = numbered(100);
  std::vector<std::uint8_t> flags(100, 0);  // keeps nothing: room for n is still required
  std::vector<std::uint32_t> out(99, 7);
  for (const auto& s : sieve::compaction_strategies()) {
    if (!s.out_of_place || !s.takes(backend::cpu, form::byte_flags)) continue;
    SCOPED_TRACE(std::string(s.name));
    const std::string m = error_of([&] {
      sieve::compact_copy(s.name, std::span<const std::uint32_t>(items), std::span(out), sieve::byte_flags{flags});
    });
    EXPECT_TRUE(contains(m, "99")) << m;
  }
  // A removal list of k needs room for n - k.
  for (const auto& u : removal_users()) {
    if (u.in_place) continue;
    SCOPED_TRACE(u.name);
    std::vector<std::uint32_t> removals = {1, 2, 3};
    std::vector<std::uint32_t> small(96, 7);
    EXPECT_THROW(sieve::compact_copy(u.name, std::span<const std::uint32_t>(items), std::span(small),
                                     sieve::removal_list{removals}),
                 sieve::error);
    EXPECT_EQ(small, std::vector<std::uint32_t>(96, 7));
    std::vector<std::uint32_t> exact(97, 7);
    EXPECT_EQ(sieve::compact_copy(u.name, std::span<const std::uint32_t>(items), std::span(exact),
                                  sieve::removal_list{removals}),
              97U);
  }
  EXPECT_EQ(out, std::vector<std::uint32_t>(99, 7));
}

TEST(CompactErrors, MismatchedRecordShapes) {
  auto items = numbered(10);
  std::vector<std::uint8_t> flags(10, 1);
  std::vector<std::uint64_t> wider(10, 7);
  std::vector<std::uint32_t> a(10, 7), b(10, 7);
  std::vector<std::uint16_t> c16(10, 7);
  for (const auto& s : sieve::compaction_strategies()) {
    if (!s.out_of_place || !s.takes(backend::cpu, form::byte_flags)) continue;
    SCOPED_TRACE(std::string(s.name));
    const std::span<const std::uint32_t> in(items);
    // Other width.
    EXPECT_THROW(sieve::compact_copy(s.name, in, std::span(wider), sieve::byte_flags{flags}), sieve::error);
    // Other number of columns.
    EXPECT_THROW(sieve::compact_copy(s.name, in, sieve::record(std::span(a), std::span(b)), sieve::byte_flags{flags}),
                 sieve::error);
    // Same number of columns and bytes per item, other widths per column.
    std::vector<std::uint16_t> in16(10, 1);
    std::vector<std::uint32_t> in32(10, 1);
    EXPECT_THROW(sieve::compact_copy(s.name,
                                     sieve::const_record(std::span<const std::uint16_t>(in16), std::span<const std::uint32_t>(in32)),
                                     sieve::record(std::span(a), std::span(c16)), sieve::byte_flags{flags}),
                 sieve::error);
  }
  EXPECT_EQ(wider, std::vector<std::uint64_t>(10, 7));
  EXPECT_EQ(a, std::vector<std::uint32_t>(10, 7));
  EXPECT_EQ(b, std::vector<std::uint32_t>(10, 7));
  EXPECT_EQ(c16, std::vector<std::uint16_t>(10, 7));
}

TEST(RecordErrors, ColumnsOfDifferentLengthsThrow) {
  std::vector<std::uint32_t> a(10);
  std::vector<double> b(9);
  std::vector<std::uint8_t> c(10);
  EXPECT_THROW(sieve::record(std::span(a), std::span(b)), sieve::error);
  EXPECT_THROW(sieve::record(std::span(a), std::span(c), std::span(b)), sieve::error);
  EXPECT_THROW(sieve::record(std::span(b), std::span(a)), sieve::error);
  const sieve::record ok{std::span(a), std::span(c)};
  EXPECT_EQ(ok.size(), 10U);
  EXPECT_EQ(ok.columns(), 2U);
  EXPECT_EQ(ok.item_bytes(), 5U);
}

}  // namespace

// The forms' one-word names, exported once by the library: each names its form and back, and an
// unknown name fails naming the forms.
TEST(FormNames, ShortNamesRoundTripAndUnknownNamesFail) {
  for (std::size_t i = 0; i < sieve::form_count; ++i) {
    const auto f = static_cast<form>(i);
    EXPECT_EQ(sieve::form_from_short_name(sieve::short_name(f)), f);
    EXPECT_EQ(sieve::short_name(f).find(' '), std::string_view::npos) << sieve::short_name(f);
  }
  EXPECT_EQ(sieve::short_name(form::bit_mask), "mask");
  const std::string m = error_of([] { sieve::form_from_short_name("bits"); });
  EXPECT_TRUE(contains(m, "bits")) << m;
  EXPECT_TRUE(contains(m, "flags")) << m;
}

// Reading the counts back to the host is a property of a strategy in the registry: only strategies
// that do not run on the CPU have it (a CPU call has host counts anyway), and `auto` never does.
TEST(StrategyTable, HostCountsIsACudaPropertyOfTheTable) {
  for (const auto& s : sieve::compaction_strategies()) {
    SCOPED_TRACE(std::string(s.name));
    if (s.host_counts) {
      EXPECT_FALSE(s.runs_on(backend::cpu));
    }
  }
  EXPECT_FALSE(sieve::strategy().info().host_counts);
  EXPECT_FALSE(sieve::compaction_strategy("redzone").host_counts);
}
