// Procedural scenes through the TOML loader: triangle counts, materials, bad parameters.
#include <scene/load.hpp>
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

}  // namespace
}  // namespace sieve::render
