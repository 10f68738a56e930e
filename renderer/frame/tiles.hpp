// A film's pixels cut into tiles that several renderers (the ranks of an MPI job: app/mpi.hpp) take
// on demand, and the tiles put back together.
//
// A tile is a contiguous range of pixels rendered over all the film's samples by one renderer
// (render_controls::next_tile), which adds each pixel's samples in sample order, as one process does
// (accumulate.hpp); the counter RNG gives sample s of pixel p the same random numbers whoever
// renders it. No pixel is summed by two renderers, so putting the tiles together adds nothing: the
// image is the one-process image bit for bit, whichever renderer took which tile, however many
// there were and however fast each was.
#pragma once

#include "stats.hpp"

#include <sieve/compaction/error.hpp>

#include <algorithm>
#include <iterator>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace sieve::render {

// The film's `pixels` cut into tiles of tile_pixels (the last one smaller), which a renderer takes
// up to `units` at once: a take of k tiles is one range of k * tile_pixels pixels.
struct tile_plan {
  std::uint32_t pixels = 0, tile_pixels = 1, units = 1;
  std::uint32_t count() const { return pixels / tile_pixels + (pixels % tile_pixels ? 1U : 0U); }
  // Tiles [i, i + k)'s first pixel and pixel count (up to the film's end).
  void tile(std::uint32_t i, std::uint32_t k, std::uint32_t& first, std::uint32_t& n) const {
    first = i * tile_pixels;
    n = static_cast<std::uint32_t>(std::min<std::uint64_t>(std::uint64_t{k} * tile_pixels, pixels - first));
  }
  void tile(std::uint32_t i, std::uint32_t& first, std::uint32_t& n) const { tile(i, 1, first, n); }
  // The most pixels one take holds (what a renderer's queues are sized for).
  std::uint32_t largest() const {
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(std::uint64_t{tile_pixels} * units, std::max(pixels, 1U)));
  }
};

// The tiles of a film of `pixels` at `spp` samples for `renderers` taking them, up to `units` at a
// time: a take of `asked` pixels when non-zero, else about two full waves of `max_queue` paths
// (take * spp = 2 max_queue: a GPU's waves stay full) and at least 8 takes per renderer (some to
// balance with); a tile is 1 / units of that.
inline tile_plan plan_tiles(std::uint32_t pixels, std::uint32_t spp, std::uint32_t max_queue, std::uint32_t renderers,
                            std::uint32_t asked = 0, std::uint32_t units = 1) {
  const auto ceil_div = [](std::uint64_t a, std::uint64_t b) { return static_cast<std::uint32_t>((a + b - 1) / b); };
  std::uint32_t n = asked ? asked
                          : std::min(ceil_div(2 * std::uint64_t{max_queue}, std::max(spp, 1U)),
                                     ceil_div(pixels, 8 * std::uint64_t{std::max(renderers, 1U)}));
  n = std::clamp(n, 1U, std::max(pixels, 1U));
  units = std::clamp(units, 1U, n);
  return {pixels, ceil_div(n, units), units};
}

// How many of the `left` tiles a renderer takes next, rendering `mine_per_s` tiles a second while
// all renderers together take `all_per_s` (guided self-scheduling): about what it renders in half
// the time the others and it need for the tiles left, at most `units`, at least one (one too while
// its speed is not known yet). A fast renderer takes whole takes while the film lasts, a slow one
// single tiles, and the takes shrink towards the film's end, so no renderer's last take keeps the
// others waiting long.
inline std::uint32_t take_size(std::uint32_t left, double mine_per_s, double all_per_s, std::uint32_t units) {
  if (units <= 1 || !(mine_per_s > 0) || !(all_per_s > 0)) return 1;
  const double k = mine_per_s * (left / all_per_s) / 2;
  return k >= units ? units : std::max(1U, static_cast<std::uint32_t>(k));
}

