// JPEG (baseline and progressive, grey or colour) through libjpeg-turbo, from memory. The header is
// read first and the image refused past the limits before a scanline is decoded; libjpeg's errors
// and warnings leave by longjmp to one place here and become one line naming the file. The texels
// are kept as decoded (8-bit sRGB, grey or RGB); a JPEG has no alpha channel, so as an opacity its
// first channel is read and as an alpha it is opaque throughout (image_use).
#include "image_decoders.hpp"

#include "input_file.hpp"

#include <csetjmp>
#include <cstdio>
#include <jpeglib.h>

namespace sieve::render::detail {
namespace {

struct jpeg_failure {
  jpeg_error_mgr mgr;  // first: libjpeg's pointer to it is a pointer to this
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  const char* step = "read";  // "read" while the header is read, then "decode"
};

extern "C" void on_jpeg_error(j_common_ptr c) {
  auto* f = reinterpret_cast<jpeg_failure*>(c->err);
  (*c->err->format_message)(c, f->message);
  std::longjmp(f->jump, 1);
}
// Traces are not printed; a warning (msg_level -1: "Premature end of JPEG file", corrupt data)
// fails the file as an error does: a decoder that goes on past one makes grey or made-up texels.
extern "C" void on_jpeg_message(j_common_ptr c, int msg_level) {
  if (msg_level < 0) on_jpeg_error(c);
}

// jpeg_destroy_decompress at every way out, a thrown error's included.
struct decompressor {
  jpeg_decompress_struct info{};
  ~decompressor() { jpeg_destroy_decompress(&info); }
};

}  // namespace

texel_image decode_jpeg(const image_source& src) {
  const std::string at = src.name + ": ";
  texel_image out;
  decompressor d;
  jpeg_failure failure{};
  d.info.err = jpeg_std_error(&failure.mgr);
  failure.mgr.error_exit = on_jpeg_error;
  failure.mgr.emit_message = on_jpeg_message;
  if (setjmp(failure.jump)) fail(at + "cannot " + failure.step + " the " + src.what + ": " + failure.message);
  jpeg_create_decompress(&d.info);
  jpeg_mem_src(&d.info, src.data, static_cast<unsigned long>(src.size));
  jpeg_read_header(&d.info, TRUE);
  check_image_size(d.info.image_width, d.info.image_height, src.name, src.what, src.limits);
  const bool grey = d.info.jpeg_color_space == JCS_GRAYSCALE;
  d.info.out_color_space = grey ? JCS_GRAYSCALE : JCS_RGB;
  failure.step = "decode";
  jpeg_start_decompress(&d.info);
  const unsigned channels = static_cast<unsigned>(d.info.output_components);
  if (channels != 1 && channels != 3) fail(at + "the " + src.what + " decodes to " + std::to_string(channels) + " channels");
  out.width = d.info.output_width;
  out.height = d.info.output_height;
  out.channels = static_cast<std::uint8_t>(channels);
  out.format = texel_format::unorm8;
  out.srgb = true;
  const std::size_t row = std::size_t{out.width} * channels;  // the decoder's rows are texel_image's
  out.bytes.assign(row * out.height, 0);
  while (d.info.output_scanline < d.info.output_height) {
    JSAMPROW rows[1] = {out.bytes.data() + d.info.output_scanline * row};
    jpeg_read_scanlines(&d.info, rows, 1);
  }
  jpeg_finish_decompress(&d.info);
  return out;
}

}  // namespace sieve::render::detail
