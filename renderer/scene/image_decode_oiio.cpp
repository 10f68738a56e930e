// The image module (image_module.hpp): OpenImageIO's reader of one named format over bytes in
// memory (an IOProxy over the bytes sieve read itself): no other reader of OpenImageIO's many is
// tried on untrusted bytes. Built as libsieve_image_oiio.so and opened with dlopen by decode_image
// (image_decode.cpp) the first time a TGA, TIFF or Radiance .hdr file is read, so that
// OpenImageIO's libraries are loaded only by a process that reads such a file.
#include "image_module.hpp"

#include <OpenImageIO/filesystem.h>
#include <OpenImageIO/imageio.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <vector>

namespace {

// OpenImageIO's message: its first line (the rest repeats it in the words of the library below).
std::string one_line(const std::string& why) {
  std::string first = why.substr(0, why.find('\n'));
  while (!first.empty() && first.back() == ' ') first.pop_back();
  return first.empty() ? "no reason given" : first;
}

// The decoders below OpenImageIO also print their complaints on stderr, besides the error it returns
// (which the one error line reports): stderr is silenced while a file is decoded. The loader decodes
// several files at once, so the silence is shared: the first decoder in redirects descriptor 2, the
// last one out restores it. Not in the sanitizer builds, whose reports of a fault inside a decoder
// go to stderr.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIEVE_ADDRESS_SANITIZER 1
#endif
#endif
class quiet_stderr {
 public:
  quiet_stderr() {
#if !defined(__SANITIZE_ADDRESS__) && !defined(SIEVE_ADDRESS_SANITIZER)
    const std::lock_guard<std::mutex> lock(mutex());
    active_ = true;
    if (users()++ > 0) return;  // silenced already
    std::fflush(stderr);
    saved() = ::dup(2);
    const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (saved() >= 0 && null >= 0) ::dup2(null, 2);
    if (null >= 0) ::close(null);
#endif
  }
  ~quiet_stderr() {
    if (!active_) return;
    const std::lock_guard<std::mutex> lock(mutex());
    if (--users() > 0 || saved() < 0) return;
    std::fflush(stderr);
    ::dup2(saved(), 2);
    ::close(saved());
    saved() = -1;
  }
  quiet_stderr(const quiet_stderr&) = delete;
  quiet_stderr& operator=(const quiet_stderr&) = delete;

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static int& users() {
    static int n = 0;
    return n;
  }
  static int& saved() {
    static int fd = -1;
    return fd;
  }
  bool active_ = false;
};

// An open image: the bytes' proxy and the reader over it.
struct open_image {
  explicit open_image(const unsigned char* data, std::size_t size) : memory(const_cast<unsigned char*>(data), size) {}
  OIIO::Filesystem::IOMemReader memory;
  std::unique_ptr<OIIO::ImageInput> in;
};

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void* sieve_image_open(const unsigned char* data, std::size_t size,
                                                               const char* format_name, sieve::render::module_image_info* info,
                                                               std::string* error) {
  static const bool configured = [] {
    OIIO::attribute("threads", 1);          // decoding runs inside the loader's own threads
    OIIO::attribute("try_all_readers", 0);  // only the reader of the format named
    return true;
  }();
  (void)configured;
  auto image = std::make_unique<open_image>(data, size);
  // Colour as stored, not multiplied by alpha (OpenImageIO's default for PNG and TGA): a cut-out's
  // texels keep their colour where the opacity map hides them.
  OIIO::ImageSpec config;
  config.attribute("oiio:UnassociatedAlpha", 1);
  void* proxy = &image->memory;  // with a configuration, its own "oiio:ioproxy" is what open() reads from
  config.attribute("oiio:ioproxy", OIIO::TypeDesc::PTR, &proxy);
  const quiet_stderr quiet;
  image->in = OIIO::ImageInput::open(format_name, &config, &image->memory);
  if (!image->in) {
    *error = one_line(OIIO::geterror());
    return nullptr;
  }
  const OIIO::ImageSpec& spec = image->in->spec();
  const OIIO::TypeDesc::BASETYPE t = static_cast<OIIO::TypeDesc::BASETYPE>(spec.format.basetype);
  *info = {spec.width, spec.height, spec.nchannels, spec.alpha_channel, spec.deep || spec.depth > 1,
           t == OIIO::TypeDesc::FLOAT || t == OIIO::TypeDesc::HALF || t == OIIO::TypeDesc::DOUBLE,
           t == OIIO::TypeDesc::UINT8 ? 0 : t == OIIO::TypeDesc::UINT16 ? 1 : t == OIIO::TypeDesc::HALF ? 2 : 3};
  return image.release();
}

__attribute__((visibility("default"))) bool sieve_image_read(void* image, int first, int count, int format,
                                                              void* pixels, std::size_t stride, std::string* error) {
  static const OIIO::TypeDesc as[] = {OIIO::TypeDesc::UINT8, OIIO::TypeDesc::UINT16, OIIO::TypeDesc::HALF,
                                      OIIO::TypeDesc::FLOAT};
  auto* im = static_cast<open_image*>(image);
  const quiet_stderr quiet;
  // A reader may return true and keep its library's error (a truncated or corrupt JPEG or TIFF
  // decoded as grey or zero texels): every error it kept fails the file.
  if (format < 0 || format > 3) {
    *error = "no such sample format";
    return false;
  }
  const bool read = im->in->read_image(0, 0, first, first + count, as[format], pixels,
                                       static_cast<OIIO::stride_t>(stride));
  const std::string why = im->in->geterror();
  if (read && why.empty()) return true;
  *error = one_line(why.empty() ? std::string("the reader failed") : why);
  return false;
}

__attribute__((visibility("default"))) void sieve_image_close(void* image) { delete static_cast<open_image*>(image); }

}  // extern "C"
