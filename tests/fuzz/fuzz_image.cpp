// libFuzzer: an image file read as a texture (its texels stored with their mipmaps), opacity map or environment map is (scene/image_file.hpp:
// the format told from the signature; PNG by stb_image's decoder and JPEG by libjpeg-turbo, linked
// in; TGA, TIFF, OpenEXR and Radiance .hdr by OpenImageIO's readers in the image module, loaded on
// first use; the file is named .tga, so input without a signature reaches the TGA reader). Input: the file's
// bytes. Bad input must end in sieve::error; anything else (a crash, a sanitizer report, another
// exception, a hang, a leak) is a finding.
#include "scratch.hpp"

#include <scene/image_file.hpp>

#include <sieve/compaction/error.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const sieve::fuzz::scratch_dir dir("sieve-fuzz-image");
  dir.write("texture.tga", std::string_view(reinterpret_cast<const char*>(data), size));
  sieve::render::image_limits limits;
  limits.max_side = 1024;             // keep every run fast; the limits' own paths are fuzzed too
  limits.max_bytes = std::uint64_t{1} << 24;
  try {
    // Decoded as floats (an environment map's way) and stored as a texture with its pyramid, in
    // the channels one of the five uses keeps.
    const auto use = static_cast<sieve::render::image_use>(size % 5);
    (void)sieve::render::read_image(dir / "texture.tga", "texture", limits, use);
    const sieve::render::texel_image texels = sieve::render::read_texels(dir / "texture.tga", "texture", limits);
    (void)sieve::render::make_texture("texture", texels, use, sieve::render::wrap_mode::repeat);
  } catch (const sieve::error&) {
  }
  return 0;
}
