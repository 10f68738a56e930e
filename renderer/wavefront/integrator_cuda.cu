// The CUDA driver of the wavefront path tracer: the same stages as the CPU driver (integrator.cpp),
// launched as kernels through exec::cuda, over the scene, queues and film in device memory, the
// path queue compacted by the library's CUDA strategies (sieve::cuda::compact*_async) with a
// workspace allocated once. The host reads three counters back per bounce (live paths, removals,
// shadow rays): the library's API takes the item count on the host, as CUB's does.
// exec::cuda's parallel_for first: the stages call exec::parallel_for by qualified name, which sees
// only the overloads declared before the stage templates.
#include <exec/cuda.cuh>
#include <exec/device_array.cuh>

#include "integrator.hpp"

#include "../bvh/bfs.hpp"
#include "../core/marks.hpp"
#include "../megakernel/megakernel.hpp"
#include "accumulate.hpp"
#include "connect.hpp"
#include "extend.hpp"
#include "generate.hpp"
#include "reorder.hpp"
#include "shade.hpp"

#include <sieve/compaction/cuda.hpp>
#include <sieve/compaction/cuda_check.hpp>
#include <sieve/compaction/radix_sort.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace sieve::render {
namespace {

using exec::device_array;

struct device_paths {
  device_array<std::uint32_t> pixel;
  device_array<ray> rays;
  device_array<vec3> throughput;
  device_array<float> bsdf_pdf;
  explicit device_paths(std::size_t n) : pixel(n), rays(n), throughput(n), bsdf_pdf(n) {}
  path_columns columns() const { return {pixel.get(), rays.get(), throughput.get(), bsdf_pdf.get()}; }
};

// Stage times by CUDA events, read after each bounce's synchronisation.
class event_clock {
 public:
  event_clock(render_stats& stats, cudaStream_t stream) : stats_(stats), stream_(stream) {}
  ~event_clock() {
    for (auto& p : pending_) {
      cudaEventDestroy(p.start);
      cudaEventDestroy(p.stop);
    }
    for (auto e : free_) cudaEventDestroy(e);
  }
  event_clock(const event_clock&) = delete;
  event_clock& operator=(const event_clock&) = delete;

  // Enqueues f between two events; `bounce` >= 0 also adds the time to that bounce's compaction.
  template <class F>
  void time(const char* name, F&& f, int bounce = -1) {
    const cudaEvent_t a = event(), b = event();
    SIEVE_CUDA_CHECK(cudaEventRecord(a, stream_));
    f();
    SIEVE_CUDA_CHECK(cudaEventRecord(b, stream_));
    pending_.push_back({name, a, b, bounce});
  }
  // After the stream has been synchronised: add up what is pending.
  void collect() {
    for (auto& p : pending_) {
      float ms = 0;
      SIEVE_CUDA_CHECK(cudaEventElapsedTime(&ms, p.start, p.stop));
      auto it = std::find_if(stats_.stages.begin(), stats_.stages.end(), [&](const stage_time& s) { return s.name == p.name; });
      if (it == stats_.stages.end()) it = stats_.stages.insert(stats_.stages.end(), {p.name, 0});
      it->ms += ms;
      if (p.bounce >= 0) stats_.bounces[static_cast<std::size_t>(p.bounce)].compact_ms += ms;
      free_.push_back(p.start);
      free_.push_back(p.stop);
    }
    pending_.clear();
  }

 private:
  struct span_events {
    std::string name;
    cudaEvent_t start, stop;
    int bounce;
  };
  cudaEvent_t event() {
    if (!free_.empty()) {
      const cudaEvent_t e = free_.back();
      free_.pop_back();
      return e;
    }
    cudaEvent_t e;
    SIEVE_CUDA_CHECK(cudaEventCreate(&e));
    return e;
  }
  render_stats& stats_;
  cudaStream_t stream_;
  std::vector<span_events> pending_;
  std::vector<cudaEvent_t> free_;
};

// The counters the host reads back per bounce, in one device block.
struct counters {
  std::uint64_t kept;       // compaction's result
  std::uint32_t live;       // the queue's length, for the stages
  std::uint32_t removals;   // shade's removal list length
  std::uint32_t shadow;     // shade's shadow rays
  std::uint32_t rays[2];    // the megakernel's extension and shadow rays
};

}  // namespace

std::optional<std::uint64_t> cuda_free_memory() {
  if (!sieve::cuda::available()) return std::nullopt;
  std::size_t free = 0, total = 0;
  SIEVE_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return free;
}

