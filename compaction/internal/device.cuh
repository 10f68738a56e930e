// Device-side pieces shared by the CUDA strategies (not installed): a record as kernels see it,
// the per-item "keep?" of each form, and launch sizing.
#pragma once

#include <sieve/compaction/cuda_check.hpp>
#include <sieve/compaction/cuda_device.hpp>
#include <sieve/compaction/record.hpp>
#include <sieve/compaction/selection.hpp>

#include "gate.hpp"

#include <cstddef>
#include <cstdint>

namespace sieve::detail {

// A record by value, for kernel arguments: per column the base pointer, the width, and the widest
// word (1, 2, 4 or 8 bytes) that divides both the width and the base address.
struct device_record {
  struct col {
    std::byte* data;
    std::uint32_t width;
    std::uint32_t word;
  };
  col cols[record::max_columns];
  std::uint32_t count;

  static device_record of(const record& r) {
    device_record d{};
    d.count = static_cast<std::uint32_t>(r.columns());
    for (std::uint32_t c = 0; c < d.count; ++c) {
      const auto addr = reinterpret_cast<std::uintptr_t>(r[c].data);
      std::uint32_t word = 16;
      while (word > 1 && (r[c].width % word != 0 || addr % word != 0)) word /= 2;
      d.cols[c] = {r[c].data, r[c].width, word};
    }
    return d;
  }
};

// A count the kernels read when they run: from device memory (a count above the capacity is taken
// as the capacity) or, with no device pointer, the capacity itself (the host-count calls).
struct live_count {
  const std::uint64_t* device;
  std::uint64_t capacity;
  __device__ std::uint64_t get() const {
    if (device == nullptr) return capacity;
    const std::uint64_t v = *device;
    return v < capacity ? v : capacity;
  }
};

// Copy `width` bytes in words of Word, up to eight loads in flight before their stores (a column of
// a record: the 28-byte ray of the renderer's path queue is seven 4-byte words).
template <class Word>
__device__ inline void copy_words(std::byte* dst, const std::byte* src, std::uint32_t width) {
  auto* d = reinterpret_cast<Word*>(dst);
  const auto* s = reinterpret_cast<const Word*>(src);
  const std::uint32_t words = width / sizeof(Word);
  for (std::uint32_t w0 = 0; w0 < words; w0 += 8) {
    Word v[8];
#pragma unroll
    for (std::uint32_t j = 0; j < 8; ++j)
      if (w0 + j < words) v[j] = s[w0 + j];
#pragma unroll
    for (std::uint32_t j = 0; j < 8; ++j)
      if (w0 + j < words) d[w0 + j] = v[j];
  }
}

// Copy item `from` of `in` to slot `to` of `out` (same shape).
struct device_mover {
  device_record in, out;
  __device__ void operator()(std::size_t to, std::size_t from) const {
    for (std::uint32_t c = 0; c < in.count; ++c) {
      const auto& i = in.cols[c];
      std::byte* dst = out.cols[c].data + to * i.width;
      const std::byte* src = i.data + from * i.width;
      const std::uint32_t word = i.word < out.cols[c].word ? i.word : out.cols[c].word;
      switch (word) {
        case 16: copy_words<uint4>(dst, src, i.width); break;
        case 8: copy_words<std::uint64_t>(dst, src, i.width); break;
        case 4: copy_words<std::uint32_t>(dst, src, i.width); break;
        case 2: copy_words<std::uint16_t>(dst, src, i.width); break;
        default: copy_words<std::uint8_t>(dst, src, i.width); break;
      }
    }
  }
};

struct device_flags {
  const std::uint8_t* flags;
  __device__ bool operator()(std::size_t i) const { return flags[i] != 0; }
};

struct device_mask {
  const std::uint32_t* words;
  __device__ bool operator()(std::size_t i) const { return (words[i / 32] >> (i % 32)) & 1U; }
};

// *d_count = value, in stream order (one tiny kernel; no host memory involved).
void write_count_async(std::uint64_t* d_count, std::uint64_t value, cudaStream_t stream);

// out[j] = in[index[j]] for j < *d_count, column by column. With `copy` (room for n items of the
// widest column) the gather reads from a copy of each column, so out may be in.
void gather_columns_async(const record& in, const record& out, const std::uint64_t* index,
                          const std::uint64_t* d_count, std::byte* copy, cudaStream_t stream);

// Phase 1 of the O(n) competitors of a removal list: stencil[0, n) = 1, then 0 at each index of R.
// k: the list's live length (its capacity sizes the launch).
void mark_removals_async(const std::uint32_t* R, live_count k, std::size_t n, std::uint8_t* stencil,
                         cudaStream_t stream);

constexpr std::size_t align_up(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

// Blocks for a grid-stride kernel: enough to fill every SM `per_sm` times over.
inline unsigned grid_blocks(std::size_t n, unsigned threads, unsigned per_sm = 8) {
  const std::size_t need = (n + threads - 1) / threads;
  const std::size_t most = static_cast<std::size_t>(cuda::sm_count()) * per_sm;
  return static_cast<unsigned>(need < most ? (need > 0 ? need : 1) : most);
}

}  // namespace sieve::detail
