#include <exec/device_array.cuh>
#include <exec/walk.hpp>

#include "trace_cuda.hpp"

#include <trace/bfs.hpp>
#include <trace/cwbvh.hpp>
#include <trace/tracers.hpp>
#include <trace/wide.hpp>
#include <frame/device_scene.hpp>

#include <sieve/compaction/cuda.hpp>
#include <sieve/compaction/cuda_check.hpp>
#include <sieve/compaction/cuda_device.hpp>

#include <cuda_runtime.h>

namespace sieve::render {


namespace {

// One trace of n rays by `tracer`: by persistent warps where t's schedule says so and the tracer
// walks that kind of hit, else a ray a thread.
template <class Tracer>
void trace_depth_first(const Tracer& tracer, const traversal& t, bool any, const ray* r, hit* h, std::uint32_t n,
                       std::uint32_t* cursor) {
  const auto ray_at = [=] SIEVE_HD(std::uint32_t i) { return r[i]; };
  const auto items = [=] SIEVE_HD { return n; };
  if constexpr (Tracer::walks_any)
    if (any && walks<Tracer>(t, true))
      return exec::parallel_walk(exec::cuda{}, "trace", tracer.template walk<true>(ray_at, items, h), cursor);
  if constexpr (Tracer::walks_closest)
    if (!any && walks<Tracer>(t, false))
      return exec::parallel_walk(exec::cuda{}, "trace", tracer.template walk<false>(ray_at, items, h), cursor);
  if (any)
    exec::parallel_for(exec::cuda{}, "trace", n, [=] SIEVE_HD(std::uint32_t i) { h[i] = tracer.any(r[i]) ? hit{0, 0, 0, 0} : hit{}; });
  else
    exec::parallel_for(exec::cuda{}, "trace", n, [=] SIEVE_HD(std::uint32_t i) { h[i] = tracer.closest(r[i]); });
}

}  // namespace

gpu_trace trace_cuda(const bvh& b, std::span<const triangle> triangles, std::span<const ray> rays, const traversal& t,
                     const std::string& strategy, int repeats, bfs_tracer_cuda::loop loop, bool any) {
  if (!sieve::cuda::available()) throw sieve::error("the cuda backend needs a GPU: " + sieve::cuda::device_description());
  if (t.tree != trace_tree::binary && b.wide.nodes.empty() && !b.binary.nodes.empty())
    throw sieve::error("the wide traversal needs a BVH built with the wide layout");
  if (any && t.breadth_first()) throw sieve::error("the BFS traversal finds closest hits only");
  using exec::device_array;
  const device_bvh tree(b, triangles);
  const device_array<ray> d_rays(std::vector<ray>(rays.begin(), rays.end()));
  const device_array<hit> d_hits(rays.size());
  const bvh_view& view = tree.view();
  std::unique_ptr<bfs_tracer_cuda> bfs;
  if (t.breadth_first()) {
    bfs = std::make_unique<bfs_tracer_cuda>(strategy, t.tree);
    bfs->set_loop(loop);
  }
  const ray* r = d_rays.get();
  hit* h = d_hits.get();
  const std::size_t n = rays.size();
  const device_array<std::uint32_t> cursor(1);
  auto run = [&] {
    if (bfs) return bfs->closest(view, r, h, n, nullptr);
    visit_tracer(view, t, [&](const auto& tracer) {
      trace_depth_first(tracer, t, any, r, h, static_cast<std::uint32_t>(n), cursor.get());
    });
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
