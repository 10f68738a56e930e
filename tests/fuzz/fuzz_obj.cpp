// libFuzzer: an OBJ mesh and its MTL loaded as a scene, as `sieve render mesh.obj` does, by both of
// the OBJ reader's paths: the general reader (tinyobjloader behind the prescan) and the parallel
// fast path, in chunks of 1 to 64 bytes (from the input's size) so that chunk boundaries fall
// everywhere. Input: the OBJ text, a NUL byte, the MTL text (the OBJ names it with `mtllib mesh.mtl`).
// Bad input must end in sieve::error; anything else (a crash, a sanitizer report, another
// exception, a hang, a leak) is a finding, and so is any difference between the two reads: another
// message, or another scene (triangles, normals, texture coordinates, materials) by a byte.
#include "scratch.hpp"

#include <scene/load.hpp>

#include <cstdio>
#include <cstring>
#include <optional>

namespace {

struct outcome {
  std::optional<sieve::render::scene> sc;
  std::string error;
};

outcome read(const std::filesystem::path& obj, const sieve::render::scene_limits& limits) {
  outcome o;
  try {
    o.sc = sieve::render::load_scene(obj, {}, limits);
  } catch (const sieve::error& e) {
    o.error = e.what();
  }
  return o;
}

template <class T>
bool same(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

bool same(const outcome& a, const outcome& b) {
  if (a.error != b.error || a.sc.has_value() != b.sc.has_value()) return false;
  if (!a.sc) return true;
  const sieve::render::scene &x = *a.sc, &y = *b.sc;
  if (!same(x.triangles, y.triangles) || !same(x.normals, y.normals) || !same(x.uvs, y.uvs) ||
      !same(x.material_of, y.material_of) || x.materials.size() != y.materials.size())
    return false;
  for (std::size_t i = 0; i < x.materials.size(); ++i)
    if (x.materials[i].name != y.materials[i].name || x.materials[i].albedo_texture != y.materials[i].albedo_texture) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const sieve::fuzz::scratch_dir dir("sieve-fuzz-obj");
  const auto [obj, mtl] = sieve::fuzz::split_at_nul(data, size);
  dir.write("mesh.obj", obj);
  dir.write("mesh.mtl", mtl);
  sieve::render::scene_limits limits;
  limits.max_triangles = 1 << 16;  // keep every run fast; the limit's own path is fuzzed too
  limits.max_texture_side = 1024;  // an MTL's map_Kd may name any file: keep what it reads small
  limits.max_texture_bytes = std::uint64_t{1} << 24;
  setenv("SIEVE_OBJ_READER", "general", 1);
  const outcome general = read(dir / "mesh.obj", limits);
  unsetenv("SIEVE_OBJ_READER");
  setenv("SIEVE_OBJ_CHUNK_BYTES", std::to_string(1 + size % 64).c_str(), 1);
  const outcome fast = read(dir / "mesh.obj", limits);
  if (!same(general, fast)) {
    std::fprintf(stderr, "fuzz_obj: the two OBJ readers differ:\n  general: %s\n  fast:    %s\n",
                 general.sc ? "a scene" : general.error.c_str(), fast.sc ? "a scene" : fast.error.c_str());
    std::abort();
  }
  return 0;
}
