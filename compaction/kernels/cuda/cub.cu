// cub (CUDA): the baseline every GPU strategy is measured against, cub::DeviceSelect::Flagged
// (Merrill & Garland's single-pass decoupled look-back). Byte flags go to it as they are; a bit mask
// through a transform iterator that reads bit i; a removal list is first marked (phase 1: n flags
// set to 1, then a 0 at each listed index), then selected in place, as every O(n) competitor of
// Redzone must. A record of one column of 1, 2, 4, 8 or 16 bytes is selected directly; other
// records select item indices, then gather every column. Stable.
#include "internal/baseline.cuh"

#include <cub/device/device_select.cuh>

namespace sieve::detail {
namespace {

// Keep flag i of a selection, 0 past the live count: CUB takes n on the host, so with counts on the
// device it runs over the capacity and this iterator masks the items past n (one more load of the
// count per item, from L1).
template <class Keep>
struct live_flag {
  Keep keep;
  live_count live;
  __host__ __device__ std::uint8_t operator()(std::size_t i) const {
#ifdef __CUDA_ARCH__
    return i < live.get() && keep(i);
#else
    return 0;
#endif
  }
};

template <class Keep>
auto live_flags(Keep keep, const cuda_call& call) {
  return thrust::make_transform_iterator(thrust::counting_iterator<std::size_t>(0),
                                         live_flag<Keep>{keep, {call.live_n, call.in.size()}});
}

// Calls f(flag_iterator) for the call's selection; a removal list must be marked into `stencil`.
template <class F>
cudaError_t with_flags(const cuda_call& call, const std::uint8_t* stencil, F&& f) {
  if (call.live_n) switch (form_of(call.keep)) {
      case form::bit_mask: return f(live_flags(device_mask{std::get<bit_mask>(call.keep).words.data()}, call));
      case form::byte_flags: return f(live_flags(device_flags{std::get<byte_flags>(call.keep).keep.data()}, call));
      default: return f(live_flags(device_flags{stencil}, call));
    }
  return with_flag_iterator(call, stencil, f);
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

}  // namespace

std::size_t cuda_cub(const cuda_call& call) {
  const std::size_t n = call.in.size();
  const baseline_workspace ws(call);
  auto run = [&](void* temp, std::size_t temp_bytes) {
    return with_column_type(call.in, [&](auto t) -> std::size_t {
      using T = decltype(t);
      if constexpr (std::is_same_v<T, std::nullptr_t>) return select_indices(call, ws.stencil, temp, temp_bytes, ws.index);
      else return select_typed<T>(call, ws.stencil, temp, temp_bytes);
    });
  };
  const std::size_t temp_bytes = run(nullptr, 0);
  if (call.query) return ws.fixed + temp_bytes;

  if (form_of(call.keep) == form::removal_list) {
    const auto R = std::get<removal_list>(call.keep).indices;
    mark_removals_async(R.data(), {call.live_k, R.size()}, n, ws.stencil, call.stream);
  }
  run(ws.library, call.workspace_bytes - ws.fixed);
  if (!ws.typed) gather_columns_async(call.in, call.out, ws.index, call.d_count, ws.copy, call.stream);
  return 0;
}

}  // namespace sieve::detail
