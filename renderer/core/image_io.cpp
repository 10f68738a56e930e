#include "image_io.hpp"

#include <sieve/compaction/error.hpp>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#include <stb/stb_image_write.h>
#include <tinyexr.h>

#include <output_files.hpp>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

namespace sieve::render {

namespace {

void check_size(const std::filesystem::path& path, std::uint32_t w, std::uint32_t h, std::size_t pixels) {
  if (w == 0 || h == 0 || std::size_t{w} * h != pixels)
    throw sieve::error(path.string() + ": image of " + std::to_string(w) + " x " + std::to_string(h) + " given " +
                       std::to_string(pixels) + " pixels");
}

}  // namespace

void write_text_file(const std::filesystem::path& path, std::string_view text) { report::write_file_atomically(path, text); }

std::uint8_t srgb8(float v) {
  if (!(v > 0)) return 0;  // also NaN
  if (v >= 1) return 255;
  const float s = v <= 0.0031308f ? 12.92f * v : 1.055f * std::pow(v, 1.0f / 2.4f) - 0.055f;
  return static_cast<std::uint8_t>(std::lround(s * 255.0f));
}

std::string encode_png(const std::filesystem::path& path, std::uint32_t w, std::uint32_t h, std::span<const vec3> rgb) {
  check_size(path, w, h, rgb.size());
  std::vector<std::uint8_t> pixels(rgb.size() * 3);
  for (std::size_t i = 0; i < rgb.size(); ++i) {
    pixels[3 * i] = srgb8(rgb[i].x);
    pixels[3 * i + 1] = srgb8(rgb[i].y);
    pixels[3 * i + 2] = srgb8(rgb[i].z);
  }
  std::string png;
  auto append = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<std::size_t>(size));
  };
  if (!stbi_write_png_to_func(append, &png, static_cast<int>(w), static_cast<int>(h), 3, pixels.data(),
                              static_cast<int>(w * 3)))
    throw sieve::error(path.string() + ": PNG encoding failed");
  return png;
}

std::string encode_exr(const std::filesystem::path& path, std::uint32_t w, std::uint32_t h, std::span<const vec3> rgb) {
  check_size(path, w, h, rgb.size());
  // Channels B, G, R (the order EXR viewers expect), one plane each, 32-bit float.
  std::vector<float> planes[3];
  for (int c = 0; c < 3; ++c) {
    planes[c].resize(rgb.size());
    for (std::size_t i = 0; i < rgb.size(); ++i) planes[c][i] = c == 0 ? rgb[i].z : c == 1 ? rgb[i].y : rgb[i].x;
  }
  float* plane_ptr[3] = {planes[0].data(), planes[1].data(), planes[2].data()};
  EXRImage image;
  InitEXRImage(&image);
  image.num_channels = 3;
  image.images = reinterpret_cast<unsigned char**>(plane_ptr);
  image.width = static_cast<int>(w);
  image.height = static_cast<int>(h);
  EXRHeader header;
  InitEXRHeader(&header);
  header.compression_type = w < 16 && h < 16 ? TINYEXR_COMPRESSIONTYPE_NONE : TINYEXR_COMPRESSIONTYPE_ZIP;
  EXRChannelInfo channels[3] = {};
  int types[3] = {TINYEXR_PIXELTYPE_FLOAT, TINYEXR_PIXELTYPE_FLOAT, TINYEXR_PIXELTYPE_FLOAT};
  for (int c = 0; c < 3; ++c) channels[c].name[0] = "BGR"[c];
  header.num_channels = 3;
  header.channels = channels;
  header.pixel_types = types;
  header.requested_pixel_types = types;
  unsigned char* memory = nullptr;
  const char* err = nullptr;
  const std::size_t n = SaveEXRImageToMemory(&image, &header, &memory, &err);
  if (n == 0) {
    const std::string why = err ? err : "unknown error";
    if (err) FreeEXRErrorMessage(err);
    throw sieve::error(path.string() + ": EXR encoding failed: " + why);
  }
  std::string exr(reinterpret_cast<const char*>(memory), n);
  std::free(memory);
  return exr;
}

void write_png(const std::filesystem::path& path, std::uint32_t w, std::uint32_t h, std::span<const vec3> rgb) {
  report::write_file_atomically(path, encode_png(path, w, h, rgb));
}

void write_exr(const std::filesystem::path& path, std::uint32_t w, std::uint32_t h, std::span<const vec3> rgb) {
  report::write_file_atomically(path, encode_exr(path, w, h, rgb));
}

}  // namespace sieve::render
