// The BFS traversal on the GPU (label `gpu`; skipped without a device): hit for hit the GPU's DFS,
// for every CUDA strategy and `append`, with the loop on the device (a CUDA graph with a WHILE node)
// and driven by the host; and closest_async captured into a caller's own graph, its ray count read
// from device memory, replayed with other counts. The DFS by exec::parallel_walk too.
#include <trace/bfs.hpp>
#include <trace/dfs.hpp>
#include <exec/cuda.cuh>
#include <exec/walk_cuda.cuh>
#include <frame/device_scene.hpp>

#include "cuda_support.cuh"
#include "hairball.hpp"

#include <random>
#include <string>
#include <vector>

namespace sieve::render {
namespace {

using sieve::test::device_array;

void dfs_on_gpu(const bvh_view& v, const ray* r, hit* h, std::size_t n) {
  exec::parallel_for(exec::cuda{}, "dfs", n, [=] SIEVE_HD(std::uint32_t i) { h[i] = closest_hit(pairs_of(v), r[i]); });
  SIEVE_CUDA_CHECK(cudaDeviceSynchronize());
}

// A scene and its rays on the device (its BVH as the renderer holds it: frame/device_scene.hpp), and
// the GPU's DFS hits as the reference.
struct gpu_scene {
  bvh tree;
  device_bvh on_device;
  device_array<ray> rays;
  device_array<hit> hits;
  bvh_view view;
  std::vector<hit> dfs;