// Whether a renderer should take another of the `left` tiles, rendering `mine_per_s` tiles a second
// while all `renderers` together take `all_per_s` (its own included): not when it is slower than the
// others on average and they would render the tiles left sooner than it renders one (a slow rank's
// last tile would keep the job waiting). The fastest renderer is never slower than the others'
// average, so some renderer always takes the last tile (rank 0 takes them all anyway: its
// caller's guarantee against estimates gone wrong).
inline bool take_another(std::uint32_t left, double mine_per_s, double all_per_s, std::uint32_t renderers) {
  const double others = all_per_s - mine_per_s;
  if (left == 0) return false;
  if (renderers < 2 || mine_per_s <= 0 || others <= 0 || mine_per_s * (renderers - 1) >= others) return true;
  return left / others >= 1 / mine_per_s;
}

// The tiles of a film put together: each tile's sums where its pixels lie, and the tiles, by first
// pixel, which say how many samples each pixel has.
class tiled_film {
 public:
  explicit tiled_film(std::uint32_t pixels) : sum_(pixels, vec3{0, 0, 0}) {}
  // Over a film that already holds some tiles' sums in place (a renderer's own: place() them).
  explicit tiled_film(std::vector<vec3> sums) : sum_(std::move(sums)) {}

  // Tile t, its sums already in place.
  void place(const tile_done& t) {
    if (t.first_pixel > sum_.size() || t.pixels > sum_.size() - t.first_pixel)
      throw sieve::error("tiles: a tile [" + std::to_string(t.first_pixel) + ", +" + std::to_string(t.pixels) +
                         ") does not fit a film of " + std::to_string(sum_.size()) + " pixels");
    const auto at = std::lower_bound(tiles_.begin(), tiles_.end(), t.first_pixel,
                                     [](const tile_done& a, std::uint32_t p) { return a.first_pixel < p; });
    const bool overlaps = (at != tiles_.end() && at->first_pixel < t.first_pixel + t.pixels) ||
                          (at != tiles_.begin() && std::prev(at)->first_pixel + std::prev(at)->pixels > t.first_pixel);
    if (overlaps) throw sieve::error("tiles: pixels of [" + std::to_string(t.first_pixel) + ", +" + std::to_string(t.pixels) + ") came in two tiles");
    tiles_.insert(at, t);
  }
  // Tile t's sums (t.pixels of them), copied where they lie.
  void add(const tile_done& t, std::span<const vec3> sums) {
    if (sums.size() != t.pixels)
      throw sieve::error("tiles: a tile of " + std::to_string(t.pixels) + " pixels came with " + std::to_string(sums.size()) + " sums");
    place(t);
    std::copy(sums.begin(), sums.end(), sum_.begin() + t.first_pixel);
  }

  const std::vector<vec3>& sum() const { return sum_; }
  std::vector<vec3> take_sum() { return std::move(sum_); }
  std::uint32_t samples_of(std::size_t pixel) const {
    const auto at = std::upper_bound(tiles_.begin(), tiles_.end(), pixel,
                                     [](std::size_t p, const tile_done& a) { return p < a.first_pixel; });
    if (at == tiles_.begin() || pixel >= std::prev(at)->first_pixel + std::prev(at)->pixels) return 0;
    return std::prev(at)->samples + (pixel < std::prev(at)->ahead ? 1U : 0U);
  }
  // Samples every pixel has (0 when a pixel was never rendered).
  std::uint32_t samples() const {
    std::uint64_t covered = 0;
    std::uint32_t least = ~0U;
    for (const tile_done& t : tiles_) {
      covered += t.pixels;
      least = std::min(least, t.samples);
    }
    return covered == sum_.size() && !tiles_.empty() ? least : 0;
  }
  // Per pixel: its sum over its samples (zero when it has none).
  std::vector<vec3> mean() const {
    std::vector<vec3> out(sum_.size(), vec3{0, 0, 0});
    for (const tile_done& t : tiles_)
      for (std::uint32_t p = t.first_pixel; p < t.first_pixel + t.pixels; ++p)
        if (const std::uint32_t n = t.samples + (p < t.ahead ? 1U : 0U)) out[p] = sum_[p] * (1.0f / static_cast<float>(n));
    return out;
  }

 private:
  std::vector<vec3> sum_;
  std::vector<tile_done> tiles_;  // by first pixel, none overlapping
};

}  // namespace sieve::render
