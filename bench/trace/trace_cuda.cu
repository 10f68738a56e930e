#include <exec/device_array.cuh>
#include <exec/walk.hpp>

#include "trace_cuda.hpp"

#include <bvh/bfs.hpp>
#include <bvh/cwbvh.hpp>
#include <bvh/wide.hpp>
#include <frame/device_scene.hpp>

#include <sieve/compaction/cuda.hpp>
#include <sieve/compaction/cuda_check.hpp>
#include <sieve/compaction/cuda_device.hpp>

#include <cuda_runtime.h>

namespace sieve::render {


gpu_trace trace_cuda(const bvh& b, std::span<const triangle> triangles, std::span<const ray> rays,
                     const std::string& traversal, const std::string& strategy, int repeats,
                     const std::string& bfs_loop, bool any) {
  if (!sieve::cuda::available()) throw sieve::error("the cuda backend needs a GPU: " + sieve::cuda::device_description());
  const bool breadth = traversal == "bfs" || traversal == "wide-bfs" || traversal == "cw-bfs";
  const bool cw = traversal == "cwbvh" || traversal == "cwbvh-thread";
  if (traversal != "dfs" && traversal != "wide" && !cw && !breadth)
    throw sieve::error("unknown traversal '" + traversal + "'; traversals: dfs, wide, cwbvh, cwbvh-thread, bfs, wide-bfs, cw-bfs");
  if (bfs_loop != "graph" && bfs_loop != "host")
    throw sieve::error("unknown BFS loop '" + bfs_loop + "'; loops: graph, host");
  const bool wide = traversal == "wide" || traversal == "wide-bfs" || traversal == "cw-bfs";
  if ((wide || cw) && b.wide.nodes.empty() && !b.nodes.empty())
    throw sieve::error("the wide traversal needs a BVH built with the wide layout");
  if (any && breadth) throw sieve::error("the BFS traversal finds closest hits only");
  using exec::device_array;
  const device_bvh tree(b, triangles);
  const device_array<ray> d_rays(std::vector<ray>(rays.begin(), rays.end()));
  const device_array<hit> d_hits(rays.size());
  const bvh_view& view = tree.view();
  std::unique_ptr<bfs_tracer_cuda> bfs;
  if (breadth) {
    bfs = std::make_unique<bfs_tracer_cuda>(strategy, traversal == "cw-bfs" ? bfs_tree::compressed
                                                      : wide                  ? bfs_tree::wide
                                                                              : bfs_tree::binary);
    bfs->set_loop(bfs_loop == "host" ? bfs_tracer_cuda::loop::host : bfs_tracer_cuda::loop::graph);
  }
  const ray* r = d_rays.get();
  hit* h = d_hits.get();
  const std::size_t n = rays.size();
  const device_array<std::uint32_t> cursor(1);
  auto run = [&] {
    if (bfs) return bfs->closest(view, r, h, n, nullptr);
    if (cw) {  // the compressed 8-wide layout (cwbvh.hpp)
      const cw_view c = cw_of(view);
      if (traversal == "cwbvh-thread") {
        if (any)
          exec::parallel_for(exec::cuda{}, "trace", n, [=] SIEVE_HD(std::uint32_t i) {
            h[i] = cw_any_hit(c, r[i]) ? hit{0, 0, 0, 0} : hit{};
          });
        else
          exec::parallel_for(exec::cuda{}, "trace", n, [=] SIEVE_HD(std::uint32_t i) { h[i] = cw_closest_hit(c, r[i]); });
        return;
      }
      const auto count = static_cast<std::uint32_t>(n);
      const auto ray_at = [=] SIEVE_HD(std::uint32_t i) { return r[i]; };
      const auto items = [=] SIEVE_HD { return count; };
      if (any) exec::parallel_walk(exec::cuda{}, "trace", make_cw_walk<true>(c, ray_at, items, h), cursor.get());
      else exec::parallel_walk(exec::cuda{}, "trace", make_cw_walk<false>(c, ray_at, items, h), cursor.get());
      return;
    }
    if (wide) {  // the 8-wide compressed tree, children in octant order, boxes tested one by one
      const wide_view w = view.wide;
      if (any)
        exec::parallel_for(exec::cuda{}, "trace", n, [=] SIEVE_HD(std::uint32_t i) {
          h[i] = wide_any_hit(w, r[i], scalar_boxes{}) ? hit{0, 0, 0, 0} : hit{};
        });
      else
        exec::parallel_for(exec::cuda{}, "trace", n, [=] SIEVE_HD(std::uint32_t i) { h[i] = wide_closest_hit(w, r[i], scalar_boxes{}); });
      return;
    }
    if (any)
      exec::parallel_for(exec::cuda{}, "trace", n, [=] SIEVE_HD(std::uint32_t i) { h[i] = any_hit(view, r[i]) ? hit{0, 0, 0, 0} : hit{}; });
    else {  // persistent warps with dynamic ray fetch (exec/walk.hpp)
      const auto count = static_cast<std::uint32_t>(n);
      const closest_hits_walk walk{view, [=] SIEVE_HD(std::uint32_t i) { return r[i]; }, [=] SIEVE_HD { return count; }, h};
      exec::parallel_walk(exec::cuda{}, "trace", walk, cursor.get());
    }
  };
  gpu_trace out;
  run();
  SIEVE_CUDA_CHECK(cudaDeviceSynchronize());
  out.hits.resize(n);
  if (n) SIEVE_CUDA_CHECK(cudaMemcpy(out.hits.data(), h, n * sizeof(hit), cudaMemcpyDeviceToHost));
  if (bfs) out.host_syncs = bfs->host_syncs();
  sieve::cuda::event_timer timer;
  for (int i = 0; i < repeats; ++i) {
    timer.start();
    run();
    out.ms.push_back(timer.stop_ms());
  }
  if (bfs) bfs->closest(view, r, h, n, nullptr, &out.profile);
  return out;
}

}  // namespace sieve::render
