// Stage `accumulate`: after a wave, add its film entries to the image, sample by sample in order,
// and clear them for the next wave. Every pixel's sum is formed in the same order whatever the
// wave's shape, the queue's order or the backend's scheduling.
#pragma once

#include <exec/exec.hpp>

#include "../path/paths.hpp"

namespace sieve::render {

template <class Exec>
void accumulate(Exec e, std::uint32_t max_pixels, const wave* wp, vec3* wave_film, vec3* film) {
  exec::parallel_for(e, "accumulate", max_pixels, [=] SIEVE_HD(std::uint32_t j) {
    const wave w = *wp;  // in device memory on the GPU: one launch serves every wave
    if (j >= w.pixels) return;
    vec3 sum = film[w.first_pixel + j];
    for (std::uint32_t s = 0; s < w.samples; ++s) {
      sum += wave_film[s * w.pixels + j];
      wave_film[s * w.pixels + j] = {0, 0, 0};
    }
    film[w.first_pixel + j] = sum;
  });
}

}  // namespace sieve::render
