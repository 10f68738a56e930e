// The CUDA entry points: validate, resolve `auto`, size and check the workspace, dispatch. Built
// only with the CUDA backend (cuda_missing.cpp stands in otherwise).
#include <sieve/compaction/cuda.hpp>
#include <sieve/compaction/cuda_check.hpp>

#include "strategy_table.hpp"
#include "internal/validate.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>

#include "internal/gate.hpp"

namespace sieve::cuda {
namespace {

// The workspace starts with a slot for the count of the synchronous forms, then (removal lists)
// checked mode's gate and its n bits, then the strategy's own part.
constexpr std::size_t count_slot = 256;
constexpr std::size_t gate_slot = 256;

std::size_t gate_bytes(form f, std::size_t n) {
  return f == form::removal_list ? gate_slot + detail::removal_gate_seen_bytes(n) : 0;
}

struct gate_at {
  detail::removal_gate* gate;
  std::uint32_t* seen;
};
gate_at gate_in(workspace ws) {
  auto* base = static_cast<std::byte*>(ws.data) + count_slot;
  return {reinterpret_cast<detail::removal_gate*>(base), reinterpret_cast<std::uint32_t*>(base + gate_slot)};
}

// The gate's findings as the CPU words them: the first index out of range, else the first repeat.
[[noreturn]] void throw_gate(const detail::removal_gate& g, const std::uint32_t* R, std::size_t n) {
  const int which = g.found[0] != detail::removal_gate::none ? 0 : 1;
  const std::size_t at = g.found[which];
  std::uint32_t index = 0;
  SIEVE_CUDA_CHECK(cudaMemcpy(&index, R + at, sizeof index, cudaMemcpyDeviceToHost));
  throw error(which == 0 ? detail::removal_out_of_range(index, at, n) : detail::removal_twice(index, at));
}

struct resolved {
  strategy s;
  const detail::strategy_entry* entry;
};

// Bytes one item of the record spans across its columns.
std::size_t record_bytes(const record& r) {
  std::size_t bytes = 0;
  for (std::size_t c = 0; c < r.columns(); ++c) bytes += r[c].width;
  return bytes;
}

// The current device's name, asked once per device (cudaGetDeviceProperties is slow).
std::string_view current_device_name() {
  static std::mutex guard;
  static std::map<int, std::string> names;
  int dev = 0;
  SIEVE_CUDA_CHECK(cudaGetDevice(&dev));
  const std::lock_guard lock(guard);
  auto it = names.find(dev);
  if (it == names.end()) {
    cudaDeviceProp p{};
    SIEVE_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
    it = names.emplace(dev, p.name).first;
  }
  return it->second;
}

resolved resolve(const strategy& asked, const record& in, const selection& keep, bool in_place) {
  const form f = form_of(keep);
  const strategy s = asked.resolve(backend::cuda, f, in_place, in.size(), detail::removed_count(keep), record_bytes(in));
  require_strategy(s, backend::cuda, f, in_place);
  return {s, &detail::strategy_entry_for(s)};
}

std::size_t strategy_bytes(const resolved& r, const detail::cuda_call& shape) {
  detail::cuda_call q = shape;
  q.query = true;
  return r.entry->cuda(q);
}

void enqueue(const strategy& asked, const const_record& input, const record& out, const selection& keep, bool in_place,
             std::uint64_t* d_count, workspace ws, stream_t stream, const options& opt,
             const device_counts* live = nullptr) {
  detail::validate_call(input, out, keep, in_place);
  const record in = detail::as_record(input);
  if (live) {
    if (live->items == nullptr) throw error("cuda compaction: device_counts.items is null (the live item count)");
    if (d_count == live->items || (live->removals && d_count == live->removals))
      throw error("cuda compaction: d_count is one of the live counts; give the result its own slot");
    if (!in_place && out.size() < in.size())
      throw error("cuda compaction: output has room for " + std::to_string(out.size()) + " items, needs the capacity " +
                  std::to_string(in.size()) + " (counts on the device: every item may be kept)");
  }
  const resolved r = resolve(asked, in, keep, in_place);
  detail::cuda_call call{in, out, keep, in_place, false, d_count, nullptr, 0, stream, false};
  if (live) {
    call.live_n = live->items;
    call.live_k = form_of(keep) == form::removal_list ? live->removals : nullptr;
  }
  const form f = form_of(keep);
  const std::size_t before = count_slot + gate_bytes(f, in.size());
  const std::size_t need = before + strategy_bytes(r, call);
  if (ws.bytes < need || (need > 0 && ws.data == nullptr))
    throw error("cuda compaction '" + std::string(r.s.name()) + "': workspace of " + std::to_string(ws.bytes) +
                " bytes, needs " + std::to_string(need) + " (ask sieve::cuda::workspace_bytes)");
  call.workspace = static_cast<std::byte*>(ws.data) + before;
  call.workspace_bytes = ws.bytes - before;
  // Checked mode: the gate lets the list's k through, or 0 (and marks the count invalid afterwards).
  const bool checked = f == form::removal_list && opt.checked.value_or(checked_default());
  const gate_at g = gate_in(ws);
  if (checked) {
    const auto R = std::get<removal_list>(keep).indices;
    detail::gate_removals_async(R.data(), call.live_k, R.size(), call.live_n, in.size(), g.seen, g.gate, stream);
    call.live_k = &g.gate->k;
  }
  r.entry->cuda(call);
  if (checked) detail::gate_result_async(g.gate, d_count, stream);
}

// The count of a synchronous call; a closed gate (checked mode) becomes its error.
std::size_t wait_for_count(workspace ws, stream_t stream, const selection& keep, std::size_t n) {
  std::uint64_t count = 0;
  SIEVE_CUDA_CHECK(cudaMemcpyAsync(&count, ws.data, sizeof count, cudaMemcpyDeviceToHost, stream));
  SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (count == invalid_count && form_of(keep) == form::removal_list) {
    detail::removal_gate g{};
    SIEVE_CUDA_CHECK(cudaMemcpy(&g, gate_in(ws).gate, sizeof g, cudaMemcpyDeviceToHost));
    if (!g.valid) throw_gate(g, std::get<removal_list>(keep).indices.data(), n);
  }
  return static_cast<std::size_t>(count);
}

}  // namespace

bool available() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return false;
  }
  return n > 0;
}

