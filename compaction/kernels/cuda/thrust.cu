// thrust (CUDA): the Thrust baseline of the Redzone paper, thrust::copy_if with a stencil (out of
// place) and thrust::remove_if with a stencil (in place). Byte flags are the stencil; a bit mask
// becomes one through a transform iterator; a removal list is marked into n flags first (phase 1).
// Thrust's temporary storage comes from the caller's workspace through an allocator, and Thrust
// returns the count to the host, so this strategy synchronizes the stream. A record of one column
// of 1, 2, 4, 8 or 16 bytes is compacted directly; other records select indices, then gather. Stable.
#include "internal/baseline.cuh"

#include <cub/device/device_select.cuh>
#include <thrust/copy.h>
#include <thrust/execution_policy.h>
#include <thrust/remove.h>

#include <string>

namespace sieve::detail {
std::size_t cuda_thrust(const cuda_call& call);
namespace {

// Bump allocation from the workspace; Thrust asks for its temporary storage through this.
class workspace_allocator {
 public:
  using value_type = char;
  workspace_allocator(std::byte* base, std::size_t bytes) : base_(base), bytes_(bytes) {}
  char* allocate(std::ptrdiff_t n) {
    const std::size_t need = align_up(static_cast<std::size_t>(n));
    if (used_ + need > bytes_)
      throw error("strategy 'thrust': Thrust asked for " + std::to_string(n) + " bytes of temporary storage, " +
                  std::to_string(bytes_ - used_) + " left in the workspace");
    char* p = reinterpret_cast<char*>(base_ + used_);
    used_ += need;
    return p;
  }
  void deallocate(char*, std::size_t) {}

 private:
  std::byte* base_;
  std::size_t bytes_, used_ = 0;
};

struct nonzero {
  __host__ __device__ bool operator()(std::uint8_t f) const { return f != 0; }
  __host__ __device__ bool operator()(bool f) const { return f; }
};
struct is_zero {
  __host__ __device__ bool operator()(std::uint8_t f) const { return f == 0; }
};

// Thrust returns its count to the host, so it takes the live counts there too: with counts on the
// device it reads them back first (a host synchronisation) and runs on the first n items.
std::size_t cuda_thrust_live(const cuda_call& call) {
  std::uint64_t counts[2] = {call.in.size(), 0};
  if (call.live_n) SIEVE_CUDA_CHECK(cudaMemcpyAsync(&counts[0], call.live_n, 8, cudaMemcpyDeviceToHost, call.stream));
  if (call.live_k) SIEVE_CUDA_CHECK(cudaMemcpyAsync(&counts[1], call.live_k, 8, cudaMemcpyDeviceToHost, call.stream));
  SIEVE_CUDA_CHECK(cudaStreamSynchronize(call.stream));
  const std::size_t n = std::min<std::size_t>(counts[0], call.in.size());
  cuda_call now = call;
  now.in = call.in.first(n);
  now.out = call.out.first(n);
  now.live_n = now.live_k = nullptr;
  if (form_of(call.keep) != form::removal_list) return cuda_thrust(now);
  auto R = std::get<removal_list>(call.keep).indices;
  const selection first_k = removal_list{R.first(std::min<std::size_t>(call.live_k ? counts[1] : R.size(), R.size()))};
  const cuda_call with_k{now.in, now.out, first_k, now.in_place, now.checked, now.d_count, now.workspace,
                         now.workspace_bytes, now.stream, false};
  return cuda_thrust(with_k);
}

}  // namespace

std::size_t cuda_thrust(const cuda_call& call) {
  if ((call.live_n || call.live_k) && !call.query) return cuda_thrust_live(call);
  const std::size_t n = call.in.size();
  const bool removals = form_of(call.keep) == form::removal_list;
  const baseline_workspace ws(call);
  if (call.query) {
    // Thrust's copy_if is CUB's select underneath: its storage, plus room for Thrust's own pieces.
    std::size_t cub_bytes = 0;
    SIEVE_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, cub_bytes, static_cast<const std::uint64_t*>(nullptr),
                                                static_cast<const std::uint8_t*>(nullptr),
                                                static_cast<std::uint64_t*>(nullptr),
                                                static_cast<std::uint64_t*>(nullptr), static_cast<std::int64_t>(n)));
    return ws.fixed + align_up(cub_bytes) + (1 << 20);
  }
  workspace_allocator alloc(ws.library, call.workspace_bytes - ws.fixed);
  const auto policy = thrust::cuda::par(alloc).on(call.stream);
  if (removals) {
    const auto R = std::get<removal_list>(call.keep).indices;
    mark_removals_async(R.data(), {nullptr, R.size()}, n, ws.stencil, call.stream);
  }

  const std::size_t kept = with_column_type(call.in, [&](auto t) -> std::size_t {
    using T = decltype(t);
    return with_flag_iterator(call, ws.stencil, [&](auto stencil) -> std::size_t {
      if constexpr (std::is_same_v<T, std::nullptr_t>) {
        const thrust::counting_iterator<std::uint64_t> first(0);
        std::uint64_t* index = ws.index;
        return static_cast<std::size_t>(thrust::copy_if(policy, first, first + n, stencil, index, nonzero{}) - index);
      } else {
        T* in = reinterpret_cast<T*>(call.in[0].data);
        if (call.in_place) {
          if (removals) return static_cast<std::size_t>(thrust::remove_if(policy, in, in + n, stencil, is_zero{}) - in);
          // A selection in place: remove the items whose keep bit is 0.
          return static_cast<std::size_t>(thrust::remove_if(policy, in, in + n, stencil, thrust::not_fn(nonzero{})) - in);
        }
        T* out = reinterpret_cast<T*>(call.out[0].data);
        return static_cast<std::size_t>(thrust::copy_if(policy, in, in + n, stencil, out, nonzero{}) - out);
      }
    });
  });
  write_count_async(call.d_count, kept, call.stream);
  if (!ws.typed) gather_columns_async(call.in, call.out, ws.index, call.d_count, ws.copy, call.stream);
  return 0;
}

}  // namespace sieve::detail
