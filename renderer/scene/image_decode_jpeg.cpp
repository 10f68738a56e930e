// JPEG (baseline and progressive, grey or colour) through libjpeg-turbo, from memory. The header is
// read first and the image refused past the limits before a scanline is decoded; libjpeg's errors
// and warnings leave by longjmp to one place here and become one line naming the file. A JPEG has
// no alpha channel: as an opacity its first channel is read, as an alpha it is opaque throughout.
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

image_rgb decode_jpeg(const image_source& src) {
  const std::string at = src.name + ": ";
  if (src.use == image_use::alpha) return image_rgb{1, 1, {vec3{1, 1, 1}}};  // no alpha channel: opaque throughout
  image_rgb out;
  std::vector<unsigned char> row;
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
  out.width = d.info.output_width;
  out.height = d.info.output_height;
  out.pixels.assign(std::size_t{out.width} * out.height, vec3{0, 0, 0});
  row.resize(std::size_t{out.width} * channels);
  const int count = (src.use == image_use::color || src.use == image_use::data) && !grey ? 3 : 1;  // data keeps three
  while (d.info.output_scanline < d.info.output_height) {
    const std::size_t y = d.info.output_scanline;
    JSAMPROW rows[1] = {row.data()};
    jpeg_read_scanlines(&d.info, rows, 1);
    vec3* to = out.pixels.data() + y * out.width;
    for (std::size_t x = 0; x < out.width; ++x) {
      const unsigned char* c = row.data() + x * channels;
      to[x] = count == 3 ? vec3{c[0] / 255.0f, c[1] / 255.0f, c[2] / 255.0f} : vec3{c[0] / 255.0f, 0, 0};
    }
  }
  jpeg_finish_decompress(&d.info);
  finish_image(out, src, count, false);
  return out;
}

}  // namespace sieve::render::detail
