// An image file's header, read by sieve before any decoder sees the file: the format told from the
// signature (TGA, which has none, from the name), the size and the samples a pixel checked against
// the limits, and what the decoders are known to mishandle refused with one line naming the file:
//   TGA   a colour map that does not start at entry 0, or an index past the map (OpenImageIO 2.4
//         offsets each index by the first entry and reads past the map, crashing on 16-bit
//         indices: docs/upstream/openimageio-tga-colormap.md); pixel data cut off by the file's end
//   JPEG  more than max_jpeg_scans scans (libjpeg decodes every scan over the whole image: a small
//         progressive file of repeated scans costs minutes)
//   TIFF  samples a pixel and tiles whose decoded bytes pass the limit (the decoder allocates them
//         all, whichever channels are asked for)
//   all   width and height past the limits; the samples of the decoded image past the byte limit
// Internal to the image readers (image_decode_*.cpp).
#pragma once

#include "image_file.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace sieve::render::detail {

enum class image_kind : std::uint8_t { unknown, png, jpeg, tga, tiff, exr, hdr };

// The most scans a JPEG file may hold: a progressive file has about 10; libjpeg-turbo's own tools
// and fuzzers stop at 500 (djpeg -maxscans).
constexpr std::uint32_t max_jpeg_scans = 500;

// What the header says, where the format says it (0: not stated or not read).
struct image_header {
  image_kind kind = image_kind::unknown;
  std::uint64_t width = 0, height = 0;
  std::uint32_t samples = 0;  // channels a pixel
  std::uint32_t scans = 0;    // JPEG
};

// The format of `data`: from its signature, else TGA where `name` ends in .tga; unknown otherwise.
image_kind sniff_image(const unsigned char* data, std::size_t size, const std::string& name);

// The header of `data` (of `kind`) read and checked against `limits`: throws sieve::error naming
// `name` (the `what` it is: "texture", "environment map") for the cases listed above. Reads only
// within `size`; a header cut short is left for the decoder to report.
image_header check_image_header(const unsigned char* data, std::size_t size, image_kind kind, const std::string& name,
                                const std::string& what, const image_limits& limits);

// Throws sieve::error naming `name` where width x height pixels of `samples` samples of
// `sample_bytes` bytes each pass `limits.max_bytes` (what a decoder allocates to hold the image).
void check_image_samples(std::uint64_t width, std::uint64_t height, std::uint64_t samples, std::uint64_t sample_bytes,
                         const std::string& name, const std::string& what, const image_limits& limits);

}  // namespace sieve::render::detail
