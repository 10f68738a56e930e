// The CUDA multisplit entry points: validate, lay out the workspace (the synchronous form's device
// offsets, the in-place form's copy of the items, then the design's own part), dispatch to the
// design. Built only with the CUDA backend (cuda_missing.cpp stands in otherwise).
#include <sieve/compaction/cuda_check.hpp>
#include <sieve/compaction/error.hpp>
#include <sieve/compaction/multisplit.hpp>

#include "internal/multisplit_table.hpp"

#include <cuda_runtime_api.h>

#include <array>
#include <string>

namespace sieve::cuda {
namespace {

constexpr std::array<std::string_view, 6> names = {"onesweep", "radix", "atomic", "ballot", "ballot_lookback", "auto"};

detail::cuda_multisplit_fn design_named(std::string_view name) {
  if (name == "onesweep") return &detail::cuda_multisplit_onesweep;
  if (name == "radix") return &detail::cuda_multisplit_radix;
  if (name == "atomic") return &detail::cuda_multisplit_atomic;
  if (name == "ballot") return &detail::cuda_multisplit_ballot;
  if (name == "ballot_lookback") return &detail::cuda_multisplit_ballot_lookback;
  throw error("unknown multisplit algorithm '" + std::string(name) +
              "'; algorithms: onesweep, radix, atomic, ballot, ballot_lookback, auto");
}

// What `auto` runs for a call of this shape, from the H200's measurements (bench/results/h200/
// multisplit-*): records of 4-byte-word columns, which `ballot` moves column by column through shared
// memory, go to `ballot` (`ballot_lookback` above 33 bins); one column goes to `ballot` from 2^20 items
// and up to 33 bins, else to `onesweep` (faster at small n, where launches dominate, and at many bins).
std::string_view auto_design(const detail::cuda_multisplit_call& c) {
  const unsigned bins = detail::multisplit_bins(c.buckets, c.checked);
  bool words = c.in.columns() >= 2;
  for (std::size_t k = 0; k < c.in.columns(); ++k) words = words && c.in[k].width % 4 == 0;
  if (words) return bins <= 33 ? "ballot" : "ballot_lookback";
  return bins <= 33 && c.capacity > (std::size_t{1} << 20) ? "ballot" : "onesweep";
}

std::string_view resolve(std::string_view name, const detail::cuda_multisplit_call& c) {
  return name == "auto" ? auto_design(c) : name;
}

constexpr std::size_t align(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

// The workspace: [device offsets for the synchronous form][a copy of the items, in place][the design's].
struct layout {
  std::size_t offsets = 0, copy = 0, design = 0, total = 0;
};

layout layout_of(detail::cuda_multisplit_fn fn, detail::cuda_multisplit_call q, bool in_place) {
  layout l;
  l.offsets = 0;
  l.copy = align(8 * (multisplit_max_buckets + 1));
  std::size_t copy_bytes = 0;
  if (in_place)
    for (std::size_t c = 0; c < q.in.columns(); ++c) copy_bytes += align(q.capacity * q.in[c].width);
  l.design = l.copy + copy_bytes;
  q.query = true;
  l.total = l.design + fn(q);
  return l;
}

detail::cuda_multisplit_call call_of(const const_record& in, const record& out, const bucket_ids& keys,
                                     unsigned buckets, const options& opt) {
  detail::cuda_multisplit_call c;
  c.in = detail::as_record(in);
  c.out = out;
  c.ids = keys.ids.data();
  c.buckets = buckets;
  c.checked = opt.checked.value_or(checked_default());
  c.capacity = in.size();
  if (c.capacity > detail::multisplit_max_n)
    throw error("cuda multisplit: " + std::to_string(c.capacity) + " items; at most 2^30 - 1");
  return c;
}

void check_workspace(std::string_view algorithm, const workspace& ws, std::size_t need) {
  if (ws.bytes < need || (need > 0 && ws.data == nullptr))
    throw error("cuda multisplit '" + std::string(algorithm) + "': workspace of " + std::to_string(ws.bytes) +
                " bytes, needs " + std::to_string(need) + " (ask sieve::cuda::multisplit_workspace_bytes)");
}

// Enqueues the split of `c.in` (or, in place, of a copy of it) into c.out.
void enqueue(std::string_view algorithm, detail::cuda_multisplit_call c, bool in_place, std::uint64_t* d_offsets,
             const std::uint64_t* d_live, workspace ws, stream_t stream) {
  if (d_offsets == nullptr) throw error("cuda multisplit: the device offsets pointer is null");
  const detail::cuda_multisplit_fn fn = design_named(resolve(algorithm, c));
  const layout l = layout_of(fn, c, in_place);
  check_workspace(algorithm, ws, l.total);
  auto* base = static_cast<std::byte*>(ws.data);
  if (in_place) {
    std::array<column, record::max_columns> cols{};
    std::byte* at = base + l.copy;
    for (std::size_t k = 0; k < c.in.columns(); ++k) {
      const std::size_t bytes = c.capacity * c.in[k].width;
      if (bytes) SIEVE_CUDA_CHECK(cudaMemcpyAsync(at, c.in[k].data, bytes, cudaMemcpyDeviceToDevice, stream));
      cols[k] = {at, c.in[k].width};
      at += align(bytes);
    }
    c.in = record(std::span<const column>(cols.data(), c.in.columns()), c.capacity);
  }
  c.d_live = d_live;
  c.d_offsets = d_offsets;
  c.stream = stream;
  c.workspace = base + l.design;
  c.workspace_bytes = ws.bytes - l.design;
  fn(c);
}

}  // namespace

std::span<const std::string_view> multisplit_algorithms() { return names; }
bool multisplit_stable(std::string_view algorithm) {
  if (algorithm != "auto") design_named(algorithm);
  return algorithm != "atomic";  // auto picks stable designs only
}

std::size_t multisplit_workspace_bytes(std::string_view algorithm, const record& items, unsigned buckets,
                                       bool in_place) {
  if (buckets < 1 || buckets > multisplit_max_buckets)
    throw error("multisplit: " + std::to_string(buckets) + " buckets; 1 to 256");
  detail::cuda_multisplit_call q = call_of(items, items, {}, buckets, {});
  q.checked = false;  // the larger of the two shapes
  return layout_of(design_named(resolve(algorithm, q)), q, in_place).total;
}

void multisplit_async(std::string_view algorithm, const_record in, record out, const bucket_ids& keys,
                      unsigned buckets, std::uint64_t* d_offsets, workspace ws, stream_t stream,
                      const std::uint64_t* d_live, const options& opt) {
  detail::validate_multisplit(in, out, false, keys.ids.size(), buckets, buckets + 1);
  enqueue(algorithm, call_of(in, out, keys, buckets, opt), false, d_offsets, d_live, ws, stream);
}

void multisplit_async(std::string_view algorithm, record items, const bucket_ids& keys, unsigned buckets,
                      std::uint64_t* d_offsets, workspace ws, stream_t stream, const std::uint64_t* d_live,
                      const options& opt) {
  detail::validate_multisplit(items, items, true, keys.ids.size(), buckets, buckets + 1);
  enqueue(algorithm, call_of(items, items, keys, buckets, opt), true, d_offsets, d_live, ws, stream);
}

void multisplit(std::string_view algorithm, const_record in, record out, const bucket_ids& keys, unsigned buckets,
                std::span<std::uint64_t> offsets, workspace ws, stream_t stream, const options& opt) {
  detail::validate_multisplit(in, out, false, keys.ids.size(), buckets, offsets.size());
  const detail::cuda_multisplit_call c = call_of(in, out, keys, buckets, opt);
  const layout l = layout_of(design_named(resolve(algorithm, c)), c, false);
  check_workspace(algorithm, ws, l.total);
  auto* d_offsets = reinterpret_cast<std::uint64_t*>(static_cast<std::byte*>(ws.data) + l.offsets);
  enqueue(algorithm, c, false, d_offsets, nullptr, ws, stream);
  std::uint64_t bad = 0;
  SIEVE_CUDA_CHECK(cudaMemcpyAsync(offsets.data(), d_offsets, 8 * (buckets + std::size_t{1}), cudaMemcpyDeviceToHost, stream));
  SIEVE_CUDA_CHECK(cudaMemcpyAsync(&bad, static_cast<std::byte*>(ws.data) + l.design, 8, cudaMemcpyDeviceToHost, stream));
  SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (bad != 0) {
    const std::size_t i = ~bad;
    std::uint8_t id = 0;
    SIEVE_CUDA_CHECK(cudaMemcpy(&id, keys.ids.data() + i, 1, cudaMemcpyDeviceToHost));
    throw error("multisplit: item " + std::to_string(i) + " has bucket id " + std::to_string(id) + ", not below " +
                std::to_string(buckets));
  }
}

}  // namespace sieve::cuda
