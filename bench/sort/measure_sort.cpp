// The CUDA side of the sort benchmark: device buffers, CUDA events, exact comparison with the reference.
#include "../compaction/measure.hpp"
#include "measure.hpp"

#include <sieve/compaction/cuda_check.hpp>
#include <sieve/compaction/cuda_device.hpp>
#include <sieve/compaction/radix_sort.hpp>

#include <cuda_runtime_api.h>

namespace sieve::bench {
namespace {

struct device_words {
  std::uint32_t* data = nullptr;
  std::size_t n = 0;
  explicit device_words(std::size_t count) : n(count) { SIEVE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data), std::max<std::size_t>(n, 1) * 4)); }
  ~device_words() { cudaFree(data); }
  device_words(const device_words&) = delete;
  device_words& operator=(const device_words&) = delete;
};

std::string first_difference(const std::vector<std::uint32_t>& got, const std::vector<std::uint32_t>& want,
                             const char* what) {
  for (std::size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i])
      return std::string(what) + " differ at " + std::to_string(i) + ": " + std::to_string(got[i]) + " instead of " +
             std::to_string(want[i]);
  return "";
}

}  // namespace

double sort_copy_gbps() { return device_copy_gbps(std::size_t{1} << 30, {2, 10}); }

std::vector<sort_measurement> measure_sorts(const std::vector<std::string>& algorithms,
                                            const std::vector<std::uint32_t>& keys,
                                            const std::vector<std::uint32_t>& values,
                                            const std::vector<std::uint32_t>& want_keys,
                                            const std::vector<std::uint32_t>& want_values, int begin_bit,
                                            int end_bit, int warmup, int repeats) {
  const std::size_t n = keys.size();
  device_words k_in(n), v_in(n), k_out(n), v_out(n);
  SIEVE_CUDA_CHECK(cudaMemcpy(k_in.data, keys.data(), n * 4, cudaMemcpyHostToDevice));
  SIEVE_CUDA_CHECK(cudaMemcpy(v_in.data, values.data(), n * 4, cudaMemcpyHostToDevice));
  const std::span<const std::uint32_t> ki(k_in.data, n), vi(v_in.data, n);
  const std::span<std::uint32_t> ko(k_out.data, n), vo(v_out.data, n);
  std::vector<sort_measurement> out;
  for (const auto& a : algorithms) {
    sort_measurement m;
    m.algorithm = a;
    try {
      m.workspace_bytes = cuda::radix_sort_workspace_bytes(a, n, begin_bit, end_bit);
      void* ws = nullptr;
      SIEVE_CUDA_CHECK(cudaMalloc(&ws, std::max<std::size_t>(m.workspace_bytes, 1)));
      struct guard {
        void* p;
        ~guard() { cudaFree(p); }
      } g{ws};
      auto call = [&] { cuda::radix_sort_pairs_async(a, ki, vi, ko, vo, begin_bit, end_bit, {ws, m.workspace_bytes}); };
      SIEVE_CUDA_CHECK(cudaMemset(k_out.data, 0xA5, n * 4));  // poison: every slot must be written
      SIEVE_CUDA_CHECK(cudaMemset(v_out.data, 0xA5, n * 4));
      call();
      SIEVE_CUDA_CHECK(cudaDeviceSynchronize());
      std::vector<std::uint32_t> got_k(n), got_v(n);
      SIEVE_CUDA_CHECK(cudaMemcpy(got_k.data(), k_out.data, n * 4, cudaMemcpyDeviceToHost));
      SIEVE_CUDA_CHECK(cudaMemcpy(got_v.data(), v_out.data, n * 4, cudaMemcpyDeviceToHost));
      m.error = first_difference(got_k, want_keys, "keys");
      if (m.error.empty()) m.error = first_difference(got_v, want_values, "values");
      m.validated = m.error.empty();
      if (m.validated) {
        cuda::event_timer t;
        std::vector<double> ms;
        for (int r = 0; r < warmup + repeats; ++r) {
          t.start();
          call();
          const double e = t.stop_ms();
          if (r >= warmup) ms.push_back(e);
        }
        m.ms = summarize(ms);
      }
    } catch (const std::exception& e) {
      m.validated = false;
      m.error = e.what();
    }
    out.push_back(m);
  }
  return out;
}

}  // namespace sieve::bench
