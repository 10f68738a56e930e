// libFuzzer: a glTF file loaded as a scene, as `sieve render model.gltf` (or .glb) does.
// Input: the glTF bytes (JSON, or a GLB when they start with "glTF"), a NUL byte, then the bytes of
// `buffer.bin`, a file beside it that a buffer's or image's URI may name.
// Bad input must end in sieve::error; anything else (a crash, a sanitizer report, another
// exception, a hang, a leak) is a finding.
#include "scratch.hpp"

#include <scene/load.hpp>

#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const sieve::fuzz::scratch_dir dir("sieve-fuzz-gltf");
  // A GLB holds NUL bytes of its own: it is the whole input.
  const bool glb = size >= 4 && std::memcmp(data, "glTF", 4) == 0;
  auto [model, bin] = sieve::fuzz::split_at_nul(data, size);
  if (glb) model = {reinterpret_cast<const char*>(data), size}, bin = {};
  dir.write("buffer.bin", bin);
  const char* name = glb ? "model.glb" : "model.gltf";
  dir.write(name, model);
  sieve::render::scene_limits limits;
  limits.max_triangles = 1 << 16;  // keep every run fast; the limit's own path is fuzzed too
  try {
    (void)sieve::render::load_scene(dir / name, {}, limits);
  } catch (const sieve::error&) {
  }
  return 0;
}
