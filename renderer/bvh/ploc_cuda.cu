// The device builder's GPU run: ploc_run's steps as kernels (exec::cuda), the Morton sort by the
// library's onesweep radix sort, the clustering's and the binary layout's lists by its stable
// compaction (SPACE), the wide levels' prefix sums by CUB. The tree stays in device memory
// (device_tree); to_host copies it back. See ploc.hpp.
#include <exec/cuda.cuh>
#include <exec/device_array.cuh>
#include <exec/staged_copy.cuh>

#include "device_layouts.cuh"
#include "ploc.hpp"

#include <sieve/compaction/cuda.hpp>
#include <sieve/compaction/cuda_check.hpp>
#include <sieve/compaction/cuda_device.hpp>
#include <sieve/compaction/radix_sort.hpp>

#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

namespace sieve::render {

using exec::device_array;

namespace {

constexpr const char* compaction_strategy = "space";  // stable, byte flags, out of place

// ploc_block_rounds' team on the GPU: the block's threads.
struct block_team {
  using scan_type = cub::BlockScan<std::uint64_t, ploc_block_threads>;
  typename scan_type::TempStorage* temp;
  __device__ std::uint32_t size() const { return blockDim.x; }
  __device__ std::uint32_t rank() const { return threadIdx.x; }
  __device__ void sync() const { __syncthreads(); }
  __device__ std::uint64_t exclusive_sum(std::uint64_t v, std::uint64_t& total) const {
    std::uint64_t out = 0;
    scan_type(*temp).ExclusiveSum(v, out, total);
    __syncthreads();  // the storage free for the next sum
    return out;
  }
};

// The clusters' boxes at positions from..from + n held in shared memory (ploc_nearest's reads).
struct tile_boxes {
  const aabb* tile;
  std::uint32_t from;
  __device__ const aabb& operator[](std::uint32_t q) const { return tile[q - from]; }
};

// ploc_nearest for a block's positions, the boxes they search (radius on either side) first copied
// into shared memory: each box is read once from memory, not 2 radius + 1 times.
constexpr unsigned nearest_threads = 256;
__global__ void __launch_bounds__(nearest_threads)
    ploc_nearest_kernel(std::uint32_t* nn, const aabb* cbox, std::uint32_t c, std::uint32_t radius) {
  extern __shared__ __align__(16) unsigned char shared[];
  aabb* tile = reinterpret_cast<aabb*>(shared);
  const std::uint32_t base = blockIdx.x * nearest_threads, lo = base > radius ? base - radius : 0,
                      hi = base + nearest_threads + radius < c ? base + nearest_threads + radius : c;
  for (std::uint32_t i = lo + threadIdx.x; i < hi; i += nearest_threads) tile[i - lo] = cbox[i];
  __syncthreads();
  const std::uint32_t p = base + threadIdx.x;
  if (p < c) nn[p] = ploc_nearest(tile_boxes{tile, lo}, c, p, radius);
}

__global__ void __launch_bounds__(ploc_block_threads)
    ploc_block_rounds_kernel(ploc_buffers b, std::uint32_t c, std::uint32_t next, int from, ploc_settings s) {
  __shared__ typename block_team::scan_type::TempStorage temp;
  block_team team{&temp};
  ploc_block_rounds(team, b, c, next, from, s);
}

class cuda_backend {
 public:
  cuda_backend(cudaStream_t stream, exec::cuda_loop_clock* clock, std::uint32_t n, device_array<wide_node>& wide,
               device_array<cw_node>& cw, bool wide_nodes, bool cw_nodes)
      : stream_(stream), clock_(clock), wide_(wide), cw_(cw) {
    sort_ws_ = device_array<unsigned char>(sieve::cuda::radix_sort_workspace_bytes("onesweep", n, 0, 32));
    // The record compacted: the binary tree's kept nodes.
    const record shape(std::span<std::uint32_t>(static_cast<std::uint32_t*>(nullptr), n));
    compact_ws_ = device_array<unsigned char>(sieve::cuda::workspace_bytes(compaction_strategy, shape, form::byte_flags, false));
    // The wide levels' scratch and nodes for what trees of n triangles take (a level holds well under
    // n / 16 wide nodes, a tree under n / 6), allocated once here: growing inside the level loop
    // costs a cudaMalloc and a synchronising cudaFree each time.
    const std::size_t level = n / 16 + 64;
    tasks_[0].reserve_discard(level), tasks_[1].reserve_discard(level), kids_.reserve_discard(wide_arity * level);
    words_[0].reserve_discard(level + 1), words_[1].reserve_discard(level + 1);
    if (wide_nodes) wide_.reserve_discard(n / 6 + 64);
    if (cw_nodes) cw_.reserve_discard(n / 6 + 64);
    std::size_t scan_bytes = 0;  // the rounds' scans, of n + 1 words at most, and the levels'
    SIEVE_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, words_[0].get(), words_[1].get(), std::size_t{n} + 1, stream_));
    scan_ws_.reserve_discard(scan_bytes);
    start_.record(stream_);
  }

