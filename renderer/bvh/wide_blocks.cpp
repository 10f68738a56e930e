// The wide tree's leaf triangles in the CPU traversal's layout (bvh.hpp, leaf_block): each node's
// run of leaf triangles starts a block of eight, so the AVX2 leaf test reads a node's triangles as
// whole blocks (nine aligned loads for eight triangles) instead of gathering them one by one from
// their 48-byte records.
#include "node_encoding.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace sieve::render {

void encode_leaf_blocks(wide_bvh& w) {
  const std::size_t count = w.nodes.size();
  std::vector<std::uint32_t> base(count + 1, 0);  // each node's first triangle in the padded order
  for (std::size_t i = 0; i < count; ++i) {
    base[i + 1] = base[i] + (leaf_total(w.nodes[i]) + 7) / 8 * 8;
  }
  const std::uint32_t padded = base[count];
  std::vector<std::uint32_t> prims(padded, ~0U);
  std::vector<leaf_triangle> triangles(padded, leaf_triangle{});
  std::vector<leaf_block> blocks(padded / 8, leaf_block{});
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, count, 1024), [&](const auto& range) {
    for (std::size_t i = range.begin(); i != range.end(); ++i) {
      wide_node& n = w.nodes[i];
      const std::uint32_t from = n.tri_base, to = base[i], total = leaf_total(n);
      for (std::uint32_t j = 0; j < total; ++j) {
        prims[to + j] = w.prims[from + j];
        triangles[to + j] = w.triangles[from + j];
        const triangle t = triangles[to + j].get();
        const vec3 e1 = t.v1 - t.v0, e2 = t.v2 - t.v0;
        leaf_block& b = blocks[(to + j) / 8];
        const std::uint32_t lane = (to + j) % 8;
        const float v0[3] = {t.v0.x, t.v0.y, t.v0.z}, d1[3] = {e1.x, e1.y, e1.z}, d2[3] = {e2.x, e2.y, e2.z};
        for (int k = 0; k < 3; ++k) b.v0[k][lane] = v0[k], b.e1[k][lane] = d1[k], b.e2[k][lane] = d2[k];
      }
      n.tri_base = to;
    }
  });
  w.prims = std::move(prims);
  w.triangles = std::move(triangles);
  w.blocks = std::move(blocks);
}

}  // namespace sieve::render
