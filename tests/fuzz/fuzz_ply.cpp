// libFuzzer: a PLY mesh loaded as a scene, as `sieve render mesh.ply` does (scene/ply.cpp).
// Input: the file's bytes. Bad input must end in sieve::error; anything else (a crash, a sanitizer
// report, another exception, a hang, a leak) is a finding.
#include "scratch.hpp"

#include <scene/load.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const sieve::fuzz::scratch_dir dir("sieve-fuzz-ply");
  dir.write("mesh.ply", std::string_view(reinterpret_cast<const char*>(data), size));
  sieve::render::scene_limits limits;
  limits.max_triangles = 1 << 16;  // keep every run fast; the limit's own path is fuzzed too
  limits.max_texture_bytes = std::uint64_t{1} << 24;
  try {
    (void)sieve::render::load_scene(dir / "mesh.ply", {}, limits);
  } catch (const sieve::error&) {
  }
  return 0;
}
