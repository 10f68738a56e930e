// Reading HDR environment images (environment_map.hpp).
#include "environment_map.hpp"

#include "../core/image_io.hpp"

#include <sieve/compaction/error.hpp>

#include <tinyexr.h>


#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <vector>

namespace sieve::render {
namespace {

[[noreturn]] void fail(const std::string& name, const std::string& why) { throw sieve::error(name + ": " + why); }

void check_size(const std::string& name, std::int64_t w, std::int64_t h, std::uint64_t max_texels) {
  if (w <= 0 || h <= 0) fail(name, "image of " + std::to_string(w) + " x " + std::to_string(h) + " texels");
  if (static_cast<std::uint64_t>(w) * static_cast<std::uint64_t>(h) > max_texels)
    fail(name, std::to_string(w) + " x " + std::to_string(h) + " texels is more than the limit of " +
                   std::to_string(max_texels) + " texels");
}

std::string exr_message(int code, const char* err) {
  std::string why = err ? err : "error " + std::to_string(code);
  if (err) FreeEXRErrorMessage(err);
  while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
  return why;
}

// tinyexr's header and image, freed whatever happens: the header also after a failed parse (what
// it read before the fault), the image only once loaded (a failed load frees it itself).
struct exr_guard {
  EXRHeader header;
  EXRImage image;
  bool loaded = false;
  exr_guard() {
    InitEXRHeader(&header);
    InitEXRImage(&image);
  }
  ~exr_guard() {
    if (loaded) FreeEXRImage(&image);
    FreeEXRHeader(&header);
  }
  exr_guard(const exr_guard&) = delete;
  exr_guard& operator=(const exr_guard&) = delete;
};

// Through tinyexr's lower-level calls (the header parsed once, its size checked before any pixel
// is decoded, channels found by name).
rgb_image decode_exr(const std::string& name, std::string_view bytes, std::uint64_t max_texels) {
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  EXRVersion version;
  if (int rc = ParseEXRVersionFromMemory(&version, data, bytes.size()); rc != TINYEXR_SUCCESS)
    fail(name, "not a readable EXR file (version: error " + std::to_string(rc) + ")");
  if (version.multipart || version.non_image) fail(name, "multi-part and deep EXR files are not supported");
  if (version.tiled) fail(name, "tiled EXR files are not supported (write it with scanlines)");
  exr_guard exr;
  const char* err = nullptr;
  if (int rc = ParseEXRHeaderFromMemory(&exr.header, &version, data, bytes.size(), &err); rc != TINYEXR_SUCCESS)
    fail(name, "malformed EXR header: " + exr_message(rc, err));
  const EXRHeader& h = exr.header;
  if (h.tiled) fail(name, "tiled EXR files are not supported (write it with scanlines)");
  const std::int64_t w = std::int64_t{h.data_window.max_x} - h.data_window.min_x + 1;
  const std::int64_t ht = std::int64_t{h.data_window.max_y} - h.data_window.min_y + 1;
  check_size(name, w, ht, max_texels);
  int r = -1, g = -1, b = -1, y = -1;
  for (int c = 0; c < h.num_channels; ++c) {
    const std::string_view n = h.channels[c].name;
    if (n == "R") r = c;
    else if (n == "G") g = c;
    else if (n == "B") b = c;
    else if (n == "Y") y = c;
    exr.header.requested_pixel_types[c] = TINYEXR_PIXELTYPE_FLOAT;
  }
  if (!(r >= 0 && g >= 0 && b >= 0) && y < 0) fail(name, "the EXR image has neither R, G, B nor Y channels");
  // A chunk that fails to decode makes tinyexr 1.0.1 free the image itself (without clearing its
  // pointers: hence `loaded`), but only the planes of image.num_channels, which it sets after
  // decoding: set before, so that a failed load frees every plane (fuzz_envmap found the leak).
  exr.image.num_channels = h.num_channels;
  if (int rc = LoadEXRImageFromMemory(&exr.image, &exr.header, data, bytes.size(), &err); rc != TINYEXR_SUCCESS)
    fail(name, "cannot decode the EXR image: " + exr_message(rc, err));
  exr.loaded = true;
  const EXRImage& im = exr.image;
  if (im.width != w || im.height != ht || !im.images) fail(name, "EXR data window and decoded image differ");
  const bool rgb = r >= 0 && g >= 0 && b >= 0;  // else grey from Y
  const auto plane = [&](int c) { return reinterpret_cast<const float*>(im.images[c]); };
  const float *pr = plane(rgb ? r : y), *pg = plane(rgb ? g : y), *pb = plane(rgb ? b : y);
  rgb_image out;
  out.width = static_cast<std::uint32_t>(w);
  out.height = static_cast<std::uint32_t>(ht);
  out.texels.resize(std::size_t{out.width} * out.height);
  for (std::size_t i = 0; i < out.texels.size(); ++i) out.texels[i] = {pr[i], pg[i], pb[i]};
  return out;
}

// Radiance HDR (RGBE), read here rather than by stb_image, whose run-length decoder loops forever on
// a run of length 0 or at the end of a truncated file (fuzz_envmap found it): header lines up to an
// empty one (FORMAT=32-bit_rle_rgbe), the resolution "-Y height +X width" (rows top to bottom), then
// per scanline either the run-length form (2, 2, width; each channel in runs) or flat RGBE texels.
rgb_image decode_hdr(const std::string& name, std::string_view bytes, std::uint64_t max_texels) {
  std::size_t pos = 0;
  auto next_line = [&]() -> std::string_view {
    const std::size_t end = bytes.find('\n', pos);
    if (end == std::string_view::npos) fail(name, "malformed Radiance HDR header: it does not end");
    const std::string_view l = bytes.substr(pos, end - pos);
    pos = end + 1;
    return l;
  };
  next_line();  // #?RADIANCE or #?RGBE (the caller checked)
  bool rgbe = false;
  for (std::string_view l = next_line(); !l.empty(); l = next_line()) {
    if (l.substr(0, 7) != "FORMAT=") continue;
    if (l != "FORMAT=32-bit_rle_rgbe") fail(name, "Radiance HDR format '" + std::string(l.substr(7, 40)) + "' is not 32-bit_rle_rgbe");
    rgbe = true;
  }
  if (!rgbe) fail(name, "malformed Radiance HDR header: no FORMAT=32-bit_rle_rgbe line");
  const std::string_view res = next_line();
  std::int64_t w = 0, h = 0;
  {
    auto number = [&](std::string_view s, std::int64_t& v) {
      const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      return ec == std::errc() && p == s.data() + s.size();
    };
    const std::size_t x = res.find(" +X ");
    if (res.substr(0, 3) != "-Y " || x == std::string_view::npos || !number(res.substr(3, x - 3), h) ||
        !number(res.substr(x + 4), w))
      fail(name, "malformed Radiance HDR header: the size line must be '-Y height +X width'");
  }
  check_size(name, w, h, max_texels);
  rgb_image out;
  out.width = static_cast<std::uint32_t>(w);
  out.height = static_cast<std::uint32_t>(h);
  out.texels.resize(std::size_t{out.width} * out.height);
  const auto* d = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::size_t width = out.width;
  std::vector<unsigned char> line(width * 4);
  for (std::size_t y = 0; y < out.height; ++y) {
    auto need = [&](std::size_t n) {
      if (bytes.size() - pos < n)
        fail(name, "truncated Radiance HDR image: the data ends in scanline " + std::to_string(y) + " of " +
                       std::to_string(out.height));
    };
    const bool rle = width >= 8 && width < 32768 && bytes.size() - pos >= 4 && d[pos] == 2 && d[pos + 1] == 2 &&
                     !(d[pos + 2] & 0x80);
    if (rle) {
      if ((std::size_t{d[pos + 2]} << 8 | d[pos + 3]) != width)
        fail(name, "Radiance HDR scanline " + std::to_string(y) + " is not " + std::to_string(width) + " texels long");
      pos += 4;
      for (std::size_t k = 0; k < 4; ++k)
        for (std::size_t i = 0; i < width;) {
          need(1);
          std::size_t count = d[pos++];
          const bool run = count > 128;
          if (run) count -= 128;
          if (count == 0 || count > width - i)
            fail(name, "malformed Radiance HDR data: a run of " + std::to_string(count) + " in scanline " +
                           std::to_string(y) + " where " + std::to_string(width - i) + " texels are left");
          need(run ? 1 : count);
          for (std::size_t z = 0; z < count; ++z, ++i) line[i * 4 + k] = run ? d[pos] : d[pos + z];
          pos += run ? 1 : count;
        }
    } else {
      need(width * 4);
      std::memcpy(line.data(), d + pos, width * 4);
      pos += width * 4;
    }
    for (std::size_t x = 0; x < width; ++x) {
      const unsigned char* t = &line[x * 4];
      const float f = t[3] ? std::ldexp(1.0f, int{t[3]} - 136) : 0.0f;
      out.texels[y * width + x] = {t[0] * f, t[1] * f, t[2] * f};
    }
  }
  return out;
}

std::string number(float v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

}  // namespace

rgb_image decode_environment_image(const std::string& name, std::string_view bytes, std::uint64_t max_texels) {
  rgb_image image;
  const bool exr = bytes.size() >= 4 && std::memcmp(bytes.data(), "\x76\x2f\x31\x01", 4) == 0;
  const bool hdr = bytes.substr(0, 10) == "#?RADIANCE" || bytes.substr(0, 6) == "#?RGBE";
  if (exr) image = decode_exr(name, bytes, max_texels);
  else if (hdr) image = decode_hdr(name, bytes, max_texels);
  else fail(name, "not an EXR or Radiance HDR image (an environment map must be one)");
  for (std::size_t i = 0; i < image.texels.size(); ++i) {
    const vec3 t = image.texels[i];
    for (const float c : {t.x, t.y, t.z}) {
      if (std::isfinite(c) && c >= 0) continue;
      fail(name, "texel (" + std::to_string(i % image.width) + ", " + std::to_string(i / image.width) + ") is " +
                     number(c) + " (radiance must be finite and >= 0)");
    }
  }
  return image;
}

void write_environment_image(const std::filesystem::path& path, const rgb_image& image) {
  write_exr(path, image.width, image.height, image.texels);
}

}  // namespace sieve::render
