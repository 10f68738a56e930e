// The scene loader: the shipped Cornell boxes, overrides, bare OBJ files, and every kind of bad input
// failing with a sieve::error that names the file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <core/memory.hpp>
#include <scene/load.hpp>
#include <sieve/compaction/error.hpp>
#include "scene_test_support.hpp"
#include <string>
#include <vector>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

namespace fs = std::filesystem;
using namespace sieve::render;

namespace {

const fs::path scenes_dir = SIEVE_SCENES_DIR;
constexpr double pi = 3.14159265358979323846;

fs::path temp_dir() { return sieve::render::testing::fresh_dir("sieve_scene_test_"); }
using sieve::render::testing::expect_error;
using sieve::render::testing::write;

aabb bounds(const scene& s) {
  aabb b;
  for (const auto& t : s.triangles) {
    b.grow(t.v0);
    b.grow(t.v1);
    b.grow(t.v2);
  }
  return b;
}

float area(const triangle& t) { return 0.5f * length(cross(t.v1 - t.v0, t.v2 - t.v0)); }

const material* find_material(const scene& s, const std::string& name) {
  for (const auto& m : s.materials) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

std::size_t triangles_using(const scene& s, const std::string& name) {
  std::size_t n = 0;
  for (auto m : s.material_of) n += s.materials[m].name == name;
  return n;
}

void expect_vec(vec3 v, vec3 want, float tol = 1e-4f) {
  EXPECT_NEAR(v.x, want.x, tol);
  EXPECT_NEAR(v.y, want.y, tol);
  EXPECT_NEAR(v.z, want.z, tol);
}

// A TOML scene around one small OBJ, for the error cases.
struct small_scene {
  fs::path dir = temp_dir();
  fs::path obj = write(dir / "tri.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  fs::path toml(const std::string& extra, const std::string& name = "scene.toml") const {
    return write(dir / name, "[[objects]]\nobj = \"tri.obj\"\n" + extra);
  }
};

// --------------------------------------------------------------------------------------------------
// The shipped Cornell box.

TEST(SceneCornell, TrianglesBoundsAndSettings) {
  const scene s = load_scene(scenes_dir / "cornell-box" / "cornell-box.toml");
  EXPECT_EQ(s.name, "cornell-box");
  // floor, ceiling, light, back, green and red walls: 6 quads; each block: top and 4 sides.
  ASSERT_EQ(s.triangles.size(), 6u * 2 + 2u * 5 * 2);
  ASSERT_EQ(s.material_of.size(), s.triangles.size());
  for (std::size_t i = 0; i < s.triangles.size(); ++i) {
    EXPECT_GT(area(s.triangles[i]), 1.0f) << "triangle " << i;
    ASSERT_LT(s.material_of[i], s.materials.size());
  }
  const aabb b = bounds(s);
  expect_vec(b.lo, {0, 0, 0}, 1e-3f);
  expect_vec(b.hi, {556.0f, 548.8f, 559.2f}, 1e-3f);

  expect_vec(s.camera.position, {278, 273, -800});
  expect_vec(s.camera.look_at, {278, 273, 0});
  expect_vec(s.camera.up, {0, 1, 0});
  EXPECT_NEAR(s.camera.vfov_degrees, 2 * std::atan(12.5 / 35) * 180 / pi, 1e-3);
  EXPECT_EQ(s.film.width, 512u);
  EXPECT_EQ(s.film.height, 512u);
  EXPECT_EQ(s.film.spp, 64u);
  EXPECT_EQ(s.film.max_bounces, 8u);
  expect_vec(s.environment, {0, 0, 0});
  EXPECT_EQ(s.compaction.strategy, "auto");
  EXPECT_EQ(s.compaction.reorder, reorder_key::none);
  EXPECT_FALSE(s.film.shading_sides);
  EXPECT_FALSE(s.film.uv_tangents);
}

// The conventions a comparison with another renderer sets (film.sides, film.tangents).
TEST(SceneFilm, SidesAndTangents) {
  small_scene sm;
  const scene a = load_scene(sm.toml("[film]\nsides = \"shading\"\ntangents = \"uv\"\n", "conv.toml"));
  EXPECT_TRUE(a.film.shading_sides);
  EXPECT_TRUE(a.film.uv_tangents);
  const scene b = load_scene(sm.toml("[film]\nsides = \"geometric\"\ntangents = \"vertex\"\n", "conv2.toml"));
  EXPECT_FALSE(b.film.shading_sides);
  EXPECT_FALSE(b.film.uv_tangents);
}

TEST(SceneCornell, LightIsTwoEmissiveTriangles) {
  const scene s = load_scene(scenes_dir / "cornell-box" / "cornell-box.toml");
  ASSERT_EQ(s.emissive.size(), 2u);
  float light_area = 0;
  for (auto i : s.emissive) {
    const material& m = s.materials[s.material_of[i]];
    expect_vec(m.emission, {17, 12, 4});
    expect_vec(m.albedo, {0.78f, 0.78f, 0.78f});
    for (vec3 v : {s.triangles[i].v0, s.triangles[i].v1, s.triangles[i].v2}) EXPECT_NEAR(v.y, 548.7f, 1e-3f);
    light_area += area(s.triangles[i]);
  }
  EXPECT_NEAR(light_area, 130.0f * 105.0f, 0.5f);
  // Nothing else emits.
  std::size_t emitting = 0;
  for (auto m : s.material_of) emitting += max_component(s.materials[m].emission) > 0;
  EXPECT_EQ(emitting, 2u);
}

TEST(SceneCornell, MaterialsAndWhoUsesThem) {
  const scene s = load_scene(scenes_dir / "cornell-box" / "cornell-box.toml");
  const material* red = find_material(s, "red");
  const material* green = find_material(s, "green");
  const material* white = find_material(s, "white");
  ASSERT_TRUE(red && green && white);
  expect_vec(red->albedo, {0.63f, 0.065f, 0.05f});
  expect_vec(green->albedo, {0.14f, 0.45f, 0.091f});
  expect_vec(white->albedo, {0.725f, 0.71f, 0.68f});
  for (const auto& m : s.materials) EXPECT_EQ(m.kind, material_kind::diffuse) << m.name;
  EXPECT_EQ(triangles_using(s, "white"), 6u);  // floor, ceiling, back wall
  EXPECT_EQ(triangles_using(s, "red"), 2u);
  EXPECT_EQ(triangles_using(s, "green"), 2u);
  EXPECT_EQ(triangles_using(s, "short-block"), 10u);
  EXPECT_EQ(triangles_using(s, "tall-block"), 10u);
  // The red wall is at x ~ 556 (image left), the green one at x = 0.
  for (std::size_t i = 0; i < s.triangles.size(); ++i) {
    const std::string& name = s.materials[s.material_of[i]].name;
    const triangle& t = s.triangles[i];
    if (name == "red") {
      EXPECT_GT(std::min({t.v0.x, t.v1.x, t.v2.x}), 549.0f);
    } else if (name == "green") {
      EXPECT_EQ(std::max({t.v0.x, t.v1.x, t.v2.x}), 0.0f);
    }
  }
}

TEST(SceneCornell, SurfaceAreasMatchThePublishedQuads) {
  // A quad split along the wrong diagonal or with its vertices out of order changes the area.
  const scene s = load_scene(scenes_dir / "cornell-box" / "cornell-box.toml");
  auto quad_area = [](vec3 a, vec3 b, vec3 c, vec3 d) { return area({a, b, c}) + area({a, c, d}); };
  float floor = 0, short_block = 0, tall_block = 0;
  for (std::size_t i = 0; i < s.triangles.size(); ++i) {
    const triangle& t = s.triangles[i];
    const std::string& name = s.materials[s.material_of[i]].name;
    if (name == "white" && t.v0.y == 0 && t.v1.y == 0 && t.v2.y == 0) floor += area(t);
    if (name == "short-block") short_block += area(t);
    if (name == "tall-block") tall_block += area(t);
  }
  EXPECT_NEAR(floor, quad_area({552.8f, 0, 0}, {0, 0, 0}, {0, 0, 559.2f}, {549.6f, 0, 559.2f}), 1.0f);
  const float short_top = quad_area({130, 165, 65}, {82, 165, 225}, {240, 165, 272}, {290, 165, 114});
  const float short_sides =
      165.0f * (length(vec3{290 - 240, 0, 114 - 272}) + length(vec3{130 - 290, 0, 65 - 114}) +
                length(vec3{82 - 130, 0, 225 - 65}) + length(vec3{240 - 82, 0, 272 - 225}));
  EXPECT_NEAR(short_block, short_top + short_sides, 1.0f);
  const float tall_top = quad_area({423, 330, 247}, {265, 330, 296}, {314, 330, 456}, {472, 330, 406});
  const float tall_sides =
      330.0f * (length(vec3{423 - 472, 0, 247 - 406}) + length(vec3{472 - 314, 0, 406 - 456}) +
                length(vec3{314 - 265, 0, 456 - 296}) + length(vec3{265 - 423, 0, 296 - 247}));
  EXPECT_NEAR(tall_block, tall_top + tall_sides, 1.0f);
}

TEST(SceneCornell, MirrorAndGlassVariant) {
  const scene s = load_scene(scenes_dir / "cornell-box" / "cornell-mirror-glass.toml");
  EXPECT_EQ(s.triangles.size(), 32u);
  EXPECT_EQ(s.emissive.size(), 2u);
  int mirrors = 0, glasses = 0;
  for (std::size_t m = 0; m < s.materials.size(); ++m) {
    const material& mat = s.materials[m];
    if (mat.kind == material_kind::diffuse) continue;
    std::size_t users = 0;
    float top = 0;
    for (std::size_t i = 0; i < s.triangles.size(); ++i) {
      if (s.material_of[i] != m) continue;
      ++users;
      top = std::max({top, s.triangles[i].v0.y, s.triangles[i].v1.y, s.triangles[i].v2.y});
    }
    EXPECT_GE(users, 10u) << mat.name;
    EXPECT_LE(users, 12u) << mat.name;
    if (mat.kind == material_kind::mirror) {
      ++mirrors;
      EXPECT_EQ(top, 330.0f) << "the mirror is the tall block";
    } else {
      ++glasses;
      EXPECT_EQ(top, 165.0f) << "the glass is the short block";
      EXPECT_NEAR(mat.ior, 1.5f, 1e-6f);
    }
  }
  EXPECT_EQ(mirrors, 1);
  EXPECT_EQ(glasses, 1);
}

// --------------------------------------------------------------------------------------------------
// Overrides.

TEST(SceneOverrides, ApplyBeforeReading) {
  const fs::path box = scenes_dir / "cornell-box" / "cornell-box.toml";
  const scene s =
      load_scene(box, {"film.spp=4", "compaction.strategy=billeter", "camera.vfov=30",
                       "compaction.reorder=\"morton\"", "compaction.sort=\"cub\"", "camera.position = [1, 2, 3]",
                       "name=renamed"});
  EXPECT_EQ(s.film.spp, 4u);
  EXPECT_EQ(s.film.width, 512u);  // untouched
  EXPECT_EQ(s.compaction.strategy, "billeter");
  EXPECT_EQ(s.compaction.reorder, reorder_key::morton);
  EXPECT_EQ(s.compaction.sort, sort_kind::cub);
  EXPECT_FLOAT_EQ(s.camera.vfov_degrees, 30.0f);  // replaces focal_length_mm + film_height_mm
  expect_vec(s.camera.position, {1, 2, 3});
  EXPECT_EQ(s.name, "renamed");
}

TEST(SceneOverrides, ArrayEntriesAndNewTables) {
  small_scene sm;
  const fs::path toml = sm.toml("");  // no [film] table at all
  const scene s = load_scene(toml, {"objects[0].scale=2", "objects.0.translate=[0, 0, 5]", "film.seed=7"});
  expect_vec(bounds(s).hi, {2, 2, 5});
  EXPECT_EQ(s.film.seed, 7u);
}

TEST(SceneOverrides, UnknownOrBadOverridesFail) {
  const fs::path box = scenes_dir / "cornell-box" / "cornell-box.toml";
  const auto file = box.string();
  expect_error([&] { load_scene(box, {"film.sp=4"}); }, {file, "film.sp"});
  expect_error([&] { load_scene(box, {"render.spp=4"}); }, {file, "render.spp"});
  expect_error([&] { load_scene(box, {"film=4"}); }, {file, "[film] is a table"});
  expect_error([&] { load_scene(box, {"objects.3.scale=2"}); }, {file, "objects[3]"});
  expect_error([&] { load_scene(box, {"film.spp"}); }, {file, "key=value"});
  expect_error([&] { load_scene(box, {"film.spp=0"}); }, {file, "film.spp", "override"});
  expect_error([&] { load_scene(box, {"film.spp=fast"}); }, {file, "film.spp", "integer"});
  expect_error([&] { load_scene(box, {"camera.vfov=[1,2]"}); }, {file, "camera.vfov", "number"});
}

// --------------------------------------------------------------------------------------------------
// Bare OBJ files.

TEST(SceneObj, FramesItsBoundingBox) {
  const fs::path dir = temp_dir();
  // A box from (10, 20, 30) to (16, 22, 31), made of two quads (front and back faces).
  const fs::path obj = write(dir / "box.obj",
                             "v 10 20 30\nv 16 20 30\nv 16 22 30\nv 10 22 30\n"
                             "v 10 20 31\nv 16 20 31\nv 16 22 31\nv 10 22 31\n"
                             "f 1 2 3 4\nf 5 6 7 8\n");
  const scene s = load_scene(obj, {"environment.color=[1,1,1]"});  // a sky given: no key light
  ASSERT_EQ(s.triangles.size(), 4u);
  EXPECT_EQ(s.name, "box");
  expect_vec(s.environment, {1, 1, 1});
  EXPECT_FLOAT_EQ(s.camera.vfov_degrees, 40.0f);
  expect_vec(s.camera.look_at, {13, 21, 30.5f});
  EXPECT_FLOAT_EQ(s.camera.position.x, 13.0f);
  EXPECT_FLOAT_EQ(s.camera.position.y, 21.0f);
  EXPECT_GT(s.camera.position.z, 31.0f);  // in front (+z)
  // Every corner lies inside the field of view (vertical and, at this 1:1 film, horizontal) ...
  const double half = 20 * pi / 180;
  double widest = 0;
  for (float x : {10.0f, 16.0f}) {
    for (float y : {20.0f, 22.0f}) {
      for (float z : {30.0f, 31.0f}) {
        const vec3 d = vec3{x, y, z} - s.camera.position;
        const double ax = std::atan(std::fabs(d.x / d.z)), ay = std::atan(std::fabs(d.y / d.z));
        EXPECT_LE(ax, half);
        EXPECT_LE(ay, half);
        widest = std::max({widest, ax, ay});
      }
    }
  }
  // ... and the box fills most of it (not framed from miles away).
  EXPECT_GT(widest, 0.8 * half);
  // No MTL: the grey default.
  ASSERT_EQ(s.materials.size(), 1u);
  EXPECT_EQ(s.materials[0].kind, material_kind::diffuse);
  expect_vec(s.materials[0].albedo, {0.8f, 0.8f, 0.8f});
  EXPECT_TRUE(s.emissive.empty());
}

TEST(SceneObj, MtlMapping) {
  const fs::path dir = temp_dir();
  write(dir / "m.mtl",
        "newmtl matte\nKd 0.5 0.25 0.125\nillum 2\n"
        "newmtl chrome\nKd 0 0 0\nKs 0.9 0.8 0.7\nillum 3\n"
        "newmtl shiny\nKd 0 0 0\nKs 0.6 0.6 0.6\nillum 2\n"
        "newmtl glass\nKd 0 0 0\nTf 0.9 1 0.9\nNi 1.33\nillum 7\n"
        "newmtl faded\nKd 0.5 0.5 0.5\nd 0.5\n"
        "newmtl lamp\nKd 0.1 0.1 0.1\nKe 5 4 3\n");
  std::string obj = "mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
  for (const char* m : {"matte", "chrome", "shiny", "glass", "faded", "lamp"})
    obj += std::string("usemtl ") + m + "\nf 1 2 3\n";
  const scene s = load_scene(write(dir / "m.obj", obj), {"environment.color=[1,1,1]"});  // no key light
  ASSERT_EQ(s.triangles.size(), 7u);
  EXPECT_EQ(s.materials[s.material_of[0]].name, "default");  // the face before any usemtl
  const material* matte = find_material(s, "matte");
  const material* chrome = find_material(s, "chrome");
  const material* shiny = find_material(s, "shiny");
  const material* glass = find_material(s, "glass");
  const material* faded = find_material(s, "faded");
  const material* lamp = find_material(s, "lamp");
  ASSERT_TRUE(matte && chrome && shiny && glass && faded && lamp);
  EXPECT_EQ(matte->kind, material_kind::diffuse);
  expect_vec(matte->albedo, {0.5f, 0.25f, 0.125f});
  EXPECT_EQ(chrome->kind, material_kind::mirror);
  expect_vec(chrome->albedo, {0.9f, 0.8f, 0.7f});
  EXPECT_EQ(shiny->kind, material_kind::mirror);  // Ks > 0 with Kd = 0
  EXPECT_EQ(glass->kind, material_kind::dielectric);
  expect_vec(glass->albedo, {0.9f, 1, 0.9f});
  EXPECT_NEAR(glass->ior, 1.33f, 1e-6f);
  EXPECT_EQ(faded->kind, material_kind::diffuse);  // d < 1: opacity, never glass
  EXPECT_EQ(faded->opacity, 0.5f);
  EXPECT_EQ(lamp->kind, material_kind::diffuse);
  expect_vec(lamp->emission, {5, 4, 3});
  ASSERT_EQ(s.emissive.size(), 1u);
  EXPECT_EQ(s.emissive[0], 6u);
}

TEST(SceneObj, MissingMtlFallsBackToGrey) {
  const fs::path dir = temp_dir();
  const fs::path obj =
      write(dir / "lost.obj", "mtllib gone.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl red\nf 1 2 3\n");
  const scene s = load_scene(obj, {"environment.color=[1,1,1]"});  // no key light
  ASSERT_EQ(s.triangles.size(), 1u);
  ASSERT_EQ(s.materials.size(), 1u);
  EXPECT_EQ(s.materials[0].name, "default");
  expect_vec(s.materials[0].albedo, {0.8f, 0.8f, 0.8f});
}

// --------------------------------------------------------------------------------------------------
// TOML features beyond the Cornell box.

TEST(SceneToml, ObjectTransformsMaterialsAndLights) {
  const fs::path dir = temp_dir();
  write(dir / "tri.obj", "v 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\n");
  const fs::path toml =
      write(dir / "s.toml",
            "name = \"t\"\n"
            "[[objects]]\nobj = \"tri.obj\"\nscale = 2\nrotate_y = 90\ntranslate = [10, 0, 0]\n"
            "material = \"gold\"\n"
            "[[objects]]\nobj = \"tri.obj\"\nscale = [1, 2, 3]\n"
            "[[materials]]\nname = \"gold\"\ntype = \"mirror\"\nalbedo = [1, 0.8, 0.3]\n"
            "[[materials]]\nname = \"default\"\nalbedo = [0.1, 0.2, 0.3]\n"
            "[[lights]]\ntype = \"quad\"\ncorner = [0, 5, 0]\nedge1 = [2, 0, 0]\nedge2 = [0, 0, 3]\n"
            "emission = [4, 4, 4]\n");
  const scene s = load_scene(toml);
  ASSERT_EQ(s.triangles.size(), 4u);
  // scale 2, then 90 degrees about y ((x, z) -> (z, -x)), then translate.
  expect_vec(s.triangles[0].v0, {10, 0, -2});
  expect_vec(s.triangles[0].v1, {10, 2, 0});
  expect_vec(s.triangles[0].v2, {12, 0, 0});
  expect_vec(s.triangles[1].v2, {0, 0, 3});
  const material& gold = s.materials[s.material_of[0]];
  EXPECT_EQ(gold.name, "gold");
  EXPECT_EQ(gold.kind, material_kind::mirror);
  expect_vec(gold.albedo, {1, 0.8f, 0.3f});
  expect_vec(s.materials[s.material_of[1]].albedo,
             {0.1f, 0.2f, 0.3f});  // [[materials]] overrides the default
  ASSERT_EQ(s.emissive.size(), 2u);
  EXPECT_EQ(s.emissive[0], 2u);
  EXPECT_EQ(s.emissive[1], 3u);
  EXPECT_EQ(s.material_of[2], s.material_of[3]);
  expect_vec(s.materials[s.material_of[2]].emission, {4, 4, 4});
  EXPECT_NEAR(area(s.triangles[2]) + area(s.triangles[3]), 6.0f, 1e-5f);
}

TEST(SceneToml, MicrofacetMaterialKeys) {
  small_scene sm;
  const scene s = load_scene(sm.toml(
      "material = \"brushed\"\n"
      "[[materials]]\nname = \"brushed\"\ntype = \"gltf\"\nalbedo = [0.9, 0.6, 0.2]\nmetallic = 1\nroughness = 0.35\n"
      "transmission = 0.25\nthin = true\nior = 1.7\n"));
  const material& m = s.materials[s.material_of[0]];
  EXPECT_EQ(m.kind, material_kind::gltf);
  EXPECT_EQ(m.metallic, 1.0f);
  EXPECT_EQ(m.roughness, 0.35f);
  EXPECT_EQ(m.transmission, 0.25f);
  EXPECT_TRUE(m.thin);
  EXPECT_EQ(m.ior, 1.7f);
  for (const char* type : {"conductor", "rough_dielectric"}) {
    const scene t = load_scene(sm.toml(std::string("material = \"x\"\n[[materials]]\nname = \"x\"\ntype = \"") + type +
                                       "\"\nroughness = 0.5\n"));
    EXPECT_EQ(t.materials[t.material_of[0]].roughness, 0.5f) << type;
  }
  expect_error([&] { load_scene(sm.toml("[[materials]]\nname = \"m\"\nroughness = 1.5\n", "r.toml")); },
               {"r.toml", "materials[0].roughness", "out of range"});
  expect_error([&] { load_scene(sm.toml("[[materials]]\nname = \"m\"\nthin = 1\n", "t.toml")); },
               {"t.toml", "materials[0].thin", "true or false"});
  expect_error([&] { load_scene(sm.toml("[[materials]]\nname = \"m\"\ntype = \"plastic\"\n", "k.toml")); },
               {"k.toml", "rough_dielectric, gltf"});
}

TEST(SceneToml, DefaultsWhenTablesAreAbsent) {
  small_scene sm;
  const scene s = load_scene(sm.toml(""));
  EXPECT_EQ(s.name, "scene");  // the file's stem
  EXPECT_EQ(s.film.spp, film_desc{}.spp);
  EXPECT_EQ(s.compaction.strategy, "auto");
  EXPECT_FLOAT_EQ(s.camera.vfov_degrees, camera_desc{}.vfov_degrees);
}

// --------------------------------------------------------------------------------------------------
// Bad input: one sieve::error naming the file.

TEST(SceneErrors, MissingFiles) {
  const fs::path dir = temp_dir();
  expect_error([&] { load_scene(dir / "nope.toml"); }, {"nope.toml", "not found"});
  expect_error([&] { load_scene(dir / "nope.obj"); }, {"nope.obj", "not found"});
  const fs::path toml = write(dir / "s.toml", "[[objects]]\nobj = \"absent.obj\"\n");
  expect_error([&] { load_scene(toml); }, {"s.toml", "absent.obj", "objects[0].obj"});
  write(dir / "x.stl", "solid\n");
  expect_error([&] { load_scene(dir / "x.stl"); }, {"x.stl", ".toml, .obj, .gltf, .glb or .ply"});
}

TEST(SceneErrors, MissingMtlOfATomlObject) {
  const fs::path dir = temp_dir();
  write(dir / "m.obj", "mtllib gone.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl red\nf 1 2 3\n");
  const fs::path toml = write(dir / "s.toml", "[[objects]]\nobj = \"m.obj\"\n");
  expect_error([&] { load_scene(toml); }, {"m.obj", "gone.mtl", "s.toml"});
}

TEST(SceneErrors, UnknownMaterialInATomlObject) {
  const fs::path dir = temp_dir();
  write(dir / "m.mtl", "newmtl white\nKd 1 1 1\n");
  write(dir / "m.obj", "mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl chartreuse\nf 1 2 3\n");
  expect_error([&] { load_scene(write(dir / "s.toml", "[[objects]]\nobj = \"m.obj\"\n")); },
               {"m.obj", "chartreuse"});
  // With `material =` the object's unknown usemtl names do not matter, but the material must exist.
  const scene s = load_scene(write(dir / "u.toml",
                                   "[[objects]]\nobj = \"m.obj\"\nmaterial = \"white\"\n"
                                   "[[materials]]\nname = \"white\"\nalbedo = [0.5, 0.5, 0.5]\n"));
  ASSERT_EQ(s.materials.size(), 1u);
  expect_vec(s.materials[0].albedo, {0.5f, 0.5f, 0.5f});
  // ... and it may be one of the object's own MTL materials.
  const scene own = load_scene(write(dir / "v.toml", "[[objects]]\nobj = \"m.obj\"\nmaterial = \"white\"\n"));
  ASSERT_EQ(own.materials.size(), 1u);
  expect_vec(own.materials[0].albedo, {1, 1, 1});
  expect_error(
      [&] { load_scene(write(dir / "t.toml", "[[objects]]\nobj = \"m.obj\"\nmaterial = \"nope\"\n")); },
      {"t.toml", "objects[0].material", "nope"});
}

TEST(SceneErrors, BadMtlValues) {
  const fs::path dir = temp_dir();
  write(dir / "m.mtl", "newmtl hot\nKd 1.5 0 0\n");
  write(dir / "m.obj", "mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl hot\nf 1 2 3\n");
  expect_error([&] { load_scene(dir / "m.obj"); }, {"m.mtl:2: Kd 1.5 is out of range (0 .. 1)"});
}

TEST(SceneErrors, TomlSyntax) {
  small_scene sm;
  expect_error([&] { load_scene(sm.toml("[film\nspp = 4\n")); }, {"scene.toml:3"});
}

TEST(SceneErrors, UnknownKeysAndTables) {
  small_scene sm;
  expect_error([&] { load_scene(sm.toml("colour = 1\n", "a.toml")); }, {"a.toml", "colour", "unknown key"});
  expect_error([&] { load_scene(sm.toml("[render]\nspp = 1\n", "b.toml")); }, {"b.toml", "render"});
  expect_error([&] { load_scene(sm.toml("[camera]\nfov = 30\n", "c.toml")); }, {"c.toml:4", "camera.fov"});
  expect_error([&] { load_scene(sm.toml("rotate_x = 30\n", "d.toml")); },
               {"d.toml:3", "objects[0].rotate_x"});
  expect_error([&] { load_scene(sm.toml("[[materials]]\nname = \"m\"\nshininess = 1\n", "e.toml")); },
               {"e.toml", "materials[0].shininess"});
  expect_error(
      [&] {
        load_scene(
            sm.toml("[[lights]]\ncorner=[0,0,0]\nedge1=[1,0,0]\nedge2=[0,1,0]\nemission=[1,1,1]\n"
                    "size = 3\n",
                    "f.toml"));
      },
      {"f.toml", "lights[0].size"});
}

TEST(SceneErrors, WrongTypes) {
  small_scene sm;
  expect_error([&] { load_scene(sm.toml("[film]\nspp = \"64\"\n", "a.toml")); },
               {"a.toml", "film.spp", "string"});
  expect_error([&] { load_scene(sm.toml("[film]\nspp = 4.5\n", "b.toml")); },
               {"b.toml", "film.spp", "integer"});
  expect_error([&] { load_scene(sm.toml("[camera]\nposition = [1, 2]\n", "c.toml")); },
               {"c.toml", "camera.position"});
  expect_error([&] { load_scene(sm.toml("[camera]\nposition = [1, 2, \"z\"]\n", "d.toml")); },
               {"d.toml", "camera.position[2]"});
  expect_error([&] { load_scene(write(sm.dir / "e.toml", "film = 3\n[[objects]]\nobj = \"tri.obj\"\n")); },
               {"e.toml:1", "film", "table"});
  expect_error([&] { load_scene(write(sm.dir / "f.toml", "[objects]\nobj = \"tri.obj\"\n")); },
               {"f.toml", "objects", "[[objects]]"});
  expect_error([&] { load_scene(sm.toml("scale = \"big\"\n", "g.toml")); }, {"g.toml", "objects[0].scale"});
  expect_error([&] { load_scene(sm.toml("[compaction]\nstrategy = 3\n", "h.toml")); },
               {"h.toml", "compaction.strategy"});
}

TEST(SceneErrors, OutOfRange) {
  small_scene sm;
  struct bad {
    const char* toml;
    const char* key;
  };
  const bad cases[] = {
      {"[film]\nspp = 0\n", "film.spp"},
      {"[film]\nspp = -4\n", "film.spp"},
      {"[film]\nspp = 1048577\n", "film.spp"},
      {"[film]\nwidth = 0\n", "film.width"},
      {"[film]\nwidth = 8193\nheight = 8193\n", "film.width * film.height"},
      {"[film]\nmax_bounces = 1025\n", "film.max_bounces"},
      {"[film]\nseed = -1\n", "film.seed"},
      {"[film]\nsides = \"front\"\n", "film.sides"},
      {"[film]\nsides = 1\n", "film.sides"},
      {"[film]\ntangents = \"mikk\"\n", "film.tangents"},
      {"[camera]\nvfov = 180\n", "camera.vfov"},
      {"[camera]\nvfov = 30\nfocal_length_mm = 35\nfilm_height_mm = 25\n", "camera.vfov"},
      {"[camera]\nfocal_length_mm = 35\n", "camera.focal_length_mm"},
      {"[camera]\nfocal_length_mm = 0\nfilm_height_mm = 25\n", "camera.focal_length_mm"},
      {"[camera]\nposition = [0, 0, 0]\nlook_at = [0, 0, 0]\n", "camera"},
      {"[camera]\nup = [0, 0, 1]\nposition = [0, 0, -5]\n", "camera.up"},
      {"[camera]\nposition = [nan, 0, 0]\n", "camera.position[0]"},
      {"[environment]\ncolor = [-1, 0, 0]\n", "environment.color"},
      {"[compaction]\nreorder = \"zigzag\"\n", "compaction.reorder"},
      {"[compaction]\nsort = \"bogo\"\n", "compaction.sort"},
      {"scale = 0\n", "objects[0].scale"},
      {"[[materials]]\nname = \"m\"\nalbedo = [1.5, 0, 0]\n", "materials[0].albedo"},
      {"[[materials]]\nname = \"m\"\nemission = [-1, 0, 0]\n", "materials[0].emission"},
      {"[[materials]]\nname = \"m\"\nior = 0.9\n", "materials[0].ior"},
      {"[[materials]]\nname = \"m\"\ntype = \"metal\"\n", "materials[0].type"},
      {"[[materials]]\nalbedo = [1, 1, 1]\n", "materials[0]"},
      {"[[materials]]\nname = \"m\"\n[[materials]]\nname = \"m\"\n", "materials[1].name"},
      {"[[lights]]\ncorner=[0,0,0]\nedge1=[1,0,0]\nedge2=[2,0,0]\nemission=[1,1,1]\n", "lights[0]"},
      {"[[lights]]\ncorner=[0,0,0]\nedge1=[1,0,0]\nedge2=[0,1,0]\nemission=[0,0,0]\n", "lights[0].emission"},
      {"[[lights]]\ntype=\"disk\"\ncorner=[0,0,0]\nedge1=[1,0,0]\nedge2=[0,1,0]\nemission=[1,1,1]\n",
       "lights[0].type"},
      {"[[lights]]\ncorner=[0,0,0]\nedge1=[1,0,0]\nemission=[1,1,1]\n", "lights[0]"},
  };
  int n = 0;
  for (const auto& c : cases) {
    const std::string name = "case" + std::to_string(n++) + ".toml";
    SCOPED_TRACE(c.toml);
    expect_error([&] { load_scene(sm.toml(c.toml, name)); }, {name, c.key});
  }
}

TEST(SceneErrors, NonFiniteVertices) {
  const fs::path dir = temp_dir();
  for (const char* bad : {"nan", "inf", "-inf", "1e40"}) {
    const fs::path obj =
        write(dir / "bad.obj", std::string("v 0 0 0\nv 1 ") + bad + " 0\nv 0 1 0\nf 1 2 3\n");
    SCOPED_TRACE(bad);
    expect_error([&] { load_scene(obj); }, {"bad.obj:2", "vertex 2", "non-finite"});
  }
  // Through a TOML object too: the message names the OBJ and the scene.
  write(dir / "nan.obj", "v 0 0 0\nv 1 0 0\nv 0 nan 0\nf 1 2 3\n");
  expect_error([&] { load_scene(write(dir / "s.toml", "[[objects]]\nobj = \"nan.obj\"\n")); },
               {"nan.obj:3", "vertex 3", "s.toml"});
}

TEST(SceneErrors, ObjParseErrors) {
  const fs::path dir = temp_dir();
  expect_error([&] { load_scene(write(dir / "a.obj", "v 0 0 zero\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")); },
               {"a.obj:1", "zero"});
  expect_error([&] { load_scene(write(dir / "b.obj", "v 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")); },
               {"b.obj:1", "vertex 1"});
  expect_error([&] { load_scene(write(dir / "c.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 x\n")); },
               {"c.obj:4", "'x'"});
  expect_error([&] { load_scene(write(dir / "d.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n")); },
               {"d.obj:4", "0"});
  expect_error([&] { load_scene(write(dir / "e.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2\n")); }, {"e.obj:4"});
}

TEST(SceneErrors, FacesPastTheVertexList) {
  const fs::path dir = temp_dir();
  expect_error([&] { load_scene(write(dir / "a.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n")); },
               {"a.obj:4", "4", "3 vertices"});
  expect_error([&] { load_scene(write(dir / "b.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 9 4\n")); },
               {"b.obj:5", "9"});
  expect_error([&] { load_scene(write(dir / "c.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -1 -2 -4\n")); },
               {"c.obj:4", "-4"});
  write(dir / "d.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 3 7\n");
  expect_error([&] { load_scene(write(dir / "d.toml", "[[objects]]\nobj = \"d.obj\"\n")); },
               {"d.obj:5", "d.toml"});
}

TEST(SceneErrors, NothingToRender) {
  const fs::path dir = temp_dir();
  expect_error([&] { load_scene(write(dir / "empty.toml", "name = \"x\"\n")); },
               {"empty.toml", "[[objects]]"});
  expect_error([&] { load_scene(write(dir / "points.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\n")); },
               {"points.obj", "no triangles"});
  write(dir / "points2.obj", "v 0 0 0\n");
  expect_error([&] { load_scene(write(dir / "p.toml", "[[objects]]\nobj = \"points2.obj\"\n")); },
               {"p.toml", "no triangles"});
}

// ------------------------------------------------------------------------------------------------
// Hardening: inputs that are not regular files, never end, or are too large to triangulate.

const std::string tri = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";

// expect_error in a child process that SIGALRM ends after `seconds`: an input that blocks or never
// ends fails the test instead of hanging it.
void expect_error_within(unsigned seconds, const std::function<void()>& f, std::initializer_list<std::string> parts) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    ::alarm(seconds);
    int code = 3;  // nothing thrown
    std::string msg;
    try {
      f();
    } catch (const sieve::error& e) {
      msg = e.what(), code = 0;
    } catch (const std::exception& e) {
      msg = e.what(), code = 2;
    }
    if (::write(fds[1], msg.data(), msg.size()) < 0) code = 4;
    ::_exit(code);
  }
  ::close(fds[1]);
  std::string msg;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) msg.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "the load did not end within " << seconds << " s (signal "
                                 << (WIFSIGNALED(status) ? WTERMSIG(status) : 0) << ")";
  ASSERT_EQ(WEXITSTATUS(status), 0) << "expected a sieve::error, got: " << msg;
  for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
}

