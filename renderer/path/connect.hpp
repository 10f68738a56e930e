// Stage `connect`: trace the shadow rays shade wrote; an unoccluded one adds its light to its path's
// entry of the wave's film.
#pragma once

#include <exec/exec.hpp>

#include "../trace/tracers.hpp"
#include "paths.hpp"

namespace sieve::render {

SIEVE_HD inline void connect_path(std::uint32_t i, const scene_view& s, const path_columns& p, const bounce_columns& b,
                                  vec3* film) {
  const vec3 light = b.shadow_light[i];
  if (max_component(light) <= 0) return;
  if (!trace_any(s.bvh, s.trace.shadow, b.shadow_rays[i])) film[p.slot[b.path(i)]] += light;
}

template <class Exec>
void connect(Exec e, std::uint32_t capacity, const std::uint32_t* live, const scene_view& s, const path_columns& p,
             const bounce_columns& b, vec3* film) {
  exec::parallel_for(e, "connect", capacity, [=] SIEVE_HD(std::uint32_t i) {
    if (i < *live) connect_path(i, s, p, b, film);
  });
}

}  // namespace sieve::render
