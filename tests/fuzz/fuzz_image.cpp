// libFuzzer: an image file read as a texture or environment map is (scene/image_file.hpp: PNG
// through stb_image, Radiance .hdr decoded by sieve). Input: the file's bytes. Bad input must end in
// sieve::error; anything else (a crash, a sanitizer report, another exception, a hang, a leak) is a
// finding.
#include "scratch.hpp"

#include <scene/image_file.hpp>

#include <sieve/compaction/error.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const sieve::fuzz::scratch_dir dir("sieve-fuzz-image");
  dir.write("texture", std::string_view(reinterpret_cast<const char*>(data), size));
  sieve::render::image_limits limits;
  limits.max_side = 1024;             // keep every run fast; the limits' own paths are fuzzed too
  limits.max_bytes = std::uint64_t{1} << 24;
  try {
    (void)sieve::render::read_image(dir / "texture", "texture", limits);
  } catch (const sieve::error&) {
  }
  return 0;
}