TEST(SceneInputs, OnlyRegularFilesAreRead) {
  const fs::path dir = temp_dir();
  fs::create_directories(dir / "sub.obj");
  auto obj = [&](const std::string& path) {
    return write(dir / "s.toml", "[[objects]]\nobj = \"" + path + "\"\n");
  };
  expect_error([&] { load_scene(obj("sub.obj")); }, {"sub.obj", "is a directory, not a regular file"});
  expect_error([&] { load_scene(obj("/dev/null")); }, {"/dev/null", "character device"});
  // The TOML file itself as the OBJ: no face in it.
  expect_error([&] { load_scene(obj("s.toml")); }, {"s.toml", "no triangles", "is it an OBJ file?"});
  expect_error([&] { load_scene(dir / "sub.obj"); }, {"sub.obj", "is a directory"});
  fs::create_directories(dir / "d.toml");
  expect_error([&] { load_scene(dir / "d.toml"); }, {"d.toml", "is a directory"});
  // An MTL that is a directory.
  write(dir / "m.obj", "mtllib m.mtl\n" + tri);
  fs::create_directories(dir / "m.mtl");
  expect_error([&] { load_scene(dir / "m.obj"); }, {"m.mtl", "is a directory"});
}

TEST(SceneInputs, EndlessAndBlockingInputsFailAtOnce) {
  const fs::path dir = temp_dir();
  expect_error_within(10, [&] { load_scene(write(dir / "z.toml", "[[objects]]\nobj = \"/dev/zero\"\n")); },
                      {"/dev/zero", "character device"});
  ASSERT_EQ(::mkfifo((dir / "f.obj").c_str(), 0600), 0) << std::strerror(errno);
  ASSERT_EQ(::mkfifo((dir / "f.toml").c_str(), 0600), 0) << std::strerror(errno);
  expect_error_within(10, [&] { load_scene(dir / "f.toml"); }, {"f.toml", "a FIFO, not a regular file"});
  expect_error_within(10, [&] { load_scene(dir / "f.obj"); }, {"f.obj", "a FIFO"});
  expect_error_within(10, [&] { load_scene(write(dir / "g.toml", "[[objects]]\nobj = \"f.obj\"\n")); },
                      {"f.obj", "a FIFO"});
  ASSERT_EQ(::mkfifo((dir / "f.mtl").c_str(), 0600), 0) << std::strerror(errno);
  expect_error_within(10, [&] { load_scene(write(dir / "h.obj", "mtllib f.mtl\n" + tri)); }, {"f.mtl", "a FIFO"});
}

