// decode_texels (image_file.hpp): the format told from the file's signature (TGA, which has none,
// from the name) and only that format's decoder asked: PNG, JPEG and OpenEXR by the decoders linked
// in (image_decoders.hpp); TGA, TIFF and Radiance .hdr through OpenImageIO in the image module
// (image_module.hpp), opened with dlopen when the first such file is read. A `sieve` that
// reads no such file starts without OpenImageIO's ~260 libraries (docs/images.md).
#include "image_decoders.hpp"

#include "image_header.hpp"
#include "image_module.hpp"
#include "input_file.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

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

using detail::fail;

// The image module, opened once: its functions, or why it could not be.
struct image_module {
  module_open_fn* open = nullptr;
  module_read_fn* read = nullptr;
  module_close_fn* close = nullptr;
  std::string why_not;  // empty when it loaded
};

#ifdef SIEVE_IMAGE_MODULE_BUILD
// Where the module may be: $SIEVE_IMAGE_MODULE; beside the binary that holds this code (a Python
// wheel's sieve/ folder); the installed lib/sieve/ seen from bin/; the build tree's.
std::vector<std::string> module_candidates() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("SIEVE_IMAGE_MODULE"); env && *env) paths.emplace_back(env);
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&module_candidates), &self) && self.dli_fname) {
    const std::filesystem::path dir = std::filesystem::path(self.dli_fname).parent_path();
    paths.push_back((dir / SIEVE_IMAGE_MODULE_NAME).string());
    paths.push_back((dir / SIEVE_IMAGE_MODULE_FROM_BIN / SIEVE_IMAGE_MODULE_NAME).lexically_normal().string());
  }
  paths.emplace_back(SIEVE_IMAGE_MODULE_BUILD);
  return paths;
}
#endif

const image_module& the_module() {
  static const image_module m = [] {
    image_module r;
#ifdef SIEVE_IMAGE_MODULE_BUILD
    std::string tried;
    for (const std::string& path : module_candidates()) {
      if (!std::filesystem::exists(path)) continue;
      void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!lib) {
        const char* why = dlerror();
        tried += (tried.empty() ? "" : "; ") + std::string(why ? why : path);
        continue;
      }
      r.open = reinterpret_cast<module_open_fn*>(dlsym(lib, "sieve_image_open"));
      r.read = reinterpret_cast<module_read_fn*>(dlsym(lib, "sieve_image_read"));
      r.close = reinterpret_cast<module_close_fn*>(dlsym(lib, "sieve_image_close"));
      if (r.open && r.read && r.close) return r;
      tried += (tried.empty() ? "" : "; ") + path + " lacks the module's functions";
    }
    r.why_not = "its reader, OpenImageIO's, is in " SIEVE_IMAGE_MODULE_NAME ", which could not be loaded (" +
                (tried.empty() ? std::string("not found; SIEVE_IMAGE_MODULE names it") : tried) + ")";
#else
    r.why_not = "this build reads PNG, JPEG and OpenEXR only (configured with -DSIEVE_OPENIMAGEIO=OFF; ON reads TGA, "
                "TIFF and .hdr through OpenImageIO)";
#endif
    return r;
  }();
  return m;
}

texel_image decode_with_module(const detail::image_source& src, const char* format_name, const char* format) {
  const std::string at = src.name + ": ";
  const image_module& m = the_module();
  if (!m.open) fail(at + "the " + src.what + " is " + format + ", and " + m.why_not);
  std::string why;
  module_image_info spec;
  const std::unique_ptr<void, module_close_fn*> in(m.open(src.data, src.size, format_name, &spec, &why), m.close);
  if (!in) fail(at + "cannot read the " + src.what + ": " + why);
  if (spec.deep) fail(at + "the " + src.what + " is a deep or volume image");
  if (spec.width <= 0 || spec.height <= 0 || spec.channels <= 0) fail(at + "the " + src.what + " has no pixels");
  if (spec.format < 0 || spec.format > 3) fail(at + "the " + src.what + " has samples of no format sieve keeps");
  check_image_size(static_cast<std::uint64_t>(spec.width), static_cast<std::uint64_t>(spec.height), src.name, src.what,
                   src.limits);
  texel_image out;
  out.format = static_cast<texel_format>(spec.format);
  const std::size_t cb = channel_bytes(out.format);
  if (spec.channels > 4)
    detail::check_image_samples(static_cast<std::uint64_t>(spec.width), static_cast<std::uint64_t>(spec.height),
                                static_cast<std::uint64_t>(spec.channels), cb, src.name, src.what, src.limits);
  // The colour channels (grey, or the first three) and the alpha channel where there is one, kept
  // in that order: 1 .. 4 channels. Integer images hold sRGB colour, floating-point ones linear.
  const int colour = spec.channels >= 3 ? 3 : 1;
  const int alpha = spec.alpha_channel >= 0 && spec.alpha_channel < spec.channels ? spec.alpha_channel
                    : spec.channels == 2 || spec.channels == 4                   ? spec.channels - 1
                                                                                : -1;
  out.srgb = !spec.linear;
  out.width = static_cast<std::uint32_t>(spec.width);
  out.height = static_cast<std::uint32_t>(spec.height);
  out.channels = static_cast<std::uint8_t>(colour + (alpha >= 0 ? 1 : 0));
  const std::size_t pixel = out.channels * cb;
  const bool together = alpha < 0 || alpha == colour;  // one contiguous range of channels
  auto read = [&](int first, int count, std::size_t offset) {
    bool done = false;
    try {
      done = m.read(in.get(), first, count, spec.format, out.bytes.data() + offset, pixel, &why);
    } catch (const std::bad_alloc&) {
      fail(at + "cannot decode the " + src.what + ": out of memory");
    }
    if (!done) fail(at + "cannot decode the " + src.what + ": " + why);
  };
  try {
    out.bytes.assign(std::size_t{out.width} * out.height * pixel, 0);
  } catch (const std::bad_alloc&) {
    fail(at + "cannot decode the " + src.what + ": out of memory");
  }
  read(0, together ? out.channels : colour, 0);
  if (!together) read(alpha, 1, colour * cb);
  check_finite(out, src.name, src.what);
  return out;
}

}  // namespace

texel_image decode_texels(const unsigned char* data, std::size_t size, const std::string& name, const std::string& what,
                          const image_limits& limits) {
  const detail::image_source src{data, size, name, what, limits};
  using detail::image_kind;
  const image_kind kind = detail::sniff_image(data, size, name);
  // The header read by sieve first: sizes, samples, and what the decoders mishandle (image_header.hpp).
  if (kind != image_kind::unknown) detail::check_image_header(data, size, kind, name, what, limits);
  switch (kind) {
    case image_kind::png: return detail::decode_png(src);
    case image_kind::jpeg: return detail::decode_jpeg(src);
    case image_kind::tga: return decode_with_module(src, "image.tga", "TGA");
    case image_kind::tiff: return decode_with_module(src, "image.tif", "TIFF");
    case image_kind::exr: return detail::decode_exr(src);
    case image_kind::hdr: return decode_with_module(src, "image.hdr", "Radiance .hdr");
    case image_kind::unknown: break;
  }
  fail(name + ": the " + what + " is not an image sieve reads (PNG, JPEG, TGA, TIFF, OpenEXR, Radiance .hdr)");
}

}  // namespace sieve::render
