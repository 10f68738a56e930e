// GPU tests (ctest label `gpu`): the CUDA launch path of the exec shim and the CUDA compaction
// entry points. Without a device every test is skipped with GTEST_SKIP("no CUDA device").
#include <exec/cuda.cuh>
#include <sieve/compaction.hpp>
#include <sieve/compaction/cuda_check.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace {

#define REQUIRE_DEVICE() \
  if (!sieve::cuda::available()) GTEST_SKIP() << "no CUDA device: " << sieve::cuda::device_description()

template <class T>
struct device_array {
  T* data = nullptr;
  std::size_t n = 0;
  explicit device_array(std::size_t count) : n(count) { SIEVE_CUDA_CHECK(cudaMalloc(&data, std::max<std::size_t>(n, 1) * sizeof(T))); }
  explicit device_array(const std::vector<T>& host) : device_array(host.size()) {
    SIEVE_CUDA_CHECK(cudaMemcpy(data, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~device_array() { cudaFree(data); }
  device_array(const device_array&) = delete;
  std::vector<T> host(std::size_t count) const {
    std::vector<T> h(count);
    SIEVE_CUDA_CHECK(cudaMemcpy(h.data(), data, count * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
  std::span<T> span() const { return {data, n}; }
};

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

TEST(CudaCompaction, TooSmallAWorkspaceIsAnError) {
  REQUIRE_DEVICE();
  device_array<std::uint32_t> items(64), out(64);
  device_array<std::uint8_t> flags(64);
  const sieve::record in(items.span()), o(out.span());
  EXPECT_THROW(sieve::cuda::compact_copy("atomic", in, o, sieve::byte_flags{flags.span()}, {nullptr, 0}),
               sieve::error);
}

}  // namespace
