// The scene loader against hostile input, in process: a glTF URI swapped to a symbolic link out of
// the folder between check and open (open once, check what was opened), glTF values of the wrong
// type (an error, not a default), a camera the scene does not use (not read), float data maps (not
// through the sRGB curve) and boxes of far geometry (not clamped at 1e30).
#include <core/image_io.hpp>
#include <scene/gltf_source.hpp>
#include <scene/input_file.hpp>
#include <scene/load.hpp>

#include "scene_test_support.hpp"

#include <sieve/compaction/error.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace sieve::render;
using sieve::render::testing::expect_error;
using sieve::render::testing::write;

namespace {

fs::path temp_dir() { return sieve::render::testing::fresh_dir("sieve_hostile_loader_"); }

const std::vector<std::string> sky = {"environment.color=[1,1,1]", "camera.position=[0,0,4]"};

std::string triangle_bytes() {
  const float p[9] = {-1, -1, 0, 1, -1, 0, 0, 1, 0};
  return std::string(reinterpret_cast<const char*>(p), sizeof p);
}

// One triangle whose positions are in `uri`.
json triangle_gltf(const std::string& uri) {
  return {{"asset", {{"version", "2.0"}}},
          {"buffers", json::array({{{"byteLength", 36}, {"uri", uri}}})},
          {"bufferViews", json::array({{{"buffer", 0}, {"byteLength", 36}}})},
          {"accessors", json::array({{{"bufferView", 0}, {"componentType", 5126}, {"count", 3}, {"type", "VEC3"}}})},
          {"meshes", json::array({{{"primitives", json::array({{{"attributes", {{"POSITION", 0}}}}})}}})},
          {"nodes", json::array({{{"mesh", 0}}})},
          {"scenes", json::array({{{"nodes", json::array({0})}}})}};
}

// A link at `link` that points at `a` and `b` in turn, swapped (rename over it) until `stop`.
void flip_link(const fs::path& link, const fs::path& a, const fs::path& b, const std::atomic<bool>& stop) {
  const fs::path next = link.string() + ".next";
  for (bool first = true; !stop.load(); first = !first) {
    std::error_code ec;
    fs::remove(next, ec);
    fs::create_symlink(first ? a : b, next, ec);
    fs::rename(next, link, ec);
  }
}

}  // namespace

// The URI was checked (resolved through its links), then opened by path: a link swapped in between
// by a local writer was followed out of the folder. Opened once below the folder's descriptor, the
// file read is the file checked: the outside file (72 bytes, where byteLength says 36) is never read.
TEST(HostileLoader, GltfUriSwappedToALinkOutsideIsNeverRead) {
  const fs::path dir = temp_dir();
  fs::create_directories(dir / "model");
  write(dir / "model" / "inside.bin", triangle_bytes());
  write(dir / "outside.bin", triangle_bytes() + triangle_bytes());
  const fs::path gltf = write(dir / "model" / "m.gltf", triangle_gltf("link.bin").dump());
  fs::create_symlink("inside.bin", dir / "model" / "link.bin");
  std::atomic<bool> stop{false};
  std::thread flipper(flip_link, dir / "model" / "link.bin", fs::path("inside.bin"), dir / "outside.bin", std::cref(stop));
  int loaded = 0, refused = 0, outside = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(3) && loaded + refused < 20000) {
    try {
      (void)load_scene(gltf, sky);
      ++loaded;
    } catch (const sieve::error& e) {
      const std::string what = e.what();
      if (what.find("holds 72 bytes") != std::string::npos) ++outside;
      else if (what.find("symbolic link") != std::string::npos || what.find("not found") != std::string::npos) ++refused;
      else ADD_FAILURE() << what;
    }
  }
  stop = true;
  flipper.join();
  EXPECT_EQ(outside, 0) << "read the file outside the folder " << outside << " times in " << loaded + refused + outside;
  EXPECT_GT(loaded, 0);
  fs::remove_all(dir);
}

