// GPU tests (ctest label `gpu`): the CUDA launch path of the exec shim and the CUDA compaction
// entry points. Without a device every test is skipped with GTEST_SKIP("no CUDA device").
#include <exec/cuda.cuh>
#include <exec/device_array.cuh>
#include <sieve/compaction.hpp>
#include <sieve/compaction/cuda_check.hpp>
#include <sieve/compaction/cuda_device.hpp>

#include <gtest/gtest.h>

#include "cuda_support.cuh"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace {

using sieve::test::device_array;

// One per-item body, run by the shim on both backends (nvcc wants extended lambdas outside the
// test's private TestBody, hence a free function).
SIEVE_HD inline void fill_item(std::uint32_t i, std::uint32_t* out) { out[i] = i * 2654435761U + (i >> 7); }

template <class Exec>
void fill(Exec exec, std::uint32_t* out, std::size_t n) {
  sieve::exec::parallel_for(exec, "fill", n, [=] SIEVE_HD(std::uint32_t i) { fill_item(i, out); });
}

TEST(CudaExec, ParallelForRunsTheSameBodyAsTheCpu) {
  REQUIRE_DEVICE();
  const std::size_t n = 1'000'003;
  std::vector<std::uint32_t> cpu(n, 0);
  fill(sieve::exec::cpu{}, cpu.data(), n);
  device_array<std::uint32_t> gpu(n);
  SIEVE_CUDA_CHECK(cudaMemset(gpu.data, 0xff, n * sizeof(std::uint32_t)));  // poison: every slot must be written
  fill(sieve::exec::cuda{}, gpu.data, n);
  SIEVE_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(gpu.host(n), cpu);
}

