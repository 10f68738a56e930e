// The decoders decode_image (image_decode.cpp) hands an image to, by its format: PNG (stb_image's PNG
// decoder, image_decode_png.cpp) and JPEG (libjpeg-turbo, image_decode_jpeg.cpp) in every build; TGA,
// TIFF, OpenEXR and Radiance .hdr through the image module (image_module.hpp), loaded on first use.
#pragma once

#include "image_file.hpp"

#include <string>

namespace sieve::render::detail {

// What a decoder was given: the bytes, the names for messages, the limits and the use.
struct image_source {
  const unsigned char* data;
  std::size_t size;
  const std::string& name;  // the file (messages; a TGA's extension)
  const std::string& what;  // "texture", "environment map"
  const image_limits& limits;
  image_use use;
};

// A decoder's pixels in out.pixels as stored (colour channels in x, y, z, values in [0, 1] or,
// `linear`, as floats; one channel in x alone when `count` is 1) made the image decode_image
// returns: grey spread to all three, sRGB decoded to linear for colour, every value checked finite.
void finish_image(image_rgb& out, const image_source& src, int count, bool linear);

image_rgb decode_png(const image_source& src);
image_rgb decode_jpeg(const image_source& src);

}  // namespace sieve::render::detail
