// What the library baselines (cub.cu, thrust.cu) share (not installed): the typed-column dispatch,
// their workspace layout, and the keep flags as the iterator CUB and Thrust take.
#pragma once

#include "device.cuh"

#include "cuda_call.hpp"

#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <type_traits>

#include <cstdint>

namespace sieve::detail {

// Item i's keep bit from a bit mask, for iterators (CUB, Thrust).
struct mask_bit {
  const std::uint32_t* words;
  __host__ __device__ bool operator()(std::size_t i) const { return (words[i / 32] >> (i % 32)) & 1U; }
};

// Calls f(T{}) when the record is one aligned column of 1, 2, 4, 8 or 16 bytes, f(nullptr) otherwise.
template <class F>
decltype(auto) with_column_type(const record& r, F&& f) {
  if (r.columns() == 1 && reinterpret_cast<std::uintptr_t>(r[0].data) % r[0].width == 0) switch (r[0].width) {
      case 1: return f(std::uint8_t{});
      case 2: return f(std::uint16_t{});
      case 4: return f(std::uint32_t{});
      case 8: return f(std::uint64_t{});
      case 16: return f(uint4{});
      default: break;
    }
  return f(nullptr);
}

// The workspace of a library baseline: [stencil: n flags, removal lists only][indices: 8n, records
// that are not one typed column][copy: n items of the widest column, such records in place][the
// library's own temporaries].
struct baseline_workspace {
  bool typed;
  std::uint8_t* stencil;
  std::uint64_t* index;
  std::byte* copy;       // null unless the gather must read from a copy (in place)
  std::byte* library;    // the library's temporaries
  std::size_t fixed;     // bytes before them

  explicit baseline_workspace(const cuda_call& call) {
    const std::size_t n = call.in.size();
    typed = with_column_type(call.in, [](auto t) { return !std::is_same_v<decltype(t), std::nullptr_t>; });
    std::size_t widest = 0;
    for (std::size_t c = 0; c < call.in.columns(); ++c) widest = std::max<std::size_t>(widest, call.in[c].width);
    const std::size_t stencil_bytes = form_of(call.keep) == form::removal_list ? align_up(n) : 0;
    const std::size_t index_bytes = typed ? 0 : align_up(8 * n);
    const std::size_t copy_bytes = typed || !call.in_place ? 0 : align_up(widest * n);
    fixed = stencil_bytes + index_bytes + copy_bytes;
    auto* base = static_cast<std::byte*>(call.workspace);
    stencil = reinterpret_cast<std::uint8_t*>(base);
    index = reinterpret_cast<std::uint64_t*>(base + stencil_bytes);
    copy = copy_bytes ? base + stencil_bytes + index_bytes : nullptr;
    library = base ? base + fixed : nullptr;
  }
};

// Calls f(flags) with the call's keep flags as a flag iterator: byte flags as they are, a bit mask
// through a transform iterator that reads bit i, a removal list as `stencil` (marked by
// mark_removals_async).
template <class F>
decltype(auto) with_flag_iterator(const cuda_call& call, const std::uint8_t* stencil, F&& f) {
  switch (form_of(call.keep)) {
    case form::bit_mask:
      return f(thrust::make_transform_iterator(thrust::counting_iterator<std::size_t>(0),
                                               mask_bit{std::get<bit_mask>(call.keep).words.data()}));
    case form::byte_flags: return f(std::get<byte_flags>(call.keep).keep.data());
    default: return f(stencil);
  }
}

}  // namespace sieve::detail
