// scripts/gpu-check's probe of compute-sanitizer itself. A textbook-correct kernel (lane 0 of each
// warp writes shared memory, __syncthreads, every thread reads) run three times as the body of a WHILE
// conditional graph node. compute-sanitizer 2025.3.1 (CUDA 13.0) synccheck reports it as "Barrier
// error detected. Divergent thread(s) in warp" and the graph then fails with "unspecified launch
// failure", while the same kernel launched plainly, captured into a plain graph, or in an IF node is
// clean, and a kernel without a barrier in the WHILE node is clean (H100, driver 580.159.04;
// bench/results/h100-80gb-hbm3/gpu-check-driver.txt). The BFS level loop is such a WHILE node, so
// gpu-check runs this probe first: exit 0 when the tool passes it, and then every test runs under
// every tool; otherwise the tests that build a WHILE node run under memcheck only and their kernels
// are checked through the host-driven loop (the same kernels, launched from the host).
//
// Without the sanitizer the probe checks its own result: exit 0 when the kernel ran three rounds
// and wrote what it should, 1 otherwise.
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

namespace {

constexpr unsigned threads = 256, blocks = 24, rounds = 3;

__global__ void barrier_kernel(unsigned* out) {
  __shared__ unsigned first_of_warp[threads / 32];
  if (threadIdx.x % 32 == 0) first_of_warp[threadIdx.x / 32] = threadIdx.x;
  __syncthreads();
  out[blockIdx.x * threads + threadIdx.x] += first_of_warp[threadIdx.x / 32];
}

__global__ void count_round(unsigned* done, cudaGraphConditionalHandle again) {
  ++*done;
  cudaGraphSetConditional(again, *done < rounds ? 1U : 0U);
}

bool ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "sanitizer_while_probe: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "sanitizer_while_probe: no CUDA device\n");
    return 2;
  }
  unsigned* out = nullptr;
  unsigned* done = nullptr;
  cudaStream_t stream = nullptr, body_stream = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaGraphConditionalHandle handle{};
  cudaGraphNodeParams params{};
  cudaGraphNode_t node = nullptr;
  if (!ok(cudaMalloc(&out, blocks * threads * sizeof(unsigned)), "cudaMalloc") ||
      !ok(cudaMalloc(&done, sizeof(unsigned)), "cudaMalloc") ||
      !ok(cudaMemset(out, 0, blocks * threads * sizeof(unsigned)), "cudaMemset") ||
      !ok(cudaMemset(done, 0, sizeof(unsigned)), "cudaMemset") || !ok(cudaStreamCreate(&stream), "stream") ||
      !ok(cudaStreamCreate(&body_stream), "stream") || !ok(cudaGraphCreate(&graph, 0), "cudaGraphCreate") ||
      !ok(cudaGraphConditionalHandleCreate(&handle, graph, 1, cudaGraphCondAssignDefault), "handle"))
    return 1;
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = handle;
  params.conditional.type = cudaGraphCondTypeWhile;
  params.conditional.size = 1;
  if (!ok(cudaGraphAddNode(&node, graph, nullptr, nullptr, 0, &params), "cudaGraphAddNode")) return 1;
  cudaGraph_t body = params.conditional.phGraph_out[0];
  if (!ok(cudaStreamBeginCaptureToGraph(body_stream, body, nullptr, nullptr, 0, cudaStreamCaptureModeRelaxed),
          "capture"))
    return 1;
  barrier_kernel<<<blocks, threads, 0, body_stream>>>(out);
  count_round<<<1, 1, 0, body_stream>>>(done, handle);
  if (!ok(cudaStreamEndCapture(body_stream, &body), "capture") ||
      !ok(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate") ||
      !ok(cudaGraphLaunch(exec, stream), "cudaGraphLaunch") || !ok(cudaStreamSynchronize(stream), "the WHILE graph"))
    return 1;
  std::vector<unsigned> got(blocks * threads);
  unsigned ran = 0;
  if (!ok(cudaMemcpy(got.data(), out, got.size() * sizeof(unsigned), cudaMemcpyDeviceToHost), "cudaMemcpy") ||
      !ok(cudaMemcpy(&ran, done, sizeof ran, cudaMemcpyDeviceToHost), "cudaMemcpy"))
    return 1;
  for (unsigned i = 0; i < got.size(); ++i) {
    const unsigned want = rounds * (i % threads / 32 * 32);
    if (got[i] != want) {
      std::fprintf(stderr, "sanitizer_while_probe: item %u holds %u, not %u\n", i, got[i], want);
      return 1;
    }
  }
  if (ran != rounds) {
    std::fprintf(stderr, "sanitizer_while_probe: %u rounds, not %u\n", ran, rounds);
    return 1;
  }
  std::printf("sanitizer_while_probe: %u rounds of a barrier kernel in a WHILE node, results right\n", ran);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(body_stream);
  cudaStreamDestroy(stream);
  cudaFree(done);
  cudaFree(out);
  return 0;
}
