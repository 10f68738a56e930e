// Stage `connect`: trace the shadow rays shade wrote; an unoccluded one adds its light to its path's
// entry of the wave's film. Each is an any-hit traversal: it ends at the first triangle that blocks
// it (trace/tracers.hpp: `any`).
#pragma once

#include <exec/exec.hpp>
#include <exec/walk.hpp>

#include <type_traits>

#include "../trace/tracers.hpp"
#include "paths.hpp"

namespace sieve::render {

// The megakernel's queue of one: entry i's shadow ray, if shade made one (its light is not zero).
SIEVE_HD inline void connect_path(std::uint32_t i, const scene_view& s, const path_columns& p, const bounce_columns& b,
                                  vec3* film) {
  const vec3 light = b.shadow_light[i];
  if (max_component(light) <= 0) return;
  if (!trace_any(s.bvh, s.trace.shadow, b.shadow_rays[i])) film[p.slot[b.path(i)]] += light;
}

// Persistent warps over the shadow queue (exec::parallel_walk): an unblocked ray's light goes to its
// film entry as its walk ends.
template <class Walk>
struct shadow_walk : Walk {
  const vec3* light;
  const std::uint32_t* slots;
  vec3* film;
  SIEVE_HD void finish(std::uint32_t k, const typename Walk::state& s) const {
    if (!s.result().found()) film[slots[k]] += light[k];
  }
};

// A ray a thread: shadow queue entry k traced by `trace` (a tracer of trace/tracers.hpp).
template <class Exec, class Trace>
void connect_each(Exec e, std::uint32_t capacity, const bounce_columns& b, vec3* film, Trace trace) {
  const std::uint32_t* count = b.shadow_count;
  const ray* rays = b.shadow_rays;
  const vec3* light = b.shadow_light;
  const std::uint32_t* slots = b.shadow_slots;
  exec::parallel_for(e, "connect", capacity, [=] SIEVE_HD(std::uint32_t k) {
    if (k < *count && !trace.any(rays[k])) film[slots[k]] += light[k];
  });
}

// The wavefront's shadow queue (bounce_columns: *b.shadow_count entries, fewer than `capacity`, what
// the launch covers), traced as s.trace.shadow says: a ray a thread, or by persistent warps where
// the choice walks (`cursor`: one word of the backend's memory, as extend's). Each film entry takes
// at most one shadow ray a bounce, so neither the queue's order nor the schedule changes the image.
template <class Exec>
void connect(Exec e, std::uint32_t capacity, const scene_view& s, const bounce_columns& b, vec3* film,
             std::uint32_t* cursor) {
  const std::uint32_t* count = b.shadow_count;
  const ray* rays = b.shadow_rays;
  const auto ray_of = [=] SIEVE_HD(std::uint32_t k) { return rays[k]; };
  const auto items = [=] SIEVE_HD { return *count; };
  visit_tracer(s.bvh, s.trace.shadow, [&](auto tracer) {
    using tracer_t = decltype(tracer);
    if constexpr (tracer_t::walks_any && !std::is_same_v<Exec, exec::cpu>)
      if (walks<tracer_t>(s.trace.shadow, true)) {
        using walk_t = decltype(tracer.template walk<true>(ray_of, items, nullptr));
        return exec::parallel_walk(
            e, "connect",
            shadow_walk<walk_t>{tracer.template walk<true>(ray_of, items, nullptr), b.shadow_light, b.shadow_slots, film},
            cursor);
      }
    connect_each(e, capacity, b, film, tracer);
  });
}

}  // namespace sieve::render
