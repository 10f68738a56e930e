// GPU tests (ctest label `gpu`) of the device-count calls: every CUDA strategy x form x mode, on a
// one-column record and on the renderer's path-queue shape (columns of 4, 28, 12 and 4 bytes), is
// captured once in a CUDA graph (enqueued directly for `thrust`, which syncs) and replayed with live
// counts 0, 1, the capacity and random ones below it, each checked against a reference. Items,
// flags and list entries past the live counts are poisoned so that reading them shows. Also the
// producer-side append (sieve/compaction/append.cuh): every surviving item exactly once.
#include <sieve/compaction.hpp>
#include <sieve/compaction/append.cuh>
#include <sieve/compaction/cuda_check.hpp>

#include <gtest/gtest.h>

#include "cuda_support.cuh"

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

using sieve::test::device_array;

// The record shapes: one u32 column, or the path queue's four columns (item i's every byte derived
// from i, so a row can be checked whole).
constexpr std::array<std::uint32_t, 4> path_widths = {4, 28, 12, 4};

struct columns {
  std::vector<std::uint32_t> widths;
  std::size_t capacity;
  std::vector<std::unique_ptr<device_array<std::byte>>> in, out;
  std::vector<std::vector<std::byte>> host;  // the input, per column

  columns(bool paths, std::size_t cap) : capacity(cap) {
    widths = paths ? std::vector<std::uint32_t>(path_widths.begin(), path_widths.end()) : std::vector<std::uint32_t>{4};
    for (std::uint32_t w : widths) {
      in.push_back(std::make_unique<device_array<std::byte>>(cap * w));
      out.push_back(std::make_unique<device_array<std::byte>>(cap * w));
      std::vector<std::byte> h(cap * w);
      for (std::size_t i = 0; i < cap; ++i)
        for (std::uint32_t b = 0; b < w; ++b) h[i * w + b] = static_cast<std::byte>((i * 131 + b * 7 + w) >> (b % 3));
      // Byte 0..3 of every column: the index, so each row says which item it is.
      for (std::size_t i = 0; i < cap; ++i) std::memcpy(&h[i * w], &i, 4);
      host.push_back(std::move(h));
    }
  }
  void restore() {
    for (std::size_t c = 0; c < widths.size(); ++c) in[c]->upload(host[c]);
  }
  sieve::record record_of(bool output) const {
    std::vector<sieve::column> cols;
    for (std::size_t c = 0; c < widths.size(); ++c) cols.push_back({(output ? out : in)[c]->data, widths[c]});
    return sieve::record(cols, capacity);
  }
  // The first m items of the result, column by column, as item indices (checked row by row).
  std::vector<std::uint32_t> result(bool in_place, std::size_t m) const {
    std::vector<std::uint32_t> ids(m);
    for (std::size_t c = 0; c < widths.size(); ++c) {
      const std::uint32_t w = widths[c];
      const auto got = (in_place ? in : out)[c]->host(m * w);
      for (std::size_t j = 0; j < m; ++j) {
        std::uint32_t id;
        std::memcpy(&id, &got[j * w], 4);
        if (c == 0) ids[j] = id;
        EXPECT_EQ(id, ids[j]) << "column " << c << " separated from column 0 at slot " << j;
        if (id >= capacity) {
          ADD_FAILURE() << "slot " << j << " holds no item (" << id << ")";
          continue;
        }
        EXPECT_EQ(0, std::memcmp(&got[j * w], &host[c][std::size_t{id} * w], w)) << "item " << id << " column " << c;
      }
    }
    return ids;
  }
};

using param = std::tuple<std::string, sieve::form, bool, bool, std::size_t>;  // strategy, form, in place, paths, capacity

class CudaDeviceCounts : public ::testing::TestWithParam<param> {};

