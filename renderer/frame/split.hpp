// A film's samples split over several renderers (the ranks of an MPI job: app/mpi.hpp),
// and their partial films put back together.
//
// Each part renders a contiguous range of samples (render_settings::first_sample, sample_count);
// the counter RNG gives sample s of pixel p the same random numbers whichever part renders it, and
// each part sums its samples per pixel in sample order, as one process does (accumulate.hpp). The
// parts are then added in part order, first to last: the result depends on the split, never on
// timing. It is not bit for bit the one-process sum: that adds sample after sample into one float,
// and (s0 + .. + s(k-1)) + (sk + .. ) rounds differently. Every sample is non-negative, and both
// sums are sums of the same n numbers, each formed by n - 1 roundings at most: each is within
// gamma(n-1) = (n-1)u / (1 - (n-1)u) of the exact sum (u = 2^-24), so they differ by at most
// 2 gamma(n-1) times it. split_bound gives that bound.
#pragma once

#include "waves.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace sieve::render {

// Part `part` of `parts` of `spp` samples: contiguous, in order, sizes differing by one at most
// (the first spp % parts parts take one more). Empty (count 0) when parts > spp.
inline sample_range share_of(std::uint32_t spp, std::uint32_t parts, std::uint32_t part) {
  const std::uint32_t base = spp / parts, extra = spp % parts;
  return {part * base + std::min(part, extra), base + (part < extra ? 1U : 0U)};
}

// The partial films of a split render added together, in the order they are added.
class split_film {
 public:
  split_film(std::uint32_t width, std::uint32_t height)
      : width_(width), height_(height), sum_(std::size_t{width} * height, vec3{0, 0, 0}) {}

  // Adds one part's film (per pixel: the sum of its samples; `samples` done for every pixel and
  // one more for pixels [0, ahead), as render_result has them). Parts must be added in part order.
  void add(std::span<const vec3> sum, std::uint32_t samples, std::uint32_t ahead) {
    if (sum.size() != sum_.size())
      throw sieve::error("split render: a part's film has " + std::to_string(sum.size()) + " pixels, not " +
                         std::to_string(sum_.size()));
    for (std::size_t i = 0; i < sum_.size(); ++i) sum_[i] += sum[i];
    samples_ += samples;
    if (ahead) aheads_.push_back(ahead);
  }

  std::uint32_t width() const { return width_; }
  std::uint32_t height() const { return height_; }
  const std::vector<vec3>& sum() const { return sum_; }
  // Samples every pixel has (the parts' completed samples, summed).
  std::uint32_t samples() const { return samples_; }
  // Pixel i's samples: samples() plus one per part whose cut pass had reached it.
  std::uint32_t samples_of(std::size_t pixel) const {
    std::uint32_t n = samples_;
    for (const std::uint32_t a : aheads_) n += pixel < a ? 1U : 0U;
    return n;
  }
  // Per pixel: its sum over its samples (zero when it has none).
  std::vector<vec3> mean() const {
    std::vector<vec3> out(sum_.size(), vec3{0, 0, 0});
    for (std::size_t i = 0; i < sum_.size(); ++i)
      if (const std::uint32_t n = samples_of(i)) out[i] = sum_[i] * (1.0f / static_cast<float>(n));
    return out;
  }

 private:
  std::uint32_t width_, height_;
  std::vector<vec3> sum_;
  std::uint32_t samples_ = 0;
  std::vector<std::uint32_t> aheads_;
};

// The most a split sum of n non-negative samples may differ from the one-process sum, relative to
// the larger of the two (see the top of this file): 2 gamma(n-1), gamma(k) = k u / (1 - k u).
inline double split_bound(std::uint32_t n) {
  const double u = 1.0 / (1 << 24), k = n > 0 ? n - 1.0 : 0.0;
  return 2 * k * u / (1 - k * u);
}

}  // namespace sieve::render