TEST(SceneInputs, SymlinkLoopIsNotMissing) {
  const fs::path dir = temp_dir();
  fs::create_symlink(dir / "loop.obj", dir / "loop.obj");
  expect_error([&] { load_scene(write(dir / "s.toml", "[[objects]]\nobj = \"loop.obj\"\n")); },
               {"loop.obj", "symbolic links"});
  expect_error([&] { load_scene(dir / "loop.obj"); }, {"loop.obj", "symbolic links"});
}

TEST(SceneInputs, HugePolygonFailsBeforeTriangulation) {
  const fs::path dir = temp_dir();
  std::string face = "f";
  for (int i = 1; i <= 1'000'000; ++i) face += " " + std::to_string(i % 3 + 1);
  write(dir / "big.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\n" + face + "\n");
  const auto t0 = std::chrono::steady_clock::now();
  expect_error([&] { load_scene(dir / "big.obj"); }, {"big.obj:4", "1000000 vertices", "at most 256"});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  // 256 vertices are read (and make 254 triangles).
  face = "f";
  for (int i = 0; i < 256; ++i) face += " " + std::to_string(i + 1);
  std::string ring;
  for (int i = 0; i < 256; ++i) {
    const double a = 2 * pi * i / 256;
    ring += "v " + std::to_string(std::cos(a)) + " " + std::to_string(std::sin(a)) + " 0\n";
  }
  EXPECT_EQ(load_scene(write(dir / "ring.obj", ring + face + "\n"), {"environment.color=[1,1,1]"}).triangles.size(), 254U);
}