// The SM count, and events as owning objects: a timer around a kernel, an event moved (the moved-from
// one holds nothing and destroys nothing).
TEST(CudaDevice, SmCountAndEvents) {
  REQUIRE_DEVICE();
  EXPECT_GT(sieve::cuda::sm_count(), 0);
  const std::size_t n = 1 << 20;
  device_array<std::uint32_t> gpu(n);
  sieve::cuda::event_timer timer;
  timer.start();
  fill(sieve::exec::cuda{}, gpu.data, n);
  EXPECT_GE(timer.stop_ms(), 0.0F);
  sieve::cuda::event a;
  a.record();
  const cudaEvent_t raw = a.get();
  sieve::cuda::event b = std::move(a);
  EXPECT_EQ(b.get(), raw);
  EXPECT_EQ(a.get(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  b.synchronize();
  sieve::cuda::event c;
  c.record();
  c.synchronize();
  EXPECT_GE(c.ms_since(b), 0.0F);
}

class CudaCompaction : public ::testing::TestWithParam<std::tuple<std::string, std::size_t, int>> {};

// Every CUDA strategy that takes flags or masks out of place, against the CPU `std` result as a
// multiset (or exactly, for stable strategies), on a record of two columns.
TEST_P(CudaCompaction, MatchesTheCpuReference) {
  REQUIRE_DEVICE();
  const auto [strategy, n, density_percent] = GetParam();
  std::mt19937 rng(static_cast<unsigned>(n * 131 + density_percent));
  std::vector<std::uint32_t> ids(n);
  std::vector<double> values(n);
  std::vector<std::uint8_t> flags(n);
  std::vector<std::uint32_t> mask((n + 31) / 32, 0);
  for (std::size_t i = 0; i < n; ++i) {
    ids[i] = static_cast<std::uint32_t>(i);
    values[i] = 0.5 * static_cast<double>(i);
    flags[i] = static_cast<int>(rng() % 100) < density_percent;
    mask[i / 32] |= std::uint32_t{flags[i]} << (i % 32);
  }
  std::vector<std::uint32_t> expected;
  for (std::size_t i = 0; i < n; ++i)
    if (flags[i]) expected.push_back(static_cast<std::uint32_t>(i));

  const auto& info = sieve::compaction_strategy(strategy);
  for (const sieve::form f : {sieve::form::byte_flags, sieve::form::bit_mask}) {
    if (!info.takes(sieve::backend::cuda, f)) continue;
    SCOPED_TRACE(std::string(sieve::to_string(f)));
    device_array<std::uint32_t> d_ids(ids), d_out_ids(n), d_mask(mask);
    device_array<double> d_values(values), d_out_values(n);
    device_array<std::uint8_t> d_flags(flags);
    const sieve::record in(d_ids.span(), d_values.span()), out(d_out_ids.span(), d_out_values.span());
    const sieve::selection keep = f == sieve::form::byte_flags ? sieve::selection{sieve::byte_flags{d_flags.span()}}
                                                               : sieve::selection{sieve::bit_mask{d_mask.span()}};
    device_array<std::byte> ws(sieve::cuda::workspace_bytes(strategy, in, f, false));
    const std::size_t m = sieve::cuda::compact_copy(strategy, in, out, keep, {ws.data, ws.n});
    ASSERT_EQ(m, expected.size());
    auto got_ids = d_out_ids.host(m);
    const auto got_values = d_out_values.host(m);
    for (std::size_t j = 0; j < m; ++j) ASSERT_EQ(got_values[j], 0.5 * got_ids[j]) << "fields separated at " << j;
    if (!info.stable) std::sort(got_ids.begin(), got_ids.end());
    EXPECT_EQ(got_ids, expected);
  }
}

std::vector<std::string> cuda_strategies() {
  std::vector<std::string> names;
  for (const auto& s : sieve::compaction_strategies())
    if (s.runs_on(sieve::backend::cuda) && s.out_of_place && s.name != "auto") names.emplace_back(s.name);
  if (names.empty()) names.emplace_back("atomic");  // a build without CUDA: the tests skip anyway
  return names;
}

INSTANTIATE_TEST_SUITE_P(Strategies, CudaCompaction,
                         ::testing::Combine(::testing::ValuesIn(cuda_strategies()),
                                            ::testing::Values(std::size_t{0}, std::size_t{1}, std::size_t{31},
                                                              std::size_t{32}, std::size_t{33}, std::size_t{1025},
                                                              std::size_t{(1 << 20) + 7}),
                                            ::testing::Values(0, 1, 50, 99, 100)),
                         [](const auto& info) {
                           std::string name = std::get<0>(info.param);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name + "_n" + std::to_string(std::get<1>(info.param)) + "_p" +
                                  std::to_string(std::get<2>(info.param));
                         });

class CudaRemoval : public ::testing::TestWithParam<std::tuple<std::string, std::size_t, int, int>> {};

// Every CUDA strategy that removes a list in place, against the CPU reference as a multiset, on a
// record of two columns; k = fraction of n, with `inside` % of the removals in the red zone (-1:
// drawn uniformly).
TEST_P(CudaRemoval, MatchesTheCpuReference) {
  REQUIRE_DEVICE();
  const auto [strategy, n, k_percent, inside] = GetParam();
  const std::size_t k = k_percent == 101 ? (n ? n - 1 : 0) : n * static_cast<std::size_t>(k_percent) / 100;
  const std::size_t z = n - k;
  std::mt19937_64 rng(n * 7 + static_cast<std::size_t>(k_percent) * 3 + static_cast<std::size_t>(inside + 1));
  std::vector<std::uint32_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = static_cast<std::uint32_t>(i);
  std::vector<std::uint32_t> removals;
  if (inside < 0) {
    std::shuffle(all.begin(), all.end(), rng);
    removals.assign(all.begin(), all.begin() + static_cast<long>(k));
  } else {
    // `inside` % of the k removals in the red zone [z, n), as far as the k - z slots below z allow.
    const std::size_t out_zone = std::min(z, k - k * static_cast<std::size_t>(inside) / 100), in_zone = k - out_zone;
    std::shuffle(all.begin(), all.begin() + static_cast<long>(z), rng);
    std::shuffle(all.begin() + static_cast<long>(z), all.end(), rng);
    removals.assign(all.begin(), all.begin() + static_cast<long>(out_zone));
    removals.insert(removals.end(), all.begin() + static_cast<long>(z), all.begin() + static_cast<long>(z + in_zone));
    std::shuffle(removals.begin(), removals.end(), rng);
  }
  std::vector<std::uint8_t> removed(n, 0);
  for (auto r : removals) removed[r] = 1;
  std::vector<std::uint32_t> ids(n), expected;
  std::vector<double> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    ids[i] = static_cast<std::uint32_t>(i);
    values[i] = -0.25 * static_cast<double>(i);
    if (!removed[i]) expected.push_back(static_cast<std::uint32_t>(i));
  }

  for (const bool one_column : {true, false}) {
    SCOPED_TRACE(one_column ? "one column" : "two columns");
    device_array<std::uint32_t> d_ids(ids), d_removals(removals);
    device_array<double> d_values(values);
    const sieve::record items = one_column ? sieve::record(d_ids.span()) : sieve::record(d_ids.span(), d_values.span());
    device_array<std::byte> ws(sieve::cuda::workspace_bytes(strategy, items, sieve::form::removal_list, true));
    const std::size_t m =
        sieve::cuda::compact(strategy, items, sieve::removal_list{d_removals.span()}, {ws.data, ws.n});
    ASSERT_EQ(m, n - k);
    auto got = d_ids.host(m);
    if (!one_column) {
      const auto got_values = d_values.host(m);
      for (std::size_t j = 0; j < m; ++j) ASSERT_EQ(got_values[j], -0.25 * got[j]) << "fields separated at " << j;
    }
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, expected);
  }
}

