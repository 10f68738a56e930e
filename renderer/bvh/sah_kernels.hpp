// The binned SAH builder's references and its two hot loops (build.cpp), apart from the builder:
// the 32-byte primitive reference, the boxes in its form, the bins and the binner, and the kernels
// (binning with its sweep, partition, measure) picked once for the processor (sah_kernels.cpp:
// AVX2 where the processor has it, else portable; both round alike, so both build the same tree).
#pragma once

#include "bvh.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace sieve::render::sah {


constexpr std::uint32_t max_bins = 32;
constexpr std::uint32_t parallel_above = 1 << 12;  // primitives: the children build in parallel
constexpr std::uint32_t partition_block = 1 << 14;  // references a block of a parallel partition or measure
constexpr std::uint32_t parallel_partition_above = 1 << 17;  // references: the node's partition is parallel
constexpr std::uint32_t sample_above = 1 << 16;    // primitives: the node bins a sample of them
constexpr std::uint32_t sample_size = 1 << 14;     // at least this many references in a sample
constexpr int max_depth = dfs_depth_limit();
constexpr float empty_lane = -1e30f;  // an empty box: -lo and hi both -1e30

// A primitive reference: lanes 0..2 are -lo, lane 3 the triangle's index (its bits), 4..6 hi.
struct alignas(32) prim_ref {
  float lane[8];
  std::uint32_t index() const {
    std::uint32_t i;
    std::memcpy(&i, &lane[3], sizeof i);
    return i;
  }
  float centroid2(int axis) const { return lane[4 + axis] - lane[axis]; }  // twice the centroid
};

// A box in the references' form (-lo, hi), grown by lane-wise max.
struct alignas(32) box8 {
  float lane[8] = {empty_lane, empty_lane, empty_lane, empty_lane, empty_lane, empty_lane, empty_lane, empty_lane};
  void grow(const float* o) {
    for (int k = 0; k < 8; ++k) lane[k] = std::max(lane[k], o[k]);
  }
  float extent(int axis) const { return lane[4 + axis] + lane[axis]; }
  float half_area() const {
    const float x = extent(0), y = extent(1), z = extent(2);
    return x < 0 ? 0 : x * y + y * z + z * x;
  }
  aabb box() const { return {{-lane[0], -lane[1], -lane[2]}, {lane[4], lane[5], lane[6]}}; }
};

// A range's bounds and the bounds of its centroids (doubled), both as box8.
struct range_bounds {
  box8 bounds, centroids;
  void add(const range_bounds& o) {
    bounds.grow(o.bounds.lane);
    centroids.grow(o.centroids.lane);
  }
};

// Per axis and bin: the bounds (as box8 lanes) and the count of the references binned there. No
// initialisers: only the first n slots of each axis are cleared and used.
struct bins {
  struct alignas(32) lanes {
    float lane[8];
  };
  lanes box[3][max_bins];
  std::uint32_t count[3][max_bins];
};

// A centroid's bin on each axis of a node's centroid bounds (a multiply, not a divide, per
// reference and axis); flat axes map everything to bin 0.
struct alignas(16) binner {
  float lo2[4], scale[4];
  std::int32_t last;
};

inline binner binner_of(const box8& c2, std::uint32_t n) {
  binner b{};
  for (int a = 0; a < 3; ++a) {
    b.lo2[a] = -c2.lane[a];
    const float e = c2.extent(a);
    b.scale[a] = e > 0 ? static_cast<float>(n) / e * 0.99999f : 0.0f;
  }
  b.last = static_cast<std::int32_t>(n) - 1;
  return b;
}

// A split: the bins below `bin` on `axis` go left; cost: the sum over both sides of area x count
// (axis -1: no split leaves both sides non-empty).
struct split {
  int axis = -1;
  std::int32_t bin = 0;
  float cost = 1e30f;
};

// The kernels: bin (a range's references, strided, into n bins per axis, then the sweep for the
// split of least cost), partition (a range on a split, both sides' bounds measured) and measure.
struct kernels {
  split (*bin)(const prim_ref*, std::uint32_t, std::uint32_t, std::uint32_t, const binner&, std::uint32_t);
  std::uint32_t (*partition)(prim_ref*, std::uint32_t, std::uint32_t, int, std::int32_t, const binner&, range_bounds&,
                             range_bounds&);
  void (*measure)(const prim_ref*, std::uint32_t, std::uint32_t, range_bounds&);
};

// The kernels for this processor: AVX2 where it has it and `simd` allows, else the portable ones
// (the same tree either way).
kernels pick_kernels(bool simd = true);

// Exclusive prefix sums of weight(i) over i in [0, n), in parallel (fixed blocks, so the same
// result whatever the threads): at[i] = the sum of weight(j) for j < i; returns the total.
template <class Weight>
std::uint32_t parallel_offsets(std::size_t n, std::uint32_t* at, Weight weight) {
  constexpr std::size_t block = std::size_t{1} << 14;
  const std::size_t blocks = (n + block - 1) / block;
  std::vector<std::uint32_t> offset(blocks + 1, 0);
  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
    std::uint32_t sum = 0;
    for (std::size_t i = b * block; i < std::min(n, (b + 1) * block); ++i) sum += weight(i);
    offset[b + 1] = sum;
  });
  for (std::size_t b = 0; b < blocks; ++b) offset[b + 1] += offset[b];
  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
    std::uint32_t sum = offset[b];
    for (std::size_t i = b * block; i < std::min(n, (b + 1) * block); ++i) at[i] = sum, sum += weight(i);
  });
  return offset[blocks];
}

// Exclusive prefix counts of pred(i): rank[i] = how many j < i have pred(j); returns the total.
template <class Pred>
std::uint32_t parallel_ranks(std::size_t n, std::uint32_t* rank, Pred pred) {
  return parallel_offsets(n, rank, [&](std::size_t i) { return pred(i) ? 1U : 0U; });
}

}  // namespace sieve::render::sah
