// The multisplit designs (not installed): what each CUDA design's entry point receives, and the
// bin of a bucket id, written once for the CPU and the GPU. Adding a design: write
// kernels/cuda/multisplit_<name>.cu, declare its function here, add it to the table in
// dispatch/cuda_multisplit.cpp and list the file in compaction/CMakeLists.txt.
#pragma once

#include <sieve/compaction/record.hpp>
#include <sieve/hd.hpp>

#include <cstddef>
#include <cstdint>

struct CUstream_st;

namespace sieve::detail {

// Ids at or past `buckets` (possible only unchecked) share one bin after the last bucket, so the
// split still writes inside its output. With 256 buckets every byte is a bucket.
SIEVE_HD inline unsigned multisplit_bin(unsigned id, unsigned buckets) { return id < buckets ? id : buckets; }
// Bins a split needs: the buckets, and the bin of ids out of range unless checked mode refuses them.
SIEVE_HD inline unsigned multisplit_bins(unsigned buckets, bool checked) {
  return checked || buckets >= 256 ? buckets : buckets + 1;
}

// Throws sieve::error unless buckets is 1..256, offsets has buckets + 1 entries, there is an id per
// item, and the records pass compaction's checks (shapes, room for every item, no overlap).
void validate_multisplit(const const_record& in, const record& out, bool in_place, std::size_t key_count,
                         unsigned buckets, std::size_t offset_count);

// One out-of-place split of device memory. capacity: the record's size; d_live: the live count
// (null: the capacity). The first 8 bytes of the design's workspace are its "bad id" word: the
// design zeroes it and, in checked mode, leaves ~i there for the first item i whose id is out of
// range (then nothing moves and every offset is invalid_count). With `query` set the design only
// returns the workspace bytes it needs; otherwise it enqueues the split and returns 0.
struct cuda_multisplit_call {
  record in, out;
  const std::uint8_t* ids = nullptr;
  unsigned buckets = 2;
  bool checked = true;
  std::size_t capacity = 0;
  const std::uint64_t* d_live = nullptr;
  std::uint64_t* d_offsets = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  CUstream_st* stream = nullptr;
  bool query = false;
};
using cuda_multisplit_fn = std::size_t (*)(const cuda_multisplit_call&);

std::size_t cuda_multisplit_onesweep(const cuda_multisplit_call&);
std::size_t cuda_multisplit_radix(const cuda_multisplit_call&);
std::size_t cuda_multisplit_atomic(const cuda_multisplit_call&);
std::size_t cuda_multisplit_ballot(const cuda_multisplit_call&);
std::size_t cuda_multisplit_ballot_lookback(const cuda_multisplit_call&);

// The most items a split takes (the look-back statuses hold 30-bit counts).
constexpr std::size_t multisplit_max_n = (std::size_t{1} << 30) - 1;

}  // namespace sieve::detail
