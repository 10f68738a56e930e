// libFuzzer: sieve's own reading of image headers (scene/image_header.hpp), the check that runs
// before any decoder: PNG, JPEG (every marker and scan), TGA (a colour-mapped image's every index),
// TIFF (the first directory), OpenEXR (the first header's attributes) and Radiance .hdr. Input: one
// byte choosing the format, then the file's bytes (so every format's reader sees every input, with
// or without its signature). Bad input must end in sieve::error; anything else (a read past the
// bytes, another exception, a hang) is a finding. fuzz_image runs the headers and the decoders.
#include <scene/image_header.hpp>

#include <sieve/compaction/error.hpp>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  using sieve::render::detail::image_kind;
  constexpr image_kind kinds[] = {image_kind::png, image_kind::jpeg, image_kind::tga,
                                  image_kind::tiff, image_kind::exr, image_kind::hdr};
  const image_kind kind = kinds[data[0] % std::size(kinds)];
  sieve::render::image_limits limits;
  limits.max_side = 1024;  // the limits' own paths are fuzzed too
  limits.max_bytes = std::uint64_t{1} << 24;
  try {
    (void)sieve::render::detail::sniff_image(data + 1, size - 1, "texture.tga");
    (void)sieve::render::detail::check_image_header(data + 1, size - 1, kind, "texture", "texture", limits);
  } catch (const sieve::error&) {
  }
  return 0;
}
