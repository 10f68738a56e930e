// Textures on the GPU (label `gpu`; skipped without a device): texture objects filtered by the
// texture unit against texture_lookup on the CPU over the same stored texels, for every stored
// format (8-bit sRGB RGBA, 8-bit XY, 8-bit grey, 16-bit, half, float), both wrap modes, odd sizes,
// fractional levels, texture objects in both layouts (RGB as three one-channel layers, and as RGBA).
// The packed storage runs the CPU's code on the GPU: equal to 1e-6. The texture
// unit rounds its filter weights to 8 bits of fraction and decodes sRGB at reduced precision
// (docs/textures.md): each lookup is within 3/256 of the range of the texels it blends, plus 2^-8 of
// its value and 2^-12 (the H200 read an 8-bit sRGB texel of 0.29177 as 0.29102: 2^-8.6 of it).
#include <frame/device_scene.hpp>
#include <frame/prepared_scene.hpp>

#include <sieve/compaction/cuda.hpp>
#include <sieve/compaction/cuda_check.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace sieve::render {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (!sieve::cuda::available()) GTEST_SKIP() << "no CUDA device: " << sieve::cuda::device_description()

struct lookup {
  std::uint32_t texture;
  float u, v, lod;
};

__global__ void lookups(const texture_view* textures, const lookup* in, vec3* out, std::uint32_t n) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = texture_lookup(textures[in[i].texture], in[i].u, in[i].v, in[i].lod);
}

// A w x h image of random texels in `format`, `channels` of them.
texel_image random_image(std::uint32_t w, std::uint32_t h, std::uint8_t channels, texel_format format, bool srgb,
                         std::mt19937& rng) {
  texel_image im;
  im.width = w, im.height = h, im.channels = channels, im.format = format, im.srgb = srgb;
  im.bytes.resize(std::size_t{w} * h * channels * channel_bytes(format));
  std::uniform_real_distribution<float> unit(0, 1);
  for (std::size_t i = 0; i < std::size_t{w} * h * channels; ++i) {
    const float v = unit(rng);
    unsigned char* p = &im.bytes[i * channel_bytes(format)];
    if (format == texel_format::unorm8) *p = static_cast<unsigned char>(v * 255.0f + 0.5f);
    if (format == texel_format::unorm16) {
      const auto x = static_cast<std::uint16_t>(v * 65535.0f + 0.5f);
      std::memcpy(p, &x, 2);
    }
    if (format == texel_format::half) {
      const std::uint16_t x = float_to_half(4 * v);  // past 1: half is for HDR
      std::memcpy(p, &x, 2);
    }
    if (format == texel_format::float32) {
      const float x = 8 * v;
      std::memcpy(p, &x, 4);
    }
  }
  return im;
}

// The range (max - min, per channel) of the texels a lookup at (u, v, lod) blends.
vec3 blended_range(const texture& t, float u, float v, float lod) {
  const texture_view tv = t.view();
  lod = std::clamp(lod, 0.0f, static_cast<float>(t.levels - 1));
  vec3 lo{1e30f, 1e30f, 1e30f}, hi{-1e30f, -1e30f, -1e30f};
  const auto l0 = static_cast<std::uint32_t>(lod);
  for (std::uint32_t l = l0; l <= std::min<std::uint32_t>(l0 + 1, t.levels - 1U); ++l) {
    const std::uint32_t w = tv.level_width(l), h = tv.level_height(l);
    const int x0 = static_cast<int>(std::floor(u * w - 0.5f)), y0 = static_cast<int>(std::floor((1 - v) * h - 0.5f));
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < 2; ++i) {
        const vec3 c = t.texel(wrap_texel(x0 + i, w, t.wrap), wrap_texel(y0 + j, h, t.wrap), l);
        lo = min(lo, c), hi = max(hi, c);
      }
  }
  return hi - lo;
}

