// The CUDA side of the compaction benchmark: device buffers, CUDA events, the same validation.
#include "cuda_events.hpp"
#include "measure.hpp"

#include <sieve/compaction/cuda.hpp>
#include <sieve/compaction/cuda_check.hpp>

#include <cuda_runtime_api.h>

namespace sieve::bench {
namespace {

// A device allocation that frees itself.
class device_buffer {
 public:
  explicit device_buffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes) SIEVE_CUDA_CHECK(cudaMalloc(&data_, bytes));
  }
  ~device_buffer() {
    if (data_) cudaFree(data_);
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  template <class T = std::byte>
  T* get() const {
    return static_cast<T*>(data_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace

measurement measure_cuda(const bench_case& c, const case_inputs& in, timing_plan plan) {
  measurement m;
  try {
    const std::uint32_t w = c.type.width;
    const std::size_t item_bytes = in.items.size();
    device_buffer pristine(item_bytes), items(item_bytes), out(c.in_place ? 0 : item_bytes);
    device_buffer removals_pristine(in.removals.size() * 4), removals(in.removals.size() * 4);
    device_buffer flags(in.flags.size()), mask(in.mask.size() * 4);
    SIEVE_CUDA_CHECK(cudaMemcpy(pristine.get(), in.items.data(), item_bytes, cudaMemcpyHostToDevice));
    SIEVE_CUDA_CHECK(cudaMemcpy(removals_pristine.get(), in.removals.data(), removals.bytes(), cudaMemcpyHostToDevice));
    SIEVE_CUDA_CHECK(cudaMemcpy(flags.get(), in.flags.data(), flags.bytes(), cudaMemcpyHostToDevice));
    SIEVE_CUDA_CHECK(cudaMemcpy(mask.get(), in.mask.data(), mask.bytes(), cudaMemcpyHostToDevice));

    const column item_col{items.get(), w}, out_col{out.get(), w};
    const record items_rec(std::span(&item_col, 1), c.n), out_rec(std::span(&out_col, 1), c.n);
    selection keep = byte_flags{std::span(flags.get<const std::uint8_t>(), in.flags.size())};
    if (c.f == form::removal_list) keep = removal_list{std::span(removals.get<std::uint32_t>(), in.removals.size())};
    if (c.f == form::bit_mask) keep = bit_mask{std::span(mask.get<const std::uint32_t>(), in.mask.size())};

    device_buffer ws(cuda::workspace_bytes(c.strategy, items_rec, c.f, c.in_place));
    device_buffer count(sizeof(std::uint64_t));
    const cuda::workspace space{ws.get(), ws.bytes()};
    auto restore = [&] {
      SIEVE_CUDA_CHECK(cudaMemcpyAsync(items.get(), pristine.get(), item_bytes, cudaMemcpyDeviceToDevice));
      SIEVE_CUDA_CHECK(
          cudaMemcpyAsync(removals.get(), removals_pristine.get(), removals.bytes(), cudaMemcpyDeviceToDevice));
    };
    auto call = [&] {
      if (c.in_place)
        cuda::compact_async(c.strategy, items_rec, keep, count.get<std::uint64_t>(), space);
      else
        cuda::compact_copy_async(c.strategy, items_rec, out_rec, keep, count.get<std::uint64_t>(), space);
    };

    restore();
    call();
    std::uint64_t kept = 0;
    SIEVE_CUDA_CHECK(cudaMemcpy(&kept, count.get(), sizeof kept, cudaMemcpyDeviceToHost));
    std::vector<std::byte> result(static_cast<std::size_t>(kept) * w);
    if (kept <= c.n)
      SIEVE_CUDA_CHECK(cudaMemcpy(result.data(), (c.in_place ? items : out).get(), result.size(), cudaMemcpyDeviceToHost));
    m.kept = static_cast<std::size_t>(kept);
    m.error = check_output(in, result, m.kept, w, compaction_strategy(c.strategy).stable);
    m.validated = m.error.empty();
    if (!m.validated) return m;

    event_timer events;
    std::vector<double> ms;
    for (int r = 0; r < plan.warmup + plan.repeats; ++r) {
      restore();
      events.start();
      call();
      const double t = events.stop_ms();
      if (r >= plan.warmup) ms.push_back(t);
    }
    m.ms = summarize(ms);
  } catch (const std::exception& e) {
    m.validated = false;
    m.error = e.what();
  }
  return m;
}

}  // namespace sieve::bench
