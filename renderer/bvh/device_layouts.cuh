// device_layouts: every layout of a tree in device memory, with the scene's triangles, and the
// view the traversals read: what a tree uploaded from the host (frame/device_scene.cu's device_bvh)
// and a tree built on the device (ploc_cuda.cu's device_tree) both hold. Each layout's device copy
// is a type beside its host type (bvh.hpp): made from it (an upload), or sized for a build that
// writes it on the device, and viewed with the count of nodes in use. CUDA translation units.
#pragma once

#include "bvh.hpp"

#include <exec/device_array.cuh>

#include <cstdint>

namespace sieve::render {

struct device_binary {
  exec::device_array<bvh_node> nodes;
  exec::device_array<std::uint32_t> prims;
  device_binary() = default;
  explicit device_binary(const binary_bvh& b) : nodes(b.nodes), prims(b.prims) {}
  binary_view view(std::uint32_t count) const { return {nodes.get(), prims.get(), count}; }
};

struct device_pairs {
  exec::device_array<pair_node> nodes;
  exec::device_array<leaf_triangle> triangles;
  device_pairs() = default;
  explicit device_pairs(const pair_bvh& p) : nodes(p.nodes), triangles(p.triangles) {}
  pair_view view(std::uint32_t count, const device_binary& b) const { return {nodes.get(), triangles.get(), b.prims.get(), count}; }
};

struct device_wide {
  exec::device_array<wide_node> nodes;
  exec::device_array<std::uint32_t> prims;
  exec::device_array<leaf_triangle> triangles;  // the CPU's leaf blocks stay on the host
  device_wide() = default;
  explicit device_wide(const wide_bvh& w) : nodes(w.nodes), prims(w.prims), triangles(w.triangles) {}
  wide_view view(std::uint32_t count) const { return {nodes.get(), prims.get(), triangles.get(), count}; }
};

struct device_cw {
  exec::device_array<cw_node> nodes;
  exec::device_array<cw_triangle> triangles;
  device_cw() = default;
  explicit device_cw(const cw_bvh& c) : nodes(c.nodes), triangles(c.triangles) {}
  cw_view view(std::uint32_t count) const { return {nodes.get(), triangles.get(), count}; }
};

// The nodes in use of each layout (device arrays may hold more: a device build's are sized for its bound).
struct layout_counts {
  std::uint32_t binary = 0, pairs = 0, wide = 0, cw = 0;
};

inline layout_counts counts_of(const bvh& b) {
  return {static_cast<std::uint32_t>(b.binary.nodes.size()), static_cast<std::uint32_t>(b.pairs.nodes.size()),
          static_cast<std::uint32_t>(b.wide.nodes.size()), static_cast<std::uint32_t>(b.cw.nodes.size())};
}

struct device_layouts {
  exec::device_array<triangle> triangles;  // for shading
  device_binary binary;
  device_pairs pairs;
  device_wide wide;
  device_cw cw;

  device_layouts() = default;
  // An upload of every layout of b.
  explicit device_layouts(const bvh& b)
      : binary(b.binary), pairs(b.pairs), wide(b.wide), cw(b.cw) {}

  bvh_view view(const layout_counts& n) const {
    return {binary.view(n.binary), pairs.view(n.pairs, binary), wide.view(n.wide), cw.view(n.cw), triangles.get()};
  }
};

}  // namespace sieve::render
