#pragma once

// The CUDA backend of the compaction API. Records, flags, masks and removal lists hold device
// pointers. Temporary storage is the caller's (CUB's two-call idiom): ask workspace_bytes(), pass a
// device buffer at least that large; no strategy allocates device memory. Builds without CUDA have
// these functions too: available() is false and the others throw sieve::error.

#include <sieve/compaction/compact.hpp>
#include <sieve/compaction/record.hpp>
#include <sieve/compaction/selection.hpp>
#include <sieve/compaction/strategies.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

struct CUstream_st;  // cudaStream_t is CUstream_st*

namespace sieve::cuda {

using stream_t = CUstream_st*;

// True when this build has the CUDA backend and a device is visible.
bool available();
// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 81079 MiB, peak clocks 1980 MHz SM, 2619 MHz memory)",
// or why there is none.
std::string device_description();

struct workspace {
  void* data = nullptr;
  std::size_t bytes = 0;
};

// Checked mode, as on the CPU (sieve::checked_default(), on unless switched off; options::checked
// per call): a removal list is validated on the device before anything moves (every index < n,
// none twice; one pass over the list with n bits of scratch in the workspace, in stream order).
// The synchronous calls throw sieve::error naming the first bad index and its position. The
// asynchronous ones cannot throw: on a bad list nothing moves and *d_count is set to
// invalid_count. Unchecked (options{.checked = false}), a bad list is undefined behaviour.
// options::times is CPU only.
inline constexpr std::uint64_t invalid_count = ~std::uint64_t{0};

// Device bytes `s` needs to compact n items of this record shape from this form. For `auto`:
// enough for every strategy it may pick (its choice also depends on k/n, unknown here).
std::size_t workspace_bytes(const strategy& s, const record& items, form f, bool in_place);

// Enqueue on `stream`; the number kept is written to *d_count (device memory). No host sync (except
// `thrust`, which returns its count to the host), no allocation. Checks as on the CPU, before
// anything is enqueued: shapes, sizes, and no column of `out` overlapping one of `in`.
void compact_copy_async(const strategy& s, const_record in, record out, const selection& keep,
                        std::uint64_t* d_count, workspace ws, stream_t stream = nullptr, const options& opt = {});
void compact_async(const strategy& s, record items, const selection& keep, std::uint64_t* d_count,
                   workspace ws, stream_t stream = nullptr, const options& opt = {});

// Live counts in device memory, for callers whose counts a kernel wrote (a queue) or that capture
// a call once in a CUDA graph and replay it with other counts. The record's size() and a removal
// list's span size are then capacities: the workspace and the launch shape are sized for them, and
// the live counts are read on the device when the call runs (a count above its capacity is taken
// as the capacity). Items past the live count are neither read nor moved; `out` needs room for the
// capacity. *d_count may not be one of the live counts.
struct device_counts {
  const std::uint64_t* items = nullptr;     // n, items live in the record (required)
  const std::uint64_t* removals = nullptr;  // k, indices live in the removal list (null: its span's size)
};

// The device-count forms: nothing waits for the host, so the call can be captured in a graph and
// replayed. `space` and `atomic` enqueue one kernel below 2^17 items of capacity (`atomic` also a
// memset of *d_count); `cub` masks the items past the count through its flag iterator and runs over
// the capacity; `thrust` cannot: it reads the counts back (a host synchronisation, not capturable).
void compact_copy_async(const strategy& s, const_record in, record out, const selection& keep, device_counts live,
                        std::uint64_t* d_count, workspace ws, stream_t stream = nullptr, const options& opt = {});
void compact_async(const strategy& s, record items, const selection& keep, device_counts live,
                   std::uint64_t* d_count, workspace ws, stream_t stream = nullptr, const options& opt = {});

// Checked mode on the device (the CPU's options::checked): throws sieve::error naming the first
// offending index unless every index of `removals` is < n and none appears twice. Run it before
// compacting with a list of unknown provenance; it needs removal_check_bytes(n) of workspace and
// waits for the stream.
std::size_t removal_check_bytes(std::size_t n);
void check_removals(const removal_list& removals, std::size_t n, workspace ws, stream_t stream = nullptr);

// The same, then wait for the stream and return the number kept (the count lives in the workspace:
// ask workspace_bytes() as for the async forms; it includes room for the count).
std::size_t compact_copy(const strategy& s, const_record in, record out, const selection& keep, workspace ws,
                         stream_t stream = nullptr, const options& opt = {});
std::size_t compact(const strategy& s, record items, const selection& keep, workspace ws,
                    stream_t stream = nullptr, const options& opt = {});

}  // namespace sieve::cuda
