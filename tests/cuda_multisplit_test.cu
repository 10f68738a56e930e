// sieve::cuda::multisplit against the reference split (bench/multisplit/keys.hpp): every design x
// bucket count x id distribution around the tile sizes; records of several columns (the renderer's
// 48-byte path record among them); in place; live counts on the device (0, 1, the capacity, random)
// with the call captured once in a CUDA graph and replayed; checked mode. Unstable designs are
// checked bucket by bucket as sets.
#include <sieve/compaction.hpp>
#include <sieve/compaction/cuda_check.hpp>

#include <gtest/gtest.h>

#include "../bench/multisplit/keys.hpp"
#include "cuda_support.cuh"

#include <algorithm>
#include <cstdlib>
#include <array>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

using sieve::bench::bucket_distributions;
using sieve::bench::make_bucket_ids;
using sieve::bench::reference_split;
using sieve::bench::split_reference;
using sieve::test::device_array;

// The ballot designs take ceil(log2 buckets) ballots (1..5) up to 32 buckets; unchecked, a power of two
// of buckets adds an extra bin (2, 4, 8, 16, 32); 33: the first count past a lane's own bin.
constexpr unsigned bucket_counts[] = {1, 2, 3, 4, 8, 16, 31, 32, 33, 64, 255, 256};
constexpr std::size_t sizes[] = {0, 1, 2047, 4096, 4097, 100003};

struct ray28 {
  float v[7];
};
struct path {
  std::uint32_t pixel;
  ray28 ray;
  float beta[3];
  std::uint32_t depth;
};

struct workspace_buffer {
  void* data = nullptr;
  std::size_t bytes = 0;
  explicit workspace_buffer(std::size_t b) : bytes(b) { SIEVE_CUDA_CHECK(cudaMalloc(&data, std::max<std::size_t>(b, 1))); }
  ~workspace_buffer() { cudaFree(data); }
  sieve::cuda::workspace ws() const { return {data, bytes}; }
};

// The designs under test: every one, or those SIEVE_MULTISPLIT_ALGORITHMS lists (comma-separated; the
// sanitizer runs take the new designs alone).
std::vector<std::string_view> designs() {
  const auto all = sieve::cuda::multisplit_algorithms();
  const char* only = std::getenv("SIEVE_MULTISPLIT_ALGORITHMS");
  if (only == nullptr || *only == 0) return {all.begin(), all.end()};
  std::vector<std::string_view> picked;
  const std::string list = std::string(",") + only + ",";
  for (auto a : all)
    if (list.find("," + std::string(a) + ",") != std::string::npos) picked.push_back(a);
  return picked;
}

// got[j] is the input index at slot j; the first `n` slots and the offsets are compared.
void expect_split(const std::string& algorithm, const std::vector<std::uint32_t>& got,
                  const std::vector<std::uint64_t>& offsets, const split_reference& want, const std::string& what) {
  ASSERT_EQ(offsets, want.offsets) << what;
  if (sieve::cuda::multisplit_stable(algorithm)) {
    for (std::size_t j = 0; j < want.order.size(); ++j) ASSERT_EQ(got[j], want.order[j]) << what << " slot " << j;
    return;
  }
  for (std::size_t b = 0; b + 1 < want.offsets.size(); ++b) {
    std::vector<std::uint32_t> g(got.begin() + want.offsets[b], got.begin() + want.offsets[b + 1]);
    std::sort(g.begin(), g.end());
    ASSERT_TRUE(std::equal(g.begin(), g.end(), want.order.begin() + want.offsets[b])) << what << " bucket " << b;
  }
}

std::vector<std::uint32_t> iota(std::size_t n) {
  std::vector<std::uint32_t> v(n);
  std::iota(v.begin(), v.end(), 0U);
  return v;
}

