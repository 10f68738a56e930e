// Property tests of the CPU compaction strategies against a sequential reference.
//
// The cases are generated from sieve::compaction_strategies(): every strategy that runs on the CPU,
// every form it takes, in place and/or out of place as it allows, so a new strategy is tested
// without editing this file. Stable strategies must produce exactly the kept items in input order
// (a sequential copy_if); unstable ones the same multiset.
#include <sieve/compaction.hpp>
#include <sieve/hash.hpp>

#include "../compaction/internal/redzone_cases.hpp"  // the pairing cases, shared by the CPU and CUDA Redzone

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <ostream>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace {

using sieve::form;

constexpr std::uint64_t seed = 20240611;
constexpr std::size_t big_n = (std::size_t{1} << 20) + 7;

// ---- item types ---------------------------------------------------------------------------------

struct s32 {  // 32 bytes, no padding; every field derives from id
  std::uint64_t id;
  std::uint32_t a;
  std::uint16_t b;
  std::uint8_t c, d;
  double e;
  std::uint64_t f;
};
static_assert(sizeof(s32) == 32);

// W bytes, all derived from the id (the first 8 bytes hold it where W >= 8).
template <std::size_t W>
struct wide {
  std::uint8_t bytes[W];
};

template <class T>
T make(std::uint64_t id);
template <>
std::uint8_t make(std::uint64_t id) { return static_cast<std::uint8_t>(id * 131 + 7); }
template <>
std::uint16_t make(std::uint64_t id) { return static_cast<std::uint16_t>(id * 40503 + 1); }
template <>
std::uint32_t make(std::uint64_t id) { return static_cast<std::uint32_t>(id * 2654435761U + 12345); }  // a bijection
template <>
std::uint64_t make(std::uint64_t id) { return id * 0x9E3779B97F4A7C15ULL + 1; }
template <>
float make(std::uint64_t id) { return static_cast<float>(id) * 0.25F + 1.0F; }  // exact below 2^22
template <>
double make(std::uint64_t id) { return static_cast<double>(id) * 0.125 + 3.0; }
template <>
s32 make(std::uint64_t id) {
  return {id,
          static_cast<std::uint32_t>(id * 3 + 1),
          static_cast<std::uint16_t>(id ^ 0x5555),
          static_cast<std::uint8_t>(id),
          static_cast<std::uint8_t>(id >> 8),
          static_cast<double>(id) * 0.5,
          ~id};
}

template <class T>
T make_wide(std::uint64_t id) {
  T x;
  for (std::size_t b = 0; b < sizeof x.bytes; ++b)
    x.bytes[b] = static_cast<std::uint8_t>(b < 8 ? id >> (8 * b) : (id * 0x9E3779B97F4A7C15ULL) >> (b % 57));
  return x;
}

template <class T>
bool same(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}
template <class T>
bool byte_less(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) < 0;
}

// A value no item of a test has (checked where it matters: guards after an output span).
template <class T>
T sentinel() {
  T x;
  std::memset(&x, 0xA5, sizeof x);
  return x;
}

// ---- selections ---------------------------------------------------------------------------------

// One selection of n items: the truth (keep[i] = 1 keeps item i) and its encoding in each form.
struct scenario {
  std::string label;
  std::size_t n = 0;
  std::vector<std::uint8_t> keep;       // truth
  std::vector<std::uint32_t> removals;  // removal-list form (in list order)
  std::vector<std::uint8_t> flags;      // byte-flags form: kept items get assorted nonzero values
  std::vector<std::uint32_t> words;     // bit-mask form: ceil(n/32) words, bits past n set to 1

  std::size_t kept() const { return static_cast<std::size_t>(std::count(keep.begin(), keep.end(), 1)); }
};

void encode_keep_forms(scenario& s, std::mt19937_64& rng) {
  static constexpr std::uint8_t nonzero[] = {1, 7, 128, 255, 2, 64};
  s.flags.assign(s.n, 0);
  s.words.assign((s.n + 31) / 32, 0);
  for (std::size_t i = 0; i < s.n; ++i) {
    if (!s.keep[i]) continue;
    s.flags[i] = (rng() & 1) ? nonzero[rng() % std::size(nonzero)] : static_cast<std::uint8_t>(1 + rng() % 255);
    s.words[i / 32] |= 1U << (i % 32);
  }
  if (s.n % 32 != 0) s.words.back() |= ~0U << (s.n % 32);  // must be ignored
}

scenario from_keep(std::string label, std::vector<std::uint8_t> keep, std::mt19937_64& rng) {
  scenario s;
  s.label = std::move(label);
  s.n = keep.size();
  s.keep = std::move(keep);
  encode_keep_forms(s, rng);
  return s;
}