std::vector<std::string> cuda_removal_strategies() {
  std::vector<std::string> names;
  for (const auto& s : sieve::compaction_strategies())
    if (s.takes(sieve::backend::cuda, sieve::form::removal_list) && s.in_place) names.emplace_back(s.name);
  if (names.empty()) names.emplace_back("redzone");
  return names;
}

// Sizes either side of the one-block limit (8192 removals) and of the 2048-pair tiles; k = 0, 1 %,
// 2 %, 10 %, 50 %, 90 %, n - 1 (101) and n; red zone share r = 0, 50, 100 % and uniform (-1).
INSTANTIATE_TEST_SUITE_P(Strategies, CudaRemoval,
                         ::testing::Combine(::testing::ValuesIn(cuda_removal_strategies()),
                                            ::testing::Values(std::size_t{0}, std::size_t{1}, std::size_t{33},
                                                              std::size_t{4097}, std::size_t{16385},
                                                              std::size_t{100003}, std::size_t{(1 << 22) + 5}),
                                            ::testing::Values(0, 1, 2, 10, 50, 90, 101, 100),
                                            ::testing::Values(-1, 0, 50, 100)),
                         [](const auto& info) {
                           std::string name = std::get<0>(info.param);
                           std::replace(name.begin(), name.end(), '-', '_');
                           const int inside = std::get<3>(info.param);
                           return name + "_n" + std::to_string(std::get<1>(info.param)) + "_k" +
                                  std::to_string(std::get<2>(info.param)) + "_r" +
                                  (inside < 0 ? std::string("uniform") : std::to_string(inside));
                         });

TEST(CudaCompaction, TooSmallAWorkspaceIsAnError) {
  REQUIRE_DEVICE();
  device_array<std::uint32_t> items(64), out(64);
  device_array<std::uint8_t> flags(64);
  const sieve::record in(items.span()), o(out.span());
  EXPECT_THROW(sieve::cuda::compact_copy("atomic", in, o, sieve::byte_flags{flags.span()}, {nullptr, 0}),
               sieve::error);
}

// More device memory than exists is an error naming the size asked for and the size free, and the
// device stays usable after it.
TEST(CudaMemory, TooLargeAnAllocationNamesTheSizes) {
  REQUIRE_DEVICE();
  std::size_t free = 0, total = 0;
  SIEVE_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  const std::size_t asked = total + (std::size_t{1} << 30);
  try {
    sieve::exec::device_array<std::byte> too_big(asked);
    FAIL() << "allocated " << asked << " bytes on a device of " << total;
  } catch (const sieve::error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cannot allocate " + std::to_string(asked >> 20) + " MiB"), std::string::npos) << what;
    EXPECT_NE(what.find("MiB free of " + std::to_string(total >> 20)), std::string::npos) << what;
  }
  sieve::exec::device_array<std::uint32_t> fine(1024);
  fill(sieve::exec::cuda{}, fine.get(), fine.size());
  SIEVE_CUDA_CHECK(cudaDeviceSynchronize());
}

// Checked mode on the device finds what the CPU's finds, with the same words, and passes valid lists.
std::string check_message(const std::vector<std::uint32_t>& list, std::size_t n) {
  device_array<std::uint32_t> removals(list);
  device_array<std::byte> ws(sieve::cuda::removal_check_bytes(n));
  try {
    sieve::cuda::check_removals(sieve::removal_list{removals.span()}, n, {ws.data, ws.n});
  } catch (const sieve::error& e) {
    return e.what();
  }
  return "";
}

TEST(CudaCheckedMode, BadRemovalListsAreNamedValidOnesPass) {
  REQUIRE_DEVICE();
  std::vector<std::uint32_t> valid(5000);
  for (std::uint32_t i = 0; i < valid.size(); ++i) valid[i] = (i * 7919U) % 10007U;  // distinct, < 10007
  EXPECT_EQ(check_message(valid, 10007), "");
  EXPECT_EQ(check_message({}, 0), "");

  std::vector<std::uint32_t> twice = valid;
  twice[4000] = twice[17];
  const std::string t = check_message(twice, 10007);
  EXPECT_NE(t.find("index " + std::to_string(twice[17]) + " appears more than once"), std::string::npos) << t;

  std::vector<std::uint32_t> outside = valid;
  outside[3000] = 10007;
  const std::string o = check_message(outside, 10007);
  EXPECT_NE(o.find("index 10007 at position 3000 is out of range (n = 10007)"), std::string::npos) << o;

  EXPECT_NE(check_message({1, 2, 3}, 2).find("3 indices for 2 items"), std::string::npos);
  device_array<std::uint32_t> removals(std::vector<std::uint32_t>{0});
  EXPECT_THROW(sieve::cuda::check_removals(sieve::removal_list{removals.span()}, 1, {nullptr, 0}), sieve::error);
}

}  // namespace