  void sort(const std::uint32_t* keys, const std::uint32_t* values, std::uint32_t* keys_out, std::uint32_t* values_out,
            std::uint32_t n, int bits) const {
    exec::timed(exec::cuda{stream_, clock_}, "ploc.sort (library)", n, [&] {
      sieve::cuda::radix_sort_pairs_async("onesweep", {keys, n}, {values, n}, {keys_out, n}, {values_out, n}, 0, bits,
                                          {sort_ws_.get(), sort_ws_.size()}, stream_);
    });
  }
  void compact(const const_record& in, const record& out, std::span<const std::uint8_t> flags, std::uint32_t n,
               std::uint64_t* count) const {
    exec::timed(exec::cuda{stream_, clock_}, "ploc.compact (library)", n, [&] {
      sieve::cuda::compact_copy_async(compaction_strategy, in, out, byte_flags{flags}, count,
                                      {compact_ws_.get(), compact_ws_.size()}, stream_);
    });
  }
  void scan(const std::uint64_t* in, std::uint64_t* out, std::uint32_t n) {
    std::size_t bytes = 0;
    SIEVE_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, n, stream_));
    scan_ws_.reserve_discard(bytes);
    exec::timed(exec::cuda{stream_, clock_}, "ploc.scan (CUB)", n, [&] {
      SIEVE_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scan_ws_.get(), bytes, in, out, n, stream_));
    });
  }
  void nearest(std::uint32_t* nn, const aabb* cbox, std::uint32_t c, std::uint32_t radius) const {
    exec::timed(exec::cuda{stream_, clock_}, "ploc.nearest", c, [&] {
      const std::size_t shared = (nearest_threads + 2 * std::size_t{radius}) * sizeof(aabb);
      ploc_nearest_kernel<<<(c + nearest_threads - 1) / nearest_threads, nearest_threads, shared, stream_>>>(nn, cbox, c, radius);
      SIEVE_CUDA_CHECK(cudaGetLastError());
    });
  }
  void block_rounds(const ploc_buffers& b, std::uint32_t c, std::uint32_t next, int from, const ploc_settings& s) const {
    exec::timed(exec::cuda{stream_, clock_}, "ploc.block_rounds", c, [&] {
      ploc_block_rounds_kernel<<<1, ploc_block_threads, 0, stream_>>>(b, c, next, from, s);
      SIEVE_CUDA_CHECK(cudaGetLastError());
    });
  }
  // A value back to the host: the copy timed, and the wait for the work before it.
  template <class T>
  T read(const T* p) const {
    T v{};
    exec::timed(exec::cuda{stream_, clock_}, "ploc.read back", 1,
                [&] { SIEVE_CUDA_CHECK(cudaMemcpyAsync(&v, p, sizeof v, cudaMemcpyDeviceToHost, stream_)); });
    SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return v;
  }
  ploc_task* tasks(int which, std::size_t n) { return grown(tasks_[which], n); }
  ploc_kid* kids(std::size_t n) { return grown(kids_, n); }
  std::uint64_t* words(int which, std::size_t n) { return grown(words_[which], n); }
  wide_node* wide_nodes(std::size_t n) { return kept_growing(wide_, n, wide_used_); }
  cw_node* cw_nodes(std::size_t n) { return kept_growing(cw_, n, cw_used_); }
  // Phases by CUDA events, read once the build is done (times()).
  void lap(double* ms) {
    laps_.emplace_back(ms, sieve::cuda::event());
    laps_.back().second.record(stream_);
  }
  void times() {
    const sieve::cuda::event* from = &start_;
    for (auto& [ms, e] : laps_) {
      e.synchronize();
      *ms += e.ms_since(*from);
      from = &e;
    }
  }

 private:
  template <class T>
  static T* grown(device_array<T>& a, std::size_t n) {
    if (a.size() < n) a.reserve_discard(std::max(n, 2 * a.size()));
    return a.get();
  }
  template <class T>
  T* kept_growing(device_array<T>& a, std::size_t n, std::size_t& used) {
    if (a.size() < n) a.reserve_keep(std::max(n, 2 * a.size()), used, stream_);
    used = n;
    return a.get();
  }

  cudaStream_t stream_;
  exec::cuda_loop_clock* clock_;
  device_array<wide_node>& wide_;
  device_array<cw_node>& cw_;
  std::size_t wide_used_ = 0, cw_used_ = 0;
  device_array<unsigned char> sort_ws_, compact_ws_, scan_ws_;
  device_array<ploc_task> tasks_[2];
  device_array<ploc_kid> kids_;
  device_array<std::uint64_t> words_[2];
  sieve::cuda::event start_;
  std::vector<std::pair<double*, sieve::cuda::event>> laps_;
};

}  // namespace

