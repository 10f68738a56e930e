// The linear BVH builder's GPU run: lbvh_run's steps as kernels (exec::cuda), the Morton sort by the
// library's onesweep radix sort (the Morton codes, then the kept inner nodes by range). See lbvh.hpp.
#include <exec/cuda.cuh>
#include <exec/device_array.cuh>

#include "lbvh.hpp"

#include <sieve/compaction/cuda_check.hpp>
#include <sieve/compaction/cuda_device.hpp>
#include <sieve/compaction/cuda.hpp>
#include <sieve/compaction/radix_sort.hpp>

#include <cuda_runtime.h>

#include <algorithm>

namespace sieve::render {

using exec::device_array;

namespace {

// The first child to arrive has written its box before its atomic (the fence); the second reads its
// sibling's box from L2 (ld.cg), not from a line its SM's L1 may hold from before the write.
struct cuda_sync {
  __device__ std::uint32_t arrive(std::uint32_t* counter) const {
    __threadfence();
    const std::uint32_t before = atomicAdd(counter, 1U);
    __threadfence();
    return before;
  }
  __device__ aabb load(const aabb& box) const {
    const float* f = &box.lo.x;
    return {{__ldcg(f), __ldcg(f + 1), __ldcg(f + 2)}, {__ldcg(f + 3), __ldcg(f + 4), __ldcg(f + 5)}};
  }
};

struct cuda_backend {
  cudaStream_t stream;
  void* sort_ws;
  std::size_t sort_bytes;

  void sort(const std::uint32_t* keys, const std::uint32_t* values, std::uint32_t* keys_out, std::uint32_t* values_out,
            std::uint32_t n, int bits) const {
    sieve::cuda::radix_sort_pairs_async("onesweep", {keys, n}, {values, n}, {keys_out, n}, {values_out, n}, 0, bits,
                                        {sort_ws, sort_bytes}, stream);
  }
  std::uint32_t read(const std::uint32_t* p) const {
    std::uint32_t v = 0;
    SIEVE_CUDA_CHECK(cudaMemcpyAsync(&v, p, sizeof v, cudaMemcpyDeviceToHost, stream));
    SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
    return v;
  }
};

}  // namespace

binary_bvh lbvh_build_cuda(std::span<const triangle> triangles, std::uint32_t max_leaf, lbvh_timing& timing) {
  if (!sieve::cuda::available()) throw sieve::error("BVH (lbvh on cuda): " + sieve::cuda::device_description());
  const auto n = static_cast<std::uint32_t>(triangles.size());
  const std::size_t m = n - 1, all = 2 * std::size_t{n} - 1;
  device_array<triangle> tris(n);
  device_array<aabb> prim_box(n), centroid(lbvh_centroid_slots(n)), inner_box(m);
  device_array<std::uint32_t> keys(n), ids(n), sorted(n), order(n), parent(all), visits(m), kept(m), rank(m), count(1);
  device_array<lbvh_inner> inner(m);
  device_array<bvh_node> nodes(all);
  const std::size_t sort_bytes = sieve::cuda::radix_sort_workspace_bytes("onesweep", n, 0, 32);
  device_array<unsigned char> sort_ws(sort_bytes);
  const lbvh_buffers b{tris.get(),   prim_box.get(), centroid.get(), keys.get(),      ids.get(),
                       sorted.get(), order.get(),    inner.get(),    inner_box.get(), parent.get(),
                       visits.get(), kept.get(),     rank.get(),     count.get(), nodes.get()};
  cudaStream_t stream = nullptr;
  SIEVE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  try {
    cuda_backend backend{stream, sort_ws.get(), sort_bytes};
    sieve::cuda::event start, copied, built, done;
    binary_bvh out;
    out.prims.resize(n);
    out.nodes.resize(all);
    start.record(stream);
    SIEVE_CUDA_CHECK(cudaMemcpyAsync(tris.get(), triangles.data(), n * sizeof(triangle), cudaMemcpyHostToDevice, stream));
    copied.record(stream);
    const std::uint32_t used = lbvh_run(exec::cuda{stream}, backend, b, n, max_leaf, cuda_sync{});
    built.record(stream);
    out.nodes.resize(used);
    SIEVE_CUDA_CHECK(cudaMemcpyAsync(out.nodes.data(), nodes.get(), used * sizeof(bvh_node), cudaMemcpyDeviceToHost, stream));
    SIEVE_CUDA_CHECK(cudaMemcpyAsync(out.prims.data(), order.get(), n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream));
    done.record(stream);
    SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
    timing.device_ms = built.ms_since(copied);
    timing.with_copies_ms = done.ms_since(start);
    cudaStreamDestroy(stream);
    return out;
  } catch (...) {
    cudaStreamDestroy(stream);
    throw;
  }
}

}  // namespace sieve::render
