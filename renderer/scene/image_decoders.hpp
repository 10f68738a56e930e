// The decoders decode_texels (image_decode.cpp) hands an image to, by its format: PNG (stb_image's PNG
// decoder, image_decode_png.cpp), JPEG (libjpeg-turbo, image_decode_jpeg.cpp) and OpenEXR (tinyexr,
// image_decode_exr.cpp) in every build; TGA, TIFF and Radiance .hdr through the image module
// (image_module.hpp), loaded on first use.
#pragma once

#include "image_file.hpp"

#include <string>

namespace sieve::render::detail {

// What a decoder was given: the bytes, the names for messages and the limits.
struct image_source {
  const unsigned char* data;
  std::size_t size;
  const std::string& name;  // the file (messages; a TGA's extension)
  const std::string& what;  // "texture", "environment map"
  const image_limits& limits;
};

// Each returns the image at the file's precision (texel_image: grey, grey and alpha, RGB or RGBA;
// PNG and JPEG 8 or 16 bit, sRGB; EXR half or float, linear).
texel_image decode_png(const image_source& src);
texel_image decode_jpeg(const image_source& src);
texel_image decode_exr(const image_source& src);

}  // namespace sieve::render::detail