TEST(SceneInputs, TriangleLimitIsCheckedWhileParsing) {
  const fs::path dir = temp_dir();
  std::string obj = "v 0 0 0\nv 1 0 0\nv 0 1 0\n";
  for (int i = 0; i < 20; ++i) obj += "f 1 2 3\n";
  write(dir / "many.obj", obj);
  scene_limits limits;
  limits.max_triangles = 10;
  // The 11th face (line 14) passes the limit: the message names that line.
  expect_error([&] { load_scene(dir / "many.obj", {}, limits); }, {"many.obj:14", "more than 10 triangles"});
  write(dir / "s.toml", "[[lights]]\ncorner = [0, 0, 0]\nedge1 = [1, 0, 0]\nedge2 = [0, 1, 0]\nemission = [1, 1, 1]\n"
                        "[[objects]]\nobj = \"many.obj\"\n");
  expect_error([&] { load_scene(dir / "s.toml", {}, limits); }, {"many.obj:14", "more than 10 triangles"});
}

TEST(SceneInputs, CarriageReturnLinesAreChecked) {
  const fs::path dir = temp_dir();
  expect_error([&] { load_scene(write(dir / "cr.obj", "v 0 0 0\rv 1 0 0\rv nan 1 0\rf 1 2 3\r")); },
               {"cr.obj:3", "non-finite", "'nan'"});
  expect_error([&] { load_scene(write(dir / "crlf.obj", "v 0 0 0\r\nv 1 0 0\r\nv 0 1 0\r\nf 1 2 7\r\n")); },
               {"crlf.obj:4", "7"});
  EXPECT_EQ(load_scene(write(dir / "ok.obj", "v 0 0 0\rv 1 0 0\rv 0 1 0\rf 1 2 3\r"), {"environment.color=[1,1,1]"}).triangles.size(), 1U);
}

