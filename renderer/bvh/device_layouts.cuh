// device_layouts: every layout of a tree in device memory, with the scene's triangles, and the
// view the traversals read: what a tree uploaded from the host (frame/device_scene.cu's device_bvh)
// and a tree built on the device (ploc_cuda.cu's device_tree) both hold. CUDA translation units.
#pragma once

#include "bvh.hpp"

#include <exec/device_array.cuh>

#include <cstdint>

namespace sieve::render {

struct device_layouts {
  exec::device_array<triangle> triangles;  // for shading
  exec::device_array<bvh_node> nodes;
  exec::device_array<std::uint32_t> prims;
  exec::device_array<pair_node> pairs;
  exec::device_array<leaf_triangle> leaf_triangles;
  exec::device_array<wide_node> wide_nodes;
  exec::device_array<std::uint32_t> wide_prims;
  exec::device_array<leaf_triangle> wide_triangles;
  exec::device_array<cw_node> cw_nodes;
  exec::device_array<cw_triangle> cw_triangles;

  // The view of the first `binary` binary nodes, `wide` wide nodes and `cw` compressed nodes.
  bvh_view view(std::uint32_t binary, std::uint32_t wide, std::uint32_t cw) const {
    return {nodes.get(),
            prims.get(),
            triangles.get(),
            binary,
            pairs.get(),
            leaf_triangles.get(),
            wide_view{wide_nodes.get(), wide_prims.get(), wide_triangles.get(), wide},
            cw_view{cw_nodes.get(), cw_triangles.get(), cw}};
  }
};

}  // namespace sieve::render
