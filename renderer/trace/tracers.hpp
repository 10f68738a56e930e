// The depth-first tracers behind the typed traversal choice (core/modes.hpp: `traversal`), the one
// place that maps a choice to the code that runs it: the renderer's stages (extend, connect, the
// megakernel) and `sieve bench trace` reach the traversals through it.
//   binary_tracer  the binary tree's 64-byte pair nodes (dfs.hpp): a ray a thread, or closest hits
//                  by persistent warps (closest_hits_walk)
//   wide_tracer    the 8-wide tree (wide.hpp): on the CPU its AVX2 (or AVX-512) box tests
//                  (wide_cpu.cpp), on the GPU one box at a time; a ray a thread
//   cw_tracer      the 8-wide tree's compressed layout (cwbvh.hpp): a ray a thread, or closest and
//                  any hits by persistent warps (cw_hits_walk)
// visit_tracer(view, choice, f) calls f with the tracer of the choice's tree; trace_closest and
// trace_any trace one ray by the choice (the megakernel).
// All of them give the same hits bit for bit (the least (t, primitive), the same triangle test:
// tests/bvh_test.cpp WideBvh.*, tests/cwbvh_test.cpp), so images do not change with the choice.
#pragma once

#include "../core/modes.hpp"
#include "cwbvh.hpp"
#include "dfs.hpp"
#include "wide.hpp"