TEST(CudaMultisplit, EveryDesignBucketCountAndDistributionMatchesTheReference) {
  REQUIRE_DEVICE();
  for (auto algorithm : designs())
    for (unsigned buckets : bucket_counts)
      for (auto dist : bucket_distributions)
        for (std::size_t n : sizes) {
          const std::string what = std::string(algorithm) + ", " + std::to_string(buckets) + " buckets, " +
                                   std::string(dist) + ", n " + std::to_string(n);
          const auto ids = make_bucket_ids(n, buckets, dist, n * 13 + buckets);
          const auto want = reference_split(ids, n, buckets);
          device_array<std::uint8_t> d_ids(ids);
          device_array<std::uint32_t> in(iota(n)), out(n);
          const sieve::const_record rin(in.cspan());
          const sieve::record rout(out.span());
          workspace_buffer ws(sieve::cuda::multisplit_workspace_bytes(algorithm, rout, buckets));
          for (bool checked : {true, false}) {  // unchecked keeps a bin for ids out of range: one more
            std::vector<std::uint64_t> offsets(buckets + 1);
            SIEVE_CUDA_CHECK(cudaMemset(out.data, 0xFF, n * 4));
            sieve::cuda::multisplit(algorithm, rin, rout, sieve::bucket_ids{d_ids.cspan()}, buckets, offsets, ws.ws(),
                                    nullptr, sieve::options{.checked = checked});
            expect_split(std::string(algorithm), out.host(), offsets, want, what + (checked ? "" : ", unchecked"));
          }
        }
}

// The path record (four columns of 4-byte words) around the tile sizes of every design, out of place
// and unchecked, as the renderer and the benchmark call it.
TEST(CudaMultisplit, WordRecordsAroundTheTileSizes) {
  REQUIRE_DEVICE();
  for (auto algorithm : designs())
    for (std::size_t n : {std::size_t{1}, std::size_t{1023}, std::size_t{1024}, std::size_t{1025}, std::size_t{4097},
                          std::size_t{33000}})
      for (unsigned buckets : {2U, 5U, 32U, 200U}) {
        const std::string a(algorithm);
        const std::string what = a + ", " + std::to_string(buckets) + " buckets, n " + std::to_string(n);
        const auto ids = make_bucket_ids(n, buckets, "uniform", n + buckets);
        const auto want = reference_split(ids, n, buckets);
        std::vector<std::uint32_t> pixel(n), depth(n);
        std::vector<ray28> ray(n);
        for (std::size_t i = 0; i < n; ++i) {
          pixel[i] = static_cast<std::uint32_t>(i);
          depth[i] = static_cast<std::uint32_t>(5 * i + 1);
          for (int k = 0; k < 7; ++k) ray[i].v[k] = static_cast<float>(i % 4099) + 0.25f * k;
        }
        device_array<std::uint8_t> d_ids(ids);
        device_array<std::uint32_t> d_pixel(pixel), d_depth(depth), o_pixel(n), o_depth(n);
        device_array<ray28> d_ray(ray), o_ray(n);
        const sieve::const_record rin(d_pixel.cspan(), d_ray.cspan(), d_depth.cspan());
        const sieve::record rout(o_pixel.span(), o_ray.span(), o_depth.span());
        workspace_buffer ws(sieve::cuda::multisplit_workspace_bytes(a, rout, buckets));
        device_array<std::uint64_t> d_offsets(buckets + 1);
        sieve::cuda::multisplit_async(a, rin, rout, sieve::bucket_ids{d_ids.cspan()}, buckets, d_offsets.data, ws.ws(),
                                      nullptr, nullptr, sieve::options{.checked = false});
        const auto got = o_pixel.host();
        expect_split(a, got, d_offsets.host(), want, what);
        const auto got_ray = o_ray.host();
        const auto got_depth = o_depth.host();
        for (std::size_t j = 0; j < n; ++j) {
          ASSERT_EQ(got_depth[j], 5 * got[j] + 1) << what << " slot " << j;
          for (int k = 0; k < 7; ++k)
            ASSERT_EQ(got_ray[j].v[k], static_cast<float>(got[j] % 4099) + 0.25f * k) << what << " slot " << j;
        }
      }
}

