// Reading image files (image_file.hpp): PNG through stb_image, Radiance .hdr decoded here (for
// textures and environment maps alike). Only
// stb_image's PNG decoder is compiled in, with static linkage, so that no other stb_image in the
// program clashes. Debian 12's stb_image (2.27) is not trusted with more: fuzzing found its JPEG
// decoder writing past a Huffman table and its .hdr decoder looping forever on a truncated
// run-length scanline (tests/fuzz/regressions/image/).
#include "image_file.hpp"

#include "input_file.hpp"

#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_NO_STDIO
#define STBI_ONLY_PNG
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#endif
#include <stb/stb_image.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#include <algorithm>
#include <climits>
#include <cstdio>
#include <string_view>
#include <cmath>
#include <memory>

namespace sieve::render {

float srgb_to_linear(float c) {
  return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f);
}

void check_finite(const image_rgb& image, const std::string& name, const std::string& what) {
  for (std::size_t i = 0; i < image.pixels.size(); ++i) {
    if (!finite(image.pixels[i])) {
      detail::fail(name + ": the " + what + " has a value that is not finite at pixel (" +
                   std::to_string(i % image.width) + ", " + std::to_string(i / image.width) + ")");
    }
  }
}

void check_image_size(std::uint64_t uw, std::uint64_t uh, const std::string& name, const std::string& what,
                      const image_limits& limits) {
  const std::string at = name + ": the " + what + " is " + std::to_string(uw) + " x " + std::to_string(uh) + " pixels";
  if (uw > limits.max_side || uh > limits.max_side)
    detail::fail(at + ", more than the limit of " + std::to_string(limits.max_side) + " on a side");
  const std::uint64_t pixels = uw * uh;  // both below 2^32: no overflow
  if (pixels > limits.max_pixels)
    detail::fail(at + ", more than the limit of " + std::to_string(limits.max_pixels) + " pixels");
  if (pixels > limits.max_bytes / sizeof(vec3)) {
    detail::fail(at + " (" + std::to_string((pixels >> 8) * sizeof(vec3) >> 12) + " MiB as floats), more than the limit of " +
                 std::to_string(limits.max_bytes >> 20) + " MiB");
  }
}

bool is_radiance_hdr(const unsigned char* data, std::size_t size) {
  auto starts = [&](std::string_view s) { return size >= s.size() && std::equal(s.begin(), s.end(), data); };
  return starts("#?RADIANCE\n") || starts("#?RGBE\n");
}

namespace {

// Radiance RGBE (.hdr): the header's lines up to an empty one (FORMAT=32-bit_rle_rgbe or none), the
// resolution "-Y height +X width", then each scanline flat (4 bytes a pixel) or, for widths 8 ..
// 32767, run-length encoded by channel (2, 2, width as two bytes, then per channel runs: a count
// past 128 repeats the next byte count - 128 times, a count up to 128 is followed by that many
// bytes). A pixel (r, g, b, e) is (r, g, b) 2^(e - 136), 0 where e is 0 (as stb_image reads it).
struct hdr_header {
  std::uint64_t width = 0, height = 0;
  std::size_t pixels_at = 0;  // where the scanlines begin
};

hdr_header parse_hdr_header(const unsigned char* data, std::size_t size, const std::string& at, const std::string& what) {
  std::size_t i = 0;
  auto line = [&]() {
    std::string out;
    while (i < size && data[i] != '\n') {
      if (out.size() > 1024) detail::fail(at + "the " + what + "'s .hdr header has a line over 1024 bytes");
      out += static_cast<char>(data[i++]);
    }
    if (i >= size) detail::fail(at + "the " + what + "'s .hdr header ends before its pixels");
    ++i;
    return out;
  };
  line();  // #?RADIANCE
  for (std::string l; !(l = line()).empty();) {
    if (l.rfind("FORMAT=", 0) == 0 && l != "FORMAT=32-bit_rle_rgbe")
      detail::fail(at + "the " + what + " is a .hdr of " + detail::in_quotes(l) + " (sieve reads FORMAT=32-bit_rle_rgbe)");
  }
  const std::string res = line();
  unsigned long long h = 0, w = 0;
  char tail = 0;
  if (std::sscanf(res.c_str(), "-Y %llu +X %llu%c", &h, &w, &tail) != 2 || h == 0 || w == 0) {
    detail::fail(at + "the " + what + "'s .hdr resolution " + detail::in_quotes(res) + " is not \"-Y height +X width\"");
  }
  return {w, h, i};
}

void decode_hdr(const unsigned char* data, std::size_t size, const hdr_header& hd, const std::string& at,
                const std::string& what, image_rgb& out) {
  std::size_t i = hd.pixels_at;
  const std::size_t w = hd.width;
  std::vector<unsigned char> line(4 * w);  // channel-major for run-length scanlines
  auto truncated = [&]() { detail::fail(at + "the " + what + " (.hdr) ends inside its pixels"); };
  for (std::size_t y = 0; y < hd.height; ++y) {
    vec3* row = out.pixels.data() + y * w;
    const bool rle = w >= 8 && w < 32768 && i + 4 <= size && data[i] == 2 && data[i + 1] == 2 && !(data[i + 2] & 0x80);
    if (rle) {
      if ((std::size_t{data[i + 2]} << 8 | data[i + 3]) != w)
        detail::fail(at + "the " + what + " (.hdr) has a scanline of another width than " + std::to_string(w));
      i += 4;
      for (std::size_t c = 0; c < 4; ++c) {
        for (std::size_t x = 0; x < w;) {
          if (i >= size) truncated();
          std::size_t count = data[i++];
          const bool run = count > 128;
          if (run) count -= 128;
          if (count == 0 || x + count > w)
            detail::fail(at + "the " + what + " (.hdr) has a corrupt run-length scanline (row " + std::to_string(y) +
                         ": a run of " + std::to_string(count) + " where " + std::to_string(w - x) + " pixels are left)");
          if (i + (run ? 1 : count) > size) truncated();
          for (std::size_t k = 0; k < count; ++k) line[c * w + x + k] = run ? data[i] : data[i + k];
          i += run ? 1 : count;
          x += count;
        }
      }
      for (std::size_t x = 0; x < w; ++x) {
        const unsigned char e = line[3 * w + x];
        const float f = e ? std::ldexp(1.0f, int{e} - 136) : 0.0f;
        row[x] = {line[x] * f, line[w + x] * f, line[2 * w + x] * f};
      }
    } else {
      if (i + 4 * w > size) truncated();
      for (std::size_t x = 0; x < w; ++x, i += 4) {
        const unsigned char e = data[i + 3];
        const float f = e ? std::ldexp(1.0f, int{e} - 136) : 0.0f;
        row[x] = {data[i] * f, data[i + 1] * f, data[i + 2] * f};
      }
    }
  }
}

}  // namespace

