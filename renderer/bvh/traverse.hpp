// The depth-first traversal the renderer's stages call (extend, connect, the megakernel).
// CPU: DFS over the 8-wide tree (wide_cpu.cpp: AVX2 box tests where the processor has them) when
// the view carries one, else over the binary pair nodes.
// GPU: the binary pair nodes (dfs.hpp) or the compressed 8-wide layout (cwbvh.hpp), per ray kind,
// whichever measured faster (gpu_dfs_trees below), where the view carries the compressed tree.
// trace_closest and trace_any are the one-ray-a-thread forms (the megakernel, connect); the extend
// stage (wavefront/extend.hpp) also walks by persistent warps.
// All of them give the same hits bit for bit (the least (t, primitive), the same triangle test:
// tests/bvh_test.cpp WideBvh.*, tests/cwbvh_test.cpp), so images do not change with the choice.
#pragma once

#include "../core/modes.hpp"
#include "cwbvh.hpp"
#include "dfs.hpp"
#include "wide.hpp"

namespace sieve::render {

// How the GPU's depth-first stages trace, per ray kind: camera rays (extend, first vertex), bounce
// rays (extend, later vertices; the megakernel) and shadow rays (connect, any hit, one ray a
// thread); over which tree, and (extend) by persistent warps with dynamic ray fetch or one ray a
// thread. Chosen by measurement: `sieve bench trace scenes/procedural/sphere-room.toml --backend cuda
// --traversal dfs,cwbvh,cwbvh-thread --rays primary,diffuse,shadow --repeats 10 --spp 6`, 4.7M rays
// each, H200 (bench/results/h200/cwbvh-sphere-room-4.7m-2.txt), Mrays/s:
//             binary DFS (walk; shadow: a thread)  compressed walk  compressed, a thread
//   primary   2985                                 3980             4402
//   diffuse   1408                                 2345             1595
//   shadow    5722                                 5605             6236
// In the renderer (`sieve bench render SCENE --bvh binary,cwbvh,cwbvh-thread,auto`, H200,
// bench/results/h200/render-bvh-2/): this choice 1.13..1.34x the binary tree's frame rate, within
// 1.1 % of the best single choice on each of four scenes.
enum class gpu_tree : std::uint8_t { binary, compressed_wide };
struct gpu_choice {
  gpu_tree tree;
  bool dynamic_fetch;  // exec::parallel_walk; else one ray a thread
};
struct gpu_trees {
  gpu_choice camera, bounce;
  gpu_tree shadow;
};
inline constexpr gpu_trees gpu_dfs_trees{{gpu_tree::compressed_wide, false}, {gpu_tree::compressed_wide, true}, gpu_tree::compressed_wide};

// The choice for a layout asked for (render_settings::bvh, `--bvh`): automatic is gpu_dfs_trees;
// the others name the tree of every ray kind (shadow rays: one ray a thread, over the compressed
// tree unless binary).
constexpr gpu_trees gpu_trees_for(bvh_layout layout) {
  switch (layout) {
    case bvh_layout::binary: return {{gpu_tree::binary, true}, {gpu_tree::binary, true}, gpu_tree::binary};
    case bvh_layout::cwbvh:
      return {{gpu_tree::compressed_wide, true}, {gpu_tree::compressed_wide, true}, gpu_dfs_trees.shadow};
    case bvh_layout::cwbvh_thread:
      return {{gpu_tree::compressed_wide, false}, {gpu_tree::compressed_wide, false}, gpu_dfs_trees.shadow};
    case bvh_layout::automatic: break;
  }
  return gpu_dfs_trees;
}

// Whether any extension ray of that choice walks the compressed tree.
constexpr bool extends_compressed(const gpu_trees& t) {
  return t.camera.tree == gpu_tree::compressed_wide || t.bounce.tree == gpu_tree::compressed_wide;
}

// The view the GPU's stages get for that choice: without the compressed tree where no extension ray
// walks it, so that the one-ray-a-thread closest hits (the megakernel) follow the choice too.
inline bvh_view gpu_view_for(bvh_view v, const gpu_trees& t) {
  if (!extends_compressed(t)) v.cw = {};
  return v;
}

// Whether the GPU walks the compressed tree for rays of this choice (a view without it: never).
SIEVE_HD inline bool walks_compressed(const bvh_view& v, gpu_tree choice) {
  return choice == gpu_tree::compressed_wide && v.cw.node_count != 0;
}

SIEVE_HD inline hit trace_closest(const bvh_view& v, const ray& r) {
#if !defined(__CUDA_ARCH__)
  if (v.wide.node_count != 0) return wide_closest_hit_cpu(v.wide, r, wide_path::automatic, v.alpha);
#else
  if (walks_compressed(v, gpu_tree::compressed_wide)) return cw_closest_hit(cw_of(v), r);  // gpu_view_for
#endif
  return closest_hit(v, r);
}

// trace_closest compiled for the compressed tree alone and a scene without cut-outs (the caller
// knows both: v.cw present, v.alpha absent), so that a kernel that calls it (the megakernel) holds
// one traversal and no cut-out test. The CPU: trace_closest.
SIEVE_HD inline hit trace_closest_compressed_opaque(const bvh_view& v, const ray& r) {
#if !defined(__CUDA_ARCH__)
  return trace_closest(v, r);
#else
  return cw_trace<false, false>(cw_of(v), r);
#endif
}

SIEVE_HD inline bool trace_any(const bvh_view& v, const ray& r) {
#if !defined(__CUDA_ARCH__)
  if (v.wide.node_count != 0) return wide_any_hit_cpu(v.wide, r, wide_path::automatic, v.alpha);
#else
  if (walks_compressed(v, gpu_dfs_trees.shadow)) return cw_any_hit(cw_of(v), r);
#endif
  return any_hit(v, r);
}

}  // namespace sieve::render