TEST(SceneInputs, MtlNumbersAreChecked) {
  const fs::path dir = temp_dir();
  auto with_mtl = [&](const std::string& name, const std::string& mtl) {
    write(dir / (name + ".mtl"), mtl);
    return write(dir / (name + ".obj"), "mtllib " + name + ".mtl\nusemtl a\n" + tri);
  };
  expect_error([&] { load_scene(with_mtl("ke", "newmtl a\nKd 0.5 0.5 0.5\nKe nan 1 1\n")); },
               {"ke.mtl:3", "Ke 'nan' is not a finite number"});
  expect_error([&] { load_scene(with_mtl("kd", "newmtl a\nKd 0.5 grey 0.5\n")); }, {"kd.mtl:2", "'grey' is not a number"});
  expect_error([&] { load_scene(with_mtl("big", "newmtl a\nKe 1e39 1 1\n")); }, {"big.mtl:2", "not a finite number"});
  expect_error([&] { load_scene(with_mtl("tr", "newmtl a\nKd 0.5 0.5 0.5\nTr 1.5\n")); },
               {"tr.mtl:3", "Tr 1.5 is out of range (0 .. 1)"});
  expect_error([&] { load_scene(with_mtl("d", "newmtl a\nd -0.5\n")); }, {"d.mtl:2", "d -0.5 is out of range"});
  // A second newmtl of a name: the same values are harmless, different ones an error.
  EXPECT_EQ(load_scene(with_mtl("same", "newmtl a\nKd 0.5 0.5 0.5\nnewmtl a\nKd 0.5 0.5 0.5\n")).materials.size(), 2U);  // and the key light
  expect_error([&] { load_scene(with_mtl("dup", "newmtl a\nKd 0.5 0.5 0.5\nnewmtl a\nKd 0.1 0.5 0.5\n")); },
               {"dup.mtl", "newmtl 'a' is defined twice, with different values"});
  // Options and colour forms tinyobjloader reads are not numbers to check.
  EXPECT_EQ(load_scene(with_mtl("opt", "newmtl a\nKd 0.5 0.5 0.5\nd -halo 0.5\n")).triangles.size(), 3U);  // and the key light
}