scenario from_removals(std::string label, std::size_t n, std::vector<std::uint32_t> removals) {
  scenario s;
  s.label = std::move(label) + " k=" + std::to_string(removals.size());
  s.n = n;
  s.keep.assign(n, 1);
  for (const std::uint32_t r : removals) s.keep[r] = 0;
  s.removals = std::move(removals);
  return s;
}

std::vector<std::uint32_t> iota_u32(std::size_t begin, std::size_t end) {
  std::vector<std::uint32_t> v(end - begin);
  std::iota(v.begin(), v.end(), static_cast<std::uint32_t>(begin));
  return v;
}

// k distinct indices from [begin, end), in random order.
std::vector<std::uint32_t> random_subset(std::size_t begin, std::size_t end, std::size_t k, std::mt19937_64& rng) {
  std::vector<std::uint32_t> all = iota_u32(begin, end);
  for (std::size_t i = 0; i < k; ++i) std::swap(all[i], all[i + rng() % (all.size() - i)]);  // partial Fisher-Yates
  all.resize(k);
  return all;
}

// Removal lists of n items: k = 0, 1, n-1, n, n/2 and a random k; for each, a random set sorted,
// reversed and shuffled, the whole red zone [n-k, n) (r = 100 %), and, where k <= n-k, a set that
// avoids the red zone (r = 0 %). `few` keeps a handful (for the big size).
std::vector<scenario> removal_scenarios(std::size_t n, std::mt19937_64& rng, bool few) {
  std::vector<std::size_t> ks =
      few ? std::vector<std::size_t>{1, n - 1, n / 3}
          : std::vector<std::size_t>{0, 1, n - 1, n, n / 2, static_cast<std::size_t>(rng() % (n + 1))};
  if (n == 0) ks = {0};
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  std::vector<scenario> out;
  for (const std::size_t k : ks) {
    if (k > n) continue;
    std::vector<std::uint32_t> set = random_subset(0, n, k, rng);
    if (!few) {
      std::vector<std::uint32_t> sorted = set;
      std::sort(sorted.begin(), sorted.end());
      std::vector<std::uint32_t> reversed(sorted.rbegin(), sorted.rend());
      out.push_back(from_removals("random, sorted", n, sorted));
      out.push_back(from_removals("random, reversed", n, reversed));
    }
    out.push_back(from_removals("random, shuffled", n, set));
    if (!few || k == n / 3) {
      out.push_back(from_removals("red zone r=100%", n, random_subset(n - k, n, k, rng)));
      if (k <= n - k) out.push_back(from_removals("red zone r=0%", n, random_subset(0, n - k, k, rng)));
    }
  }
  return out;
}

std::vector<std::uint8_t> uniform_keep(std::size_t n, double p, std::mt19937_64& rng) {
  std::bernoulli_distribution coin(p);
  std::vector<std::uint8_t> keep(n);
  for (auto& k : keep) k = coin(rng) ? 1 : 0;
  return keep;
}

// `clusters` contiguous runs of kept items at random places (runs may touch), the rest removed.
std::vector<std::uint8_t> clustered_keep(std::size_t n, std::size_t clusters, std::mt19937_64& rng) {
  std::vector<std::uint8_t> keep(n, 0);
  if (n == 0) return keep;
  std::vector<std::size_t> cut(2 * clusters);
  for (auto& c : cut) c = rng() % (n + 1);
  std::sort(cut.begin(), cut.end());
  for (std::size_t c = 0; c < clusters; ++c) std::fill(keep.begin() + cut[2 * c], keep.begin() + cut[2 * c + 1], 1);
  return keep;
}

// Flags / masks / predicates: everything kept, nothing kept, one removed, one kept, uniform random
// (p = 0.5, 0.05, 0.95), one cluster, 32 clusters.
std::vector<scenario> keep_scenarios(std::size_t n, std::mt19937_64& rng, bool few) {
  std::vector<scenario> out;
  if (!few) {
    out.push_back(from_keep("all kept", std::vector<std::uint8_t>(n, 1), rng));
    out.push_back(from_keep("none kept", std::vector<std::uint8_t>(n, 0), rng));
    if (n > 0) {
      std::vector<std::uint8_t> one_removed(n, 1), one_kept(n, 0);
      one_removed[rng() % n] = 0;
      one_kept[rng() % n] = 1;
      out.push_back(from_keep("one removed", std::move(one_removed), rng));
      out.push_back(from_keep("one kept", std::move(one_kept), rng));
    }
    out.push_back(from_keep("uniform p=0.05", uniform_keep(n, 0.05, rng), rng));
    out.push_back(from_keep("uniform p=0.95", uniform_keep(n, 0.95, rng), rng));
    out.push_back(from_keep("one cluster", clustered_keep(n, 1, rng), rng));
  }
  out.push_back(from_keep("uniform p=0.5", uniform_keep(n, 0.5, rng), rng));
  out.push_back(from_keep("32 clusters", clustered_keep(n, 32, rng), rng));
  return out;
}