std::string device_description() {
  int n = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&n); e != cudaSuccess || n == 0) {
    cudaGetLastError();
    return std::string("no CUDA device (") + (e != cudaSuccess ? cudaGetErrorString(e) : "none found") + ")";
  }
  int dev = 0;
  SIEVE_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  SIEVE_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  int sm_khz = 0, mem_khz = 0;  // peak clocks (the current ones need NVML)
  cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, dev);
  cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev);
  cudaGetLastError();
  return std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " +
         std::to_string(p.multiProcessorCount) + " SMs, " + std::to_string(p.totalGlobalMem >> 20) + " MiB, peak clocks " +
         std::to_string(sm_khz / 1000) + " MHz SM, " + std::to_string(mem_khz / 1000) + " MHz memory)";
}

std::size_t workspace_bytes(const strategy& s, const record& items, form f, bool in_place) {
  // The shape matters, not the data: a selection of the right form with no elements stands in.
  std::uint32_t none = 0;
  const selection probe = f == form::removal_list ? selection{removal_list{std::span(&none, 0)}}
                          : f == form::bit_mask   ? selection{bit_mask{}}
                                                  : selection{byte_flags{}};
  if (f == form::predicate) require_strategy(s, backend::cuda, f, in_place);  // throws: CPU only
  const detail::cuda_call shape{items, items, probe, in_place};
  if (s.is_auto()) {
    // `auto` picks by k/n too, which is not known here: room for whichever strategy it may pick.
    require_strategy(s, backend::cuda, f, in_place);
    std::size_t most = 0;
    for (const auto& e : detail::strategy_table())
      if (e.info.name != "auto" && e.cuda && e.info.takes(backend::cuda, f) && (in_place ? e.info.in_place : e.info.out_of_place))
        most = std::max(most, strategy_bytes({strategy(e.info.name), &e}, shape));
    return count_slot + gate_bytes(f, items.size()) + most;
  }
  const resolved r = resolve(s, items, probe, in_place);
  return count_slot + gate_bytes(f, items.size()) + strategy_bytes(r, shape);
}

void compact_copy_async(const strategy& s, const_record in, record out, const selection& keep,
                        std::uint64_t* d_count, workspace ws, stream_t stream, const options& opt) {
  enqueue(s, in, out, keep, false, d_count, ws, stream, opt);
}

void compact_async(const strategy& s, record items, const selection& keep, std::uint64_t* d_count,
                   workspace ws, stream_t stream, const options& opt) {
  enqueue(s, items, items, keep, true, d_count, ws, stream, opt);
}

void compact_copy_async(const strategy& s, const_record in, record out, const selection& keep, device_counts live,
                        std::uint64_t* d_count, workspace ws, stream_t stream, const options& opt) {
  enqueue(s, in, out, keep, false, d_count, ws, stream, opt, &live);
}

void compact_async(const strategy& s, record items, const selection& keep, device_counts live,
                   std::uint64_t* d_count, workspace ws, stream_t stream, const options& opt) {
  enqueue(s, items, items, keep, true, d_count, ws, stream, opt, &live);
}

std::size_t compact_copy(const strategy& s, const_record in, record out, const selection& keep, workspace ws,
                         stream_t stream, const options& opt) {
  enqueue(s, in, out, keep, false, static_cast<std::uint64_t*>(ws.data), ws, stream, opt);
  return wait_for_count(ws, stream, keep, in.size());
}

std::size_t removal_check_bytes(std::size_t n) { return count_slot + gate_bytes(form::removal_list, n); }

void check_removals(const removal_list& removals, std::size_t n, workspace ws, stream_t stream) {
  const std::size_t k = removals.indices.size();
  if (k > n) throw error(detail::removals_too_many(k, n));
  if (ws.bytes < removal_check_bytes(n) || ws.data == nullptr)
    throw error("cuda check_removals: workspace of " + std::to_string(ws.bytes) + " bytes, needs " +
                std::to_string(removal_check_bytes(n)) + " (ask sieve::cuda::removal_check_bytes)");
  const gate_at g = gate_in(ws);
  detail::gate_removals_async(removals.indices.data(), nullptr, k, nullptr, n, g.seen, g.gate, stream);
  detail::removal_gate found{};
  SIEVE_CUDA_CHECK(cudaMemcpyAsync(&found, g.gate, sizeof found, cudaMemcpyDeviceToHost, stream));
  SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (!found.valid) throw_gate(found, removals.indices.data(), n);
}

std::size_t compact(const strategy& s, record items, const selection& keep, workspace ws, stream_t stream,
                    const options& opt) {
  enqueue(s, items, items, keep, true, static_cast<std::uint64_t*>(ws.data), ws, stream, opt);
  return wait_for_count(ws, stream, keep, items.size());
}

}  // namespace sieve::cuda

std::string_view sieve::detail::cuda_device_name() { return cuda::current_device_name(); }