  explicit gpu_scene(const scene_data& s)
      : tree(build_bvh(s.tris)), on_device(tree, s.tris), rays(s.rays), hits(s.rays.size()), view(on_device.view()) {
    dfs_on_gpu(view, rays.data, hits.data, s.rays.size());
    dfs = hits.host();
  }
  void clear_hits() const { SIEVE_CUDA_CHECK(cudaMemset(hits.data, 0xff, hits.n * sizeof(hit))); }
};

std::vector<std::string> cuda_bfs_strategies() {
  std::vector<std::string> names = {std::string(bfs_append)};
  for (const auto& s : sieve::compaction_strategies())
    for (const auto f : {sieve::form::bit_mask, sieve::form::byte_flags, sieve::form::removal_list})
      if (s.takes(sieve::backend::cuda, f)) {
        names.emplace_back(s.name);
        break;
      }
  return names;
}

void expect_equal(const std::vector<hit>& got, const std::vector<hit>& want, std::size_t n, const std::string& what) {
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(got[i].prim, want[i].prim) << what << " ray " << i;
    ASSERT_EQ(got[i].t, want[i].t) << what << " ray " << i;
    // The barycentrics are recomputed from the triangle by bfs.finish, in another kernel than the
    // DFS's: the compiler may contract their multiply-adds differently.
    ASSERT_NEAR(got[i].u, want[i].u, 1e-5f) << what << " ray " << i;
    ASSERT_NEAR(got[i].v, want[i].v, 1e-5f) << what << " ray " << i;
  }
}

// Every strategy, an ordinary scene (levels whole) and a hairball (levels in chunks, the spill stack
// used): the GPU's DFS hit for hit, with the level loop of `loop`, over the binary or the wide tree. The graph loop synchronises once
// (at the end), the host-driven loop once per round and more. The two loops are separate tests so that
// scripts/gpu-check can run the host loop's (the same kernels) under synccheck and racecheck, which
// misreport barrier kernels inside a WHILE node (tests/sanitizer_while_probe.cu).
void every_strategy_equals_dfs(bfs_tracer_cuda::loop loop, trace_tree tree) {
  const auto [htris, hrays] = hairball();
  const gpu_scene scenes[] = {gpu_scene(random_scene(3000, 8000, 11)), gpu_scene({htris, hrays})};
  const bool graph = loop == bfs_tracer_cuda::loop::graph;
  std::vector<std::string> strategies = cuda_bfs_strategies();
  if (tree == trace_tree::compressed) strategies.insert(strategies.end(), {std::string(bfs_tile), std::string(bfs_warp_tile)});
  for (const gpu_scene& sc : scenes) {
    for (const std::string& strategy : strategies) {
      bfs_tracer_cuda tracer(strategy, tree);
      const std::string what = strategy + (graph ? " (graph" : " (host loop") +
                               (tree == trace_tree::wide ? ", wide)" : tree == trace_tree::compressed ? ", compressed)" : ")");
      SCOPED_TRACE(what);
      tracer.set_loop(loop);
      for (int round = 0; round < 2; ++round) {  // the second reuses the buffers (and the graph)
        sc.clear_hits();
        tracer.closest(sc.view, sc.rays.data, sc.hits.data, sc.rays.n, nullptr);
        expect_equal(sc.hits.host(), sc.dfs, sc.rays.n, what);
        // thrust cannot run in a graph (host loop always), nor auto where a tuning table picks thrust.
        if (strategy == "thrust" || strategy == "auto") continue;
        if (graph || strategy == bfs_tile || strategy == bfs_warp_tile) {  // a tile frontier: one kernel, whatever the loop
          EXPECT_EQ(tracer.host_syncs(), 1U);
        } else {
          EXPECT_GT(tracer.host_syncs(), 3U);
        }
      }
      if (graph) continue;
      bfs_stats stats;  // with stats: the host loop whatever the setting, every step's compaction timed
      tracer.set_loop(bfs_tracer_cuda::loop::graph);
      tracer.closest(sc.view, sc.rays.data, sc.hits.data, sc.rays.n, nullptr, &stats);
      expect_equal(sc.hits.host(), sc.dfs, sc.rays.n, strategy + " (stats)");
      if (strategy == bfs_tile || strategy == bfs_warp_tile) {  // counters: every ray's root visited
        const std::size_t rays = strategy == bfs_tile ? 512 : 64, threads = strategy == bfs_tile ? 256 : 32;
        EXPECT_EQ(stats.tile.tiles, (sc.rays.n + rays - 1) / rays);
        EXPECT_GE(stats.tile.pairs, sc.rays.n);
        EXPECT_EQ(stats.pairs, stats.tile.pairs);
        EXPECT_GE(stats.tile.steps * threads, stats.tile.pairs);  // at most a pair a thread a step
        EXPECT_EQ(stats.host_syncs, 1U);
        continue;
      }
      ASSERT_FALSE(stats.levels.empty());
      EXPECT_EQ(stats.levels.front().frontier, sc.rays.n);
      EXPECT_LE(stats.peak_pairs, bfs_stack_bound(sc.rays.n, bfs_arity(tree)));
      EXPECT_EQ(stats.host_syncs, tracer.host_syncs());
      if (strategy != bfs_append) EXPECT_GT(stats.compact_ms, 0.0);
    }
  }
}

TEST(GpuBfs, GraphLoopEveryStrategyEqualsDfs) {
  REQUIRE_DEVICE();
  every_strategy_equals_dfs(bfs_tracer_cuda::loop::graph, trace_tree::binary);
  every_strategy_equals_dfs(bfs_tracer_cuda::loop::graph, trace_tree::wide);
  every_strategy_equals_dfs(bfs_tracer_cuda::loop::graph, trace_tree::compressed);
}

TEST(GpuBfs, HostLoopEveryStrategyEqualsDfs) {
  REQUIRE_DEVICE();
  every_strategy_equals_dfs(bfs_tracer_cuda::loop::host, trace_tree::binary);
  every_strategy_equals_dfs(bfs_tracer_cuda::loop::host, trace_tree::wide);
  every_strategy_equals_dfs(bfs_tracer_cuda::loop::host, trace_tree::compressed);
}

// A tile frontier whose stack is held just above its rays' root pairs: most pairs' children do not
// fit, and their threads walk them depth-first (cw_walk::start_at). Still the DFS hit for hit; a
// limit below the tile's rays or above its stack is an error.
TEST(GpuBfs, TileHandOffToDepthFirstEqualsDfs) {
  REQUIRE_DEVICE();
  const auto [htris, hrays] = hairball();
  const gpu_scene scenes[] = {gpu_scene(random_scene(3000, 8000, 11)), gpu_scene({htris, hrays})};
  device_array<std::uint32_t> count(1), cursor(1);
  device_array<bfs_tile_counts> counts(1);
  for (const gpu_scene& sc : scenes) {
    count.upload({static_cast<std::uint32_t>(sc.rays.n)});
    for (const bool warp : {false, true}) {
      SCOPED_TRACE(warp ? "warp-tile" : "tile");
      sc.clear_hits();
      SIEVE_CUDA_CHECK(cudaMemset(counts.data, 0, sizeof(bfs_tile_counts)));
      bfs_tile_closest(sc.view, sc.rays.data, sc.hits.data, sc.rays.n, count.data, {warp, cursor.data, counts.data, warp ? 80U : 540U},
                       nullptr);
      SIEVE_CUDA_CHECK(cudaDeviceSynchronize());
      expect_equal(sc.hits.host(), sc.dfs, sc.rays.n, warp ? "warp-tile, stack limit 80" : "tile, stack limit 540");
      const bfs_tile_counts c = counts.host()[0];
      EXPECT_GT(c.handed, 0U);
      EXPECT_GE(c.pairs, sc.rays.n);
      EXPECT_THROW(bfs_tile_closest(sc.view, sc.rays.data, sc.hits.data, sc.rays.n, count.data, {warp, cursor.data, nullptr, 10U}, nullptr),
                   sieve::error);
      EXPECT_THROW(bfs_tile_closest(sc.view, sc.rays.data, sc.hits.data, sc.rays.n, count.data, {warp, cursor.data, nullptr, 5000U}, nullptr),
                   sieve::error);
    }
  }
}

__global__ void set_count(std::uint32_t* count, const std::uint32_t* from) { *count = *from; }

// closest_async inside a graph the caller captures: the ray count is written by a kernel of the
// same graph from a value the host changes between launches; no allocation or synchronisation in
// the capture (it would fail the capture). Rays past the count keep their old hits.
TEST(GpuBfs, ClosestAsyncCapturedIntoACallersGraph) {
  REQUIRE_DEVICE();
  const gpu_scene sc(random_scene(2000, 30000, 5));
  const std::size_t n = sc.rays.n;
  device_array<std::uint32_t> count(1), source(1);
  cudaStream_t stream;
  SIEVE_CUDA_CHECK(cudaStreamCreate(&stream));
  for (const std::string strategy : {"append", "tile", "warp-tile", "cub", "space", "redzone", "billeter"}) {
    const bool tile = strategy == bfs_tile || strategy == bfs_warp_tile;
    if (strategy != bfs_append && !tile && !sieve::compaction_strategy(strategy).runs_on(sieve::backend::cuda)) continue;
    SCOPED_TRACE(strategy);
    bfs_tracer_cuda tracer(strategy, tile ? trace_tree::compressed : trace_tree::binary);
    tracer.reserve(n);
    cudaGraph_t graph;
    SIEVE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    set_count<<<1, 1, 0, stream>>>(count.data, source.data);
    tracer.closest_async(sc.view, sc.rays.data, sc.hits.data, n, count.data, stream);
    SIEVE_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    cudaGraphExec_t exec;
    SIEVE_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (const std::size_t live : {n / 3, n, std::size_t{0}, std::size_t{1}}) {
      sc.clear_hits();
      source.upload({static_cast<std::uint32_t>(live)});
      SIEVE_CUDA_CHECK(cudaGraphLaunch(exec, stream));
      SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
      const std::vector<hit> got = sc.hits.host();
      expect_equal(got, sc.dfs, live, strategy + " live " + std::to_string(live));
      for (std::size_t i = live; i < n; ++i) ASSERT_EQ(got[i].prim, 0xffffffffU) << "ray " << i << " past the count";
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  cudaStreamDestroy(stream);
}

// The DFS by persistent warps with dynamic ray fetch (exec::parallel_walk, the renderer's extend
// stage): the one-ray-a-thread DFS hit for hit, its count read from device memory (rays past it keep
// their old hits), counts that leave warps part full, in a graph the caller captures (the cursor's
// reset is part of the call) and replayed.
TEST(GpuDfs, DynamicFetchWalkEqualsOneRayAThread) {
  REQUIRE_DEVICE();
  const auto [htris, hrays] = hairball();
  const gpu_scene scenes[] = {gpu_scene(random_scene(3000, 8000, 11)), gpu_scene({htris, hrays})};
  device_array<std::uint32_t> count(1), cursor(1);
  cudaStream_t stream;
  SIEVE_CUDA_CHECK(cudaStreamCreate(&stream));
  for (const gpu_scene& sc : scenes) {
    const closest_hits_walk walk{pairs_of(sc.view), ray_at{sc.rays.data}, count_at{count.data}, sc.hits.data};
    cudaGraph_t graph;
    SIEVE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    exec::parallel_walk(exec::cuda{stream}, "dfs", walk, cursor.data);
    SIEVE_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    cudaGraphExec_t exec;
    SIEVE_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    const std::size_t n = sc.rays.n;
    for (const std::size_t live : {n, std::size_t{0}, std::size_t{1}, std::size_t{33}, n - 17, n}) {
      for (const bool graphed : {false, true}) {
        SCOPED_TRACE("live " + std::to_string(live) + (graphed ? " (graph)" : " (stream)"));
        sc.clear_hits();
        count.upload({static_cast<std::uint32_t>(live)});
        if (graphed) SIEVE_CUDA_CHECK(cudaGraphLaunch(exec, stream));
        else exec::parallel_walk(exec::cuda{stream}, "dfs", walk, cursor.data);
        SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
        const std::vector<hit> got = sc.hits.host();
        expect_equal(got, sc.dfs, live, "walk");
        for (std::size_t i = live; i < n; ++i) ASSERT_EQ(got[i].prim, 0xffffffffU) << "ray " << i << " past the count";
      }
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  cudaStreamDestroy(stream);
}

TEST(GpuBfs, ClosestAsyncNeedsReserveAndACapturableStrategy) {
  REQUIRE_DEVICE();
  const gpu_scene sc(random_scene(100, 1000, 3));
  device_array<std::uint32_t> count(1);
  EXPECT_THROW(bfs_tracer_cuda("tile", trace_tree::wide), sieve::error);  // the tile frontiers: the compressed tree only
  EXPECT_THROW(bfs_tracer_cuda("warp-tile", trace_tree::binary), sieve::error);
  bfs_tracer_cuda tracer("cub");
  EXPECT_THROW(tracer.closest_async(sc.view, sc.rays.data, sc.hits.data, sc.rays.n, count.data, nullptr), sieve::error);
  tracer.reserve(sc.rays.n / 2);
  EXPECT_THROW(tracer.closest_async(sc.view, sc.rays.data, sc.hits.data, sc.rays.n, count.data, nullptr), sieve::error);
  if (sieve::compaction_strategy("thrust").runs_on(sieve::backend::cuda)) {
    bfs_tracer_cuda thrust("thrust");
    thrust.reserve(sc.rays.n);
    EXPECT_THROW(thrust.closest_async(sc.view, sc.rays.data, sc.hits.data, sc.rays.n, count.data, nullptr), sieve::error);
  }
}

}  // namespace
}  // namespace sieve::render
