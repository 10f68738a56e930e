// Pre-splitting of triangle references before the binned SAH build (Ernst & Greiner's early split
// clipping, with Karras & Aila's budget): a triangle whose box is large against the triangle itself
// (a long diagonal floor strip, an arch) is cut by axis planes into pieces, each piece a reference of
// its own with the box of the triangle clipped to it. The build then sorts pieces, not whole boxes,
// so large triangles no longer stretch every node they fall in. A leaf may then hold one triangle
// once at most, but a triangle may sit in several leaves.
#pragma once

#include "../core/math.hpp"
#include "../core/triangle.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace sieve::render {

// The box of the part of `t` inside `region` (the triangle clipped to the box, Sutherland-Hodgman
// in double), rounded outwards to floats and kept inside `region`; an empty box when they do not meet.
aabb clip_box(const triangle& t, const aabb& region);

// How many references each triangle becomes (1: not split), for about budget x triangles.size()
// extra references in all: the extra ones go to the triangles of most box area beyond their own
// (Karras & Aila's priority, (area of the box - ideal area)^(1/2)), each at most split_pieces_max.
// budget 0: every triangle 1.
inline constexpr std::uint32_t split_pieces_max = 64;
std::vector<std::uint32_t> split_counts(std::span<const triangle> triangles, float budget);

// Cuts `t` into `pieces` boxes (at most; returns how many): the box halved at its middle across its
// longest axis, the pieces shared by the halves in proportion to their size, each half's box the
// triangle clipped to it (clip_box), so the boxes together cover the triangle.
std::uint32_t split_triangle(const triangle& t, std::uint32_t pieces, aabb* out);

}  // namespace sieve::render
