// Stage `generate`: one camera path per (sample, pixel) of a wave.
#pragma once

#include <exec/exec.hpp>

#include "../core/rng.hpp"
#include "paths.hpp"

namespace sieve::render {

// Path `slot` of wave w: a jittered ray through its pixel (random numbers of vertex 0, dimensions
// 0 and 1), written to queue entry i.
SIEVE_HD inline void generate_path(std::uint32_t i, std::uint32_t slot, const scene_view& s, const wave& w,
                                   const path_columns& p) {
  const std::uint32_t pixel = w.pixel_of(slot);
  const rng_key key{pixel, w.sample_of(slot), 0, s.seed};
  const float sx = (static_cast<float>(pixel % s.width) + uniform(key, 0)) / static_cast<float>(s.width);
  const float sy = (static_cast<float>(pixel / s.width) + uniform(key, 1)) / static_cast<float>(s.height);
  p.slot[i] = slot;
  p.rays[i] = s.cam.generate(sx, sy);
  p.throughput[i] = {1, 1, 1};
  p.bsdf_pdf[i] = 0;
  p.cone[i] = 0;
}

// Over `capacity` slots (at least w->size()); *w may live in device memory, so that one launch
// (one CUDA graph) serves every wave.
template <class Exec>
void generate(Exec e, std::uint32_t capacity, const scene_view& s, const wave* w, const path_columns& p) {
  exec::parallel_for(e, "generate", capacity, [=] SIEVE_HD(std::uint32_t i) {
    if (i < w->size()) generate_path(i, i, s, *w, p);
  });
}

}  // namespace sieve::render
