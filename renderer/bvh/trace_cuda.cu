#include <exec/cuda.cuh>

#include "trace_cuda.hpp"

#include <sieve/compaction/cuda.hpp>
#include <sieve/compaction/cuda_check.hpp>

#include <cuda_runtime.h>

namespace sieve::render {
namespace {

template <class T>
T* upload(std::span<const T> host) {
  T* d = nullptr;
  SIEVE_CUDA_CHECK(cudaMalloc(&d, std::max<std::size_t>(host.size(), 1) * sizeof(T)));
  if (!host.empty()) SIEVE_CUDA_CHECK(cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

}  // namespace

gpu_trace trace_dfs_cuda(const bvh& b, std::span<const triangle> triangles, std::span<const ray> rays, int repeats) {
  if (!sieve::cuda::available()) throw sieve::error("no CUDA device: " + sieve::cuda::device_description());
  bvh_node* nodes = upload(std::span<const bvh_node>(b.nodes));
  std::uint32_t* prims = upload(std::span<const std::uint32_t>(b.prims));
  triangle* tris = upload(triangles);
  pair_node* pairs = upload(std::span<const pair_node>(b.pairs));
  ray* d_rays = upload(rays);
  hit* d_hits = nullptr;
  gpu_trace out;
  cudaEvent_t start, stop;
  SIEVE_CUDA_CHECK(cudaEventCreate(&start));
  SIEVE_CUDA_CHECK(cudaEventCreate(&stop));
  try {
    SIEVE_CUDA_CHECK(cudaMalloc(&d_hits, std::max<std::size_t>(rays.size(), 1) * sizeof(hit)));
    const bvh_view view{nodes, prims, tris, static_cast<std::uint32_t>(b.nodes.size()), pairs};
    auto run = [&] {
      exec::parallel_for(exec::cuda{}, "trace", rays.size(),
                         [=] SIEVE_HD(std::uint32_t i) { d_hits[i] = closest_hit(view, d_rays[i]); });
    };
    run();
    SIEVE_CUDA_CHECK(cudaDeviceSynchronize());
    out.hits.resize(rays.size());
    SIEVE_CUDA_CHECK(cudaMemcpy(out.hits.data(), d_hits, rays.size() * sizeof(hit), cudaMemcpyDeviceToHost));
    for (int r = 0; r < repeats; ++r) {
      SIEVE_CUDA_CHECK(cudaEventRecord(start));
      run();
      SIEVE_CUDA_CHECK(cudaEventRecord(stop));
      SIEVE_CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      SIEVE_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      out.ms.push_back(ms);
    }
  } catch (...) {
    cudaFree(nodes), cudaFree(prims), cudaFree(pairs), cudaFree(tris), cudaFree(d_rays), cudaFree(d_hits);
    throw;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(nodes), cudaFree(prims), cudaFree(pairs), cudaFree(tris), cudaFree(d_rays), cudaFree(d_hits);
  return out;
}

}  // namespace sieve::render
