// The wide tree's leaf triangles in the CPU traversal's layout (bvh.hpp, leaf_block): each node's
// run of leaf triangles starts a block of eight, so the AVX2 leaf test reads a node's triangles as
// whole blocks (nine aligned loads for eight triangles) instead of gathering them one by one from
// their 48-byte records.
//
// One parallel pass over the nodes writes the padded arrays whole (their places from a parallel scan
// of the nodes' padded runs, the arrays left unwritten until then: fresh_vector): no serial pass over
// the layout's memory. The collapse lays its triangles out straight from the binary tree's leaves.
#include "node_encoding.hpp"
#include "sah_kernels.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace sieve::render {
namespace {

// The padded arrays of w from its unpadded ones: source(i) gives the primitive and the triangle of
// the unpadded leaf triangle i (w's nodes' tri_base count in that order, and are moved to the new).
template <class Source>
void lay_out_blocks(wide_bvh& w, Source source) {
  const std::size_t count = w.nodes.size();
  const fresh_ptr<std::uint32_t> base = fresh_array<std::uint32_t>(count);  // each node's first padded triangle
  const std::uint32_t padded =
      sah::parallel_offsets(count, base.get(), [&](std::size_t i) { return (leaf_total(w.nodes[i]) + 7) / 8 * 8; });
  std::vector<std::uint32_t> prims;
  fresh_vector<leaf_triangle> triangles;
  fresh_vector<leaf_block> blocks;
  fresh_resize(prims, padded);
  fresh_resize(triangles, padded);
  fresh_resize(blocks, padded / 8);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, count, 1024), [&](const auto& range) {
    for (std::size_t i = range.begin(); i != range.end(); ++i) {
      wide_node& n = w.nodes[i];
      const std::uint32_t from = n.tri_base, to = base[i], total = leaf_total(n);
      for (std::uint32_t j = 0; j < (total + 7) / 8 * 8; ++j) {
        leaf_block& b = blocks[(to + j) / 8];
        const std::uint32_t lane = (to + j) % 8;
        if (j >= total) {  // padding: no primitive, a zero triangle
          prims[to + j] = ~0U;
          triangles[to + j] = leaf_triangle{};
          for (int k = 0; k < 3; ++k) b.v0[k][lane] = b.e1[k][lane] = b.e2[k][lane] = 0.0f;
          continue;
        }
        source(from + j, prims[to + j], triangles[to + j]);
        const triangle t = triangles[to + j].get();
        const vec3 e1 = t.v1 - t.v0, e2 = t.v2 - t.v0;
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

}  // namespace

void encode_leaf_blocks(wide_bvh& w) {
  const std::vector<std::uint32_t> prims = std::move(w.prims);
  const fresh_vector<leaf_triangle> triangles = std::move(w.triangles);
  lay_out_blocks(w, [&](std::uint32_t i, std::uint32_t& prim, leaf_triangle& t) { prim = prims[i], t = triangles[i]; });
}

void encode_leaf_blocks(wide_bvh& w, std::span<const std::uint32_t> leaf_prims, std::span<const triangle> tris) {
  lay_out_blocks(w, [&](std::uint32_t i, std::uint32_t& prim, leaf_triangle& t) {
    prim = leaf_prims[w.prims[i]];
    t = leaf_triangle::of(tris[prim]);
  });
}

}  // namespace sieve::render
