// A film's samples cut into waves (frame layer): the samples a render asks for, the waves both
// integrators render them in, and what a render checks and sets up before its first wave.
#pragma once

#include "../path/paths.hpp"
#include "../scene/scene.hpp"
#include "settings.hpp"
#include "stats.hpp"

#include <sieve/compaction.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

namespace sieve::render {

// What both drivers do first: check the settings for `backend` (integrator, traversal, reorder,
// strategy) and return an empty result for s's film with the form the shade stage will write.
// Throws sieve::error naming what is unknown or unavailable.
render_result begin_render(const scene& s, const render_settings& settings, sieve::backend backend);

inline bool cancelled(const render_controls& controls) { return controls.cancel && controls.cancel->load(); }

// The samples [first, first + count) of a film of `spp` samples that `settings` asks for; throws
// sieve::error when the range does not lie inside the film.
struct sample_range {
  std::uint32_t first = 0, count = 0;
};
inline sample_range samples_asked(const render_settings& settings, std::uint32_t spp) {
  const std::uint64_t first = settings.first_sample;
  const std::uint64_t count = settings.sample_count ? settings.sample_count : spp > first ? spp - first : 0;
  if (first >= spp || first + count > spp)
    throw sieve::error("render: samples [" + std::to_string(first) + ", " + std::to_string(first + count) +
                       ") do not lie inside the film's " + std::to_string(spp) + " samples per pixel");
  return {static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(count)};
}

// The waves of pixels [first_pixel, first_pixel + pixels) of a film of `spp` samples (of them the
// range settings.first_sample, settings.sample_count names), in order: f(wave) for each, which
// returns false when it stopped on cancelled(settings) between bounces (the wave then counts
// nowhere: a driver adds a wave to the image only when it is complete). After each pass of whole
// samples of a whole film it calls controls.progress; it stops when cancelled, also between the
// chunks of a pass. Sets `done`: the samples completed (from the range's first) and ahead (a pass of
// several chunks is one sample, so the chunks done when it is cut hold one more).
template <class F>
void for_each_wave(std::uint32_t first_pixel, std::uint32_t pixels, std::uint32_t spp, const render_settings& settings,
                   const render_controls& controls, tile_done& done, F&& f) {
  const sample_range range = samples_asked(settings, spp);
  const std::uint32_t chunk = std::min(pixels, settings.max_queue);
  const std::uint32_t per_wave = pixels <= settings.max_queue ? settings.max_queue / pixels : 1;
  const std::uint32_t end = first_pixel + pixels;
  done = {first_pixel, pixels, 0, 0};
  while (done.samples < range.count) {
    const std::uint32_t samples = std::min(per_wave, range.count - done.samples);
    for (std::uint32_t first = first_pixel; first < end; first += chunk) {
      const wave w{first, std::min(chunk, end - first), range.first + done.samples, samples};
      if (cancelled(controls) || !f(w)) return;
      if (w.first_pixel + w.pixels < end) done.ahead = w.first_pixel + w.pixels;
    }
    done.samples += samples;
    done.ahead = 0;
    if (controls.progress && !controls.next_tile) controls.progress(done.samples, range.count);
  }
}

// The waves of a whole film of `pixels`, or of the tiles controls.next_tile hands out, one after the
// other (stopping at a cut tile). Sets result.spp (the samples asked for), result.samples (those
// completed for every pixel rendered: by tiles, the least over its tiles), result.ahead (pixels [0,
// ahead) one more) and, by tiles, result.tiles; tile_end(tile) as each tile ends. Both drivers
// (CPU, CUDA) render through it.
template <class F, class T>
void for_each_wave(std::uint32_t pixels, std::uint32_t spp, const render_settings& settings, const render_controls& controls,
                   render_result& result, F&& f, T&& tile_end) {
  tile_done done;
  result.spp = samples_asked(settings, spp).count;
  result.ahead = 0;
  if (!controls.next_tile) {
    for_each_wave(0, pixels, spp, settings, controls, done, f);
    result.samples = done.samples;
    result.ahead = done.ahead;
    return;
  }
  result.samples = result.spp;
  std::uint32_t first = 0, n = 0;
  while (!cancelled(controls) && controls.next_tile(first, n)) {
    if (n == 0 || n > settings.tile_pixels || first >= pixels || n > pixels - first)
      throw sieve::error("render: tile [" + std::to_string(first) + ", +" + std::to_string(n) + ") does not lie inside the film's " +
                         std::to_string(pixels) + " pixels or holds more than " + std::to_string(settings.tile_pixels));
    for_each_wave(first, n, spp, settings, controls, done, f);
    result.tiles.push_back(done);
    tile_end(done);
    result.samples = std::min(result.samples, done.samples);
    if (done.samples < result.spp) return;  // cut
  }
}

// How many waves for_each_wave hands out for the film (none cancelled).
inline std::uint64_t waves_in(std::uint32_t pixels, std::uint32_t spp, const render_settings& settings) {
  const sample_range range = samples_asked(settings, spp);
  const std::uint64_t chunk = std::min(pixels, settings.max_queue);
  const std::uint64_t per_wave = pixels <= settings.max_queue ? settings.max_queue / pixels : 1;
  if (chunk == 0 || range.count == 0) return 0;
  return (range.count + per_wave - 1) / per_wave * ((pixels + chunk - 1) / chunk);
}

// Whether wave `index` (from 0) of `total` has its stages timed when one in `every` is
// (render_settings::profile_every): the second wave, then every every-th after it; the only wave of
// a render of one.
inline bool timed_wave(std::uint64_t index, std::uint64_t total, std::uint32_t every) {
  if (every <= 1) return true;
  if (total <= 1) return index == 0;
  return index % every == 1;
}

// The most paths one wave of for_each_wave holds: what the queues are sized for.
inline std::uint32_t wave_capacity(std::uint32_t pixels, std::uint32_t spp, std::uint32_t max_queue) {
  if (pixels > max_queue) return max_queue;
  return pixels * std::min(spp, max_queue / pixels);
}
// The same for a render with those settings: by tiles, for any tile of up to tile_pixels pixels.
inline std::uint32_t wave_capacity(std::uint32_t pixels, std::uint32_t spp, const render_settings& settings) {
  if (!settings.tile_pixels) return wave_capacity(pixels, spp, settings.max_queue);
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(settings.max_queue, std::uint64_t{settings.tile_pixels} * spp));
}

// Before the BVH is built: throws sieve::error when rendering `s` with `settings` needs more host
// memory than MemAvailable (`available` in tests) or, for the GPU, more than the GPU has free
// (core/memory.hpp's model), naming the needs and what is free.
void check_render_memory(const scene& s, const render_settings& settings, bool gpu,
                         std::optional<std::uint64_t> available = std::nullopt,
                         std::optional<std::uint64_t> gpu_free = std::nullopt);

// The GPU's free memory (cudaMemGetInfo), or nothing without a CUDA device.
std::optional<std::uint64_t> cuda_free_memory();

// The paths in flight at once (render_settings::max_queue) when the request leaves it to the
// renderer. The CPU: 2^20. The GPU: the largest power of two from 2^20 to 2^24 whose queues take at
// most a quarter of the GPU's free memory and of the host's available memory (core/memory.hpp's
// bytes a path), 2^20 when either is unknown. Larger waves make each late bounce one launch of all
// its rays instead of many small ones (the helmet at 64 spp renders 1.6x faster at 2^24 than 2^20).
std::uint32_t default_wave_paths(bool gpu, std::optional<std::uint64_t> gpu_free, std::optional<std::uint64_t> host_available);

}  // namespace sieve::render
