// Procedural scenes through the TOML loader: triangle counts, materials, bad parameters.
#include <scene/load.hpp>
#include <scene/procedural.hpp>
#include <sieve/compaction/error.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace sieve::render {
namespace {

std::filesystem::path write(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::path(testing::TempDir()) / name;
  std::ofstream(p) << text;
  return p;
}

TEST(Procedural, SphereRoomCountsAndMaterials) {
  // 4 room quads (8 triangles) + n^2 spheres of segments x segments/2 quads less the poles' halves.
  const scene s = load_scene(write("spheres.toml", "[procedural]\ntype = \"spheres\"\nn = 2\nsegments = 8\n"));
  EXPECT_EQ(s.triangles.size(), 8U + 4U * (8U * 4U * 2U - 2U * 8U));
  EXPECT_EQ(s.material_of.size(), s.triangles.size());
  int mirrors = 0, glass = 0;
  for (const auto& m : s.materials) {
    mirrors += m.kind == material_kind::mirror;
    glass += m.kind == material_kind::dielectric;
  }
  EXPECT_EQ(mirrors, 1);
  EXPECT_EQ(glass, 1);
  for (const auto& t : s.triangles) EXPECT_TRUE(finite(t.v0) && finite(t.v1) && finite(t.v2));
}

TEST(Procedural, DefaultSphereRoomIsAboutAMillionTriangles) {
  const scene s = load_scene(write("million.toml", "[procedural]\ntype = \"spheres\"\n"));
  EXPECT_GT(s.triangles.size(), 900'000U);
  EXPECT_LT(s.triangles.size(), 1'100'000U);
}

TEST(Procedural, HeightfieldCountAndSkyAndCameraOverride) {
  const scene s = load_scene(write("terrain.toml", "[procedural]\ntype = \"heightfield\"\ngrid = 4\nheight = 2.0\n"
                                                   "[camera]\nposition = [1, 2, 3]\nlook_at = [0, 0, 0]\nvfov = 30\n"));
  EXPECT_EQ(s.triangles.size(), 32U);
  EXPECT_EQ(s.camera.position.x, 1.0f);  // the file's camera wins over the generator's
  EXPECT_EQ(s.camera.vfov_degrees, 30.0f);
  EXPECT_GT(s.environment.z, 0.0f);      // the generator's sky, as the file gives none
}

TEST(Procedural, BadParametersAreErrors) {
  EXPECT_THROW(load_scene(write("p1.toml", "[procedural]\ntype = \"cubes\"\n")), sieve::error);
  EXPECT_THROW(load_scene(write("p2.toml", "[procedural]\nn = 3\n")), sieve::error);
  EXPECT_THROW(load_scene(write("p3.toml", "[procedural]\ntype = \"spheres\"\nn = 0\n")), sieve::error);
  EXPECT_THROW(load_scene(write("p4.toml", "[procedural]\ntype = \"spheres\"\nradius = 2\n")), sieve::error);
  EXPECT_THROW(load_scene(write("p5.toml", "[procedural]\ntype = \"heightfield\"\nheight = -1.0\n")), sieve::error);
  try {
    load_scene(write("p6.toml", "[procedural]\ntype = \"cubes\"\n"));
    FAIL();
  } catch (const sieve::error& e) {
    EXPECT_NE(std::string(e.what()).find("p6.toml"), std::string::npos) << e.what();
  }
}

std::string load_error(const std::filesystem::path& p, const scene_limits& limits = {}) {
  try {
    (void)load_scene(p, {}, limits);
  } catch (const sieve::error& e) {
    return e.what();
  }
  return "";
}

TEST(SceneLimits, TooManyTrianglesIsNamedBeforeAnythingIsGenerated) {
  // 256^2 spheres of 512 x 256 quads: 17 billion triangles. Counted, not generated: this returns at once.
  const std::string huge = load_error(write("huge.toml", "[procedural]\ntype = \"spheres\"\nn = 256\nsegments = 512\n"));
  EXPECT_NE(huge.find(std::to_string(sphere_room_triangles(256, 512)) + " triangles with the procedural spheres is more "
                      "than the limit of " + std::to_string(scene_limits{}.max_triangles)),
            std::string::npos)
      << huge;
  // The limit is the caller's: the default sphere room passes the default and fails a smaller one.
  const auto room = write("room.toml", "[procedural]\ntype = \"spheres\"\n");
  scene_limits small;
  small.max_triangles = 1000;
  const std::string over = load_error(room, small);
  EXPECT_NE(over.find("is more than the limit of 1000"), std::string::npos) << over;
  const std::string box = load_error(std::filesystem::path(SIEVE_SCENES_DIR) / "cornell-box" / "cornell-box.toml", small);
  EXPECT_EQ(box, "");  // 32 triangles
  small.max_triangles = 20;
  // An OBJ is counted as it is read: the message names the line where the count passes the limit.
  const std::string obj = load_error(std::filesystem::path(SIEVE_SCENES_DIR) / "cornell-box" / "cornell-box.toml", small);
  EXPECT_NE(obj.find("cornell-box.obj:"), std::string::npos) << obj;
  EXPECT_NE(obj.find(": more than 20 triangles (the scene's limit)"), std::string::npos) << obj;
}

TEST(SceneLimits, TooLargeAFilmIsNamed) {
  const std::string big = load_error(write("film.toml", "[procedural]\ntype = \"spheres\"\nn = 1\nsegments = 4\n"
                                                        "[film]\nwidth = 16384\nheight = 16384\n"));
  EXPECT_NE(big.find("16384 x 16384 pixels is more than the limit of 67108864 pixels"), std::string::npos) << big;
}

}  // namespace
}  // namespace sieve::render
