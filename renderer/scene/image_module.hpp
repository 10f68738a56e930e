// The interface of the image module (libsieve_image_oiio.so, image_decode_oiio.cpp): OpenImageIO's
// readers for the formats sieve does not decode itself (TGA, TIFF, OpenEXR, Radiance .hdr), in a
// shared module that decode_image (image_decode.cpp) opens with dlopen the first time such a file
// is read. A process that reads no such file never loads OpenImageIO and its ~260 libraries.
// Built by the same compiler as the rest: the calls pass a std::string for the error.
#pragma once

#include <cstddef>
#include <string>

namespace sieve::render {

// What the module reports of an image once its header is read.
struct module_image_info {
  int width = 0, height = 0, channels = 0;
  int alpha_channel = -1;  // -1: none named
  bool deep = false;       // a deep or volume image (refused)
  bool linear = false;     // half, float or double samples (stored linear), else integers (sRGB)
  // The precision sieve keeps the samples at (texel_format's order): 0 8-bit, 1 16-bit, 2 half,
  // 3 float (32-bit integers and double are read as float).
  int format = 3;
};

// The module's three functions, by these names (extern "C"):
//   sieve_image_open(data, size, format_name, info, error): the reader of the format that
//     format_name's extension names ("image.tif") over the bytes in memory, its header read into
//     *info; null (and *error set) when it cannot be read.
//   sieve_image_read(image, first, count, format, pixels, stride, error): channels
//     [first, first + count) of every pixel at `format` (module_image_info::format's codes), pixel i
//     at pixels + i * stride bytes; false (and *error) on failure.
//   sieve_image_close(image).
using module_open_fn = void* (const unsigned char* data, std::size_t size, const char* format_name, module_image_info* info,
                               std::string* error);
using module_read_fn = bool(void* image, int first, int count, int format, void* pixels, std::size_t stride,
                            std::string* error);
using module_close_fn = void(void* image);

}  // namespace sieve::render