namespace sieve::render {

struct binary_tracer {
  static constexpr bool walks_closest = true, walks_any = false;  // the any-hit walk is a ray a thread
  pair_view v;
  SIEVE_HD hit closest(const ray& r) const { return closest_hit(v, r); }
  SIEVE_HD bool any(const ray& r) const { return any_hit(v, r); }
  template <bool Any, class Ray, class Count>
  closest_hits_walk<Ray, Count> walk(Ray ray, Count count, hit* hits) const {
    static_assert(!Any, "the binary tree's any hits are traced a ray a thread");
    return {v, ray, count, hits};
  }
};

struct wide_tracer {
  static constexpr bool walks_closest = false, walks_any = false;
  wide_view w;
  alpha_view alpha;
  wide_path boxes = wide_path::automatic;  // the CPU's box tests
  SIEVE_HD hit closest(const ray& r) const {
#if defined(__CUDA_ARCH__)
    return wide_closest_hit(w, r, scalar_boxes{}, alpha);
#else
    return wide_closest_hit_cpu(w, r, boxes, alpha);
#endif
  }
  SIEVE_HD bool any(const ray& r) const {
#if defined(__CUDA_ARCH__)
    return wide_any_hit(w, r, scalar_boxes{}, alpha);
#else
    return wide_any_hit_cpu(w, r, boxes, alpha);
#endif
  }
};

struct cw_tracer {
  static constexpr bool walks_closest = true, walks_any = true;
  cw_view c;
  SIEVE_HD hit closest(const ray& r) const { return cw_closest_hit(c, r); }
  SIEVE_HD bool any(const ray& r) const { return cw_any_hit(c, r); }
  template <bool Any, class Ray, class Count>
  cw_hits_walk<Any, Ray, Count> walk(Ray ray, Count count, hit* hits) const {
    return make_cw_walk<Any>(c, ray, count, hits);
  }
};

// f(tracer) with the tracer of t's tree over v (a depth-first traversal; the BFS engine is
// bfs_tracer / bfs_tracer_cuda, bfs.hpp).
template <class F>
decltype(auto) visit_tracer(const bvh_view& v, const traversal& t, F&& f) {
  switch (t.tree) {
    case trace_tree::wide: return f(wide_tracer{v.wide, v.alpha, t.boxes});
    case trace_tree::compressed: return f(cw_tracer{cw_of(v)});
    case trace_tree::binary: break;
  }
  return f(binary_tracer{pairs_of(v)});
}

// Whether t walks by persistent warps for closest (any == false) or any hits with this tracer.
template <class Tracer>
constexpr bool walks(const traversal& t, bool any) {
  return t.schedule == trace_schedule::walk && (any ? Tracer::walks_any : Tracer::walks_closest);
}

// How the renderer traces each kind of ray. The CPU: its 8-wide tree, every kind (the only
// depth-first layout a CPU render builds: cpu_wide_only()). The GPU: chosen by measurement, `sieve
// bench trace scenes/procedural/sphere-room.toml --backend cuda --traversal dfs,cwbvh,cwbvh-thread
// --rays primary,diffuse,shadow --repeats 10 --spp 6`, 4.7M rays each, H200
// (bench/results/h200/cwbvh-sphere-room-4.7m-2.txt), Mrays/s:
//             binary DFS (walk; shadow: a thread)  compressed walk  compressed, a thread
//   primary   2985                                 3980             4402
//   diffuse   1408                                 2345             1595
//   shadow    5722                                 5605             6236
// In the renderer (`sieve bench render SCENE --bvh binary,cwbvh,cwbvh-thread,auto`, H200,
// bench/results/h200/render-bvh-2/): camera rays a thread, bounce rays walked, 1.13..1.34x the
// binary tree's frame rate, within 1.1 % of the best single choice on each of four scenes; walking
// the camera rays too (`cwbvh` there) was within 0.6 % of it either way. On the helmet (an object
// under the sky: most camera rays miss it, and a warp's lanes that missed idled while the others
// traced) walking them took the extend stage from 11.55 to 10.8 .. 11.0 ms
// (bench/results/h200/helmet5/): every extension ray walks.
inline constexpr traversal dfs_of(trace_tree tree, trace_schedule schedule) {
  return {traversal_kind::dfs, tree, schedule};
}
inline constexpr ray_traversals cpu_traversals{dfs_of(trace_tree::wide, trace_schedule::thread),
                                               dfs_of(trace_tree::wide, trace_schedule::thread),
                                               dfs_of(trace_tree::wide, trace_schedule::thread)};
inline constexpr ray_traversals gpu_dfs_traversals{dfs_of(trace_tree::compressed, trace_schedule::walk),
                                                   dfs_of(trace_tree::compressed, trace_schedule::walk),
                                                   dfs_of(trace_tree::compressed, trace_schedule::thread)};

// The GPU's choice for a layout asked for (render_settings::bvh, `--bvh`): automatic is
// gpu_dfs_traversals; the others name the tree of every ray kind (shadow rays: by the compressed
// tree's walk for cwbvh, a ray a thread otherwise, over the compressed tree unless binary).
constexpr ray_traversals gpu_traversals_for(bvh_layout layout) {
  const traversal shadow = gpu_dfs_traversals.shadow;
  switch (layout) {
    case bvh_layout::binary: {
      const traversal b = dfs_of(trace_tree::binary, trace_schedule::walk);
      return {b, b, dfs_of(trace_tree::binary, trace_schedule::thread)};
    }
    case bvh_layout::cwbvh: {
      const traversal c = dfs_of(trace_tree::compressed, trace_schedule::walk);
      return {c, c, c};
    }
    case bvh_layout::cwbvh_thread: {
      const traversal c = dfs_of(trace_tree::compressed, trace_schedule::thread);
      return {c, c, shadow};
    }
    case bvh_layout::automatic: break;
  }
  return gpu_dfs_traversals;
}

// One ray by the choice, a ray a thread (the megakernel's closest hits and shadow rays). On
// the GPU the renderer's choices walk the binary or the compressed tree (gpu_traversals_for); the
// 8-wide tree's GPU form is `bench trace`'s (visit_tracer), so the stages' kernels keep the
// registers of those two alone.
SIEVE_HD inline hit trace_closest(const bvh_view& v, const traversal& t, const ray& r) {
#if !defined(__CUDA_ARCH__)
  if (t.tree == trace_tree::wide) return wide_closest_hit_cpu(v.wide, r, t.boxes, v.alpha);
#endif
  if (t.tree == trace_tree::compressed) return cw_closest_hit(cw_of(v), r);
  return closest_hit(pairs_of(v), r);
}

// trace_closest compiled for the compressed tree alone and a scene without cut-outs (the caller
// knows both: t.tree is compressed, v.alpha absent), so that a kernel that calls it (the megakernel)
// holds one traversal and no cut-out test. The CPU: trace_closest.
SIEVE_HD inline hit trace_closest_compressed_opaque(const bvh_view& v, const traversal& t, const ray& r) {
#if !defined(__CUDA_ARCH__)
  return trace_closest(v, t, r);
#else
  (void)t;
  return cw_trace<false, false>(cw_of(v), r);
#endif
}

SIEVE_HD inline bool trace_any(const bvh_view& v, const traversal& t, const ray& r) {
#if !defined(__CUDA_ARCH__)
  if (t.tree == trace_tree::wide) return wide_any_hit_cpu(v.wide, r, t.boxes, v.alpha);
#endif
  if (t.tree == trace_tree::compressed) return cw_any_hit(cw_of(v), r);
  return any_hit(pairs_of(v), r);
}

}  // namespace sieve::render
