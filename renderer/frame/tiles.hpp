// A film's pixels cut into tiles that several renderers (the ranks of an MPI job: app/mpi.hpp) take
// on demand, and the tiles put back together.
//
// A tile is a contiguous range of pixels rendered over all the film's samples by one renderer
// (render_settings::next_tile), which adds each pixel's samples in sample order, as one process does
// (accumulate.hpp); the counter RNG gives sample s of pixel p the same random numbers whoever
// renders it. No pixel is summed by two renderers, so putting the tiles together adds nothing: the
// image is the one-process image bit for bit, whichever renderer took which tile, however many
// there were and however fast each was.
#pragma once

#include "stats.hpp"

#include <sieve/compaction/error.hpp>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sieve::render {

// The film's `pixels` cut into tiles of tile_pixels (the last one smaller).
struct tile_plan {
  std::uint32_t pixels = 0, tile_pixels = 1;
  std::uint32_t count() const { return pixels / tile_pixels + (pixels % tile_pixels ? 1U : 0U); }
  // Tile i's first pixel and pixel count.
  void tile(std::uint32_t i, std::uint32_t& first, std::uint32_t& n) const {
    first = i * tile_pixels;
    n = std::min(tile_pixels, pixels - first);
  }
};

// The tiles of a film of `pixels` at `spp` samples for `renderers` taking them: `asked` pixels each
// when non-zero, else about two full waves of `max_queue` paths per tile (tile_pixels * spp = 2
// max_queue: a GPU's waves stay full) and at least 8 tiles per renderer (some to balance with).
inline tile_plan plan_tiles(std::uint32_t pixels, std::uint32_t spp, std::uint32_t max_queue, std::uint32_t renderers,
                            std::uint32_t asked = 0) {
  const auto ceil_div = [](std::uint64_t a, std::uint64_t b) { return static_cast<std::uint32_t>((a + b - 1) / b); };
  std::uint32_t n = asked ? asked
                          : std::min(ceil_div(2 * std::uint64_t{max_queue}, std::max(spp, 1U)),
                                     ceil_div(pixels, 8 * std::uint64_t{std::max(renderers, 1U)}));
  n = std::clamp(n, 1U, std::max(pixels, 1U));
  return {pixels, n};
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

// The tiles of a film put together: each tile's sums where its pixels lie, and how many samples
// each pixel has.
class tiled_film {
 public:
  explicit tiled_film(std::uint32_t pixels) : sum_(pixels, vec3{0, 0, 0}), samples_(pixels, 0), placed_(pixels, 0) {}

  // Tile t's sums (t.pixels of them). A pixel must come in one tile only.
  void add(const tile_done& t, std::span<const vec3> sums) {
    if (sums.size() != t.pixels || t.first_pixel > sum_.size() || t.pixels > sum_.size() - t.first_pixel)
      throw sieve::error("tiles: a tile [" + std::to_string(t.first_pixel) + ", +" + std::to_string(t.pixels) +
                         ") with " + std::to_string(sums.size()) + " sums does not fit a film of " +
                         std::to_string(sum_.size()) + " pixels");
    for (std::uint32_t j = 0; j < t.pixels; ++j) {
      const std::uint32_t p = t.first_pixel + j;
      if (placed_[p]) throw sieve::error("tiles: pixel " + std::to_string(p) + " came in two tiles");
      placed_[p] = 1;
      sum_[p] = sums[j];
      samples_[p] = t.samples + (p < t.ahead ? 1U : 0U);
    }
  }

  const std::vector<vec3>& sum() const { return sum_; }
  std::uint32_t samples_of(std::size_t pixel) const { return samples_[pixel]; }
  // Samples every pixel has (0 when a pixel was never rendered).
  std::uint32_t samples() const { return samples_.empty() ? 0 : *std::min_element(samples_.begin(), samples_.end()); }
  // Per pixel: its sum over its samples (zero when it has none).
  std::vector<vec3> mean() const {
    std::vector<vec3> out(sum_.size(), vec3{0, 0, 0});
    for (std::size_t i = 0; i < sum_.size(); ++i)
      if (samples_[i]) out[i] = sum_[i] * (1.0f / static_cast<float>(samples_[i]));
    return out;
  }

 private:
  std::vector<vec3> sum_;
  std::vector<std::uint32_t> samples_;
  std::vector<char> placed_;  // per pixel: a tile brought it
};

}  // namespace sieve::render
