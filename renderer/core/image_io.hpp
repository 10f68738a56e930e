// Encoding images (PNG, EXR) and writing them, or text, through output_files (a temporary beside the
// target, renamed over it when complete): never a half-written file in place.
#pragma once

#include "math.hpp"

#include <filesystem>
#include <string>
#include <span>
#include <string_view>

namespace sieve::render {

// Text (a JSON report, a CSV) to `path`, atomically.
void write_text_file(const std::filesystem::path& path, std::string_view text);

// Linear RGB pixels, row 0 at the top, width * height of them.
// PNG: 8-bit sRGB (the sRGB transfer curve, values clamped to [0, 1]). EXR: 32-bit float, linear.
// Throw sieve::error naming the file when it cannot be written.
// encode_*: the file's bytes (`path` only names it in errors), for output_set::stage.
std::string encode_png(const std::filesystem::path& path, std::uint32_t width, std::uint32_t height, std::span<const vec3> rgb);
std::string encode_exr(const std::filesystem::path& path, std::uint32_t width, std::uint32_t height, std::span<const vec3> rgb);
void write_png(const std::filesystem::path& path, std::uint32_t width, std::uint32_t height, std::span<const vec3> rgb);
void write_exr(const std::filesystem::path& path, std::uint32_t width, std::uint32_t height, std::span<const vec3> rgb);

// The sRGB encoding of a linear value in [0, 1] (clamped), as an 8-bit code.
std::uint8_t srgb8(float linear);

}  // namespace sieve::render