render_result render_cuda(const prepared_scene& ps, const render_settings& settings) {
  const scene& sc = ps.source();
  const film_desc& film = sc.film;
  render_result result = begin_render(sc, settings, sieve::backend::cuda);
  if (!sieve::cuda::available()) throw sieve::error("the cuda backend needs a GPU: " + sieve::cuda::device_description());
  const bool queues = settings.integrator == "wavefront";
  render_stats& stats = result.stats;
  const sieve::form form = stats.form;
  const bool in_place = !sieve::compaction_strategy(settings.strategy).out_of_place;
  const std::uint32_t pixels = film.width * film.height;

  // The scene in device memory.
  const scene_view host_view = ps.view(film.width, film.height);
  const bvh& tree = ps.tree();
  std::vector<surface> surfaces(host_view.surfaces, host_view.surfaces + sc.materials.size());
  const device_array<triangle> d_triangles(sc.triangles);
  const device_array<bvh_node> d_nodes(tree.nodes);
  const device_array<std::uint32_t> d_prims(tree.prims);
  const device_array<pair_node> d_pairs(tree.pairs);
  const device_array<leaf_triangle> d_leaf_triangles(tree.leaf_triangles);
  const device_array<surface> d_surfaces(surfaces);
  const device_array<std::uint32_t> d_material_of(sc.material_of);
  const device_array<std::uint32_t> d_light_tris(
      std::vector<std::uint32_t>(host_view.lights.triangles, host_view.lights.triangles + host_view.lights.count));
  const device_array<float> d_light_cdf(
      std::vector<float>(host_view.lights.cdf, host_view.lights.cdf + host_view.lights.count));
  scene_view view = host_view;
  view.bvh = {d_nodes.get(), d_prims.get(),   d_triangles.get(), host_view.bvh.node_count,
              d_pairs.get(), d_leaf_triangles.get()};
  view.surfaces = d_surfaces.get();
  view.material_of = d_material_of.get();
  view.lights.triangles = d_light_tris.get();
  view.lights.cdf = d_light_cdf.get();

  // Queues, scratch, film, counters and the compaction workspace.
  const std::uint32_t capacity = wave_capacity(pixels, film.spp, settings.max_queue);
  const std::uint32_t queue_capacity = queues ? capacity : 0;
  device_paths store0(queue_capacity), store1(queue_capacity);
  const device_paths* store[2] = {&store0, &store1};
  device_array<hit> d_hits(queue_capacity);
  device_array<ray> d_shadow_rays(queue_capacity);
  device_array<vec3> d_shadow_light(queue_capacity);
  device_array<vec3> d_film(pixels);
  device_array<vec3> d_wave_film(capacity);  // one entry per path of a wave
  device_array<counters> d_counters(1);
  device_array<std::uint8_t> d_flags(form == sieve::form::byte_flags ? queue_capacity : 0);
  device_array<std::uint32_t> d_mask(form == sieve::form::bit_mask ? (queue_capacity + 31) / 32 : 0);
  device_array<std::uint32_t> d_removals(form == sieve::form::removal_list ? queue_capacity : 0);
  const std::size_t ws_bytes =
      queues ? sieve::cuda::workspace_bytes(settings.strategy, store0.columns().record(queue_capacity), form, in_place)
             : 0;
  device_array<std::byte> d_workspace(ws_bytes);
  const bool reorder = queues && settings.reorder != reorder_key::none;
  const int key_bits = reorder_key_bits(settings.reorder);
  device_array<std::uint32_t> d_keys(reorder ? 2 * queue_capacity : 0), d_order(reorder ? 2 * queue_capacity : 0);
  const std::size_t sort_bytes =
      reorder ? sieve::cuda::radix_sort_workspace_bytes(settings.sort, queue_capacity, 0, key_bits) : 0;
  device_array<std::byte> d_sort_workspace(sort_bytes);
  counters* c = d_counters.get();
  vec3* const wfilm = d_wave_film.get();
  const bounce_columns scratch{d_hits.get(), d_shadow_rays.get(), d_shadow_light.get(), &c->shadow};

  cudaStream_t stream;
  SIEVE_CUDA_CHECK(cudaStreamCreate(&stream));
  struct stream_guard {
    cudaStream_t s;
    ~stream_guard() { cudaStreamDestroy(s); }
  } guard{stream};
  const exec::cuda gpu{stream};
  event_clock clock(stats, stream);
  std::unique_ptr<bfs_tracer_cuda> bfs;
  if (queues && settings.traversal == "bfs") bfs = std::make_unique<bfs_tracer_cuda>(settings.strategy);
  SIEVE_CUDA_CHECK(cudaMemsetAsync(d_film.get(), 0, pixels * sizeof(vec3), stream));
  SIEVE_CUDA_CHECK(cudaMemsetAsync(wfilm, 0, capacity * sizeof(vec3), stream));
  SIEVE_CUDA_CHECK(cudaMemsetAsync(c, 0, sizeof(counters), stream));
  counters h{};
  auto read_counters = [&] {
    SIEVE_CUDA_CHECK(cudaMemcpyAsync(&h, c, sizeof h, cudaMemcpyDeviceToHost, stream));
    SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
    clock.collect();
  };

  const auto start = std::chrono::steady_clock::now();
  for_each_wave(pixels, film.spp, settings, result, [&](const wave& w) {
    if (!queues) {
      clock.time("megakernel", [&] { megakernel(gpu, view, w, wfilm, c->rays); });
      clock.time("accumulate", [&] { accumulate(gpu, w, wfilm, d_film.get()); });
      read_counters();
      stats.extension_rays += h.rays[0];
      stats.shadow_rays += h.rays[1];
      SIEVE_CUDA_CHECK(cudaMemsetAsync(c->rays, 0, sizeof h.rays, stream));
      return true;
    }
    std::uint32_t live = w.size();
    int cur = 0;
    SIEVE_CUDA_CHECK(cudaMemcpyAsync(&c->live, &live, sizeof live, cudaMemcpyHostToDevice, stream));
    clock.time("generate", [&] { generate(gpu, view, w, store[cur]->columns()); });
    for (std::uint32_t vertex = 0; vertex <= film.max_bounces && live > 0; ++vertex) {
      if (cancelled(settings)) return false;  // after the bounce's synchronisation: Ctrl-C within a bounce
      const path_columns paths = store[cur]->columns();
      stats.bounces[vertex].live += live;
      stats.extension_rays += live;
      clock.time("extend", [&] {
        if (!bfs) return extend_dfs(gpu, live, &c->live, view, paths, scratch);
        bfs_stats bs;
        bfs->closest(view.bvh, paths.rays, d_hits.get(), live, stream, &bs);
        stats.bfs_compact_ms += bs.compact_ms;
      });
      keep_marks marks;
      if (form == sieve::form::byte_flags) marks.flags = d_flags.get();
      if (form == sieve::form::bit_mask) {
        SIEVE_CUDA_CHECK(cudaMemsetAsync(d_mask.get(), 0, (live + 31) / 32 * 4, stream));
        marks.mask = d_mask.get();
      }
      if (form == sieve::form::removal_list) {
        SIEVE_CUDA_CHECK(cudaMemsetAsync(&c->removals, 0, sizeof(std::uint32_t), stream));
        marks.removals = d_removals.get();
        marks.removal_count = &c->removals;
      }
      const shade_args args{view, paths, scratch, wfilm, marks, w, vertex};
      clock.time("shade", [&] { shade(gpu, live, &c->live, args); });
      clock.time("connect", [&] { connect(gpu, live, &c->live, view, paths, scratch, wfilm); });
      if (vertex == film.max_bounces) break;
      if (form == sieve::form::removal_list) read_counters();  // the list's length, on the host

      clock.time(
          "compact",
          [&] {
            sieve::selection keep = sieve::byte_flags{std::span<const std::uint8_t>(d_flags.get(), live)};
            if (form == sieve::form::bit_mask)
              keep = sieve::bit_mask{std::span<const std::uint32_t>(d_mask.get(), (live + 31) / 32)};
            if (form == sieve::form::removal_list) keep = sieve::removal_list{std::span(d_removals.get(), h.removals)};
            const sieve::cuda::workspace ws{d_workspace.get(), ws_bytes};
            stats.note_strategy(settings.strategy, sieve::backend::cuda, in_place, paths.record(live), h.removals);
            if (in_place) {
              // The removal lists are the renderer's own (each terminated path once): unchecked.
              sieve::cuda::compact_async(settings.strategy, paths.record(live), keep, &c->kept, ws, stream, {.checked = false});
            } else {
              sieve::cuda::compact_copy_async(settings.strategy, paths.record(live),
                                              store[1 - cur]->columns().record(live), keep, &c->kept, ws, stream,
                                              {.checked = false});
              cur = 1 - cur;
            }
          },
          static_cast<int>(vertex));
      read_counters();
      live = static_cast<std::uint32_t>(h.kept);
      SIEVE_CUDA_CHECK(cudaMemcpyAsync(&c->live, &live, sizeof live, cudaMemcpyHostToDevice, stream));
      if (reorder && live > 1) {
        clock.time("reorder", [&] {
          const path_columns from = store[cur]->columns(), to = store[1 - cur]->columns();
          std::uint32_t *keys = d_keys.get(), *order = d_order.get();
          reorder_keys(gpu, live, &c->live, settings.reorder, view, from, keys, order);
          sieve::cuda::radix_sort_pairs_async(
              settings.sort, std::span<const std::uint32_t>(keys, live), std::span<const std::uint32_t>(order, live),
              std::span(keys + queue_capacity, live), std::span(order + queue_capacity, live), 0, key_bits,
              {d_sort_workspace.get(), sort_bytes}, stream);
          gather_paths(gpu, live, &c->live, order + queue_capacity, from, to);
          cur = 1 - cur;
        });
      }
    }
    clock.time("accumulate", [&] { accumulate(gpu, w, wfilm, d_film.get()); });
    read_counters();
    stats.shadow_rays += h.shadow;
    SIEVE_CUDA_CHECK(cudaMemsetAsync(&c->shadow, 0, sizeof(std::uint32_t), stream));
    return true;
  });
  SIEVE_CUDA_CHECK(cudaStreamSynchronize(stream));
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  SIEVE_CUDA_CHECK(cudaMemcpy(result.sum.data(), d_film.get(), pixels * sizeof(vec3), cudaMemcpyDeviceToHost));
  return result;
}

}  // namespace sieve::render