TEST_P(CudaDeviceCounts, GraphReplaysMatchTheReference) {
  REQUIRE_DEVICE();
  const auto [strategy, f, in_place, paths, capacity] = GetParam();
  const bool graph = strategy != "thrust";  // thrust reads the counts back: not capturable
  std::mt19937_64 rng(capacity * 7 + static_cast<int>(f) * 3 + in_place + 2 * paths);
  columns items(paths, capacity);
  const sieve::record in = items.record_of(false), out = items.record_of(true);

  device_array<std::uint8_t> d_flags(capacity);
  device_array<std::uint32_t> d_mask((capacity + 31) / 32), d_removals(capacity);
  device_array<std::uint64_t> d_counts(3);  // live n, live k, result
  std::uint64_t* live_n = d_counts.data;
  std::uint64_t* live_k = d_counts.data + 1;
  std::uint64_t* result = d_counts.data + 2;
  sieve::selection keep = sieve::byte_flags{std::span<const std::uint8_t>(d_flags.data, capacity)};
  if (f == sieve::form::bit_mask) keep = sieve::bit_mask{std::span<const std::uint32_t>(d_mask.data, d_mask.n)};
  if (f == sieve::form::removal_list) keep = sieve::removal_list{d_removals.span()};

  device_array<std::byte> ws(sieve::cuda::workspace_bytes(strategy, in, f, in_place));
  const sieve::cuda::workspace space{ws.data, ws.n};
  const sieve::cuda::device_counts live{live_n, live_k};
  cudaStream_t stream;
  SIEVE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  auto enqueue = [&] {
    if (in_place)
      sieve::cuda::compact_async(strategy, in, keep, live, result, space, stream);
    else
      sieve::cuda::compact_copy_async(strategy, in, out, keep, live, result, space, stream);
  };
  cudaGraphExec_t exec = nullptr;
  if (graph) {
    cudaGraph_t g;
    SIEVE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    enqueue();
    SIEVE_CUDA_CHECK(cudaStreamEndCapture(stream, &g));
    SIEVE_CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
    SIEVE_CUDA_CHECK(cudaGraphDestroy(g));
  }

  std::vector<std::size_t> counts = {0, 1, capacity, capacity / 2 + 17};
  for (int r = 0; r < 3; ++r) counts.push_back(rng() % (capacity + 1));
  for (std::size_t n : counts) {
    n = std::min(n, capacity);
    SCOPED_TRACE("live n = " + std::to_string(n));
    // Inputs: past n every item would be kept (flags, mask) and the list holds out-of-range indices.
    std::vector<std::uint8_t> flags(capacity, 1);
    std::vector<std::uint32_t> mask((capacity + 31) / 32, ~0U), removals(capacity, 0xFFFFFFFFU);
    std::vector<std::uint8_t> kept(capacity, 0);
    std::size_t k = 0;
    if (f == sieve::form::removal_list) {
      std::vector<std::uint32_t> all(n);
      std::iota(all.begin(), all.end(), 0U);
      std::shuffle(all.begin(), all.end(), rng);
      k = n == 0 ? 0 : rng() % (n + 1);
      if (n > 2 && rng() % 3 == 0) k = n / 2;
      std::copy(all.begin(), all.begin() + static_cast<long>(k), removals.begin());
      std::fill(kept.begin(), kept.begin() + static_cast<long>(n), 1);
      for (std::size_t i = 0; i < k; ++i) kept[removals[i]] = 0;
    } else {
      const unsigned percent = static_cast<unsigned>(rng() % 101);
      for (std::size_t i = 0; i < n; ++i) {
        flags[i] = rng() % 100 < percent;
        kept[i] = flags[i];
      }
      for (std::size_t i = 0; i < capacity; ++i)
        if (!flags[i]) mask[i / 32] &= ~(1U << (i % 32));
    }
    std::vector<std::uint32_t> expected;
    for (std::size_t i = 0; i < capacity; ++i)
      if (kept[i]) expected.push_back(static_cast<std::uint32_t>(i));

    items.restore();
    d_flags.upload(flags);
    d_mask.upload(mask);
    d_removals.upload(removals);
    d_counts.upload({n, k, 0xDEADBEEFULL});
    if (graph) SIEVE_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    else enqueue();
    SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::size_t m = d_counts.host(3)[2];
    ASSERT_EQ(m, expected.size());
    auto ids = items.result(in_place, m);
    if (!sieve::compaction_strategy(strategy).stable) std::sort(ids.begin(), ids.end());
    ASSERT_EQ(ids, expected);
  }
  if (exec) cudaGraphExecDestroy(exec);
  cudaStreamDestroy(stream);
}

std::vector<param> params() {
  std::vector<param> p;
  for (const auto& s : sieve::compaction_strategies()) {
    if (!s.runs_on(sieve::backend::cuda)) continue;
    for (const sieve::form f : {sieve::form::removal_list, sieve::form::byte_flags, sieve::form::bit_mask}) {
      if (!s.takes(sieve::backend::cuda, f)) continue;
      for (const bool in_place : {false, true}) {
        if (in_place ? !s.in_place : !s.out_of_place) continue;
        // Either side of the one-kernel limit of `space` (2^17) and of its 32K-item blocks.
        for (const std::size_t capacity : {std::size_t{1000}, std::size_t{40'000}, std::size_t{300'007}})
          for (const bool paths : {false, true}) p.emplace_back(std::string(s.name), f, in_place, paths, capacity);
      }
    }
  }
  if (p.empty()) p.emplace_back("atomic", sieve::form::byte_flags, false, false, 1000);  // no CUDA: skipped
  return p;
}

