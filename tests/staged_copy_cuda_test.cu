// Uploads staged through pinned buffers (exec/staged_copy.cuh; label `gpu`, skipped without a
// device): every byte arrives, whatever the size, the source's alignment and the order of copies
// that reuse the buffers while earlier transfers are still in flight.
#include <exec/device_array.cuh>
#include <exec/staged_copy.cuh>

#include <sieve/compaction/cuda.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace sieve::exec {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (!sieve::cuda::available()) GTEST_SKIP() << "no CUDA device: " << sieve::cuda::device_description()

std::vector<std::uint8_t> pattern(std::size_t n, std::uint32_t seed) {
  std::vector<std::uint8_t> v(n);
  std::uint32_t x = seed;
  for (auto& b : v) x = x * 1664525U + 1013904223U, b = static_cast<std::uint8_t>(x >> 24);
  return v;
}

std::vector<std::uint8_t> read_back(const void* d, std::size_t n) {
  std::vector<std::uint8_t> h(n);
  EXPECT_EQ(cudaMemcpy(h.data(), d, n, cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

TEST(StagedCopy, EveryByteOfCopiesLargerThanTheBuffers) {
  SKIP_WITHOUT_GPU();
  ASSERT_TRUE(staging_buffers::get().prepare());
  // More chunks than buffers (each buffer reused), a partial last chunk, a source 3 bytes off alignment.
  const std::size_t n = staging_buffers::chunk_bytes * (staging_buffers::count + 2) + 12345;
  const std::vector<std::uint8_t> host = pattern(n + 3, 7);
  device_array<std::uint8_t> d(n);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  copy_to_device(d.get(), host.data() + 3, n, stream);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  const std::vector<std::uint8_t> back = read_back(d.get(), n);
  EXPECT_TRUE(std::equal(back.begin(), back.end(), host.begin() + 3));
  cudaStreamDestroy(stream);
}

// Copies one after the other on two streams, the sources overwritten as soon as each call returns:
// each copy waits for the buffers' earlier transfers and has read its source by then.
TEST(StagedCopy, BackToBackCopiesOnTwoStreams) {
  SKIP_WITHOUT_GPU();
  const std::size_t n = staging_buffers::chunk_bytes * 3 + 777;
  cudaStream_t s[2] = {};
  for (auto& x : s) ASSERT_EQ(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking), cudaSuccess);
  std::vector<device_array<std::uint8_t>> d;
  std::vector<std::vector<std::uint8_t>> want;
  std::vector<std::uint8_t> source;
  for (std::uint32_t k = 0; k < 6; ++k) {
    d.emplace_back(n);
    want.push_back(pattern(n, 100 + k));
    source = want.back();
    copy_to_device(d.back().get(), source.data(), n, s[k % 2]);
    std::fill(source.begin(), source.end(), std::uint8_t{0xAB});  // the call has read it
  }
  for (auto& x : s) ASSERT_EQ(cudaStreamSynchronize(x), cudaSuccess);
  for (std::size_t k = 0; k < d.size(); ++k) EXPECT_EQ(read_back(d[k].get(), n), want[k]) << "copy " << k;
  for (auto& x : s) cudaStreamDestroy(x);
}

// Freed buffers (as at exit) are allocated again by the next copy, whose bytes all arrive.
TEST(StagedCopy, ACopyAfterReleaseAllocatesTheBuffersAgain) {
  SKIP_WITHOUT_GPU();
  ASSERT_TRUE(staging_buffers::get().prepare());
  staging_buffers::get().release();
  const std::size_t n = staging_buffers::chunk_bytes * 2 + 99;
  const std::vector<std::uint8_t> host = pattern(n, 42);
  device_array<std::uint8_t> d(n);
  copy_to_device(d.get(), host.data(), n, nullptr);
  ASSERT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
  EXPECT_EQ(read_back(d.get(), n), host);
  staging_buffers::get().release();
  EXPECT_TRUE(staging_buffers::get().prepare());
}

// device_array's copy of a host vector: staged when large, plain when small, complete on return.
TEST(StagedCopy, DeviceArrayFromHostVectors) {
  SKIP_WITHOUT_GPU();
  for (const std::size_t n : {std::size_t{1000}, staged_copy_min_bytes / 4 + 13, std::size_t{5} << 20}) {
    std::vector<std::uint32_t> host(n);
    for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<std::uint32_t>(i * 2654435761U);
    const device_array<std::uint32_t> d(host);
    std::vector<std::uint32_t> back(n);
    ASSERT_EQ(cudaMemcpy(back.data(), d.get(), n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(back, host) << n << " items";
  }
}

}  // namespace
}  // namespace sieve::exec
