// Stage `reorder` (optional): sort the live paths by a key of their next ray, so that rays that
// will visit the same part of the BVH sit together in the queue. Keys (32 bits, sorted by radix
// sort over the bits they use):
//   morton       30-bit Morton code of the ray's origin in the scene's bounds
//   octant       the direction's octant (3 bits) above a 27-bit Morton code of the origin
//   termination  30-bit Morton code of an estimated end point: the origin moved a quarter of the
//                scene's diagonal along the direction, clamped to the bounds
// The image does not depend on the order: every path's random numbers are keyed by its pixel.
#pragma once

#include <exec/exec.hpp>

#include "../core/modes.hpp"
#include "../path/paths.hpp"

namespace sieve::render {

// The key bits each kind uses: what the radix sort sorts over.
constexpr int reorder_key_bits(reorder_key k) { return k == reorder_key::none ? 0 : 30; }

// Spreads the low 10 bits of v to every third bit.
SIEVE_HD constexpr std::uint32_t spread_bits3(std::uint32_t v) {
  v &= 0x3FFU;
  v = (v | (v << 16)) & 0x030000FFU;
  v = (v | (v << 8)) & 0x0300F00FU;
  v = (v | (v << 4)) & 0x030C30C3U;
  v = (v | (v << 2)) & 0x09249249U;
  return v;
}

// Morton code of p in `bounds` with `bits` bits per axis (<= 10).
SIEVE_HD inline std::uint32_t morton3(vec3 p, const aabb& bounds, int bits) {
  const vec3 e = bounds.extent();
  const float cells = static_cast<float>(1U << bits);
  auto cell = [&](float v, float lo, float ext) {
    const float c = ext > 0 ? (v - lo) / ext * cells : 0.0f;
    return static_cast<std::uint32_t>(fminf(fmaxf(c, 0.0f), cells - 1.0f));
  };
  return spread_bits3(cell(p.x, bounds.lo.x, e.x)) | spread_bits3(cell(p.y, bounds.lo.y, e.y)) << 1 |
         spread_bits3(cell(p.z, bounds.lo.z, e.z)) << 2;
}

SIEVE_HD inline std::uint32_t ray_key(reorder_key k, const ray& r, const aabb& bounds) {
  switch (k) {
    case reorder_key::none: return 0;
    case reorder_key::morton: return morton3(r.origin, bounds, 10);
    case reorder_key::octant: {
      const std::uint32_t octant = (r.direction.x < 0) | (r.direction.y < 0) << 1 | (r.direction.z < 0) << 2;
      return octant << 27 | morton3(r.origin, bounds, 9);
    }
    case reorder_key::termination: {
      const vec3 end = r.origin + r.direction * (0.25f * length(bounds.extent()));
      return morton3(min(max(end, bounds.lo), bounds.hi), bounds, 10);
    }
  }
  return 0;
}

// keys[i], and index[i] = the path at queue entry i (i itself, or path_index[i] for an index
// queue), for the first `capacity` entries: the live paths' keys, and past the live count the
// largest key of `k`, so that a stable sort over the whole capacity (a GPU wave whose count stays on
// the device) leaves the live paths first, in key order.
template <class Exec>
void reorder_keys(Exec e, std::uint32_t capacity, const std::uint32_t* live, reorder_key k, const scene_view& s,
                  const path_columns& p, std::uint32_t* keys, std::uint32_t* index,
                  const std::uint32_t* path_index = nullptr) {
  const std::uint32_t last = reorder_key_bits(k) >= 32 ? ~0U : (1U << reorder_key_bits(k)) - 1;
  exec::parallel_for(e, "reorder.keys", capacity, [=] SIEVE_HD(std::uint32_t i) {
    const bool in = i < *live;
    const std::uint32_t j = path_index && in ? path_index[i] : i;
    keys[i] = in ? ray_key(k, p.rays[j], s.bounds) : last;
    index[i] = j;
  });
}

// An index queue after a sort: to[i] = sorted[i] for the live entries.
template <class Exec>
void copy_indices(Exec e, std::uint32_t capacity, const std::uint32_t* live, const std::uint32_t* sorted,
                  std::uint32_t* to) {
  exec::parallel_for(e, "reorder.gather", capacity, [=] SIEVE_HD(std::uint32_t i) {
    if (i < *live) to[i] = sorted[i];
  });
}

// to[i] = from[index[i]] for every column (path_columns' list).
template <class Exec>
void gather_paths(Exec e, std::uint32_t capacity, const std::uint32_t* live, const std::uint32_t* index,
                  const path_columns& from, const path_columns& to) {
  exec::parallel_for(e, "reorder.gather", capacity, [=] SIEVE_HD(std::uint32_t i) {
    if (i < *live) to.copy_from(i, from, index[i]);
  });
}

}  // namespace sieve::render
