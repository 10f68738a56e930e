// decode_texels (image_file.hpp) through OpenImageIO. The format is told from the file's
// signature here (TGA, which has none, from the name) and only that format's reader is asked, from
// memory (an IOProxy over the bytes sieve read itself): no other reader of OpenImageIO's many is
// tried on untrusted bytes. The header is read first and the image refused past the limits before
// a pixel is decoded.
#include "image_file.hpp"

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

// The name OpenImageIO picks its reader by, from the file's signature; empty: not a format sieve reads.
std::string format_file_name(const unsigned char* data, std::size_t size, const std::string& name) {
  auto starts = [&](std::string_view s) {
    return size >= s.size() && std::equal(s.begin(), s.end(), data, [](char a, unsigned char b) {
             return static_cast<unsigned char>(a) == b;
           });
  };
  if (starts("\x89PNG\r\n\x1a\n")) return "image.png";
  if (starts("\xff\xd8\xff")) return "image.jpg";
  if (starts(std::string_view("II*\0", 4)) || starts(std::string_view("MM\0*", 4))) return "image.tif";
  if (starts("\x76\x2f\x31\x01")) return "image.exr";
  if (is_radiance_hdr(data, size)) return "image.hdr";
  std::string ext = std::filesystem::path(name).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".tga") return "image.tga";
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

// The stored precision sieve keeps for a file's format: 8 and 16 bit, half and float as they are;
// any other (32-bit integers, double) read as float.
texel_format format_of(const OIIO::ImageSpec& spec, OIIO::TypeDesc& read_as) {
  switch (spec.format.basetype) {
    case OIIO::TypeDesc::UINT8: read_as = OIIO::TypeDesc::UINT8; return texel_format::unorm8;
    case OIIO::TypeDesc::UINT16: read_as = OIIO::TypeDesc::UINT16; return texel_format::unorm16;
    case OIIO::TypeDesc::HALF: read_as = OIIO::TypeDesc::HALF; return texel_format::half;
    default: read_as = OIIO::TypeDesc::FLOAT; return texel_format::float32;
  }
}

}  // namespace

texel_image decode_texels(const unsigned char* data, std::size_t size, const std::string& name, const std::string& what,
                          const image_limits& limits) {
  static const bool configured = [] {
    OIIO::attribute("threads", 1);          // decoding runs inside the loader's own threads
    OIIO::attribute("try_all_readers", 0);  // only the reader of the format named
    return true;
  }();
  (void)configured;
  const std::string at = name + ": ";
  const std::string file_name = format_file_name(data, size, name);
  if (file_name.empty()) {
    detail::fail(at + "the " + what + " is not an image sieve reads (PNG, JPEG, TGA, TIFF, OpenEXR, Radiance .hdr)");
  }
  // A PNG's size straight from its IHDR chunk, before libpng checks the chunk (a file that claims
  // an absurd size is refused for that, whatever else is wrong with it).
  if (file_name == "image.png" && size >= 24) {
    auto be32 = [&](std::size_t i) {
      return std::uint64_t{data[i]} << 24 | std::uint64_t{data[i + 1]} << 16 | std::uint64_t{data[i + 2]} << 8 | data[i + 3];
    };
    check_image_size(be32(16), be32(20), name, what, limits);
  }
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

  // The colour channels (grey, or the first three) and the alpha channel where there is one, kept
  // in that order: 1 .. 4 channels.
  const int colour = spec.nchannels >= 3 ? 3 : 1;
  const int alpha = spec.alpha_channel >= 0 && spec.alpha_channel < spec.nchannels ? spec.alpha_channel
                    : spec.nchannels == 2 || spec.nchannels == 4                   ? spec.nchannels - 1
                                                                                  : -1;
  texel_image out;
  OIIO::TypeDesc read_as;
  out.format = format_of(spec, read_as);
  const auto base = spec.format.basetype;  // integer images hold sRGB colour, floating-point ones linear
  out.srgb = base != OIIO::TypeDesc::FLOAT && base != OIIO::TypeDesc::DOUBLE && base != OIIO::TypeDesc::HALF;
  out.width = static_cast<std::uint32_t>(spec.width);
  out.height = static_cast<std::uint32_t>(spec.height);
  out.channels = static_cast<std::uint8_t>(colour + (alpha >= 0 ? 1 : 0));
  const std::size_t cb = channel_bytes(out.format), pixel = out.channels * cb;
  out.bytes.assign(std::size_t{out.width} * out.height * pixel, 0);
  const bool together = alpha < 0 || alpha == colour;  // one contiguous range of channels
  auto read = [&](int first, int end, std::size_t offset) {
    if (!in->read_image(0, 0, first, end, read_as, out.bytes.data() + offset, static_cast<OIIO::stride_t>(pixel)))
      detail::fail(at + "cannot decode the " + what + ": " + one_line(in->geterror()));
  };
  read(0, together ? out.channels : colour, 0);
  if (!together) read(alpha, alpha + 1, colour * cb);
  check_finite(out, name, what);
  return out;
}

}  // namespace sieve::render