std::string param_name(const ::testing::TestParamInfo<param>& info) {
  const auto& [strategy, f, in_place, paths, capacity] = info.param;
  std::string name = strategy + "_" + (f == sieve::form::removal_list ? "removals" : f == sieve::form::byte_flags ? "flags" : "mask") +
                     (in_place ? "_inplace" : "_copy") + (paths ? "_paths48" : "_u32") + "_c" + std::to_string(capacity);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Strategies, CudaDeviceCounts, ::testing::ValuesIn(params()), param_name);

TEST(CudaDeviceCounts, ResultMayNotAliasALiveCount) {
  REQUIRE_DEVICE();
  device_array<std::uint32_t> a(64), b(64);
  device_array<std::uint8_t> flags(64);
  device_array<std::uint64_t> counts(2);
  device_array<std::byte> ws(sieve::cuda::workspace_bytes("space", sieve::record(a.span()), sieve::form::byte_flags, false));
  EXPECT_THROW(sieve::cuda::compact_copy_async("space", sieve::record(a.span()), sieve::record(b.span()),
                                               sieve::byte_flags{std::span<const std::uint8_t>(flags.data, 64)},
                                               sieve::cuda::device_counts{counts.data}, counts.data, {ws.data, ws.n}),
               sieve::error);
  EXPECT_THROW(sieve::cuda::compact_copy_async("space", sieve::record(a.span()), sieve::record(b.span().first(10)),
                                               sieve::byte_flags{std::span<const std::uint8_t>(flags.data, 64)},
                                               sieve::cuda::device_counts{counts.data}, counts.data + 1, {ws.data, ws.n}),
               sieve::error)
      << "an output smaller than the capacity";
}

// ---- producer-side append ------------------------------------------------------------------------

// Items i < n survive when survives(i); odd warps call from a branch where only some lanes are.
__global__ void produce(std::size_t n, std::uint32_t seed, std::uint32_t* queue, std::uint32_t* count,
                        std::uint64_t* count64, std::uint32_t* queue64) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::uint32_t h = (static_cast<std::uint32_t>(i) ^ seed) * 2654435761U;
  const bool survives = (h >> 7) % 3 != 0;
  if ((i / 32) % 2 == 0) {
    const std::uint32_t slot = sieve::cuda::warp_append(count, survives);
    if (survives) queue[slot] = static_cast<std::uint32_t>(i);
  } else if (h % 5 != 0) {  // a divergent branch: only these lanes append
    const std::uint64_t slot = sieve::cuda::warp_append(count64, survives);
    if (survives) queue64[slot] = static_cast<std::uint32_t>(i);
  }
}

TEST(CudaAppend, EverySurvivorExactlyOnce) {
  REQUIRE_DEVICE();
  for (const std::size_t n : {std::size_t{1}, std::size_t{33}, std::size_t{100'003}}) {
    const std::uint32_t seed = static_cast<std::uint32_t>(n * 977);
    device_array<std::uint32_t> queue(n), queue64(n), count(1);
    device_array<std::uint64_t> count64(1);
    count.upload({0});
    count64.upload({0});
    produce<<<static_cast<unsigned>((n + 255) / 256), 256>>>(n, seed, queue.data, count.data, count64.data,
                                                            queue64.data);
    SIEVE_CUDA_CHECK(cudaGetLastError());
    SIEVE_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<std::uint32_t> want32, want64;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t h = (static_cast<std::uint32_t>(i) ^ seed) * 2654435761U;
      if ((h >> 7) % 3 == 0) continue;
      if ((i / 32) % 2 == 0) want32.push_back(static_cast<std::uint32_t>(i));
      else if (h % 5 != 0) want64.push_back(static_cast<std::uint32_t>(i));
    }
    const std::size_t m32 = count.host(1)[0], m64 = count64.host(1)[0];
    ASSERT_EQ(m32, want32.size());
    ASSERT_EQ(m64, want64.size());
    auto got32 = queue.host(m32), got64 = queue64.host(m64);
    std::sort(got32.begin(), got32.end());
    std::sort(got64.begin(), got64.end());
    EXPECT_EQ(got32, want32);
    EXPECT_EQ(got64, want64);
  }
}

}  // namespace

// ---- checked mode on the device ------------------------------------------------------------------

namespace {

// Every strategy that takes removal lists on the GPU, checked by default: a list with an index >= n
// or an index twice is an error (synchronous calls throw, naming it; asynchronous ones leave the
// items as they were and set the count to invalid_count, also replayed in a graph with device
// counts), a valid one compacts as unchecked.
class CudaCheckedByDefault : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaCheckedByDefault, BadListsAreRefusedOnTheDevice) {
  REQUIRE_DEVICE();
  const std::string strategy = GetParam();
  // The library's own default, in every build type: nothing here switches it on.
  ASSERT_TRUE(sieve::checked_default());
  const std::size_t n = 20'000;
  std::vector<std::uint32_t> ids(n);
  std::iota(ids.begin(), ids.end(), 0U);
  device_array<std::uint32_t> items(n), list(n);
  device_array<std::uint64_t> counts(3);  // result, live n, live k
  const sieve::record rec(items.span());
  const bool in_place = sieve::compaction_strategy(strategy).in_place;
  device_array<std::uint32_t> out(n);
  device_array<std::byte> ws(sieve::cuda::workspace_bytes(strategy, rec, sieve::form::removal_list, in_place));
  const sieve::cuda::workspace space{ws.data, ws.n};