// open_beneath: links inside the folder are followed, links and paths out of it are not.
TEST(HostileLoader, OpenBeneathStaysInTheFolder) {
  const fs::path dir = temp_dir();
  fs::create_directories(dir / "model" / "sub");
  write(dir / "model" / "sub" / "a.bin", "a");
  write(dir / "b.bin", "b");
  fs::create_symlink("sub/a.bin", dir / "model" / "in.bin");
  fs::create_symlink(dir / "b.bin", dir / "model" / "out.bin");
  fs::create_symlink("../b.bin", dir / "model" / "up.bin");
  fs::create_symlink(dir, dir / "model" / "sub" / "root");
  const int folder = ::open((dir / "model").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(folder, 0);
  auto opened = [&](const char* rel) {
    const int fd = detail::open_beneath(folder, rel);
    const int e = errno;
    if (fd >= 0) ::close(fd);
    return fd >= 0 ? 0 : e;
  };
  EXPECT_EQ(opened("sub/a.bin"), 0);
  EXPECT_EQ(opened("in.bin"), 0);
  EXPECT_EQ(opened("missing.bin"), ENOENT);
  for (const char* out : {"out.bin", "up.bin", "sub/root/b.bin", "../b.bin"}) {
    const int e = opened(out);
    EXPECT_TRUE(e == EXDEV || e == ELOOP) << out << ": " << std::strerror(e);
  }
  ::close(folder);
  fs::remove_all(dir);
}

// alphaCutoff, alphaMode and extensions of the wrong type took their defaults without a word.
TEST(HostileLoader, GltfValuesOfTheWrongTypeAreErrors) {
  const fs::path dir = temp_dir();
  write(dir / "tri.bin", triangle_bytes());
  auto with_material = [&](const json& material) {
    json doc = triangle_gltf("tri.bin");
    doc["materials"] = json::array({material});
    doc["meshes"][0]["primitives"][0]["material"] = 0;
    return write(dir / "m.gltf", doc.dump());
  };
  expect_error([&] { load_scene(with_material({{"alphaMode", "MASK"}, {"alphaCutoff", "0.5"}}), sky); },
               {"m.gltf", "materials[0]", "alphaCutoff \"0.5\" is not a number"});
  expect_error([&] { load_scene(with_material({{"alphaMode", 2}}), sky); }, {"materials[0]", "alphaMode 2 is not"});
  expect_error([&] { load_scene(with_material({{"doubleSided", "yes"}}), sky); }, {"doubleSided \"yes\""});
  expect_error([&] { load_scene(with_material({{"extensions", json::array()}}), sky); },
               {"materials[0].extensions", "is not an object"});
  json doc = triangle_gltf("tri.bin");
  doc["nodes"][0]["extensions"] = "KHR_lights_punctual";
  expect_error([&] { load_scene(write(dir / "n.gltf", doc.dump()), sky); }, {"nodes[0].extensions", "is not an object"});
  fs::remove_all(dir);
}

// A scene file places its own camera: a glTF object's camera (here of a yfov past pi) is not read.
// Loaded alone, the model's camera is read and checked.
TEST(HostileLoader, CameraOfAModelInASceneIsNotRead) {
  const fs::path dir = temp_dir();
  write(dir / "tri.bin", triangle_bytes());
  json doc = triangle_gltf("tri.bin");
  doc["cameras"] = json::array({{{"type", "perspective"}, {"perspective", {{"yfov", 4.0}, {"znear", 0.1}}}}});
  doc["nodes"].push_back({{"camera", 0}});
  doc["scenes"][0]["nodes"].push_back(1);
  const fs::path gltf = write(dir / "cam.gltf", doc.dump());
  expect_error([&] { load_scene(gltf); }, {"cam.gltf", "cameras[0]", "yfov"});
  const fs::path toml = write(dir / "s.toml", "[camera]\nposition = [0, 0, -4]\n[[objects]]\ngltf = \"cam.gltf\"\n"
                                              "[environment]\ncolor = [1, 1, 1]\n");
  EXPECT_EQ(load_scene(toml).triangles.size(), 1U);
  fs::remove_all(dir);
}

// A float normal map (OpenEXR) was encoded through the sRGB curve as if its decoding had to be
// undone: a flat map (0.5, 0.5, 1) read as (0.735, 0.735, 1).
TEST(HostileLoader, FloatDataMapsAreReadAsStored) {
  const fs::path dir = temp_dir();
  write(dir / "tri.bin", triangle_bytes());
  const std::vector<vec3> flat(4, vec3{0.5f, 0.5f, 1.0f});
  write(dir / "flat.exr", encode_exr(dir / "flat.exr", 2, 2, flat));
  json doc = triangle_gltf("tri.bin");
  doc["images"] = json::array({{{"uri", "flat.exr"}}});
  doc["textures"] = json::array({{{"source", 0}}});
  doc["materials"] = json::array({{{"normalTexture", {{"index", 0}}}}});
  doc["meshes"][0]["primitives"][0]["material"] = 0;
  const scene s = load_scene(write(dir / "n.gltf", doc.dump()), sky);
  ASSERT_EQ(s.textures.size(), 1U);
  // Kept as the map's x and y (z is rebuilt at the lookup), as stored: never through the curve.
  const texture& t = s.textures[0];
  EXPECT_FALSE(t.srgb);
  ASSERT_EQ(t.channels, 2U);
  for (std::uint32_t l = 0; l < t.levels; ++l)
    for (std::uint32_t y = 0; y < std::max(1U, t.height >> l); ++y)
      for (std::uint32_t x = 0; x < std::max(1U, t.width >> l); ++x) {
        EXPECT_NEAR(t.texel(x, y, l).x, 0.5f, 1e-3f);
        EXPECT_NEAR(t.texel(x, y, l).y, 0.5f, 1e-3f);
      }
  fs::remove_all(dir);
}

// A box started at +-1e30: geometry beyond it (finite floats up to 3.4e38) got a wrong box.
TEST(HostileLoader, BoxesOfFarGeometryAreExact) {
  aabb b;
  EXPECT_TRUE(b.empty());
  b.grow(vec3{1e35f, 2e35f, -3e36f});
  EXPECT_EQ(b.lo.x, 1e35f);
  EXPECT_EQ(b.hi.x, 1e35f);
  EXPECT_EQ(b.lo.z, -3e36f);
  EXPECT_EQ(b.hi.z, -3e36f);
  EXPECT_FALSE(b.empty());
}
