// A complete CUDA program: a queue whose live count lives on the device. One CUDA graph holds the
// marking kernel and the compaction (`space`, byte flags, counts read on the device when it runs);
// it is captured once and replayed for three live counts, written between the replays. Its output
// is in expected-output.txt beside it; without a GPU it says so and exits 77 (skipped).
#include <sieve/compaction.hpp>
#include <sieve/compaction/cuda.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <span>
#include <vector>

#define CHECK(call)                                                                              \
  do {                                                                                           \
    if (cudaError_t e = (call); e != cudaSuccess) {                                              \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e));            \
      return 1;                                                                                  \
    }                                                                                            \
  } while (0)

// keep[i] = x[i] is a multiple of 3, for the live items only (the count read on the device).
__global__ void mark(const float* x, std::uint8_t* keep, const std::uint64_t* live) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < *live) keep[i] = static_cast<std::uint32_t>(x[i]) % 3 == 0;
}

int main() {
  if (!sieve::cuda::available()) {
    std::printf("skipped: %s\n", sieve::cuda::device_description().c_str());
    return 77;
  }
  constexpr std::size_t capacity = std::size_t{1} << 16;
  std::vector<float> host(capacity);
  for (std::size_t i = 0; i < capacity; ++i) host[i] = static_cast<float>(i);
  float *x = nullptr, *out = nullptr;
  std::uint8_t* keep = nullptr;
  std::uint64_t* counts = nullptr;  // [0] live items, [1] kept
  CHECK(cudaMalloc(&x, capacity * sizeof(float)));
  CHECK(cudaMalloc(&out, capacity * sizeof(float)));
  CHECK(cudaMalloc(&keep, capacity));
  CHECK(cudaMalloc(&counts, 2 * sizeof(std::uint64_t)));
  CHECK(cudaMemcpy(x, host.data(), capacity * sizeof(float), cudaMemcpyHostToDevice));

  const sieve::const_record in = std::span<const float>(x, capacity);
  const sieve::record to = std::span<float>(out, capacity);
  const sieve::selection flags = sieve::byte_flags{std::span<const std::uint8_t>(keep, capacity)};
  void* ws = nullptr;
  const std::size_t ws_bytes = sieve::cuda::workspace_bytes("space", to, sieve::form::byte_flags, false);
  CHECK(cudaMalloc(&ws, ws_bytes ? ws_bytes : 1));

  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  mark<<<capacity / 256, 256, 0, stream>>>(x, keep, counts);
  sieve::cuda::compact_copy_async("space", in, to, flags, sieve::cuda::device_counts{counts}, counts + 1,
                                  {ws, ws_bytes}, stream);
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));

  int wrong = 0;
  for (const std::uint64_t live : {std::uint64_t{1000}, std::uint64_t{30000}, std::uint64_t{capacity}}) {
    CHECK(cudaMemcpyAsync(counts, &live, sizeof live, cudaMemcpyHostToDevice, stream));
    CHECK(cudaGraphLaunch(exec, stream));  // the same graph, another count
    std::uint64_t kept = 0;
    CHECK(cudaMemcpyAsync(&kept, counts + 1, sizeof kept, cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    std::vector<float> got(kept);
    CHECK(cudaMemcpy(got.data(), out, kept * sizeof(float), cudaMemcpyDeviceToHost));
    bool ok = kept == (live + 2) / 3;
    for (std::size_t j = 0; ok && j < kept; ++j) ok = got[j] == static_cast<float>(3 * j);  // stable
    wrong += !ok;
    std::printf("live %llu: kept %llu, last %g, %s\n", static_cast<unsigned long long>(live),
                static_cast<unsigned long long>(kept), kept ? got[kept - 1] : -1.0f, ok ? "as expected" : "WRONG");
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  cudaFree(ws);
  cudaFree(counts);
  cudaFree(keep);
  cudaFree(out);
  cudaFree(x);
  return wrong ? 1 : 0;
}
