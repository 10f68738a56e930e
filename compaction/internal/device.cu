// Host-callable helpers of device.cuh that launch kernels.
#include "device.cuh"

namespace sieve::detail {
namespace {
__global__ void write_count(std::uint64_t* d_count, std::uint64_t value) { *d_count = value; }

__global__ void mark_removed(const std::uint32_t* R, live_count live_k, std::uint8_t* stencil) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t k = live_k.get();
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < k; i += stride)
    stencil[R[i]] = 0;
}

// Zeroes the seen bits of n (capacity) items and opens the gate's findings.
__global__ void gate_init(std::uint32_t* seen, std::size_t words, removal_gate* gate) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t w = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; w < words; w += stride) seen[w] = 0;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    gate->found[0] = gate->found[1] = removal_gate::none;
    gate->done = 0;
  }
}

// Each index once: the lowest position of an index >= n and of an index seen before. The last block
// to finish (a fence, then the count of finished blocks) closes the gate or lets k through.
__global__ void gate_check(const std::uint32_t* R, live_count live_k, live_count live_n, std::uint32_t* seen,
                           removal_gate* gate) {
  // Four indices a thread at a time: their loads, then their atomics, all in flight before any result
  // is used (one atomic's round trip per index made the check latency-bound).
  constexpr unsigned per_thread = 4;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x * per_thread;
  const std::size_t k = live_k.get(), n = live_n.get();
  for (std::size_t i0 = (static_cast<std::size_t>(blockIdx.x) * blockDim.x) * per_thread + threadIdx.x; i0 < k;
       i0 += stride) {
    std::uint32_t x[per_thread], old[per_thread];
    bool live[per_thread];
#pragma unroll
    for (unsigned q = 0; q < per_thread; ++q) {
      live[q] = i0 + q * blockDim.x < k;
      x[q] = live[q] ? R[i0 + q * blockDim.x] : 0;
    }
#pragma unroll
    for (unsigned q = 0; q < per_thread; ++q)
      old[q] = live[q] && x[q] < n ? atomicOr(&seen[x[q] / 32], 1u << (x[q] % 32)) : 0;
#pragma unroll
    for (unsigned q = 0; q < per_thread; ++q) {
      const std::size_t i = i0 + q * blockDim.x;
      if (!live[q]) continue;
      if (x[q] >= n) atomicMin(&gate->found[0], static_cast<unsigned long long>(i));
      else if ((old[q] >> (x[q] % 32)) & 1U) atomicMin(&gate->found[1], static_cast<unsigned long long>(i));
    }
  }
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0 && atomicAdd(&gate->done, 1U) == gridDim.x - 1) {
    __threadfence();
    const bool valid = atomicMin(&gate->found[0], removal_gate::none) == removal_gate::none &&
                       atomicMin(&gate->found[1], removal_gate::none) == removal_gate::none;
    gate->valid = valid;
    gate->k = valid ? k : 0;
  }
}

__global__ void gate_result(const removal_gate* gate, std::uint64_t* d_count) {
  if (!gate->valid) *d_count = removal_gate::invalid_count;
}

__global__ void gather(const std::uint64_t* index, const std::uint64_t* count, device_mover move) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t m = *count;
  for (std::size_t j = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < m; j += stride)
    move(j, index[j]);
}
}  // namespace

void write_count_async(std::uint64_t* d_count, std::uint64_t value, cudaStream_t stream) {
  write_count<<<1, 1, 0, stream>>>(d_count, value);
  SIEVE_CUDA_CHECK(cudaGetLastError());
}

void gate_removals_async(const std::uint32_t* R, const std::uint64_t* live_k, std::size_t k_capacity,
                         const std::uint64_t* live_n, std::size_t n_capacity, std::uint32_t* seen, removal_gate* gate,
                         cudaStream_t stream) {
  const std::size_t words = (n_capacity + 31) / 32;
  gate_init<<<grid_blocks(words, 256), 256, 0, stream>>>(seen, words, gate);
  SIEVE_CUDA_CHECK(cudaGetLastError());
  gate_check<<<grid_blocks((k_capacity + 3) / 4 > 0 ? (k_capacity + 3) / 4 : 1, 256), 256, 0, stream>>>(
      R, live_count{live_k, k_capacity}, live_count{live_n, n_capacity}, seen, gate);
  SIEVE_CUDA_CHECK(cudaGetLastError());
}

void gate_result_async(const removal_gate* gate, std::uint64_t* d_count, cudaStream_t stream) {
  gate_result<<<1, 1, 0, stream>>>(gate, d_count);
  SIEVE_CUDA_CHECK(cudaGetLastError());
}

void mark_removals_async(const std::uint32_t* R, live_count k, std::size_t n, std::uint8_t* stencil,
                         cudaStream_t stream) {
  SIEVE_CUDA_CHECK(cudaMemsetAsync(stencil, 1, n, stream));
  if (k.capacity == 0) return;
  mark_removed<<<grid_blocks(k.capacity, 256), 256, 0, stream>>>(R, k, stencil);
  SIEVE_CUDA_CHECK(cudaGetLastError());
}

void gather_columns_async(const record& in, const record& out, const std::uint64_t* index,
                          const std::uint64_t* d_count, std::byte* copy, cudaStream_t stream) {
  const std::size_t n = in.size();
  if (n == 0) return;
  for (std::size_t c = 0; c < in.columns(); ++c) {
    column src = in[c];
    if (copy) {
      SIEVE_CUDA_CHECK(cudaMemcpyAsync(copy, src.data, n * src.width, cudaMemcpyDeviceToDevice, stream));
      src.data = copy;
    }
    const column dst = out[c];
    const device_mover move{device_record::of(record(std::span(&src, 1), n)),
                            device_record::of(record(std::span(&dst, 1), n))};
    gather<<<grid_blocks(n, 256), 256, 0, stream>>>(index, d_count, move);
    SIEVE_CUDA_CHECK(cudaGetLastError());
  }
}

}  // namespace sieve::detail