TEST(TextureCuda, TextureUnitAndPackedTexelsMatchTheCpuLookup) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(7);
  scene s;
  s.name = "textures";
  s.triangles = {{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}};
  s.material_of = {0};
  s.materials = {material{}};
  s.materials[0].emission = {1, 1, 1};
  s.emissive = {0};
  struct made {
    texel_image image;
    image_use use;
    wrap_mode wrap;
  };
  const std::vector<made> inputs = {
      {random_image(37, 29, 3, texel_format::unorm8, true, rng), image_use::color, wrap_mode::repeat},    // 8-bit sRGB RGBA
      {random_image(64, 64, 3, texel_format::unorm8, false, rng), image_use::normal, wrap_mode::clamp},   // 8-bit XY
      {random_image(50, 30, 2, texel_format::unorm8, true, rng), image_use::opacity, wrap_mode::repeat},  // 8-bit grey
      {random_image(33, 17, 4, texel_format::unorm16, true, rng), image_use::color, wrap_mode::clamp},    // 16-bit RGBA
      {random_image(20, 20, 4, texel_format::half, false, rng), image_use::color, wrap_mode::repeat},     // half RGBA
      {random_image(16, 8, 1, texel_format::float32, false, rng), image_use::color, wrap_mode::clamp},    // float grey
  };
  for (const made& m : inputs) s.textures.push_back(make_texture("t", m.image, m.use, m.wrap, {1, 0.5f, 2}));
  const prepared_scene ps(s);
  const scene_view host = ps.view(1, 1);

  std::vector<lookup> in;
  std::uniform_real_distribution<float> coord(-2, 3), level(-0.5f, 7);
  for (std::uint32_t t = 0; t < s.textures.size(); ++t)
    for (int i = 0; i < 20000; ++i) in.push_back({t, coord(rng), coord(rng), i % 4 == 0 ? 0.0f : level(rng)});
  const auto n = static_cast<std::uint32_t>(in.size());
  std::vector<vec3> want(n);
  for (std::uint32_t i = 0; i < n; ++i) want[i] = texture_lookup(host.textures[in[i].texture], in[i].u, in[i].v, in[i].lod);

  lookup* d_in = nullptr;
  vec3* d_out = nullptr;
  SIEVE_CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(lookup)));
  SIEVE_CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(vec3)));
  SIEVE_CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(lookup), cudaMemcpyHostToDevice));
  for (const texture_storage storage : {texture_storage::packed, texture_storage::hardware, texture_storage::rgba}) {
    const device_scene ds(ps, storage);
    lookups<<<(n + 255) / 256, 256>>>(ds.view(1, 1).textures, d_in, d_out, n);
    SIEVE_CUDA_CHECK(cudaGetLastError());
    std::vector<vec3> got(n);
    SIEVE_CUDA_CHECK(cudaMemcpy(got.data(), d_out, n * sizeof(vec3), cudaMemcpyDeviceToHost));
    std::vector<double> worst(s.textures.size(), 0), worst_ratio(s.textures.size(), 0);
    std::vector<std::size_t> failures(s.textures.size(), 0);  // each texture's first failure is reported
    for (std::uint32_t i = 0; i < n; ++i) {
      const texture& t = s.textures[in[i].texture];
      const vec3 range = blended_range(t, in[i].u, in[i].v, in[i].lod) * t.scale;
      for (int c = 0; c < 3; ++c) {
        if (t.channels == 2 && c == 2) continue;  // a two-channel texture reads 0 there
        const double err = std::fabs(double{got[i][c]} - want[i][c]);
        const double bound = storage == texture_storage::packed
                                 ? 1e-6 * std::max(1.0f, std::fabs(want[i][c]))
                                 : 3.0 / 256 * range[c] + std::ldexp(std::fabs(want[i][c]), -8) + std::ldexp(1.0, -12);
        worst[in[i].texture] = std::max(worst[in[i].texture], err);
        worst_ratio[in[i].texture] = std::max(worst_ratio[in[i].texture], err / bound);
        if (err > bound && ++failures[in[i].texture] == 1)
          ADD_FAILURE() << to_string(storage) << ": texture " << in[i].texture << " (" << describe_storage(t)
                              << ") at (" << in[i].u << ", " << in[i].v << ") level " << in[i].lod << ", channel " << c
                              << ": GPU " << got[i][c] << ", CPU " << want[i][c];
      }
    }
    for (std::size_t t = 0; t < s.textures.size(); ++t)
      std::printf("%s: %s: largest difference %.3g (%.2f of the bound), %zu lookups past it\n",
                  std::string(to_string(storage)).c_str(), describe_storage(s.textures[t]).c_str(), worst[t], worst_ratio[t],
                  failures[t]);
  }
  SIEVE_CUDA_CHECK(cudaFree(d_in));
  SIEVE_CUDA_CHECK(cudaFree(d_out));
}

}  // namespace
}  // namespace sieve::render