TEST(CudaMultisplit, RecordsMoveTogetherInPlaceAndOut) {
  REQUIRE_DEVICE();
  const std::size_t n = 150001;
  const unsigned buckets = 6;
  const auto ids = make_bucket_ids(n, buckets, "zipf", 5);
  const auto want = reference_split(ids, n, buckets);
  std::vector<path> paths(n);
  std::vector<std::uint64_t> wide(n);
  std::vector<std::uint8_t> bytes(n);
  for (std::size_t i = 0; i < n; ++i) {
    paths[i] = {static_cast<std::uint32_t>(i), {}, {}, static_cast<std::uint32_t>(3 * i)};
    for (int k = 0; k < 7; ++k) paths[i].ray.v[k] = static_cast<float>(i % 1000) + k;
    wide[i] = i * 0x100000001ULL;
    bytes[i] = static_cast<std::uint8_t>(i * 7);
  }
  for (auto algorithm : designs()) {
    const std::string a(algorithm);
    device_array<std::uint8_t> d_ids(ids);
    // The path record as four columns (moved as 4-byte words), and three columns of 8, 4 and 1 bytes.
    std::vector<std::uint32_t> pixel(n), depth(n);
    std::vector<ray28> ray(n);
    std::vector<std::array<float, 3>> beta(n);
    for (std::size_t i = 0; i < n; ++i) {
      pixel[i] = paths[i].pixel;
      ray[i] = paths[i].ray;
      depth[i] = paths[i].depth;
    }
    device_array<std::uint32_t> d_pixel(pixel), d_depth(depth);
    device_array<ray28> d_ray(ray);
    device_array<std::array<float, 3>> d_beta(beta);
    const sieve::record rec(d_pixel.span(), d_ray.span(), d_beta.span(), d_depth.span());
    workspace_buffer ws(sieve::cuda::multisplit_workspace_bytes(a, rec, buckets, true));
    device_array<std::uint64_t> d_offsets(buckets + 1);
    sieve::cuda::multisplit_async(a, rec, sieve::bucket_ids{d_ids.cspan()}, buckets, d_offsets.data, ws.ws());
    const auto got_pixel = d_pixel.host();
    expect_split(a, got_pixel, d_offsets.host(), want, a + " path record in place");
    const auto got_ray = d_ray.host();
    const auto got_depth = d_depth.host();
    for (std::size_t j = 0; j < n; ++j) {
      ASSERT_EQ(got_depth[j], 3 * got_pixel[j]) << a << " slot " << j;
      ASSERT_EQ(got_ray[j].v[6], static_cast<float>(got_pixel[j] % 1000) + 6) << a << " slot " << j;
    }

    device_array<std::uint64_t> w_in(wide), w_out(n);
    device_array<std::uint32_t> i_in(iota(n)), i_out(n);
    device_array<std::uint8_t> b_in(bytes), b_out(n);
    const sieve::const_record rin(w_in.cspan(), i_in.cspan(), b_in.cspan());
    const sieve::record rout(w_out.span(), i_out.span(), b_out.span());
    workspace_buffer ws2(sieve::cuda::multisplit_workspace_bytes(a, rout, buckets));
    std::vector<std::uint64_t> offsets(buckets + 1);
    sieve::cuda::multisplit(a, rin, rout, sieve::bucket_ids{d_ids.cspan()}, buckets, offsets, ws2.ws());
    const auto got_i = i_out.host();
    expect_split(a, got_i, offsets, want, a + " three columns");
    const auto got_w = w_out.host();
    const auto got_b = b_out.host();
    for (std::size_t j = 0; j < n; ++j) {
      ASSERT_EQ(got_w[j], got_i[j] * 0x100000001ULL) << a << " slot " << j;
      ASSERT_EQ(got_b[j], static_cast<std::uint8_t>(got_i[j] * 7)) << a << " slot " << j;
    }
    // One 8-byte column alone (staged through shared memory by onesweep).
    device_array<std::uint64_t> w_out2(n);
    sieve::cuda::multisplit(a, sieve::const_record(w_in.cspan()), sieve::record(w_out2.span()),
                            sieve::bucket_ids{d_ids.cspan()}, buckets, offsets, ws2.ws());
    const auto got_w2 = w_out2.host();
    for (std::size_t j = 0; j < n; ++j) ASSERT_EQ(got_w2[j] >> 32, got_w2[j] & 0xFFFFFFFFU) << a << " slot " << j;
    std::vector<std::uint32_t> low(n);
    for (std::size_t j = 0; j < n; ++j) low[j] = static_cast<std::uint32_t>(got_w2[j]);
    expect_split(a, low, offsets, want, a + " one 8-byte column");
  }
}