// What a device tree owns: the scene's triangles and every layout.
struct device_tree::arrays : device_layouts {
  ploc_settings settings;
  ploc_result result;
};

device_tree::device_tree(std::span<const triangle> triangles, const bvh_build_options& options, ploc_timing* timing,
                         std::uint32_t radius)
    : arrays_(std::make_unique<arrays>()) {
  if (!sieve::cuda::available()) throw sieve::error("BVH (ploc on cuda): " + sieve::cuda::device_description());
  const ploc_settings s = ploc_settings_of(options, radius, triangles.size());
  const auto n = static_cast<std::uint32_t>(triangles.size());
  if (n < 2) throw sieve::error("BVH (ploc on cuda): a device tree needs at least 2 triangles (build_ploc takes fewer)");
  const auto t0 = std::chrono::steady_clock::now();
  const auto ms_since = [](std::chrono::steady_clock::time_point from) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - from).count();
  };
  arrays& a = *arrays_;
  a.settings = s;
  ploc_timing t;
  t.profile = timing && timing->profile;
  std::chrono::steady_clock::time_point t_release;
  {  // the build's scratch lives in this block
    const std::size_t all = 2 * std::size_t{n} - 1;
    // The outputs first (they stay), then the scratch of the build (freed at its end).
    a.triangles = device_array<triangle>(n);
    a.binary.nodes = device_array<bvh_node>(all);
    a.binary.prims = device_array<std::uint32_t>(n);
    if (s.pairs) a.pairs.nodes = device_array<pair_node>(n), a.pairs.triangles = device_array<leaf_triangle>(n);
    if (s.wide) a.wide.prims = device_array<std::uint32_t>(n), a.wide.triangles = device_array<leaf_triangle>(n);
    if (s.cw) a.cw.triangles = device_array<cw_triangle>(n);
    device_array<aabb> prim_box(n), centroid(lbvh_centroid_slots(n)), cbox0(n), cbox1(n);
    device_array<std::uint32_t> keys(n), ids(n), sorted(n), order(n), cid0(n), cid1(n), nn(n), kept_list(n - 1), rank(n - 1),
        depth(1);
    device_array<std::uint8_t> kept(n - 1);
    device_array<std::uint64_t> counts(2), words(std::size_t{n} + 1);
    device_array<ploc_tail_state> tail(1);
    device_array<ploc_node> nodes(all);
    device_array<collapse_entry> plan(n - 1);
    device_array<ploc_shape> shape(n - 1);
    device_array<ploc_place> place(all);
    ploc_buffers b;
    b.triangles = a.triangles.get(), b.prim_box = prim_box.get(), b.centroid = centroid.get(), b.keys = keys.get();
    b.ids = ids.get(), b.sorted_keys = sorted.get(), b.order = order.get(), b.nodes = nodes.get(), b.plan = plan.get();
    b.place = place.get(), b.cid[0] = cid0.get(), b.cid[1] = cid1.get(), b.cbox[0] = cbox0.get(), b.cbox[1] = cbox1.get();
    b.nn = nn.get(), b.words = words.get(), b.tail = tail.get(), b.n = n;
    b.shape = shape.get();
    b.counts = counts.get(), b.depth = depth.get(), b.kept = kept.get(), b.kept_list = kept_list.get(), b.rank = rank.get();
    b.bin_nodes = a.binary.nodes.get(), b.prims = a.binary.prims.get();
    b.pairs = a.pairs.nodes.get(), b.leaf_triangles = a.pairs.triangles.get();
    b.wide_prims = a.wide.prims.get(), b.wide_triangles = a.wide.triangles.get(), b.cw_triangles = a.cw.triangles.get();
    cudaStream_t stream = nullptr;
    SIEVE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    t.allocate_ms = ms_since(t0);
    try {
      const auto t_copy = std::chrono::steady_clock::now();
      exec::copy_to_device(a.triangles.get(), triangles.data(), n * sizeof(triangle), stream);
      SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
      t.copy_in_ms = ms_since(t_copy);
      const bool profile = t.profile;
      exec::loop_clock clock(t.loops);
      exec::cuda_loop_clock cuda_clock(clock);
      cuda_backend backend(stream, profile ? &cuda_clock : nullptr, n, a.wide.nodes, a.cw.nodes, s.wide, s.cw);
      a.result = ploc_run(exec::cuda{stream, profile ? &cuda_clock : nullptr}, backend, b, n, s, t);
      backend.times();
      SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
      if (profile) cuda_clock.collect(false);
      cudaStreamDestroy(stream);
    } catch (...) {
      cudaStreamSynchronize(stream);
      cudaStreamDestroy(stream);
      throw;
    }
    t_release = std::chrono::steady_clock::now();
  }
  t.release_ms = ms_since(t_release);
  t.device_ms = t.morton_ms + t.binary_ms + t.collapse_ms + t.layout_ms;
  t.with_copies_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (timing) *timing = t;
  const ploc_result& r = a.result;
  view_ = a.view({r.bin_nodes, s.pairs ? r.pairs : 0, s.wide ? r.wide_nodes : 0, s.cw ? r.wide_nodes : 0});
  stats_.nodes = r.bin_nodes;
  stats_.max_depth = r.depth;
  stats_.references = n;
  stats_.seconds = t.with_copies_ms * 1e-3;
}