std::vector<scenario> scenarios_for(form f, std::size_t n, std::mt19937_64& rng, bool few) {
  return f == form::removal_list ? removal_scenarios(n, rng, few) : keep_scenarios(n, rng, few);
}

// Predicate form: answers from the truth and records which indices were asked.
struct asking_predicate {
  const std::vector<std::uint8_t>* keep;
  std::vector<std::atomic<std::uint8_t>>* asked;
  std::atomic<std::size_t>* out_of_range;
  bool operator()(std::size_t i) const {
    if (i >= keep->size()) {
      out_of_range->fetch_add(1);
      return false;
    }
    (*asked)[i].store(1, std::memory_order_relaxed);
    return (*keep)[i] != 0;
  }
};

// Holds what a selection views: the removal list's scratch copy and the predicate's state.
struct selection_holder {
  std::vector<std::uint32_t> scratch;
  std::vector<std::atomic<std::uint8_t>> asked;
  std::atomic<std::size_t> out_of_range{0};
  asking_predicate pred{};

  sieve::selection make(form f, const scenario& s) {
    switch (f) {
      case form::removal_list:
        scratch = s.removals;
        return sieve::removal_list{std::span(scratch)};
      case form::byte_flags: return sieve::byte_flags{std::span<const std::uint8_t>(s.flags)};
      case form::bit_mask: return sieve::bit_mask{std::span<const std::uint32_t>(s.words)};
      case form::predicate:
        asked = std::vector<std::atomic<std::uint8_t>>(s.n);
        pred = asking_predicate{&s.keep, &asked, &out_of_range};
        return sieve::predicate(pred);
    }
    return sieve::byte_flags{};
  }

  // For the predicate form: every index asked at least once, none out of range.
  ::testing::AssertionResult predicate_ok(form f) const {
    if (f != form::predicate) return ::testing::AssertionSuccess();
    if (out_of_range.load() != 0)
      return ::testing::AssertionFailure() << out_of_range.load() << " predicate calls with an index >= n";
    for (std::size_t i = 0; i < asked.size(); ++i)
      if (!asked[i].load()) return ::testing::AssertionFailure() << "the predicate was never asked about item " << i;
    return ::testing::AssertionSuccess();
  }
};

// Items needed in an out-of-place output: n - k for a removal list, n otherwise (the API's rule).
std::size_t out_room(form f, const scenario& s) { return f == form::removal_list ? s.n - s.removals.size() : s.n; }

// ---- comparing ----------------------------------------------------------------------------------

template <class T>
::testing::AssertionResult same_sequence(std::span<const T> got, std::span<const T> want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "got " << got.size() << " items, want " << want.size();
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!same(got[i], want[i])) return ::testing::AssertionFailure() << "first difference at output slot " << i;
  return ::testing::AssertionSuccess();
}

template <class T>
::testing::AssertionResult same_multiset(std::span<const T> got, std::span<const T> want) {
  std::vector<T> a(got.begin(), got.end()), b(want.begin(), want.end());
  std::sort(a.begin(), a.end(), byte_less<T>);
  std::sort(b.begin(), b.end(), byte_less<T>);
  auto r = same_sequence<T>(a, b);
  if (!r) r << " (after sorting both: the multisets differ)";
  return r;
}

// ---- the parameterised cases --------------------------------------------------------------------

enum class item { u8, u16, u32, u64, f32, f64, s32 };
constexpr item every_item[] = {item::u8, item::u16, item::u32, item::u64, item::f32, item::f64, item::s32};

const char* name_of(item t) {
  switch (t) {
    case item::u8: return "u8";
    case item::u16: return "u16";
    case item::u32: return "u32";
    case item::u64: return "u64";
    case item::f32: return "float";
    case item::f64: return "double";
    case item::s32: return "struct32";
  }
  return "?";
}

const char* name_of(form f) {
  switch (f) {
    case form::removal_list: return "RemovalList";
    case form::byte_flags: return "ByteFlags";
    case form::bit_mask: return "BitMask";
    case form::predicate: return "Predicate";
  }
  return "?";
}

struct strategy_case {
  std::string strategy;
  form f = form::byte_flags;
  bool in_place = false;
  bool stable = false;
  item type = item::u32;
};

std::string case_name(const strategy_case& c, bool with_type) {
  std::string s;
  for (const char ch : c.strategy) s += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  s += std::string("_") + name_of(c.f) + (c.in_place ? "_InPlace" : "_OutOfPlace");
  if (with_type) s += std::string("_") + name_of(c.type);
  return s;
}

void PrintTo(const strategy_case& c, std::ostream* os) { *os << case_name(c, true); }