// Captured once with the live count in device memory, replayed with 0, 1, the capacity and random
// counts; slots past the live count keep the output's poison.
TEST(CudaMultisplit, DeviceCountsReplayedInAGraph) {
  REQUIRE_DEVICE();
  const std::size_t cap = 70001;
  const unsigned buckets = 9;
  std::mt19937_64 rng(11);
  std::vector<std::size_t> lives = {0, 1, cap, 4096, 12345};
  for (int r = 0; r < 4; ++r) lives.push_back(rng() % (cap + 1));
  for (auto algorithm : designs()) {
    const std::string a(algorithm);
    for (auto dist : bucket_distributions) {
      const auto ids = make_bucket_ids(cap, buckets, dist, 21);
      device_array<std::uint8_t> d_ids(ids);
      device_array<std::uint32_t> in(iota(cap)), out(cap);
      device_array<std::uint64_t> d_live(1), d_offsets(buckets + 1);
      const sieve::record rout(out.span());
      workspace_buffer ws(sieve::cuda::multisplit_workspace_bytes(a, rout, buckets));
      cudaStream_t stream;
      SIEVE_CUDA_CHECK(cudaStreamCreate(&stream));
      cudaGraph_t graph;
      SIEVE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      sieve::cuda::multisplit_async(a, sieve::const_record(in.cspan()), rout, sieve::bucket_ids{d_ids.cspan()},
                                    buckets, d_offsets.data, ws.ws(), stream, d_live.data);
      SIEVE_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
      cudaGraphExec_t exec;
      SIEVE_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
      for (std::size_t live : lives) {
        const std::string what = a + ", " + std::string(dist) + ", live " + std::to_string(live);
        d_live.upload({live});
        SIEVE_CUDA_CHECK(cudaMemset(out.data, 0xFF, cap * 4));
        SIEVE_CUDA_CHECK(cudaGraphLaunch(exec, stream));
        SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
        const auto got = out.host();
        expect_split(a, got, d_offsets.host(), reference_split(ids, live, buckets), what);
        for (std::size_t j = live; j < cap; ++j) ASSERT_EQ(got[j], 0xFFFFFFFFU) << what << " wrote slot " << j;
      }
      cudaGraphExecDestroy(exec);
      cudaGraphDestroy(graph);
      cudaStreamDestroy(stream);
    }
  }
}

TEST(CudaMultisplit, CheckedModeRefusesIdsOutOfRange) {
  REQUIRE_DEVICE();
  const std::size_t n = 50000;
  std::vector<std::uint8_t> ids(n, 2);
  ids[30000] = 7;
  ids[40000] = 200;
  for (auto algorithm : designs()) {
    const std::string a(algorithm);
    device_array<std::uint8_t> d_ids(ids);
    device_array<std::uint32_t> in(iota(n)), out(n);
    const sieve::const_record rin(in.cspan());
    const sieve::record rout(out.span());
    workspace_buffer ws(sieve::cuda::multisplit_workspace_bytes(a, rout, 4));
    std::vector<std::uint64_t> offsets(5);
    SIEVE_CUDA_CHECK(cudaMemset(out.data, 0xFF, n * 4));
    try {
      sieve::cuda::multisplit(a, rin, rout, sieve::bucket_ids{d_ids.cspan()}, 4, offsets, ws.ws());
      ADD_FAILURE() << a << ": no error";
    } catch (const sieve::error& e) {
      EXPECT_NE(std::string(e.what()).find("item 30000 has bucket id 7"), std::string::npos) << a << ": " << e.what();
    }
    for (auto o : offsets) EXPECT_EQ(o, sieve::cuda::invalid_count) << a;
    const auto got = out.host();
    EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](std::uint32_t x) { return x == 0xFFFFFFFFU; })) << a << " moved";
    // Unchecked: the two bad ids go after the last bucket, inside the output.
    sieve::cuda::multisplit(a, rin, rout, sieve::bucket_ids{d_ids.cspan()}, 4, offsets, ws.ws(), nullptr,
                            sieve::options{.checked = false});
    EXPECT_EQ(offsets[2], 0U) << a;
    EXPECT_EQ(offsets[4], n - 2) << a;
    const auto moved = out.host();
    std::vector<std::uint32_t> tail(moved.end() - 2, moved.end());
    std::sort(tail.begin(), tail.end());
    EXPECT_EQ(tail, (std::vector<std::uint32_t>{30000, 40000})) << a;
  }
}

