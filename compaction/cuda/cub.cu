// cub (CUDA): the baseline every GPU strategy is measured against, cub::DeviceSelect::Flagged
// (Merrill & Garland's single-pass decoupled look-back). Byte flags go to it as they are; a bit mask
// through a transform iterator that reads bit i; a removal list is first marked (phase 1: n flags
// set to 1, then a 0 at each listed index), then selected in place, as every O(n) competitor of
// Redzone must. A record of one column of 1, 2, 4, 8 or 16 bytes is selected directly; other
// records select item indices, then gather every column. Stable.
#include "../src/strategy_table.hpp"
#include "select_common.cuh"

#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

namespace sieve::detail {
namespace {

// Calls f(flag_iterator) for the call's selection; a removal list must be marked into `stencil`.
template <class F>
cudaError_t with_flags(const cuda_call& call, const std::uint8_t* stencil, F&& f) {
  switch (form_of(call.keep)) {
    case form::bit_mask:
      return f(thrust::make_transform_iterator(thrust::counting_iterator<std::size_t>(0),
                                               mask_bit{std::get<bit_mask>(call.keep).words.data()}));
    case form::byte_flags: return f(std::get<byte_flags>(call.keep).keep.data());
    default: return f(stencil);
  }
}

template <class T>
T* column_as(const record& r) {
  return reinterpret_cast<T*>(r[0].data);
}

// The typed path: Flagged on T, in place or out of place. Returns CUB's temp bytes when temp is null.
template <class T>
std::size_t select_typed(const cuda_call& call, const std::uint8_t* stencil, void* temp, std::size_t temp_bytes) {
  const auto n = static_cast<std::int64_t>(call.in.size());
  SIEVE_CUDA_CHECK(with_flags(call, stencil, [&](auto flags) {
    if (call.in_place)
      return cub::DeviceSelect::Flagged(temp, temp_bytes, column_as<T>(call.in), flags, call.d_count, n, call.stream);
    return cub::DeviceSelect::Flagged(temp, temp_bytes, column_as<const T>(call.in), flags, column_as<T>(call.out),
                                      call.d_count, n, call.stream);
  }));
  return temp_bytes;
}

// The record path: select the indices of the kept items, then gather (in place through a copy of
// each column, since a parallel gather over its own input would race).
std::size_t select_indices(const cuda_call& call, const std::uint8_t* stencil, void* temp, std::size_t temp_bytes,
                           std::uint64_t* index) {
  const auto n = static_cast<std::int64_t>(call.in.size());
  SIEVE_CUDA_CHECK(with_flags(call, stencil, [&](auto flags) {
    return cub::DeviceSelect::Flagged(temp, temp_bytes, thrust::counting_iterator<std::uint64_t>(0), flags, index,
                                      call.d_count, n, call.stream);
  }));
  return temp_bytes;
}

template <class F>
std::size_t with_typed(const record& r, F&& f) {
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

}  // namespace

std::size_t cuda_cub(const cuda_call& call) {
  const std::size_t n = call.in.size();
  const bool removals = form_of(call.keep) == form::removal_list;
  const bool typed = with_typed(call.in, [](auto t) { return !std::is_same_v<decltype(t), std::nullptr_t>; });
  // Workspace: [stencil: n bytes, removal lists][indices: 8n, records][copy: n * widest column, records
  // in place][CUB's temp storage].
  const std::size_t stencil_bytes = removals ? align_up(n) : 0;
  const std::size_t index_bytes = typed ? 0 : align_up(8 * n);
  std::size_t widest = 0;
  for (std::size_t c = 0; c < call.in.columns(); ++c) widest = std::max<std::size_t>(widest, call.in[c].width);
  const std::size_t copy_bytes = typed || !call.in_place ? 0 : align_up(widest * n);
  auto* base = static_cast<std::byte*>(call.workspace);
  auto* stencil = reinterpret_cast<std::uint8_t*>(base);
  auto* index = reinterpret_cast<std::uint64_t*>(base + stencil_bytes);
  std::byte* copy = base + stencil_bytes + index_bytes;
  const std::size_t fixed = stencil_bytes + index_bytes + copy_bytes;

  auto run = [&](void* temp, std::size_t temp_bytes) {
    return with_typed(call.in, [&](auto t) -> std::size_t {
      using T = decltype(t);
      if constexpr (std::is_same_v<T, std::nullptr_t>) return select_indices(call, stencil, temp, temp_bytes, index);
      else return select_typed<T>(call, stencil, temp, temp_bytes);
    });
  };
  const std::size_t temp_bytes = run(nullptr, 0);
  if (call.query) return fixed + temp_bytes;

  if (removals) {
    const auto R = std::get<removal_list>(call.keep).indices;
    mark_removals_async(R.data(), R.size(), n, stencil, call.stream);
  }
  run(base + fixed, call.workspace_bytes - fixed);
  if (typed || n == 0) return 0;

  gather_columns_async(call.in, call.out, index, call.d_count, call.in_place ? copy : nullptr, call.stream);
  return 0;
}

}  // namespace sieve::detail
