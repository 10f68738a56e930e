// The CUDA entry points of a build without the CUDA backend: available() is false, the rest throw.
#include <sieve/compaction/cuda.hpp>
#include <sieve/compaction/error.hpp>
#include <sieve/compaction/multisplit.hpp>
#include <sieve/compaction/radix_sort.hpp>

#include "strategy_table.hpp"

#include <array>

namespace sieve::cuda {
namespace {
[[noreturn]] void missing() { throw error("this build of sieve has no CUDA backend (nvcc was not found, or SIEVE_CUDA=OFF)"); }
}  // namespace

bool available() { return false; }
std::string device_description() { return "no CUDA backend in this build"; }
std::size_t workspace_bytes(const strategy&, const record&, form, bool) { missing(); }
void compact_copy_async(const strategy&, const_record, record, const selection&, std::uint64_t*, workspace, stream_t,
                        const options&) {
  missing();
}
void compact_async(const strategy&, record, const selection&, std::uint64_t*, workspace, stream_t, const options&) {
  missing();
}
void compact_copy_async(const strategy&, const_record, record, const selection&, device_counts, std::uint64_t*,
                        workspace, stream_t, const options&) {
  missing();
}
void compact_async(const strategy&, record, const selection&, device_counts, std::uint64_t*, workspace, stream_t,
                   const options&) {
  missing();
}
std::size_t compact_copy(const strategy&, const_record, record, const selection&, workspace, stream_t,
                         const options&) {
  missing();
}
std::size_t compact(const strategy&, record, const selection&, workspace, stream_t, const options&) { missing(); }
std::size_t removal_check_bytes(std::size_t) { missing(); }
void check_removals(const removal_list&, std::size_t, workspace, stream_t) { missing(); }

namespace {
constexpr std::array<std::string_view, 2> sort_names = {"onesweep", "cub"};
}
std::span<const std::string_view> radix_sort_algorithms() { return sort_names; }
std::size_t radix_sort_workspace_bytes(std::string_view, std::size_t, int, int) { missing(); }
void radix_sort_pairs_async(std::string_view, std::span<const std::uint32_t>, std::span<const std::uint32_t>,
                            std::span<std::uint32_t>, std::span<std::uint32_t>, int, int, workspace, stream_t) {
  missing();
}


namespace {
constexpr std::array<std::string_view, 3> multisplit_names = {"onesweep", "radix", "atomic"};
}
std::span<const std::string_view> multisplit_algorithms() { return multisplit_names; }
bool multisplit_stable(std::string_view algorithm) { return algorithm != "atomic"; }
std::size_t multisplit_workspace_bytes(std::string_view, const record&, unsigned, bool) { missing(); }
void multisplit_async(std::string_view, const_record, record, const bucket_ids&, unsigned, std::uint64_t*, workspace,
                      stream_t, const std::uint64_t*, const options&) {
  missing();
}
void multisplit_async(std::string_view, record, const bucket_ids&, unsigned, std::uint64_t*, workspace, stream_t,
                      const std::uint64_t*, const options&) {
  missing();
}
void multisplit(std::string_view, const_record, record, const bucket_ids&, unsigned, std::span<std::uint64_t>,
                workspace, stream_t, const options&) {
  missing();
}

}  // namespace sieve::cuda

std::string_view sieve::detail::cuda_device_name() { return {}; }