image_rgb decode_image(const unsigned char* data, std::size_t size, const std::string& name, const std::string& what,
                       const image_limits& limits) {
  const std::string at = name + ": ";
  if (size > static_cast<std::size_t>(INT_MAX)) detail::fail(at + "the " + what + " file is too large to decode");
  const int bytes = static_cast<int>(size);
  auto check_dimensions = [&](std::uint64_t uw, std::uint64_t uh) { check_image_size(uw, uh, name, what, limits); };
  // A PNG's size from its header first: stb_image refuses images past 2^30 bytes with a reason
  // that its other decoders' attempts then overwrite.
  static const unsigned char png_start[16] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
  if (size >= 24 && std::equal(png_start, png_start + 16, data)) {
    auto be32 = [&](std::size_t i) {
      return std::uint64_t{data[i]} << 24 | std::uint64_t{data[i + 1]} << 16 | std::uint64_t{data[i + 2]} << 8 | data[i + 3];
    };
    check_dimensions(be32(16), be32(20));
  }
  if (is_radiance_hdr(data, size)) {
    const hdr_header hd = parse_hdr_header(data, size, at, what);
    check_dimensions(hd.width, hd.height);
    image_rgb out;
    out.width = static_cast<std::uint32_t>(hd.width);
    out.height = static_cast<std::uint32_t>(hd.height);
    out.pixels.resize(hd.width * hd.height);
    decode_hdr(data, size, hd, at, what, out);
    check_finite(out, name, what);
    return out;
  }
  int w = 0, h = 0, channels = 0;
  if (!stbi_info_from_memory(data, bytes, &w, &h, &channels)) {
    detail::fail(at + "cannot read the " + what + ": " + stbi_failure_reason() +
                 " (sieve reads PNG and Radiance .hdr images)");
  }
  if (w <= 0 || h <= 0) detail::fail(at + "the " + what + " has no pixels");
  const auto uw = static_cast<std::uint64_t>(w), uh = static_cast<std::uint64_t>(h);
  check_dimensions(uw, uh);

  image_rgb out;
  out.width = static_cast<std::uint32_t>(w);
  out.height = static_cast<std::uint32_t>(h);
  out.pixels.resize(uw * uh);
  int dw = 0, dh = 0, dc = 0;
  auto check_size = [&](const void* p) {
    if (!p) detail::fail(at + "cannot decode the " + what + ": " + stbi_failure_reason());
    if (dw != w || dh != h) detail::fail(at + "the " + what + " decodes to a size other than its header's");
  };
  if (stbi_is_16_bit_from_memory(data, bytes)) {
    const std::unique_ptr<stbi_us, void (*)(void*)> p(stbi_load_16_from_memory(data, bytes, &dw, &dh, &dc, 3),
                                                      stbi_image_free);
    check_size(p.get());
    for (std::size_t i = 0; i < out.pixels.size(); ++i) {
      const stbi_us* q = p.get() + 3 * i;
      out.pixels[i] = {srgb_to_linear(q[0] / 65535.0f), srgb_to_linear(q[1] / 65535.0f), srgb_to_linear(q[2] / 65535.0f)};
    }
  } else {
    const std::unique_ptr<stbi_uc, void (*)(void*)> p(stbi_load_from_memory(data, bytes, &dw, &dh, &dc, 3), stbi_image_free);
    check_size(p.get());
    float table[256];
    for (int i = 0; i < 256; ++i) table[i] = srgb_to_linear(static_cast<float>(i) / 255.0f);
    for (std::size_t i = 0; i < out.pixels.size(); ++i) {
      const stbi_uc* q = p.get() + 3 * i;
      out.pixels[i] = {table[q[0]], table[q[1]], table[q[2]]};
    }
  }
  check_finite(out, name, what);
  return out;
}

image_rgb read_image(const std::filesystem::path& path, const std::string& what, const image_limits& limits) {
  detail::input_file file(path, what);
  const std::vector<unsigned char> bytes = file.bytes(limits.max_bytes);
  return decode_image(bytes.data(), bytes.size(), path.string(), what, limits);
}

}  // namespace sieve::render
