// libFuzzer: a TOML scene file and `--set key=value` overrides, loaded as `sieve render` does.
// Input: the TOML text, then optionally a NUL byte and one override per line. The scene's folder
// holds the shipped Cornell box OBJ/MTL, so the seed scenes load as they are.
// Bad input must end in sieve::error; anything else (a crash, a sanitizer report, another
// exception, a hang, a leak) is a finding.
#include "scratch.hpp"

#include <scene/load.hpp>

#include <sstream>
#include <vector>

namespace {

const sieve::fuzz::scratch_dir& scene_dir() {
  static const sieve::fuzz::scratch_dir dir("sieve-fuzz-toml");
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const std::filesystem::path box = std::filesystem::path(SIEVE_SCENES_DIR) / "cornell-box";
  for (const char* name : {"cornell-box.obj", "cornell-box.mtl"})
    std::filesystem::copy_file(box / name, scene_dir() / name, std::filesystem::copy_options::overwrite_existing);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto [toml, set] = sieve::fuzz::split_at_nul(data, size);
  scene_dir().write("scene.toml", toml);
  std::vector<std::string> overrides;
  std::istringstream lines{std::string(set)};
  for (std::string line; std::getline(lines, line);) overrides.push_back(line);
  sieve::render::scene_limits limits;
  limits.max_triangles = 1 << 16;  // the procedural scenes' defaults (1M, 8M) end at the limit, fast
  limits.max_texture_side = 1024;  // a material's texture may name any file: keep what it reads small
  limits.max_texture_bytes = std::uint64_t{1} << 24;
  try {
    (void)sieve::render::load_scene(scene_dir() / "scene.toml", overrides, limits);
  } catch (const sieve::error&) {
  }
  return 0;
}