TEST(SceneInputs, ManyMaterialsLoadInLinearTime) {
  const fs::path dir = temp_dir();
  constexpr int n = 100'000;
  std::string toml = "[[lights]]\ncorner = [0, 0, 0]\nedge1 = [1, 0, 0]\nedge2 = [0, 1, 0]\nemission = [1, 1, 1]\n";
  for (int i = 0; i < n; ++i) toml += "[[materials]]\nname = \"m" + std::to_string(i) + "\"\n";
  write(dir / "s.toml", toml);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(load_scene(dir / "s.toml").triangles.size(), 2U);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  write(dir / "dup.toml", toml + "[[materials]]\nname = \"m7\"\n");
  expect_error([&] { load_scene(dir / "dup.toml"); }, {"'m7' is already defined by materials[7]"});
}

TEST(SceneInputs, ControlCharactersAreEscaped) {
  const fs::path dir = temp_dir();
  const std::string msg = expect_error(
      [&] { load_scene(write(dir / "s.toml", "[[objects]]\nobj = \"red\\u001b[31m\\nline.obj\"\n")); },
      {"red\\x1b[31m\\x0aline.obj"});
  EXPECT_EQ(msg.find('\x1b'), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  expect_error([&] { load_scene(write(dir / "k.toml", "[camera]\n\"bad\\u0007key\" = 1\n")); }, {"bad\\x07key"});
}

// The memory a scene's triangles and film take is checked when they are counted, before they are
// read or generated (core/memory.hpp's model), against MemAvailable or the limit's memory.
TEST(SceneInputs, MemoryIsCheckedBeforeTrianglesAreMade) {
  const fs::path dir = temp_dir();
  scene_limits limits;
  limits.available_memory = std::uint64_t{256} << 20;
  const auto t0 = std::chrono::steady_clock::now();
  // 2 x 2048^2 = 8388608 triangles: ~1.8 GiB by the model; refused before one is made.
  expect_error([&] { load_scene(write(dir / "h.toml", "[procedural]\ntype = \"heightfield\"\ngrid = 2048\n"), {}, limits); },
               {"h.toml", "8388608 triangles", "need about 1.", "GiB of memory (256 MiB available)"});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
  // An OBJ: counted by the check before tinyobjloader reads it.
  std::string obj = "v 0 0 0\nv 1 0 0\nv 0 1 0\n";
  for (int i = 0; i < 1000; ++i) obj += "f 1 2 3\n";
  write(dir / "m.obj", obj);
  limits.available_memory = memory::host_base + 999 * memory::host_per_triangle;
  expect_error([&] { load_scene(dir / "m.obj", {}, limits); }, {"m.obj", "1000 triangles", "need about"});
  limits.available_memory = memory::host_bytes({1000, 512 * 512, 0, false});  // the default film
  EXPECT_EQ(load_scene(dir / "m.obj", {"environment.color=[1,1,1]"}, limits).triangles.size(), 1000U);
  // The largest heightfield the limits allow (2^27 triangles, ~28 GiB by the model) against this
  // machine's MemAvailable: refused with the model's message, not std::bad_alloc, where it does not fit.
  const auto available = memory::host_available();
  if (!available || *available > memory::host_bytes({134'217'728, 512 * 512, 0, false})) GTEST_SKIP() << "a large machine";
  expect_error([&] { load_scene(write(dir / "max.toml", "[procedural]\ntype = \"heightfield\"\ngrid = 8192\n")); },
               {"134217728 triangles", "available"});
}

TEST(SceneInputs, CoordinateOverflowIsNamed) {
  const fs::path dir = temp_dir();
  expect_error([&] { load_scene(write(dir / "huge.obj", "v -3e38 0 0\nv 3e38 0 0\nv 0 3e38 0\nf 1 2 3\n")); },
               {"huge.obj", "too large to frame", "overflows a float"});
  expect_error([&] {
    load_scene(write(dir / "far.toml", "[camera]\nposition = [-3e38, 0, 0]\nlook_at = [3e38, 0, 0]\n"
                                       "[[lights]]\ncorner = [0, 0, 0]\nedge1 = [1, 0, 0]\nedge2 = [0, 1, 0]\nemission = [1, 1, 1]\n"));
  }, {"far.toml", "too far apart", "overflows a float"});
}

}  // namespace
