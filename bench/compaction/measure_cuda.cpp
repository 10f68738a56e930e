// The CUDA side of the compaction benchmark: device buffers shared by the strategies of a grid point,
// CUDA events, validation by count and digest on the device (and byte by byte for small points).
#include "cuda_events.hpp"
#include "digest_cuda.hpp"
#include "measure.hpp"

#include <exec/device_array.cuh>

#include <sieve/compaction/cuda.hpp>
#include <sieve/compaction/cuda_check.hpp>

#include <cuda_runtime_api.h>

namespace sieve::bench {
namespace {

// Device memory that only ever grows: reserve_discard() keeps the memory (and its contents) when it
// is large enough, else replaces it; an allocation that does not fit names the size and the memory free.
using device_buffer = exec::device_array<std::byte>;

void upload(device_buffer& to, const void* from, std::size_t bytes) {
  to.reserve_discard(bytes);
  if (bytes) SIEVE_CUDA_CHECK(cudaMemcpy(to.get(), from, bytes, cudaMemcpyHostToDevice));
}

}  // namespace

struct cuda_bench::buffers {
  device_buffer pristine;  // the point's items, as made; never written
  device_buffer items;     // in-place strategies' copy, restored from `pristine` before every run
  device_buffer out;       // out-of-place strategies' output
  device_buffer removals_pristine, removals, flags, mask;
  device_buffer workspace;
  device_buffer scratch;  // the count, then the digest's two sums
  std::size_t items_n = 0;  // the shape `pristine` holds (0: none yet)
  std::uint32_t items_width = 0;
  std::size_t k = 0, flag_count = 0, mask_words = 0;
};

cuda_bench::cuda_bench() : b_(std::make_unique<buffers>()) { b_->scratch.reserve_discard(4 * sizeof(std::uint64_t)); }
cuda_bench::~cuda_bench() = default;

void cuda_bench::load(const bench_case& c, const case_inputs& in) {
  buffers& b = *b_;
  if (in.n != c.n || in.width != c.type.width || in.items.size() != c.n * c.type.width)
    throw error("cuda_bench::load: the inputs hold " + std::to_string(in.n) + " items of " + std::to_string(in.width) +
                " bytes, the point " + std::to_string(c.n) + " of " + std::to_string(c.type.width));
  if (b.items_n != in.n || b.items_width != in.width) {
    b.items_n = 0;  // until the upload has succeeded
    upload(b.pristine, in.items.data(), in.items.size());
    b.items_n = in.n;
    b.items_width = in.width;
  }
  b.k = in.removals.size();
  b.flag_count = in.flags.size();
  b.mask_words = in.mask.size();
  upload(b.removals_pristine, in.removals.data(), b.k * sizeof(std::uint32_t));
  b.removals.reserve_discard(b.k * sizeof(std::uint32_t));
  upload(b.flags, in.flags.data(), b.flag_count);
  upload(b.mask, in.mask.data(), b.mask_words * sizeof(std::uint32_t));
}

measurement cuda_bench::measure(const bench_case& c, const case_inputs& in, timing_plan plan) {
  buffers& b = *b_;
  measurement m;
  try {
    const std::uint32_t w = c.type.width;
    const std::size_t item_bytes = c.n * w;
    if (b.items_n != c.n || b.items_width != w) throw error("cuda_bench::measure: the point's inputs are not loaded");
    (c.in_place ? b.items : b.out).reserve_discard(item_bytes);
    std::byte* input = c.in_place ? b.items.get() : b.pristine.get();
    std::byte* output = c.in_place ? b.items.get() : b.out.get();

    const column item_col{input, w}, out_col{b.out.get(), w};
    const record items_rec(std::span(&item_col, 1), c.n), out_rec(std::span(&out_col, 1), c.n);
    selection keep = byte_flags{std::span(reinterpret_cast<const std::uint8_t*>(b.flags.get()), b.flag_count)};
    if (c.f == form::removal_list) keep = removal_list{std::span(reinterpret_cast<std::uint32_t*>(b.removals.get()), b.k)};
    if (c.f == form::bit_mask) keep = bit_mask{std::span(reinterpret_cast<const std::uint32_t*>(b.mask.get()), b.mask_words)};

    b.workspace.reserve_discard(cuda::workspace_bytes(c.strategy, items_rec, c.f, c.in_place));
    const cuda::workspace space{b.workspace.get(), b.workspace.size()};
    auto* count = reinterpret_cast<std::uint64_t*>(b.scratch.get());
    auto restore = [&] {
      if (c.in_place)
        SIEVE_CUDA_CHECK(cudaMemcpyAsync(b.items.get(), b.pristine.get(), item_bytes, cudaMemcpyDeviceToDevice));
      if (b.k)
        SIEVE_CUDA_CHECK(cudaMemcpyAsync(b.removals.get(), b.removals_pristine.get(), b.k * sizeof(std::uint32_t),
                                         cudaMemcpyDeviceToDevice));
    };
    auto call = [&] {
      if (c.in_place)
        cuda::compact_async(c.strategy, items_rec, keep, count, space);
      else
        cuda::compact_copy_async(c.strategy, items_rec, out_rec, keep, count, space);
    };

    restore();
    call();
    std::uint64_t kept = 0;
    SIEVE_CUDA_CHECK(cudaMemcpy(&kept, count, sizeof kept, cudaMemcpyDeviceToHost));
    m.kept = static_cast<std::size_t>(kept);
    const bool stable = compaction_strategy(c.strategy).stable;
    if (kept != in.kept) {
      m.error = "kept " + std::to_string(kept) + " items, expected " + std::to_string(in.kept);
      return m;
    }
    if (in.exact) {  // small: the output comes back and is compared byte by byte first
      std::vector<std::byte> result(m.kept * w);
      SIEVE_CUDA_CHECK(cudaMemcpy(result.data(), output, result.size(), cudaMemcpyDeviceToHost));
      m.error = check_output(in, result, m.kept, w, stable);
      if (!m.error.empty()) return m;
    }
    m.error = check_digest(in, device_digest(output, m.kept, w, count + 2), m.kept, stable);
    if (!m.error.empty() && in.exact) m.error = "the byte-by-byte check passed but the device digest did not: " + m.error;
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

stats cuda_bench::removal_floor(const bench_case& c, timing_plan plan) {
  buffers& b = *b_;
  b.items.reserve_discard(c.n * c.type.width);
  SIEVE_CUDA_CHECK(cudaMemcpy(b.items.get(), b.pristine.get(), c.n * c.type.width, cudaMemcpyDeviceToDevice));
  return measure_removal_floor(c, b.items.get(), reinterpret_cast<const std::uint32_t*>(b.removals_pristine.get()), b.k, plan);
}

}  // namespace sieve::bench
