// The one wave loop of a render (run layer): every wave of the film (../frame/waves.hpp) handed to
// the wavefront driver or to the megakernel, over a run backend that holds the scene, the wave and
// the film where its stages read them. Per wave the same steps on every backend: the integrator runs
// the wave (false or null when cancelled), its counts go into the statistics, the wave is counted.
//
// A run backend R gives:
//   typename R::driver_backend    the wavefront driver's backend policy (../wavefront/driver.hpp)
//   driver_backend& backend()     that policy, for the driver
//   const scene_view& view()      the scene where the stages read it
//   wave* wave_slot()             where the stages read the wave being rendered
//   vec3* film()                  the image's sums the waves add to
//   R::megakernel_waves(R&, capacity, max_pixels)   with bool run(const wave&, std::uint32_t rays[2]):
//                                 one wave through the megakernel, accumulated, its rays counted
//   R::wavefront_waves(R&, wavefront_driver<driver_backend>&)   with const std::uint64_t* run(const
//                                 wave&): one wave through the driver, its counts in host memory
//   void wait()                   returns when the backend's work is done
//   void read_tile(result, tile)  the tile's sums in result.sum (host memory), its waves done
#pragma once

#include "../frame/settings.hpp"
#include "../frame/stats.hpp"
#include "../frame/waves.hpp"
#include "../scene/scene.hpp"
#include "../wavefront/driver.hpp"

#include <algorithm>
#include <chrono>
#include <span>
#include <cstdint>

namespace sieve::render {

template <class Run>
void run_waves(Run& run, const film_desc& film, const render_settings& settings, const render_controls& controls,
               render_result& result) {
  render_stats& stats = result.stats;
  const std::uint32_t pixels = film.width * film.height;
  const std::uint32_t capacity = wave_capacity(pixels, film.spp, settings);
  const std::uint32_t max_pixels = std::min(pixels, settings.max_queue);
  const auto start = std::chrono::steady_clock::now();
  const auto seconds_since_start = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  // The statistics after the first wave and its time (from the start: the integrator's set-up in it).
  render_stats first;
  double first_seconds = 0;
  const auto wave_done = [&] {
    if (++stats.waves != 1) return;
    first_seconds = seconds_since_start();
    first = stats;
    if (settings.profile_stages && !stats.sampled_waves) first.measured_waves = 1;
  };
  // A tile's sums handed on as it ends (render_controls::tile_rendered).
  const auto tile_end = [&](const tile_done& t) {
    if (!controls.tile_rendered) return;
    run.read_tile(result, t);
    controls.tile_rendered(t.first_pixel, std::span<const vec3>(result.sum).subspan(t.first_pixel, t.pixels));
  };
  if (settings.uses_megakernel()) {
    // The sibling loop: no queues, one task per path, through the same waves and film.
    typename Run::megakernel_waves integrator(run, capacity, max_pixels);
    for_each_wave(pixels, film.spp, settings, controls, result, [&](const wave& w) {
      std::uint32_t rays[2] = {0, 0};
      if (!integrator.run(w, rays)) return false;
      stats.extension_rays += rays[0];
      stats.shadow_rays += rays[1];
      wave_done();
      return true;
    }, tile_end);
  } else {
    using driver_type = wavefront_driver<typename Run::driver_backend>;
    const auto t_queues = std::chrono::steady_clock::now();
    driver_type driver(run.backend(), run.view(), settings, controls, stats.form, capacity, max_pixels, run.wave_slot(), run.film(),
                       run.family());
    typename Run::wavefront_waves integrator(run, driver);
    stats.first_wave.queues = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_queues).count();
    for_each_wave(pixels, film.spp, settings, controls, result, [&](const wave& w) {
      const std::uint64_t* counts = integrator.run(w);
      if (!counts) return false;
      driver_type::tally(counts, film.max_bounces, stats);
      wave_done();
      return true;
    }, tile_end);
  }
  run.wait();
  if (settings.profile_stages && !stats.sampled_waves) stats.measured_waves = stats.waves;
  stats.seconds = seconds_since_start();
  stats.note_first_wave(first, first_seconds);
  stats.scale_measured();
}

}  // namespace sieve::render
