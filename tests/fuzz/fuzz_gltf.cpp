// libFuzzer: a glTF file loaded as a scene, as `sieve render model.gltf` (or .glb) does.
// Input: the glTF bytes (JSON, or a GLB when they start with "glTF"), a NUL byte, then the bytes of
// `buffer.bin`, a file beside it that a buffer's or image's URI may name. The model sits in a folder
// of its own with a copy of those bytes one folder up (`../outside.bin`), so URIs that try to leave
// the folder (../, %2e%2e/, absolute paths) have something to find.
// Bad input must end in sieve::error; anything else (a crash, a sanitizer report, another
// exception, a hang, a leak) is a finding, and so is a load that read a file outside the model's folder.
#include "scratch.hpp"

#include <scene/load.hpp>

#include <cstdlib>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const sieve::fuzz::scratch_dir dir("sieve-fuzz-gltf");
  static const bool made = std::filesystem::create_directory(dir / "model");
  (void)made;
  // A GLB holds NUL bytes of its own: it is the whole input.
  const bool glb = size >= 4 && std::memcmp(data, "glTF", 4) == 0;
  auto [model, bin] = sieve::fuzz::split_at_nul(data, size);
  if (glb) model = {reinterpret_cast<const char*>(data), size}, bin = {};
  dir.write("model/buffer.bin", bin);
  dir.write("outside.bin", bin);
  const std::string name = glb ? "model/model.glb" : "model/model.gltf";
  dir.write(name, model);
  sieve::render::scene_limits limits;
  limits.max_triangles = 1 << 16;  // keep every run fast; the limit's own path is fuzzed too
  try {
    const sieve::render::scene sc = sieve::render::load_scene(dir / name, {}, limits);
    const std::string folder = (dir / "model").string() + "/";
    for (const auto& f : sc.files)
      if (f.lexically_normal().string().rfind(folder, 0) != 0) std::abort();  // read outside the folder
  } catch (const sieve::error&) {
  }
  return 0;
}
