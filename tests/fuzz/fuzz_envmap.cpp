// libFuzzer: an environment map's bytes decoded as [environment] map = "..." does (EXR and Radiance
// HDR through image_file.hpp's decoder, EXR's tinyexr, then every texel checked). Bad input must end in
// sieve::error; anything else (a crash, a sanitizer report, another exception, a hang, a leak) is a
// finding.
#include <scene/environment_map.hpp>

#include <sieve/compaction/error.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    // A small texel limit keeps every run fast; the limit's own path is fuzzed too.
    (void)sieve::render::decode_environment_image(
        "map", std::string_view(reinterpret_cast<const char*>(data), size), std::uint64_t{1} << 16);
  } catch (const sieve::error&) {
  }
  return 0;
}
