// Textures in host memory (texture_store.hpp): the stored layout a material's use picks, and the
// mipmap pyramid, box-filtered level by level in linear float values.
#include "texture_store.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace sieve::render {

float texel_image::value(std::size_t i, std::uint32_t c) const {
  const std::size_t at = (i * channels + c) * channel_bytes(format);
  switch (format) {
    case texel_format::unorm8: return static_cast<float>(bytes[at]) * (1.0f / 255.0f);
    case texel_format::unorm16: {
      std::uint16_t w;
      std::memcpy(&w, &bytes[at], 2);
      return static_cast<float>(w) * (1.0f / 65535.0f);
    }
    case texel_format::half: {
      std::uint16_t w;
      std::memcpy(&w, &bytes[at], 2);
      return half_to_float(w);
    }
    default: {
      float f;
      std::memcpy(&f, &bytes[at], 4);
      return f;
    }
  }
}

texture_view texture::view() const {
  texture_view v;
  v.texels = texels.empty() ? nullptr : texels.data();
  v.width = width;
  v.height = height;
  v.levels = levels;
  v.channels = channels;
  v.format = format;
  v.srgb = srgb;
  v.wrap = wrap;
  v.scale = scale;
  for (std::size_t l = 0; l < level_offset.size() && l < max_texture_levels; ++l) v.level_offset[l] = level_offset[l];
  return v;
}

vec3 texture::texel(std::uint32_t x, std::uint32_t y, std::uint32_t l) const {
  const texture_view v = view();
  const unsigned char* p = v.texels + v.level_offset[l] + (std::uint64_t{y} * v.level_width(l) + x) * v.texel_bytes();
  float c[3] = {0, 0, 0};
  for (std::uint32_t k = 0; k < std::min<std::uint32_t>(channels, 3); ++k) c[k] = detail::texel_channel(v, p, k);
  return channels == 1 ? vec3{c[0], c[0], c[0]} : vec3{c[0], c[1], c[2]};
}

std::uint32_t mip_levels(std::uint32_t w, std::uint32_t h) {
  std::uint32_t n = 1;
  while ((w >> n) > 0 || (h >> n) > 0) ++n;
  return std::min(n, max_texture_levels);
}

std::uint64_t pyramid_bytes(std::uint32_t w, std::uint32_t h, std::uint32_t channels, texel_format format) {
  std::uint64_t texels = 0;
  for (std::uint32_t l = 0, n = mip_levels(w, h); l < n; ++l)
    texels += std::uint64_t{std::max(1U, w >> l)} * std::max(1U, h >> l);
  return texels * channels * channel_bytes(format);
}