  struct bad_list {
    std::vector<std::uint32_t> indices;
    std::string says;
  };
  std::vector<std::uint32_t> valid = {5, 17, 9000, 19'999};
  for (std::uint32_t i = 100; i < 12'000; i += 3) valid.push_back(i);  // past Algorithm 1's 8192
  const std::vector<bad_list> bad = {{{5, 17, 20'000, 3}, "index 20000 at position 2 is out of range"},
                                     {{5, 17, 5, 3}, "index 5 appears more than once"},
                                     {[&] { auto v = valid; v.push_back(9000); return v; }(), "index 9000 appears more than once"}};
  auto run_sync = [&](const std::vector<std::uint32_t>& r) {
    items.upload(ids);
    list.upload(r);
    const sieve::removal_list keep{list.span().first(r.size())};
    return in_place ? sieve::cuda::compact(strategy, rec, keep, space)
                    : sieve::cuda::compact_copy(strategy, rec, sieve::record(out.span()), keep, space);
  };
  for (const auto& b : bad) {
    SCOPED_TRACE(b.says);
    try {
      run_sync(b.indices);
      ADD_FAILURE() << "no error";
    } catch (const sieve::error& e) {
      EXPECT_NE(std::string(e.what()).find(b.says), std::string::npos) << e.what();
    }
    if (in_place) EXPECT_EQ(items.host(), ids) << "a refused list moved items";
  }
  EXPECT_EQ(run_sync(valid), n - valid.size());

  // Asynchronous, counts on the device, one graph replayed over a good, a bad and a good list.
  cudaStream_t stream;
  SIEVE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const sieve::removal_list keep{list.span()};
  const sieve::cuda::device_counts live{counts.data + 1, counts.data + 2};
  auto enqueue = [&] {
    if (in_place) sieve::cuda::compact_async(strategy, rec, keep, live, counts.data, space, stream);
    else sieve::cuda::compact_copy_async(strategy, rec, sieve::record(out.span()), keep, live, counts.data, space, stream);
  };
  const bool graph = strategy != "thrust";  // thrust reads the counts back: not capturable
  cudaGraph_t g = nullptr;
  cudaGraphExec_t exec = nullptr;
  if (graph) {
    SIEVE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    enqueue();
    SIEVE_CUDA_CHECK(cudaStreamEndCapture(stream, &g));
    SIEVE_CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
  }
  const std::array<const std::vector<std::uint32_t>*, 4> lists = {&valid, &bad[1].indices, &bad[0].indices, &valid};
  for (const auto* r : lists) {
    items.upload(ids);
    list.upload(*r);
    counts.upload({0, n, r->size()});
    if (graph) SIEVE_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    else enqueue();
    SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::uint64_t m = counts.host(1)[0];
    if (r == lists[0]) {
      EXPECT_EQ(m, n - valid.size());
    } else {
      EXPECT_EQ(m, sieve::cuda::invalid_count);
      if (in_place) EXPECT_EQ(items.host(), ids) << "a refused list moved items";
    }
  }
  if (exec) cudaGraphExecDestroy(exec);
  if (g) cudaGraphDestroy(g);
  cudaStreamDestroy(stream);

  // Opted out, a valid list compacts as before.
  items.upload(ids);
  list.upload(valid);
  const sieve::removal_list first{list.span().first(valid.size())};
  const std::size_t m = in_place ? sieve::cuda::compact(strategy, rec, first, space, nullptr, {.checked = false})
                                 : sieve::cuda::compact_copy(strategy, rec, sieve::record(out.span()), first, space,
                                                             nullptr, {.checked = false});
  EXPECT_EQ(m, n - valid.size());
}

std::vector<std::string> removal_strategies() {
  std::vector<std::string> names;
  for (const auto& s : sieve::compaction_strategies())
    if (s.takes(sieve::backend::cuda, sieve::form::removal_list)) names.emplace_back(s.name);
  if (names.empty()) names.emplace_back("redzone");  // no CUDA: skipped
  return names;
}

INSTANTIATE_TEST_SUITE_P(Strategies, CudaCheckedByDefault, ::testing::ValuesIn(removal_strategies()));

}  // namespace
