// Texture level of detail by ray cones (Akenine-Moller et al., "Texture Level of Detail Strategies
// for Real-Time Ray Tracing", Ray Tracing Gems, 2019): each path carries the width of a cone around
// its ray, which starts at the camera with the pixel's spread angle, and a hit reads its textures
// at the mipmap level where one texel spans the cone's footprint.
//
// After a bounce the cone keeps the camera's spread: its width grows with the length of the whole
// path, as a camera ray's would at that distance (the level pbrt-v4 reads after bounces too). It
// is conservative: a rough or curved bounce widens the real footprint, so this level is never
// blurrier than the path's, and the sampling noise of a rough lobe hides the rest.
#pragma once

#include "texture.hpp"
#include "triangle.hpp"

namespace sieve::render {

// The level-0 term of a hit's level of detail (texture_lod adds each texture's size): log2 of the
// footprint's side in texture coordinates, for a cone `width` wide at a triangle whose unit
// geometric normal makes cosine `cos_theta` with the ray. The footprint is an ellipse of axes width
// and width / |cos|; the isotropic lookup takes its major axis, as the paper does (eq. 34): blurry
// along the minor axis at grazing angles, never aliased along the major one:
// 0.5 log2(uv area / area) + log2(width) - log2|cos|. -inf (level 0) where the triangle has no uv area.
SIEVE_HD inline float footprint_lod(const triangle& tri, const triangle_uvs& uv, const uv_transform& map, float width,
                                    float cos_theta) {
  const float area = length(cross(tri.v1 - tri.v0, tri.v2 - tri.v0));
  const float uv_area = fabsf((uv.t1.u - uv.t0.u) * (uv.t2.v - uv.t0.v) - (uv.t2.u - uv.t0.u) * (uv.t1.v - uv.t0.v)) *
                        map.area_scale();
  return 0.5f * log2f(uv_area / area) + log2f(width / fabsf(cos_theta));
}

}  // namespace sieve::render