namespace {

// Which channels of the image each stored channel takes (-1: a constant 1), for `use`.
struct channel_plan {
  std::uint32_t count = 0;
  int from[4] = {-1, -1, -1, -1};
};

channel_plan plan_of(const texel_image& image, image_use use, bool srgb) {
  const int alpha = image.has_alpha() ? image.channels - 1 : -1;
  const bool grey = image.colour_channels() == 1;
  channel_plan p;
  switch (use) {
    case image_use::color:
      // RGB: three channels (the alpha, where there is one, is the alpha use's own texture). A grey
      // sRGB image is widened to RGB (the texture unit's sRGB decode is kept to the formats it was
      // measured on); the upload holds RGB as three one-channel layers (device_scene.cu).
      if (grey && !srgb) return p.count = 1, p.from[0] = 0, p;
      p.count = 3;
      for (int c = 0; c < 3; ++c) p.from[c] = grey ? 0 : c;
      return p;
    case image_use::opacity: return p.count = 1, p.from[0] = alpha >= 0 ? alpha : 0, p;
    case image_use::alpha: return p.count = 1, p.from[0] = alpha, p;
    case image_use::normal: return p.count = 2, p.from[0] = 0, p.from[1] = grey ? 0 : 1, p;
    case image_use::metal_rough: return p.count = 2, p.from[0] = grey ? 0 : 1, p.from[1] = grey ? 0 : 2, p;
  }
  return p;
}

// One stored channel value from a linear one.
void encode(float v, texel_format f, bool srgb, unsigned char* out) {
  switch (f) {
    case texel_format::unorm8:
      *out = static_cast<unsigned char>(std::lrint(std::clamp(srgb ? srgb_encode(v) : v, 0.0f, 1.0f) * 255.0f));
      return;
    case texel_format::unorm16: {
      const auto w = static_cast<std::uint16_t>(std::lrint(std::clamp(v, 0.0f, 1.0f) * 65535.0f));
      std::memcpy(out, &w, 2);
      return;
    }
    case texel_format::half: {
      const std::uint16_t w = float_to_half(v);
      std::memcpy(out, &w, 2);
      return;
    }
    case texel_format::float32: std::memcpy(out, &v, 4); return;
  }
}

// The box filter's weights along an axis of n texels shrunk to m: output j covers source
// [j n / m, (j + 1) n / m), each texel weighted by how much of it lies inside (2 texels of 1/2 for
// an even n; 3 for an odd one).
struct box_tap {
  std::uint32_t first = 0, count = 0;
  float w[3] = {0, 0, 0};
};
std::vector<box_tap> box_taps(std::uint32_t n, std::uint32_t m) {
  std::vector<box_tap> taps(m);
  const double r = static_cast<double>(n) / m;
  for (std::uint32_t j = 0; j < m; ++j) {
    const double a = j * r, b = (j + 1) * r;
    box_tap& t = taps[j];
    t.first = static_cast<std::uint32_t>(std::floor(a));
    for (std::uint32_t i = t.first; i < n && i < b && t.count < 3; ++i, ++t.count)
      t.w[t.count] = static_cast<float>((std::min<double>(b, i + 1) - std::max<double>(a, i)) / r);
  }
  return taps;
}

// A w x h level of `ch` linear floats shrunk to nw x nh by the box filter (rows in parallel).
std::vector<float> shrink(const std::vector<float>& src, std::uint32_t w, std::uint32_t h, std::uint32_t ch,
                          std::uint32_t nw, std::uint32_t nh) {
  const std::vector<box_tap> tx = box_taps(w, nw), ty = box_taps(h, nh);
  std::vector<float> out(std::size_t{nw} * nh * ch);
  tbb::parallel_for(std::uint32_t{0}, nh, [&](std::uint32_t y) {
    for (std::uint32_t x = 0; x < nw; ++x)
      for (std::uint32_t c = 0; c < ch; ++c) {
        float sum = 0;
        for (std::uint32_t j = 0; j < ty[y].count; ++j)
          for (std::uint32_t i = 0; i < tx[x].count; ++i)
            sum += ty[y].w[j] * tx[x].w[i] * src[((std::size_t{ty[y].first} + j) * w + tx[x].first + i) * ch + c];
        out[(std::size_t{y} * nw + x) * ch + c] = sum;
      }
  });
  return out;
}

}  // namespace

texture texture_layout(const texel_image& image, image_use use) {
  texture t;
  t.width = image.width;
  t.height = image.height;
  const bool colour = use == image_use::color;
  // sRGB stays encoded only where the texture unit decodes it (8 bit); elsewhere it is decoded now.
  t.srgb = colour && image.srgb && image.format == texel_format::unorm8;
  t.format = image.format;
  t.channels = static_cast<std::uint8_t>(plan_of(image, use, t.srgb).count);
  t.levels = static_cast<std::uint8_t>(mip_levels(image.width, image.height));
  t.source_bytes = std::uint64_t{image.width} * image.height * image.channels * channel_bytes(image.format);
  return t;
}

