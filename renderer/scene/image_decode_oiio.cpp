// decode_image (image_file.hpp) through OpenImageIO. The format is told from the file's
// signature here (TGA, which has none, from the name) and only that format's reader is asked, from
// memory (an IOProxy over the bytes sieve read itself): no other reader of OpenImageIO's many is
// tried on untrusted bytes. The header is read first and the image refused past the limits before
// a pixel is decoded.
#include "image_file.hpp"

#include "image_header.hpp"
#include "input_file.hpp"

#include <OpenImageIO/filesystem.h>
#include <OpenImageIO/imageio.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string_view>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIEVE_ADDRESS_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(SIEVE_ADDRESS_SANITIZER)
// OpenImageIO's readers leave libpng's and libjpeg's errors by longjmp, past the destructors of what
// they had allocated (an error message, found by fuzz_image on a corrupt 16-bit PNG): a leak inside
// the library, which the sanitizer builds report at exit. Only leaks allocated from within
// libOpenImageIO are suppressed; sieve's own are still findings.
extern "C" const char* __lsan_default_suppressions() { return "leak:libOpenImageIO.so\n"; }
#endif

namespace sieve::render {

namespace {

// The name OpenImageIO picks its reader by; empty: not a format sieve reads.
std::string format_file_name(detail::image_kind kind) {
  using detail::image_kind;
  switch (kind) {
    case image_kind::png: return "image.png";
    case image_kind::jpeg: return "image.jpg";
    case image_kind::tga: return "image.tga";
    case image_kind::tiff: return "image.tif";
    case image_kind::exr: return "image.exr";
    case image_kind::hdr: return "image.hdr";
    case image_kind::unknown: break;
  }
  return {};
}

// OpenImageIO's message: its first line (the rest repeats it in the words of the library below).
std::string one_line(const std::string& why) {
  std::string first = why.substr(0, why.find('\n'));
  while (!first.empty() && first.back() == ' ') first.pop_back();
  return first.empty() ? "no reason given" : first;
}

// libpng and libjpeg also print their complaints on stderr, besides the error OpenImageIO returns
// (which the one error line reports): stderr is silenced while a file is decoded (the loader decodes
// on one thread, before a render prints anything). Not in the sanitizer builds, whose reports of a
// fault inside a decoder go to stderr.
class quiet_stderr {
 public:
  quiet_stderr() {
#if !defined(__SANITIZE_ADDRESS__) && !defined(SIEVE_ADDRESS_SANITIZER)
    std::fflush(stderr);
    saved_ = ::dup(2);
    const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (saved_ >= 0 && null >= 0) ::dup2(null, 2);
    if (null >= 0) ::close(null);
#endif
  }
  ~quiet_stderr() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
  }
  quiet_stderr(const quiet_stderr&) = delete;
  quiet_stderr& operator=(const quiet_stderr&) = delete;

 private:
  int saved_ = -1;
};

bool linear_format(const OIIO::ImageSpec& spec) {
  const OIIO::TypeDesc f = spec.format;
  return f.basetype == OIIO::TypeDesc::FLOAT || f.basetype == OIIO::TypeDesc::HALF || f.basetype == OIIO::TypeDesc::DOUBLE;
}

}  // namespace

image_rgb decode_image(const unsigned char* data, std::size_t size, const std::string& name, const std::string& what,
                       const image_limits& limits, image_use use) {
  static const bool configured = [] {
    OIIO::attribute("threads", 1);          // decoding runs inside the loader's own threads
    OIIO::attribute("try_all_readers", 0);  // only the reader of the format named
    return true;
  }();
  (void)configured;
  const std::string at = name + ": ";
  const detail::image_kind kind = detail::sniff_image(data, size, name);
  const std::string file_name = format_file_name(kind);
  if (file_name.empty()) {
    detail::fail(at + "the " + what + " is not an image sieve reads (PNG, JPEG, TGA, TIFF, OpenEXR, Radiance .hdr)");
  }
  // The header read by sieve first: sizes, samples, and what the readers below mishandle (image_header.hpp).
  detail::check_image_header(data, size, kind, name, what, limits);
  OIIO::Filesystem::IOMemReader memory(const_cast<unsigned char*>(data), size);
  // Colour as stored, not multiplied by alpha (OpenImageIO's default for PNG and TGA): a cut-out's
  // texels keep their colour where the opacity map hides them.
  OIIO::ImageSpec config;
  config.attribute("oiio:UnassociatedAlpha", 1);
  void* proxy = &memory;  // with a configuration, its own "oiio:ioproxy" is what open() reads from
  config.attribute("oiio:ioproxy", OIIO::TypeDesc::PTR, &proxy);
  const quiet_stderr quiet;
  const std::unique_ptr<OIIO::ImageInput> in = OIIO::ImageInput::open(file_name, &config, &memory);
  if (!in) detail::fail(at + "cannot read the " + what + ": " + one_line(OIIO::geterror()));
  const OIIO::ImageSpec& spec = in->spec();
  if (spec.deep || spec.depth > 1) detail::fail(at + "the " + what + " is a deep or volume image");
  if (spec.width <= 0 || spec.height <= 0 || spec.nchannels <= 0) detail::fail(at + "the " + what + " has no pixels");
  check_image_size(static_cast<std::uint64_t>(spec.width), static_cast<std::uint64_t>(spec.height), name, what, limits);
  if (spec.nchannels > 4) {
    detail::check_image_samples(static_cast<std::uint64_t>(spec.width), static_cast<std::uint64_t>(spec.height),
                                static_cast<std::uint64_t>(spec.nchannels), sizeof(float), name, what, limits);
  }

  int first = 0, count = std::min(spec.nchannels, 3);
  if (spec.nchannels == 2) count = 1;  // grey and alpha
  const bool has_alpha = (spec.alpha_channel >= 0 && spec.alpha_channel < spec.nchannels) || spec.nchannels == 2 ||
                         spec.nchannels == 4;
  if (use == image_use::alpha && !has_alpha) return image_rgb{1, 1, {vec3{1, 1, 1}}};  // opaque throughout: one texel
  if (use == image_use::opacity || use == image_use::alpha) {
    first = spec.alpha_channel >= 0 && spec.alpha_channel < spec.nchannels ? spec.alpha_channel
            : spec.nchannels == 2 || spec.nchannels == 4                   ? spec.nchannels - 1
                                                                          : 0;
    count = 1;
  }
  image_rgb out;
  out.width = static_cast<std::uint32_t>(spec.width);
  out.height = static_cast<std::uint32_t>(spec.height);
  out.pixels.assign(std::size_t{out.width} * out.height, vec3{0, 0, 0});
  bool read = false;
  try {
    read = in->read_image(0, 0, first, first + count, OIIO::TypeDesc::FLOAT, out.pixels.data(), sizeof(vec3));
  } catch (const std::bad_alloc&) {
    detail::fail(at + "cannot decode the " + what + ": out of memory");
  }
  // A reader may return true and keep its library's error (a truncated or corrupt JPEG or TIFF
  // decoded as grey or zero texels): every error it kept fails the file.
  if (const std::string why = in->geterror(); !read || !why.empty())
    detail::fail(at + "cannot decode the " + what + ": " + one_line(why));
  const bool decode_srgb = use == image_use::color && !linear_format(spec);
  for (vec3& p : out.pixels) {
    if (count == 1) p.y = p.z = p.x;
    if (decode_srgb) p = {srgb_to_linear(p.x), srgb_to_linear(p.y), srgb_to_linear(p.z)};
  }
  check_finite(out, name, what);
  return out;
}

}  // namespace sieve::render