// Unchecked, ids at or past the bucket count go, in input order, after the last bucket: every design
// x bucket count with a tenth of the ids out of range (any byte), against the reference of the ids
// mapped to the extra bin. Whole tiles with and without such ids take different ranking paths.
TEST(CudaMultisplit, UncheckedIdsOutOfRangeFollowTheLastBucket) {
  REQUIRE_DEVICE();
  for (auto algorithm : designs())
    for (unsigned buckets : {1U, 2U, 3U, 4U, 5U, 8U, 16U, 31U, 32U, 33U, 64U, 255U})
      for (std::size_t n : {std::size_t{4097}, std::size_t{100003}}) {
        const std::string what = std::string(algorithm) + ", " + std::to_string(buckets) + " buckets, n " + std::to_string(n);
        std::vector<std::uint8_t> ids = make_bucket_ids(n, buckets, "uniform", n + buckets);
        std::mt19937 rng(static_cast<unsigned>(n * 7 + buckets));
        for (std::size_t i = 0; i < n; ++i)
          if (rng() % 10 == 0 && i < n / 2) ids[i] = static_cast<std::uint8_t>(buckets + rng() % (256 - buckets));
        std::vector<std::uint8_t> bins(ids);
        for (auto& b : bins) b = static_cast<std::uint8_t>(std::min<unsigned>(b, buckets));
        split_reference want = reference_split(bins, n, buckets + 1);
        want.offsets.pop_back();  // the call reports the buckets' bounds: the extra bin ends at n
        device_array<std::uint8_t> d_ids(ids);
        device_array<std::uint32_t> in(iota(n)), out(n);
        const sieve::const_record rin(in.cspan());
        const sieve::record rout(out.span());
        workspace_buffer ws(sieve::cuda::multisplit_workspace_bytes(algorithm, rout, buckets));
        std::vector<std::uint64_t> offsets(buckets + 1);
        sieve::cuda::multisplit(algorithm, rin, rout, sieve::bucket_ids{d_ids.cspan()}, buckets, offsets, ws.ws(),
                                nullptr, sieve::options{.checked = false});
        expect_split(std::string(algorithm), out.host(), offsets, want, what);
      }
}

TEST(CudaMultisplit, BadArgumentsAreErrors) {
  REQUIRE_DEVICE();
  device_array<std::uint8_t> ids(std::vector<std::uint8_t>(100, 0));
  device_array<std::uint32_t> in(100), out(100);
  const sieve::record rout(out.span());
  workspace_buffer ws(sieve::cuda::multisplit_workspace_bytes("onesweep", rout, 4));
  device_array<std::uint64_t> off(5);
  const sieve::const_record rin(in.cspan());
  const sieve::bucket_ids k{ids.cspan()};
  EXPECT_THROW(sieve::cuda::multisplit_async("nope", rin, rout, k, 4, off.data, ws.ws()), sieve::error);
  EXPECT_THROW(sieve::cuda::multisplit_async("onesweep", rin, rout, k, 0, off.data, ws.ws()), sieve::error);
  EXPECT_THROW(sieve::cuda::multisplit_async("onesweep", rin, rout, k, 4, nullptr, ws.ws()), sieve::error);
  EXPECT_THROW(sieve::cuda::multisplit_async("onesweep", rin, rout, k, 4, off.data, {ws.data, 8}), sieve::error);
  EXPECT_THROW(sieve::cuda::multisplit_async("onesweep", rin, rout, sieve::bucket_ids{ids.cspan().first(99)}, 4,
                                             off.data, ws.ws()),
               sieve::error);
  EXPECT_THROW(sieve::cuda::multisplit_async("onesweep", rin, sieve::record(in.span()), k, 4, off.data, ws.ws()),
               sieve::error);
}

}  // namespace
