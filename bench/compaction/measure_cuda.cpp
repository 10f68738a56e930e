// The CUDA side of the compaction benchmark: device buffers shared by the strategies of a grid point,
// CUDA events, validation by count and digest on the device (and byte by byte for small points).
#include "digest_cuda.hpp"
#include "measure.hpp"

#include <exec/device_array.cuh>

#include <sieve/compaction/cuda.hpp>
#include <sieve/compaction/cuda_check.hpp>
#include <sieve/compaction/cuda_device.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>

namespace sieve::bench {
namespace {

// Device memory that only ever grows: reserve_discard() keeps the memory (and its contents) when it
// is large enough, else replaces it; an allocation that does not fit names the size and the memory free.
using device_buffer = exec::device_array<std::byte>;

void upload(device_buffer& to, const void* from, std::size_t bytes) {
  to.reserve_discard(bytes);
  if (bytes) SIEVE_CUDA_CHECK(cudaMemcpy(to.get(), from, bytes, cudaMemcpyHostToDevice));
}

// A struct of arrays lies in one buffer column after column: column c of n items starts at n times
// the widths before it. The host's rows (row i: the columns' bytes in order) convert both ways.
std::vector<std::uint32_t> widths_of(const item_type& t) {
  return t.columns.empty() ? std::vector<std::uint32_t>{t.width} : t.columns;
}

void rows_to_columns(const std::byte* rows, std::byte* cols, std::size_t n, const std::vector<std::uint32_t>& widths,
                     bool back) {
  std::uint32_t row_bytes = 0;
  for (std::uint32_t w : widths) row_bytes += w;
  std::size_t at = 0, offset = 0;
  for (std::uint32_t w : widths) {
    for (std::size_t i = 0; i < n; ++i) {
      std::byte* column_item = cols + at + i * w;
      std::byte* row_item = const_cast<std::byte*>(rows) + i * row_bytes + offset;
      if (back) std::memcpy(row_item, column_item, w);
      else std::memcpy(column_item, row_item, w);
    }
    at += n * w;
    offset += w;
  }
}

record record_over(std::byte* base, std::size_t n, const std::vector<std::uint32_t>& widths) {
  std::vector<column> cols;
  std::size_t at = 0;
  for (std::uint32_t w : widths) {
    cols.push_back({base + at, w});
    at += n * w;
  }
  return record(cols, n);
}

// Replays of `graph` per timed sample, so a sample spans about a millisecond or more.
int replays_for(double call_ms) { return std::clamp(static_cast<int>(1.0 / std::max(call_ms, 1e-4)), 10, 2000); }

class captured {
 public:
  captured(cudaStream_t stream, const std::function<void()>& enqueue) {
    SIEVE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      enqueue();
    } catch (...) {
      cudaGraph_t g = nullptr;
      cudaStreamEndCapture(stream, &g);
      if (g) cudaGraphDestroy(g);
      throw;
    }
    cudaGraph_t g = nullptr;
    SIEVE_CUDA_CHECK(cudaStreamEndCapture(stream, &g));
    const cudaError_t e = cudaGraphInstantiate(&exec_, g, 0);
    cudaGraphDestroy(g);
    SIEVE_CUDA_CHECK(e);
  }
  ~captured() { cudaGraphExecDestroy(exec_); }
  captured(const captured&) = delete;
  captured& operator=(const captured&) = delete;
  void launch(cudaStream_t stream) const { SIEVE_CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

// The first call's output checked (its count already is): byte by byte when the point is small
// (brought back; a struct of arrays' first `kept` items of each column back into rows), then by
// digest on the device (items in one array); "" when it is right. digest_scratch: two words.
std::string check_result(const case_inputs& in, std::byte* output, std::size_t n, std::size_t kept,
                         const std::vector<std::uint32_t>& widths, std::uint32_t w, bool soa, bool stable,
                         std::uint64_t* digest_scratch) {
  std::string error;
  if (in.exact) {
    std::vector<std::byte> result(kept * w);
    if (soa) {
      const record got = record_over(output, n, widths);
      std::vector<std::byte> cols(result.size());
      std::size_t at = 0;
      for (std::size_t col = 0; col < got.columns(); ++col) {
        SIEVE_CUDA_CHECK(cudaMemcpy(cols.data() + at, got[col].data, kept * got[col].width, cudaMemcpyDeviceToHost));
        at += kept * got[col].width;
      }
      rows_to_columns(result.data(), cols.data(), kept, widths, true);
    } else {
      SIEVE_CUDA_CHECK(cudaMemcpy(result.data(), output, result.size(), cudaMemcpyDeviceToHost));
    }
    error = check_output(in, result, kept, w, stable);
    if (!error.empty()) return error;
  }
  if (!soa) {
    error = check_digest(in, device_digest(output, kept, w, digest_scratch), kept, stable);
    if (!error.empty() && in.exact) error = "the byte-by-byte check passed but the device digest did not: " + error;
  }
  return error;
}

// The timed samples (warm-up ones dropped), in milliseconds a call. Captured: one graph of the call
// with its restore, and one of the restore alone (when there is one to restore) whose time is taken
// off, each sample the mean of many replays. Otherwise: events around each call, restored before.
std::vector<double> time_calls(cudaStream_t stream, bool capturable, bool restores, const timing_plan& plan,
                               const std::function<void()>& restore, const std::function<void()>& call) {
  cuda::event_timer events(stream);
  std::vector<double> ms;
  if (!capturable) {
    for (int r = 0; r < plan.warmup + plan.repeats; ++r) {
      restore();
      events.start();
      call();
      const double t = events.stop_ms();
      if (r >= plan.warmup) ms.push_back(t);
    }
    return ms;
  }
  const captured whole(stream, [&] {
    restore();
    call();
  });
  std::optional<captured> restore_only;
  if (restores) restore_only.emplace(stream, restore);
  whole.launch(stream);
  events.start();
  whole.launch(stream);
  const int replays = replays_for(events.stop_ms());
  auto sample = [&](const captured& g) {
    events.start();
    for (int r = 0; r < replays; ++r) g.launch(stream);
    return events.stop_ms() / replays;
  };
  for (int r = 0; r < plan.warmup + plan.repeats; ++r) {
    const double t = sample(whole) - (restore_only ? sample(*restore_only) : 0.0);
    if (r >= plan.warmup) ms.push_back(t);
  }
  return ms;
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
  bool items_soa = false;
  std::size_t k = 0, flag_count = 0, mask_words = 0;
};

cuda_bench::cuda_bench() : b_(std::make_unique<buffers>()) { b_->scratch.reserve_discard(8 * sizeof(std::uint64_t)); }
cuda_bench::~cuda_bench() = default;

void cuda_bench::load(const bench_case& c, const case_inputs& in) {
  buffers& b = *b_;
  if (in.n != c.n || in.width != c.type.width || in.items.size() != c.n * c.type.width)
    throw error("cuda_bench::load: the inputs hold " + std::to_string(in.n) + " items of " + std::to_string(in.width) +
                " bytes, the point " + std::to_string(c.n) + " of " + std::to_string(c.type.width));
  if (b.items_n != in.n || b.items_width != in.width || b.items_soa != !c.type.columns.empty()) {
    b.items_n = 0;  // until the upload has succeeded
    if (c.type.columns.empty()) {
      upload(b.pristine, in.items.data(), in.items.size());
    } else {
      std::vector<std::byte> cols(in.items.size());
      rows_to_columns(in.items.data(), cols.data(), in.n, c.type.columns, false);
      upload(b.pristine, cols.data(), cols.size());
    }
    b.items_soa = !c.type.columns.empty();
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

    const std::vector<std::uint32_t> widths = widths_of(c.type);
    const bool soa = !c.type.columns.empty();
    if (soa && !in.exact)
      throw error(c.type.name + " points are checked byte by byte: at most " +
                  std::to_string(exact_check_bytes / w) + " items");
    const record items_rec = record_over(input, c.n, widths), out_rec = record_over(b.out.get(), c.n, widths);
    selection keep = byte_flags{std::span(reinterpret_cast<const std::uint8_t*>(b.flags.get()), b.flag_count)};
    if (c.f == form::removal_list) keep = removal_list{std::span(reinterpret_cast<std::uint32_t*>(b.removals.get()), b.k)};
    if (c.f == form::bit_mask) keep = bit_mask{std::span(reinterpret_cast<const std::uint32_t*>(b.mask.get()), b.mask_words)};

    b.workspace.reserve_discard(cuda::workspace_bytes(c.strategy, items_rec, c.f, c.in_place));
    const cuda::workspace space{b.workspace.get(), b.workspace.size()};
    // scratch: [0] the count, [2, 4) the digest, [4] live n, [5] live k.
    auto* count = reinterpret_cast<std::uint64_t*>(b.scratch.get());
    std::uint64_t* live = count + 4;
    const std::uint64_t live_host[2] = {c.n, b.k};
    SIEVE_CUDA_CHECK(cudaMemcpy(live, live_host, sizeof live_host, cudaMemcpyHostToDevice));
    // Graphs need a stream of their own: the legacy default stream cannot be captured.
    cudaStream_t stream = nullptr;
    if (plan.graph) SIEVE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    struct stream_guard {
      cudaStream_t s;
      ~stream_guard() {
        if (s) cudaStreamDestroy(s);
      }
    } guard{stream};
    // A strategy that reads its counts back to the host cannot be captured.
    const bool capturable = plan.graph && !sieve::compaction_strategy(c.strategy).host_counts;
    m.timing = capturable ? "graph" : "events";
    auto restore = [&] {
      if (c.in_place)
        SIEVE_CUDA_CHECK(cudaMemcpyAsync(b.items.get(), b.pristine.get(), item_bytes, cudaMemcpyDeviceToDevice, stream));
      if (b.k)
        SIEVE_CUDA_CHECK(cudaMemcpyAsync(b.removals.get(), b.removals_pristine.get(), b.k * sizeof(std::uint32_t),
                                         cudaMemcpyDeviceToDevice, stream));
    };
    options opt;
    opt.checked = plan.checked;
    auto call = [&] {
      if (plan.graph) {
        const cuda::device_counts counts{live, live + 1};
        if (c.in_place)
          cuda::compact_async(c.strategy, items_rec, keep, counts, count, space, stream, opt);
        else
          cuda::compact_copy_async(c.strategy, items_rec, out_rec, keep, counts, count, space, stream, opt);
      } else if (c.in_place) {
        cuda::compact_async(c.strategy, items_rec, keep, count, space, nullptr, opt);
      } else {
        cuda::compact_copy_async(c.strategy, items_rec, out_rec, keep, count, space, nullptr, opt);
      }
    };

    restore();
    call();
    SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::uint64_t kept = 0;
    SIEVE_CUDA_CHECK(cudaMemcpy(&kept, count, sizeof kept, cudaMemcpyDeviceToHost));
    m.kept = static_cast<std::size_t>(kept);
    if (kept != in.kept) {
      m.error = "kept " + std::to_string(kept) + " items, expected " + std::to_string(in.kept);
      return m;
    }
    m.error = check_result(in, output, c.n, m.kept, widths, w, soa, compaction_strategy(c.strategy).stable, count + 2);
    m.validated = m.error.empty();
    if (!m.validated) return m;
    const std::vector<double> ms = time_calls(stream, capturable, c.in_place || b.k, plan, restore, call);
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