// Every (CPU strategy, form it takes, mode it allows), from the registry.
std::vector<strategy_case> cpu_cases() {
  std::vector<strategy_case> cases;
  for (const sieve::strategy_info& s : sieve::compaction_strategies()) {
    for (std::size_t f = 0; f < sieve::form_count; ++f) {
      if (!s.takes(sieve::backend::cpu, static_cast<form>(f))) continue;
      for (const bool in_place : {true, false}) {
        if (in_place ? !s.in_place : !s.out_of_place) continue;
        cases.push_back({std::string(s.name), static_cast<form>(f), in_place, s.stable});
      }
    }
  }
  return cases;
}

std::vector<strategy_case> cpu_cases_times_types() {
  std::vector<strategy_case> cases;
  for (const strategy_case& c : cpu_cases())
    for (const item t : every_item) {
      strategy_case x = c;
      x.type = t;
      cases.push_back(x);
    }
  return cases;
}

// Sizes every case runs: the edges around 1, 32 and 1024, and a few random ones (fixed seed),
// one large enough for Redzone's parallel path (k >= 32768).
std::vector<std::size_t> sizes(bool with_big) {
  std::mt19937_64 rng(seed);
  std::vector<std::size_t> n = {0, 1, 2, 31, 32, 33, 1023, 1024, 1025};
  n.push_back(34 + rng() % 900);
  n.push_back(1100 + rng() % 20000);
  n.push_back(70001 + rng() % 50000);
  if (with_big) n.push_back(big_n);
  return n;
}

// Runs one scenario through one strategy, checks the count, the items, and (out of place) that the
// input is untouched and nothing is written past the output span.
template <class T, class Make>
void check_scenario(const strategy_case& c, const scenario& s, const Make& make_item, bool checked) {
  SCOPED_TRACE("n=" + std::to_string(s.n) + " " + s.label + (checked ? " (checked)" : ""));
  std::vector<T> items(s.n);
  for (std::size_t i = 0; i < s.n; ++i) items[i] = make_item(i);
  std::vector<T> want;
  for (std::size_t i = 0; i < s.n; ++i)
    if (s.keep[i]) want.push_back(items[i]);

  selection_holder holder;
  const sieve::selection sel = holder.make(c.f, s);
  sieve::options opt;
  opt.checked = checked;

  std::size_t m = 0;
  std::span<const T> got;
  std::vector<T> out;
  if (c.in_place) {
    try {
      m = sieve::compact(c.strategy, std::span<T>(items), sel, opt);
    } catch (const std::exception& e) {
      FAIL() << "threw: " << e.what();
    }
    ASSERT_LE(m, items.size());
    got = std::span<const T>(items).first(m);
  } else {
    const std::vector<T> before = items;
    const std::size_t room = out_room(c.f, s), guard = 17;
    out.assign(room + guard, sentinel<T>());
    try {
      m = sieve::compact_copy(c.strategy, std::span<const T>(items), std::span<T>(out.data(), room), sel, opt);
    } catch (const std::exception& e) {
      FAIL() << "threw: " << e.what();
    }
    ASSERT_TRUE(same_sequence<T>(items, before)) << "compact_copy changed its input";
    for (std::size_t g = room; g < out.size(); ++g)
      ASSERT_TRUE(same(out[g], sentinel<T>())) << "written past the output span, at slot " << g;
    ASSERT_LE(m, room);
    got = std::span<const T>(out).first(m);
  }
  ASSERT_EQ(m, want.size());
  ASSERT_TRUE(holder.predicate_ok(c.f));
  if (c.stable)
    ASSERT_TRUE(same_sequence<T>(got, want)) << "a stable strategy must keep the input order";
  else
    ASSERT_TRUE(same_multiset<T>(got, want));
}