device_tree::~device_tree() = default;

namespace {
template <class T, class A>
void copy_back(std::vector<T, A>& to, const device_array<T>& from, std::size_t n) {
  fresh_resize(to, n);  // every element written by the copy
  if (n) SIEVE_CUDA_CHECK(cudaMemcpy(to.data(), from.get(), n * sizeof(T), cudaMemcpyDeviceToHost));
}
}  // namespace

bvh device_tree::to_host(ploc_timing* timing) const {
  const auto t0 = std::chrono::steady_clock::now();
  const arrays& a = *arrays_;
  const ploc_result& r = a.result;
  const std::size_t n = a.triangles.size();
  bvh out;
  copy_back(out.binary.nodes, a.binary.nodes, r.bin_nodes);
  copy_back(out.binary.prims, a.binary.prims, n);
  if (a.settings.pairs) copy_back(out.pairs.nodes, a.pairs.nodes, r.pairs), copy_back(out.pairs.triangles, a.pairs.triangles, n);
  if (a.settings.wide) {
    copy_back(out.wide.nodes, a.wide.nodes, r.wide_nodes);
    copy_back(out.wide.prims, a.wide.prims, n);
    copy_back(out.wide.triangles, a.wide.triangles, n);
  }
  if (a.settings.cw) copy_back(out.cw.nodes, a.cw.nodes, r.wide_nodes), copy_back(out.cw.triangles, a.cw.triangles, n);
  finish_ploc(out, r, a.settings);
  if (timing) timing->with_copies_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace sieve::render
