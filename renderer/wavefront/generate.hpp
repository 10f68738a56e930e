// Stage `generate`: one camera path per pixel of a chunk of the film, for one sample index.
#pragma once

#include "../core/rng.hpp"
#include "paths.hpp"

namespace sieve::render {

// Path i of the chunk starting at pixel `first`: a jittered ray through its pixel (random numbers
// of vertex 0, dimensions 0 and 1).
SIEVE_HD inline void generate_path(std::uint32_t i, const scene_view& s, std::uint32_t first, std::uint32_t sample,
                                   const path_columns& p) {
  const std::uint32_t pixel = first + i;
  const rng_key key{pixel, sample, 0, s.seed};
  const float sx = (static_cast<float>(pixel % s.width) + uniform(key, 0)) / static_cast<float>(s.width);
  const float sy = (static_cast<float>(pixel / s.width) + uniform(key, 1)) / static_cast<float>(s.height);
  p.pixel[i] = pixel;
  p.rays[i] = s.cam.generate(sx, sy);
  p.throughput[i] = {1, 1, 1};
  p.bsdf_pdf[i] = 0;
}

template <class Exec>
void generate(Exec e, std::uint32_t n, const scene_view& s, std::uint32_t first, std::uint32_t sample,
              const path_columns& p) {
  exec::parallel_for(e, "generate", n, [=] SIEVE_HD(std::uint32_t i) { generate_path(i, s, first, sample, p); });
}

}  // namespace sieve::render
