#include "image_io.hpp"

#include <sieve/compaction/error.hpp>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#include <stb/stb_image_write.h>
#include <tinyexr.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace sieve::render {

void write_atomically(const std::filesystem::path& path, const std::function<void(const std::filesystem::path&)>& write) {
  if (path.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);  // a failure shows when writing
  }
  std::filesystem::path tmp = path;
  tmp += ".tmp-" + std::to_string(::getpid());
  try {
    write(tmp);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw sieve::error(path.string() + ": cannot write: " + ec.message());
  }
}

namespace {

void write_bytes(const std::filesystem::path& tmp, const std::filesystem::path& shown, const void* data, std::size_t n) {
  std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
  if (!f) throw sieve::error(shown.string() + ": cannot open for writing");
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
  f.close();
  if (!f) throw sieve::error(shown.string() + ": write failed (disk full?)");
}

void check_size(const std::filesystem::path& path, std::uint32_t w, std::uint32_t h, std::size_t pixels) {
  if (w == 0 || h == 0 || std::size_t{w} * h != pixels)
    throw sieve::error(path.string() + ": image of " + std::to_string(w) + " x " + std::to_string(h) + " given " +
                       std::to_string(pixels) + " pixels");
}

}  // namespace

void write_text_file(const std::filesystem::path& path, std::string_view text) {
  write_atomically(path, [&](const std::filesystem::path& tmp) { write_bytes(tmp, path, text.data(), text.size()); });
}

std::uint8_t srgb8(float v) {
  if (!(v > 0)) return 0;  // also NaN
  if (v >= 1) return 255;
  const float s = v <= 0.0031308f ? 12.92f * v : 1.055f * std::pow(v, 1.0f / 2.4f) - 0.055f;
  return static_cast<std::uint8_t>(std::lround(s * 255.0f));
}

void write_png(const std::filesystem::path& path, std::uint32_t w, std::uint32_t h, std::span<const vec3> rgb) {
  check_size(path, w, h, rgb.size());
  std::vector<std::uint8_t> pixels(rgb.size() * 3);
  for (std::size_t i = 0; i < rgb.size(); ++i) {
    pixels[3 * i] = srgb8(rgb[i].x);
    pixels[3 * i + 1] = srgb8(rgb[i].y);
    pixels[3 * i + 2] = srgb8(rgb[i].z);
  }
  std::vector<unsigned char> png;
  auto append = [](void* context, void* data, int size) {
    auto* out = static_cast<std::vector<unsigned char>*>(context);
    out->insert(out->end(), static_cast<unsigned char*>(data), static_cast<unsigned char*>(data) + size);
  };
  if (!stbi_write_png_to_func(append, &png, static_cast<int>(w), static_cast<int>(h), 3, pixels.data(),
                              static_cast<int>(w * 3)))
    throw sieve::error(path.string() + ": PNG encoding failed");
  write_atomically(path, [&](const std::filesystem::path& tmp) { write_bytes(tmp, path, png.data(), png.size()); });
}

void write_exr(const std::filesystem::path& path, std::uint32_t w, std::uint32_t h, std::span<const vec3> rgb) {
  check_size(path, w, h, rgb.size());
  std::vector<float> data(rgb.size() * 3);
  for (std::size_t i = 0; i < rgb.size(); ++i) {
    data[3 * i] = rgb[i].x;
    data[3 * i + 1] = rgb[i].y;
    data[3 * i + 2] = rgb[i].z;
  }
  write_atomically(path, [&](const std::filesystem::path& tmp) {
    const char* err = nullptr;
    if (SaveEXR(data.data(), static_cast<int>(w), static_cast<int>(h), 3, 0, tmp.c_str(), &err) != TINYEXR_SUCCESS) {
      const std::string why = err ? err : "unknown error";
      if (err) FreeEXRErrorMessage(err);
      throw sieve::error(path.string() + ": EXR write failed: " + why);
    }
  });
}

}  // namespace sieve::render