template <class T>
void run_all_sizes(const strategy_case& c, bool with_big) {
  std::mt19937_64 rng(seed);
  std::size_t count = 0;
  for (const std::size_t n : sizes(with_big)) {
    for (const scenario& s : scenarios_for(c.f, n, rng, n == big_n)) {
      check_scenario<T>(c, s, make<T>, (count++ % 2) == 0);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

class CompactProperty : public ::testing::TestWithParam<strategy_case> {};

TEST_P(CompactProperty, MatchesSequentialReference) {
  const strategy_case& c = GetParam();
  // The big size (2^20 + 7) for u32 only: enough to reach every parallel path, and quick.
  switch (c.type) {
    case item::u8: run_all_sizes<std::uint8_t>(c, false); break;
    case item::u16: run_all_sizes<std::uint16_t>(c, false); break;
    case item::u32: run_all_sizes<std::uint32_t>(c, true); break;
    case item::u64: run_all_sizes<std::uint64_t>(c, false); break;
    case item::f32: run_all_sizes<float>(c, false); break;
    case item::f64: run_all_sizes<double>(c, false); break;
    case item::s32: run_all_sizes<s32>(c, false); break;
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, CompactProperty, ::testing::ValuesIn(cpu_cases_times_types()),
                         [](const auto& info) { return case_name(info.param, true); });

// ---- the registry -------------------------------------------------------------------------------

// Redzone's Table 1, the one case split the CPU strategy and both CUDA algorithms switch on: the
// pair (R[i], Z[i]) with the red zone starting at z.
TEST(RedzoneCases, PairingFollowsTableOne) {
  using sieve::detail::redzone_case;
  using sieve::detail::redzone_pair;
  EXPECT_EQ(redzone_pair(3, 10, false), redzone_case::fill);                // A: Z[i] fills the hole R[i]
  EXPECT_EQ(redzone_pair(12, 10, true), redzone_case::drop);                // B: both in the red zone's dead
  EXPECT_EQ(redzone_pair(3, 10, true), redzone_case::destination_orphan);   // C: a hole without a source
  EXPECT_EQ(redzone_pair(12, 10, false), redzone_case::source_orphan);      // D: a source without a hole
  EXPECT_EQ(redzone_pair(10, 10, false), redzone_case::source_orphan);      // z itself is in the red zone
  EXPECT_EQ(redzone_pair(9, 10, false), redzone_case::fill);
  static_assert(redzone_pair(0, 1, true) == redzone_case::destination_orphan);  // constexpr: one copy for host and device
}

TEST(CompactionRegistry, ListsTheDocumentedCpuStrategies) {
  const auto all = sieve::compaction_strategies();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front().name, "auto");
  struct expect {
    const char* name;
    std::uint8_t forms;
    bool stable, in_place, out_of_place;
  };
  constexpr auto bit = [](form f) { return static_cast<std::uint8_t>(1U << static_cast<unsigned>(f)); };
  const std::uint8_t removals = bit(form::removal_list), flags = bit(form::byte_flags), mask = bit(form::bit_mask),
                     pred = bit(form::predicate);
  const expect documented[] = {
      {"redzone", removals, false, true, false},
      {"redzone-serial", removals, false, true, false},
      {"stencil", static_cast<std::uint8_t>(removals | flags), true, false, true},
      {"std", static_cast<std::uint8_t>(removals | flags | mask | pred), true, true, true},
      {"scan", static_cast<std::uint8_t>(flags | mask | pred), true, false, true},
      {"billeter", static_cast<std::uint8_t>(flags | mask | pred), true, false, true},
      {"auto", static_cast<std::uint8_t>(removals | flags | mask | pred), false, true, true},
  };
  for (const expect& e : documented) {
    SCOPED_TRACE(e.name);
    const sieve::strategy_info& s = sieve::compaction_strategy(e.name);
    EXPECT_EQ(s.name, e.name);
    EXPECT_EQ(s.cpu_forms, e.forms);
    if (std::string_view(e.name) != "auto") {
      EXPECT_EQ(s.stable, e.stable);
    }
    EXPECT_EQ(s.in_place, e.in_place);
    EXPECT_EQ(s.out_of_place, e.out_of_place);
  }
  EXPECT_EQ(sieve::compaction_strategy("atomic").cpu_forms, 0) << "atomic is CUDA-only";
  EXPECT_FALSE(sieve::compaction_strategy("atomic").runs_on(sieve::backend::cpu));
}

TEST(CompactionRegistry, NamesAreUniqueAndEveryCpuStrategyHasAMode) {
  const auto all = sieve::compaction_strategies();
  for (std::size_t i = 0; i < all.size(); ++i) {
    SCOPED_TRACE(std::string(all[i].name));
    EXPECT_FALSE(all[i].name.empty());
    EXPECT_EQ(sieve::compaction_strategy(all[i].name).name, all[i].name);
    EXPECT_EQ(sieve::compaction_strategy(all[i].name).cpu_forms, all[i].cpu_forms);
    for (std::size_t j = i + 1; j < all.size(); ++j) EXPECT_NE(all[i].name, all[j].name);
    if (all[i].runs_on(sieve::backend::cpu)) {
      EXPECT_TRUE(all[i].in_place || all[i].out_of_place);
    }
  }
  EXPECT_GE(cpu_cases().size(), 20U);  // the property tests above cover every one of these
}

TEST(CompactionRegistry, StrategiesThatFitMatchTheTable) {
  for (std::size_t f = 0; f < sieve::form_count; ++f)
    for (const bool in_place : {true, false}) {
      const std::string fit = sieve::strategies_that_fit(sieve::backend::cpu, static_cast<form>(f), in_place);
      for (const auto& s : sieve::compaction_strategies()) {
        const bool fits = s.takes(sieve::backend::cpu, static_cast<form>(f)) && (in_place ? s.in_place : s.out_of_place);
        // Names are listed comma-separated; look for the exact name.
        const std::string padded = ", " + fit + ",";
        EXPECT_EQ(padded.find(", " + std::string(s.name) + ",") != std::string::npos, fits)
            << s.name << " for form " << f << (in_place ? " in place" : " out of place") << ": " << fit;
      }
    }
}

// ---- Redzone moves O(k) items: survivors below the red zone stay where they are -----------------

TEST(Redzone, SurvivorsBelowTheRedZoneStayInPlace) {
  for (const auto& s : sieve::compaction_strategies()) {
    if (s.name.substr(0, 7) != "redzone") continue;
    SCOPED_TRACE(std::string(s.name));
    std::mt19937_64 rng(seed);
    for (const std::size_t n : {std::size_t{1000}, std::size_t{200003}}) {
      for (const std::size_t k : {n / 10, n / 2, n - 1}) {
        std::vector<std::uint32_t> items(n);
        std::iota(items.begin(), items.end(), 0U);
        std::vector<std::uint32_t> removals = random_subset(0, n, k, rng);
        std::vector<std::uint8_t> keep(n, 1);
        for (const auto r : removals) keep[r] = 0;
        const std::size_t m = sieve::compact(s.name, std::span(items), sieve::removal_list{std::span(removals)});
        ASSERT_EQ(m, n - k);
        for (std::size_t i = 0; i < m; ++i)
          if (keep[i]) {
            ASSERT_EQ(items[i], i) << "survivor " << i << " moved (n=" << n << ", k=" << k << ")";
          }
      }
    }
  }
}

// ---- struct-of-arrays records -------------------------------------------------------------------

class CompactRecord : public ::testing::TestWithParam<strategy_case> {};

// Runs `s` through the strategy on a record built by `columns` (a callable returning the columns'
// vectors for n items); `ids` reads item ids of a result; `fields_ok` checks slot j's fields agree.
template <class Columns>
void check_record_scenario(const strategy_case& c, const scenario& s, bool checked) {
  SCOPED_TRACE("n=" + std::to_string(s.n) + " " + s.label);
  Columns in(s.n);
  std::vector<std::uint64_t> want;
  for (std::size_t i = 0; i < s.n; ++i)
    if (s.keep[i]) want.push_back(i);

  selection_holder holder;
  const sieve::selection sel = holder.make(c.f, s);
  sieve::options opt;
  opt.checked = checked;
  std::size_t m = 0;
  std::vector<std::uint64_t> got;
  if (c.in_place) {
    try {
      m = sieve::compact(c.strategy, in.view(), sel, opt);
    } catch (const std::exception& e) {
      FAIL() << "threw: " << e.what();
    }
    ASSERT_LE(m, s.n);
    for (std::size_t j = 0; j < m; ++j) {
      ASSERT_TRUE(in.fields_ok(j)) << "the fields of slot " << j << " come from different items";
      got.push_back(in.id(j));
    }
  } else {
    const std::size_t room = out_room(c.f, s);
    Columns out(room, /*fill=*/false);
    try {
      m = sieve::compact_copy(c.strategy, in.const_view(), out.view(), sel, opt);
    } catch (const std::exception& e) {
      FAIL() << "threw: " << e.what();
    }
    ASSERT_LE(m, room);
    for (std::size_t i = 0; i < s.n; ++i) ASSERT_TRUE(in.fields_ok(i) && in.id(i) == i) << "input changed";
    for (std::size_t j = 0; j < m; ++j) {
      ASSERT_TRUE(out.fields_ok(j)) << "the fields of slot " << j << " come from different items";
      got.push_back(out.id(j));
    }
  }
  ASSERT_EQ(m, want.size());
  ASSERT_TRUE(holder.predicate_ok(c.f));
  if (!c.stable) std::sort(got.begin(), got.end());
  ASSERT_EQ(got, want);
}

// Three columns of different widths: u32 id, double, u8.
struct three_columns {
  std::vector<std::uint32_t> a;
  std::vector<double> b;
  std::vector<std::uint8_t> c;
  explicit three_columns(std::size_t n, bool fill = true) : a(n), b(n), c(n) {
    for (std::size_t i = 0; i < n && fill; ++i) {
      a[i] = static_cast<std::uint32_t>(i);
      b[i] = static_cast<double>(i) * 0.5 + 1;
      c[i] = static_cast<std::uint8_t>(i * 7 + 3);
    }
  }
  sieve::record view() { return {std::span(a), std::span(b), std::span(c)}; }
  sieve::const_record const_view() const {
    return {std::span<const std::uint32_t>(a), std::span<const double>(b), std::span<const std::uint8_t>(c)};
  }
  std::uint64_t id(std::size_t j) const { return a[j]; }
  bool fields_ok(std::size_t j) const {
    const std::uint64_t i = a[j];
    return b[j] == static_cast<double>(i) * 0.5 + 1 && c[j] == static_cast<std::uint8_t>(i * 7 + 3);
  }
};

struct w12 {
  std::uint32_t v[3];
};

// Eight columns (the most a record takes) of widths 8, 1, 2, 4, 4, 8, 12, 32.
struct eight_columns {
  std::vector<std::uint64_t> id_;
  std::vector<std::uint8_t> c1;
  std::vector<std::uint16_t> c2;
  std::vector<std::uint32_t> c3;
  std::vector<float> c4;
  std::vector<double> c5;
  std::vector<w12> c6;
  std::vector<s32> c7;
  explicit eight_columns(std::size_t n, bool fill = true) : id_(n), c1(n), c2(n), c3(n), c4(n), c5(n), c6(n), c7(n) {
    for (std::size_t i = 0; i < n && fill; ++i) {
      id_[i] = i;
      c1[i] = make<std::uint8_t>(i);
      c2[i] = make<std::uint16_t>(i);
      c3[i] = make<std::uint32_t>(i);
      c4[i] = make<float>(i);
      c5[i] = make<double>(i);
      c6[i] = {{static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(i + 1), static_cast<std::uint32_t>(~i)}};
      c7[i] = make<s32>(i);
    }
  }
  sieve::record view() {
    return {std::span(id_), std::span(c1), std::span(c2), std::span(c3),
            std::span(c4),  std::span(c5), std::span(c6), std::span(c7)};
  }
  sieve::const_record const_view() const {
    return {std::span<const std::uint64_t>(id_), std::span<const std::uint8_t>(c1), std::span<const std::uint16_t>(c2),
            std::span<const std::uint32_t>(c3),  std::span<const float>(c4),        std::span<const double>(c5),
            std::span<const w12>(c6),            std::span<const s32>(c7)};
  }
  std::uint64_t id(std::size_t j) const { return id_[j]; }
  bool fields_ok(std::size_t j) const {
    const std::uint64_t i = id_[j];
    const w12 w{{static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(i + 1), static_cast<std::uint32_t>(~i)}};
    return c1[j] == make<std::uint8_t>(i) && c2[j] == make<std::uint16_t>(i) && c3[j] == make<std::uint32_t>(i) &&
           c4[j] == make<float>(i) && c5[j] == make<double>(i) && same(c6[j], w) && same(c7[j], make<s32>(i));
  }
};

template <class Columns>
void run_record_sizes(const strategy_case& c, std::initializer_list<std::size_t> ns) {
  std::mt19937_64 rng(seed + 1);
  std::size_t count = 0;
  for (const std::size_t n : ns) {
    for (const scenario& s : scenarios_for(c.f, n, rng, n >= 100000)) {
      check_record_scenario<Columns>(c, s, (count++ % 2) == 1);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST_P(CompactRecord, ThreeColumnsMoveTogether) {
  run_record_sizes<three_columns>(GetParam(), {0, 1, 2, 33, 1025, 70001});
}

TEST_P(CompactRecord, EightColumnsMoveTogether) { run_record_sizes<eight_columns>(GetParam(), {0, 1, 33, 1025, 40009}); }

INSTANTIATE_TEST_SUITE_P(Cpu, CompactRecord, ::testing::ValuesIn(cpu_cases()),
                         [](const auto& info) { return case_name(info.param, false); });

// ---- item widths: every strategy takes any width (std moves odd widths through an index list) --

class CompactWidths : public ::testing::TestWithParam<strategy_case> {};

template <std::size_t W>
void check_width(const strategy_case& c) {
  using T = wide<W>;
  SCOPED_TRACE("item width " + std::to_string(W));
  std::mt19937_64 rng(seed + W);
  // k < n/2 and k > n/2 for removal lists (auto resolves differently), random halves otherwise.
  std::vector<scenario> ss;
  if (c.f == form::removal_list) {
    for (const std::size_t k : {100, 900}) ss.push_back(from_removals("random", 1000, random_subset(0, 1000, k, rng)));
  } else {
    ss.push_back(from_keep("uniform p=0.5", uniform_keep(1000, 0.5, rng), rng));
  }
  for (const scenario& s : ss) {
    check_scenario<T>(c, s, make_wide<T>, true);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST_P(CompactWidths, AnyWidth) {
  const strategy_case& c = GetParam();
  check_width<3>(c);
  check_width<12>(c);
  check_width<24>(c);
  check_width<40>(c);
  check_width<48>(c);
  check_width<64>(c);
  check_width<100>(c);
}

INSTANTIATE_TEST_SUITE_P(Cpu, CompactWidths, ::testing::ValuesIn(cpu_cases()),
                         [](const auto& info) { return case_name(info.param, false); });

TEST(CompactWidth40, EveryStrategyTakesA40ByteStruct) {
  struct s40 {
    std::uint64_t v[5];
  };
  static_assert(sizeof(s40) == 40);
  std::vector<s40> items(64);
  for (std::size_t i = 0; i < items.size(); ++i) items[i] = {{i, i + 1, i + 2, i + 3, i + 4}};
  std::vector<std::uint8_t> flags(items.size());
  for (std::size_t i = 0; i < flags.size(); ++i) flags[i] = i % 3 == 0;
  std::vector<s40> out(items.size());
  for (const char* name : {"std", "stencil", "scan", "billeter"}) {
    SCOPED_TRACE(name);
    std::fill(out.begin(), out.end(), s40{});
    const std::size_t m =
        sieve::compact_copy(name, std::span<const s40>(items), std::span(out), sieve::byte_flags{flags});
    ASSERT_EQ(m, 22U);
    for (std::size_t j = 0; j < m; ++j) EXPECT_EQ(out[j].v[4], 3 * j + 4);
  }
  std::vector<s40> in_place = items;
  ASSERT_EQ(sieve::compact("std", std::span(in_place), sieve::byte_flags{flags}), 22U);
  for (std::size_t j = 0; j < 22; ++j) EXPECT_EQ(in_place[j].v[0], 3 * j);
  std::vector<std::uint32_t> removals = {5, 63, 0, 17};
  EXPECT_EQ(sieve::compact("redzone", std::span(items), sieve::removal_list{removals}), 60U);
}

// ---- odds and ends ------------------------------------------------------------------------------

TEST(CompactOptions, PhaseTimesAreReset) {
  std::vector<std::uint32_t> items(5000);
  std::iota(items.begin(), items.end(), 0U);
  std::vector<std::uint8_t> flags(items.size(), 1);
  std::vector<std::uint32_t> out(items.size());
  for (const auto& s : sieve::compaction_strategies()) {
    if (!s.takes(sieve::backend::cpu, form::byte_flags) || !s.out_of_place) continue;
    SCOPED_TRACE(std::string(s.name));
    sieve::phase_times t{-1, -1, -1};
    sieve::options opt;
    opt.times = &t;
    EXPECT_EQ(sieve::compact_copy(s.name, std::span<const std::uint32_t>(items), std::span(out),
                                  sieve::byte_flags{flags}, opt),
              items.size());
    EXPECT_GE(t.phase1_ms, 0);
    EXPECT_GE(t.phase2_ms, 0);
    EXPECT_GE(t.phase3_ms, 0);
    EXPECT_EQ(t.phase1_ms, 0) << "phase 1 marks removal lists only";
  }
}

TEST(CompactOptions, CheckedAndUncheckedAgreeOnValidLists) {
  std::mt19937_64 rng(seed);
  const std::size_t n = 100000;
  for (const auto& s : sieve::compaction_strategies()) {
    if (!s.takes(sieve::backend::cpu, form::removal_list) || !s.in_place) continue;
    SCOPED_TRACE(std::string(s.name));
    const std::vector<std::uint32_t> removals = random_subset(0, n, 40000, rng);
    std::vector<std::uint64_t> a(n), b(n);
    std::iota(a.begin(), a.end(), 0U);
    b = a;
    std::vector<std::uint32_t> ra = removals, rb = removals;
    sieve::options on, off;
    on.checked = true;
    off.checked = false;
    const std::size_t ma = sieve::compact(s.name, std::span(a), sieve::removal_list{ra}, on);
    const std::size_t mb = sieve::compact(s.name, std::span(b), sieve::removal_list{rb}, off);
    ASSERT_EQ(ma, n - removals.size());
    ASSERT_EQ(mb, ma);
    a.resize(ma);
    b.resize(mb);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    EXPECT_EQ(a, b);
  }
}

// <sieve/hash.hpp>'s mix64 is SplitMix64's finaliser: SplitMix64 seeded with 0 (the state advanced
// by the golden-ratio gamma, then mixed) gives the published first outputs. The renderer's random
// numbers and the compaction benchmark's digests both hash with this one copy.
TEST(Hash, Mix64IsSplitMix64sFinaliser) {
  static_assert(sieve::mix64(0) == 0);  // constexpr, and 0 is its fixed point
  constexpr std::uint64_t gamma = 0x9E3779B97F4A7C15ULL;
  EXPECT_EQ(sieve::mix64(1 * gamma), 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(sieve::mix64(2 * gamma), 0x6E789E6AA1B965F4ULL);
  EXPECT_EQ(sieve::mix64(3 * gamma), 0x06C45D188009454FULL);
}

}  // namespace
