#pragma once

// The CUDA backend of the compaction API. Records, flags, masks and removal lists hold device
// pointers. Temporary storage is the caller's (CUB's two-call idiom): ask workspace_bytes(), pass a
// device buffer at least that large; no strategy allocates device memory. Builds without CUDA have
// these functions too: available() is false and the others throw sieve::error.

#include <sieve/compaction/record.hpp>
#include <sieve/compaction/selection.hpp>

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

// Device bytes `strategy` needs to compact n items of this record shape from this form. For `auto`:
// enough for every strategy it may pick (its choice also depends on k/n, unknown here).
std::size_t workspace_bytes(std::string_view strategy, const record& items, form f, bool in_place);

// Enqueue on `stream`; the number kept is written to *d_count (device memory). No host sync.
void compact_copy_async(std::string_view strategy, record in, record out, const selection& keep,
                        std::uint64_t* d_count, workspace ws, stream_t stream = nullptr);
void compact_async(std::string_view strategy, record items, const selection& keep, std::uint64_t* d_count,
                   workspace ws, stream_t stream = nullptr);

// Checked mode on the device (the CPU's options::checked): throws sieve::error naming the first
// offending index unless every index of `removals` is < n and none appears twice. Run it before
// compacting with a list of unknown provenance; it needs removal_check_bytes(n) of workspace and
// waits for the stream.
std::size_t removal_check_bytes(std::size_t n);
void check_removals(const removal_list& removals, std::size_t n, workspace ws, stream_t stream = nullptr);

// The same, then wait for the stream and return the number kept (the count lives in the workspace:
// ask workspace_bytes() as for the async forms; it includes room for the count).
std::size_t compact_copy(std::string_view strategy, record in, record out, const selection& keep, workspace ws,
                         stream_t stream = nullptr);
std::size_t compact(std::string_view strategy, record items, const selection& keep, workspace ws,
                    stream_t stream = nullptr);

}  // namespace sieve::cuda
