#pragma once

// Multisplit: a stable partition of n items into 2..256 buckets by a bucket id per item. The items
// come out grouped by bucket (bucket 0 first), in input order within each bucket, with the bucket
// boundaries: offsets[b] is the first slot of bucket b and offsets[buckets] = n, so bucket b holds
// offsets[b + 1] - offsets[b] items.
//
//   std::vector<std::uint8_t> material = ...;   // one bucket id per path, < 4
//   std::vector<std::uint64_t> offsets(4 + 1);
//   sieve::multisplit(sieve::record(std::span(pixel), std::span(ray)), sieve::bucket_ids{material}, 4, offsets);
//
// Items are a sieve::record (one array, or up to eight arrays moved together), as for compaction.
// Bucket ids come from a byte column (sieve::bucket_ids) or, on the CPU, from a function of the
// item's index (sieve::bucket_of). Checked mode (options::checked, on by default) makes a bucket id
// >= buckets an error naming the first such item; unchecked, such an id is undefined behaviour.

#include <sieve/compaction/compact.hpp>
#include <sieve/compaction/cuda.hpp>
#include <sieve/compaction/record.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

namespace sieve {

inline constexpr unsigned multisplit_max_buckets = 256;

// One bucket id per item: ids[i] is item i's bucket. At least n entries (the record's size).
struct bucket_ids {
  std::span<const std::uint8_t> ids;
};

// Item i's bucket as f(i) (CPU only). Called once per item, from several threads: keep it pure.
struct bucket_of {
  std::function<unsigned(std::size_t)> f;
};

// Out of place: `in` grouped by bucket into `out` (same columns, room for n items, not overlapping
// `in`); offsets has buckets + 1 entries. CPU (oneTBB): a counting sort over chunks of the items.
void multisplit(const_record in, record out, const bucket_ids& keys, unsigned buckets,
                std::span<std::uint64_t> offsets, const options& opt = {});
void multisplit(const_record in, record out, const bucket_of& keys, unsigned buckets,
                std::span<std::uint64_t> offsets, const options& opt = {});
// In place (through a temporary copy of the items).
void multisplit(record items, const bucket_ids& keys, unsigned buckets, std::span<std::uint64_t> offsets,
                const options& opt = {});
void multisplit(record items, const bucket_of& keys, unsigned buckets, std::span<std::uint64_t> offsets,
                const options& opt = {});

}  // namespace sieve

namespace sieve::cuda {

// The GPU multisplit, over device pointers, with a caller workspace, counts on the device and no
// host synchronisation (capturable in a CUDA graph). Algorithms:
//   "onesweep"  stable: one pass counts the buckets (reading the ids once), one pass ranks each tile
//               of items by bucket in shared memory, finds where the tile's share of each bucket
//               starts by decoupled look-back over (tile, bucket) counts and writes it out;
//   "radix"     stable: the library's onesweep radix sort of (bucket id, index) pairs over the bucket
//               bits only, then a gather of the items;
//   "atomic"    unstable: the counting pass, then each warp takes its slots in each bucket with one
//               atomic per (warp, bucket) and writes its items there (order within a bucket varies);
//   "ballot"    stable, the warp-synchronous multisplit (Ashkiani et al., PPoPP 2016): a pass counts
//               every tile's buckets (laid out [bucket][tile]), one scan of those counts gives where
//               each tile's run of each bucket starts, and the tile pass ranks each tile's items by
//               ballots of the id bits and popc (no shared histogram, no atomics), reorders the tile
//               in shared memory and writes every bucket's run with coalesced stores; records of
//               4-byte-word columns move column by column through shared memory;
//   "ballot_lookback"  stable: the same tile pass after a histogram, finding each tile's starts by
//               decoupled look-back over (tile, bucket) counts instead of the scan;
//   "auto"      the fastest stable design for the call's shape, size and bucket count (H200):
//               ballot for records of 4-byte-word columns (ballot_lookback above 32 buckets), and
//               for one column above 2^20 items and up to 32 buckets; onesweep otherwise.
std::span<const std::string_view> multisplit_algorithms();
// Whether the algorithm keeps input order within a bucket.
bool multisplit_stable(std::string_view algorithm);

// Device bytes `algorithm` needs for this record shape (its size() is the capacity), bucket count,
// and in place or not.
std::size_t multisplit_workspace_bytes(std::string_view algorithm, const record& items, unsigned buckets,
                                       bool in_place = false);

// Enqueue on `stream`. keys.ids and d_offsets (buckets + 1 entries) are device memory. d_live: the
// live item count in device memory (null: the record's size); items past it are neither read nor
// moved and the record's size is the capacity. In checked mode a bucket id >= buckets moves nothing
// and sets every offset to invalid_count. Checks shapes and sizes before enqueueing anything.
void multisplit_async(std::string_view algorithm, const_record in, record out, const bucket_ids& keys,
                      unsigned buckets, std::uint64_t* d_offsets, workspace ws, stream_t stream = nullptr,
                      const std::uint64_t* d_live = nullptr, const options& opt = {});
void multisplit_async(std::string_view algorithm, record items, const bucket_ids& keys, unsigned buckets,
                      std::uint64_t* d_offsets, workspace ws, stream_t stream = nullptr,
                      const std::uint64_t* d_live = nullptr, const options& opt = {});

// The same, then wait for the stream: offsets (host memory, buckets + 1 entries) receives the
// boundaries; in checked mode a bad bucket id throws sieve::error naming the first such item. The
// workspace also holds the device offsets (multisplit_workspace_bytes includes them).
void multisplit(std::string_view algorithm, const_record in, record out, const bucket_ids& keys, unsigned buckets,
                std::span<std::uint64_t> offsets, workspace ws, stream_t stream = nullptr, const options& opt = {});

}  // namespace sieve::cuda