texture make_texture(std::string name, const texel_image& image, image_use use, wrap_mode wrap, vec3 scale) {
  texture t = texture_layout(image, use);
  t.name = std::move(name);
  t.wrap = wrap;
  t.scale = scale;
  if (use == image_use::alpha && !image.has_alpha()) {  // opaque throughout: one texel
    t.width = t.height = 1;
    t.format = texel_format::unorm8;
    t.levels = 1;
    t.level_offset = {0};
    t.texels = {255};
    return t;
  }
  const channel_plan plan = plan_of(image, use, t.srgb);
  const bool decode = use == image_use::color && image.srgb && !t.srgb;  // sRGB 16-bit or float: stored linear
  const std::uint32_t ch = plan.count, tb = ch * channel_bytes(t.format);
  const std::size_t pixels = std::size_t{image.width} * image.height;
  // Level 0 in linear floats (the pyramid's source), and stored.
  std::vector<float> level(pixels * ch);
  t.texels.resize(pyramid_bytes(image.width, image.height, ch, t.format));
  tbb::parallel_for(std::size_t{0}, std::size_t{image.height}, [&](std::size_t y) {
    for (std::size_t i = y * image.width; i < (y + 1) * image.width; ++i)
      for (std::uint32_t c = 0; c < ch; ++c) {
        const float v = plan.from[c] < 0 ? 1.0f : image.value(i, static_cast<std::uint32_t>(plan.from[c]));
        const bool curve = c < 3 && (t.srgb || decode);
        level[i * ch + c] = curve ? srgb_decode(v) : v;
        if (t.srgb && c < 3 && plan.from[c] >= 0)
          t.texels[i * tb + c] = image.bytes[i * image.channels + static_cast<std::uint32_t>(plan.from[c])];  // as stored
        else
          encode(curve && !t.srgb ? srgb_decode(v) : v, t.format, false, &t.texels[i * tb + c * channel_bytes(t.format)]);
      }
  });
  // The levels below, each from the one above.
  std::uint64_t at = pixels * tb;
  t.level_offset = {0};
  std::uint32_t w = image.width, h = image.height;
  for (std::uint32_t l = 1; l < t.levels; ++l) {
    const std::uint32_t nw = std::max(1U, w >> 1), nh = std::max(1U, h >> 1);
    level = shrink(level, w, h, ch, nw, nh);
    w = nw, h = nh;
    t.level_offset.push_back(at);
    unsigned char* out = &t.texels[at];
    tbb::parallel_for(std::size_t{0}, std::size_t{h}, [&](std::size_t y) {
      for (std::size_t i = y * w; i < (y + 1) * w; ++i)
        for (std::uint32_t c = 0; c < ch; ++c)
          encode(level[i * ch + c], t.format, t.srgb && c < 3, out + i * tb + c * channel_bytes(t.format));
    });
    at += std::uint64_t{w} * h * tb;
  }
  return t;
}

texture make_texture(std::string name, std::uint32_t width, std::uint32_t height, std::span<const vec3> rgb,
                     wrap_mode wrap, bool mipmaps) {
  texel_image image;
  image.width = width;
  image.height = height;
  image.channels = 3;
  image.format = texel_format::float32;
  image.bytes.resize(rgb.size() * 12);
  for (std::size_t i = 0; i < rgb.size(); ++i) std::memcpy(&image.bytes[i * 12], &rgb[i], 12);
  texture t = make_texture(std::move(name), image, image_use::color, wrap);
  if (!mipmaps) {
    t.levels = 1;
    t.texels.resize(std::size_t{width} * height * t.channels * channel_bytes(t.format));
    t.level_offset.resize(1);
  }
  return t;
}

std::string describe_storage(const texture& t) {
  static const char* const formats[] = {"8-bit", "16-bit", "half", "float"};
  static const char* const layouts[] = {"", "grey", "XY", "RGB", "RGBA"};
  return std::string(formats[static_cast<int>(t.format)]) + (t.srgb ? " sRGB " : " ") + layouts[t.channels] +
         (t.levels > 1 ? ", " + std::to_string(t.levels) + " levels" : "");
}

std::uint64_t hardware_bytes(const texture& t) { return t.bytes(); }

std::string texture_memory_line(std::span<const texture> textures) {
  std::uint64_t stored = 0, source = 0, hardware = 0;
  for (const texture& t : textures) stored += t.bytes(), source += t.source_bytes, hardware += hardware_bytes(t);
  auto mib = [](std::uint64_t b) {
    char s[32];
    std::snprintf(s, sizeof s, "%.1f MiB", static_cast<double>(b) / (1 << 20));
    return std::string(s);
  };
  auto times = [&](std::uint64_t b) {
    char s[32];
    std::snprintf(s, sizeof s, "%.2fx", static_cast<double>(b) / static_cast<double>(source));
    return std::string(s);
  };
  std::string line = std::to_string(textures.size()) + " (" + mib(stored) + " stored with mipmaps";
  if (source > 0) line += ", " + times(stored) + " the " + mib(source) + " of their images' texels";
  if (hardware != stored)
    line += "; " + mib(hardware) + (source > 0 ? ", " + times(hardware) + "," : "") + " as GPU texture objects";
  return line + ")";
}

}  // namespace sieve::render
