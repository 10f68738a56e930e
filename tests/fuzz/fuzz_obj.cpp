// libFuzzer: an OBJ mesh and its MTL loaded as a scene, as `sieve render mesh.obj` does.
// Input: the OBJ text, a NUL byte, the MTL text (the OBJ names it with `mtllib mesh.mtl`).
// Bad input must end in sieve::error; anything else (a crash, a sanitizer report, another
// exception, a hang, a leak) is a finding.
#include "scratch.hpp"

#include <scene/load.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const sieve::fuzz::scratch_dir dir("sieve-fuzz-obj");
  const auto [obj, mtl] = sieve::fuzz::split_at_nul(data, size);
  dir.write("mesh.obj", obj);
  dir.write("mesh.mtl", mtl);
  sieve::render::scene_limits limits;
  limits.max_triangles = 1 << 16;  // keep every run fast; the limit's own path is fuzzed too
  limits.max_texture_side = 1024;  // an MTL's map_Kd may name any file: keep what it reads small
  limits.max_texture_bytes = std::uint64_t{1} << 24;
  try {
    (void)sieve::render::load_scene(dir / "mesh.obj", {}, limits);
  } catch (const sieve::error&) {
  }
  return 0;
}
