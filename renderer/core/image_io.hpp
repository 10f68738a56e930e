// Writing images and reports without ever leaving a half-written file in place: each writer writes a
// temporary file beside the target and renames it over the target only when it is complete.
#pragma once

#include "math.hpp"

#include <filesystem>
#include <functional>
#include <span>
#include <string_view>

namespace sieve::render {

// Creates the parent folders, calls write(temporary path) and renames the temporary over `path`; the temporary is removed when
// write throws. Throws sieve::error naming `path` when the rename fails.
void write_atomically(const std::filesystem::path& path, const std::function<void(const std::filesystem::path&)>& write);

// Text (a JSON report, a CSV) to `path`, atomically.
void write_text_file(const std::filesystem::path& path, std::string_view text);

// Linear RGB pixels, row 0 at the top, width * height of them.
// PNG: 8-bit sRGB (the sRGB transfer curve, values clamped to [0, 1]). EXR: 32-bit float, linear.
// Throw sieve::error naming the file when it cannot be written.
void write_png(const std::filesystem::path& path, std::uint32_t width, std::uint32_t height, std::span<const vec3> rgb);
void write_exr(const std::filesystem::path& path, std::uint32_t width, std::uint32_t height, std::span<const vec3> rgb);

// The sRGB encoding of a linear value in [0, 1] (clamped), as an 8-bit code.
std::uint8_t srgb8(float linear);

}  // namespace sieve::render
