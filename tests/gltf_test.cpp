// glTF 2.0 scenes: the shipped box (scenes/gltf, made by make_box.py) loads to the same triangles and
// materials as its OBJ twin and renders to the same image bit for bit, alone and inside a TOML scene;
// the GLB form equals the JSON form; node transforms, strips, fans and cameras; and malformed files
// of every kind end in one sieve::error naming the file and the element at fault.
#include <scene/load.hpp>
#include <run/render.hpp>

#include "scene_test_support.hpp"
#include "textured_quad.hpp"

#include <sieve/compaction/error.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace sieve::render;

namespace {

// A bare model's sky given as an override: the loader adds no key light (these tests count triangles
// and materials of the model alone).
const std::vector<std::string> sky = {"environment.color=[1,1,1]"};

const fs::path scenes_dir = SIEVE_SCENES_DIR;
const fs::path box_dir = scenes_dir / "gltf";
constexpr double pi = 3.14159265358979323846;

fs::path temp_dir() { return sieve::render::testing::fresh_dir("sieve_gltf_test_"); }
using sieve::render::testing::write;

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

using sieve::render::testing::expect_error;

bool same_bits(vec3 a, vec3 b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// The two arrays hold the same bytes (memcmp may not be given the null data() of an empty vector).
template <class T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// The two scenes hold the same triangles (bit for bit, same order), materials, lights, camera, sky.
// `kinds`: compare the materials' kinds and parameters too (false between an OBJ, whose MTL maps
// onto diffuse, mirror and glass, and a glTF, whose materials are the glTF model).
void expect_same_scene(const scene& a, const scene& b, bool kinds = true) {
  ASSERT_EQ(a.triangles.size(), b.triangles.size());
  for (std::size_t i = 0; i < a.triangles.size(); ++i) {
    const triangle &s = a.triangles[i], &t = b.triangles[i];
    ASSERT_TRUE(same_bits(s.v0, t.v0) && same_bits(s.v1, t.v1) && same_bits(s.v2, t.v2)) << "triangle " << i;
    const material &m = a.materials[a.material_of[i]], &n = b.materials[b.material_of[i]];
    if (kinds) {
      ASSERT_EQ(m.kind, n.kind) << "triangle " << i << ": " << m.name << " / " << n.name;
      ASSERT_EQ(m.roughness, n.roughness) << "triangle " << i;
      ASSERT_EQ(m.metallic, n.metallic) << "triangle " << i;
      ASSERT_EQ(m.transmission, n.transmission) << "triangle " << i;
    }
    ASSERT_TRUE(same_bits(m.albedo, n.albedo)) << "triangle " << i << ": " << m.name << " / " << n.name;
    ASSERT_TRUE(same_bits(m.emission, n.emission)) << "triangle " << i << ": " << m.name << " / " << n.name;
    ASSERT_EQ(m.ior, n.ior) << "triangle " << i;
    ASSERT_EQ(m.albedo_texture, n.albedo_texture) << "triangle " << i;
  }
  EXPECT_TRUE(same_bytes(a.uvs, b.uvs));
  EXPECT_TRUE(same_bytes(a.normals, b.normals));
  ASSERT_EQ(a.textures.size(), b.textures.size());
  for (std::size_t i = 0; i < a.textures.size(); ++i) {
    EXPECT_EQ(a.textures[i].wrap, b.textures[i].wrap);
    EXPECT_TRUE(same_bytes(a.textures[i].texels, b.textures[i].texels)) << "texture " << i;
    EXPECT_TRUE(same_bits(a.textures[i].scale, b.textures[i].scale)) << "texture " << i;
  }
  EXPECT_EQ(a.emissive, b.emissive);
  EXPECT_TRUE(same_bits(a.camera.position, b.camera.position));
  EXPECT_TRUE(same_bits(a.camera.look_at, b.camera.look_at));
  EXPECT_TRUE(same_bits(a.camera.up, b.camera.up));
  EXPECT_EQ(a.camera.vfov_degrees, b.camera.vfov_degrees);
  EXPECT_TRUE(same_bits(a.environment, b.environment));
}

const std::vector<std::string> small_film = {"film.width=24", "film.height=20", "film.spp=2", "film.max_bounces=4"};

std::vector<vec3> render(const scene& s) {
  const prepared_scene ps(s);
  return render_cpu(ps, render_settings::from(s)).mean();
}

// ------------------------------------------------------------------------------------------------
// A glTF built here: a unit quad (4 positions, 6 u16 indices) in one buffer held as a data URI.

std::string base64(const std::string& bytes) {
  static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::uint32_t b0 = static_cast<unsigned char>(bytes[i]);
    const std::uint32_t b1 = i + 1 < bytes.size() ? static_cast<unsigned char>(bytes[i + 1]) : 0;
    const std::uint32_t b2 = i + 2 < bytes.size() ? static_cast<unsigned char>(bytes[i + 2]) : 0;
    const std::uint32_t v = (b0 << 16) | (b1 << 8) | b2;
    out += digits[(v >> 18) & 63];
    out += digits[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? digits[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? digits[v & 63] : '=';
  }
  return out;
}

template <class T>
std::string bytes_of(const std::vector<T>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)};
}

json buffer_of(const std::string& bytes) {
  return {{"byteLength", bytes.size()}, {"uri", "data:application/octet-stream;base64," + base64(bytes)}};
}

const std::vector<float> quad_positions = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
const std::vector<std::uint16_t> quad_indices = {0, 1, 2, 0, 2, 3};

json quad_gltf(const std::vector<float>& positions = quad_positions,
               const std::vector<std::uint16_t>& indices = quad_indices) {
  const std::string pos = bytes_of(positions), idx = bytes_of(indices);
  return {
      {"asset", {{"version", "2.0"}}},
      {"scene", 0},
      {"scenes", json::array({{{"nodes", {0}}}})},
      {"nodes", json::array({{{"mesh", 0}}})},
      {"meshes", json::array({{{"primitives", json::array({{{"attributes", {{"POSITION", 0}}},
                                                             {"indices", 1},
                                                             {"material", 0}}})}}})},
      {"materials", json::array({{{"name", "quad"},
                                  {"pbrMetallicRoughness", {{"baseColorFactor", {0.5, 0.25, 0.125, 1}}}}}})},
      {"accessors", json::array({{{"bufferView", 0},
                                  {"componentType", 5126},
                                  {"count", positions.size() / 3},
                                  {"type", "VEC3"}},
                                 {{"bufferView", 1},
                                  {"componentType", 5123},
                                  {"count", indices.size()},
                                  {"type", "SCALAR"}}})},
      {"bufferViews", json::array({{{"buffer", 0}, {"byteOffset", 0}, {"byteLength", pos.size()}},
                                   {{"buffer", 0}, {"byteOffset", pos.size()}, {"byteLength", idx.size()}}})},
      {"buffers", json::array({buffer_of(pos + idx)})},
  };
}

fs::path write_gltf(const fs::path& dir, const json& doc, const std::string& name = "model.gltf") {
  return write(dir / name, doc.dump());
}

// ------------------------------------------------------------------------------------------------
// The shipped box against its OBJ twin.

TEST(GltfBox, LoadsTheSameSceneAsItsObjTwin) {
  const scene obj = load_scene(box_dir / "box.obj");
  const scene gltf = load_scene(box_dir / "box.gltf");
  ASSERT_EQ(gltf.triangles.size(), 12u + 2 * 12u);  // 5 walls and a light, two cubes
  EXPECT_EQ(gltf.emissive.size(), 2u);
  expect_same_scene(obj, gltf, false);
  EXPECT_EQ(gltf.name, "box");
  EXPECT_EQ(gltf.files, (std::vector<fs::path>{box_dir / "box.gltf", box_dir / "checker.png"}));
  // The floor is textured (the checker as the albedo texture, uvs from TEXCOORD_0).
  ASSERT_EQ(gltf.textures.size(), 1u);
  EXPECT_EQ(gltf.textures[0].width, 16u);
  ASSERT_EQ(gltf.uvs.size(), gltf.triangles.size());
  EXPECT_EQ(gltf.uvs[0].t1.v, 2.0f);
}

TEST(GltfBox, GlbEqualsGltf) {
  expect_same_scene(load_scene(box_dir / "box.gltf"), load_scene(box_dir / "box.glb"));
}

TEST(GltfBox, GlbRendersBitIdenticallyToGltf) {
  const scene obj = load_scene(box_dir / "box.glb", small_film);
  const scene gltf = load_scene(box_dir / "box.gltf", small_film);
  const std::vector<vec3> a = render(obj), b = render(gltf);
  ASSERT_EQ(a.size(), b.size());
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_TRUE(same_bits(a[i], b[i])) << "pixel " << i;
    sum += a[i].x + a[i].y + a[i].z;
  }
  EXPECT_GT(sum, 0) << "a black image proves nothing";
}

TEST(GltfBox, TomlObjectsOfBothFormatsAreTheSame) {
  // The same transform keys for either kind of object; `material =` as for OBJ objects.
  const fs::path dir = temp_dir();
  auto scene_text = [&](const std::string& key, const std::string& ext) {
    const std::string file = (box_dir / ("box." + ext)).string();
    return "[[objects]]\n" + key + " = \"" + file + "\"\ntranslate = [1, 2, 3]\nscale = [2, 1, 0.5]\nrotate_y = 30\n" +
           "[[objects]]\n" + key + " = \"" + file + "\"\nmaterial = \"red\"\ntranslate = [10, 0, 0]\n" +
           "[environment]\ncolor = [0.5, 0.5, 0.5]\n";
  };
  const scene obj = load_scene(write(dir / "obj.toml", scene_text("obj", "obj")));
  const scene gltf = load_scene(write(dir / "gltf.toml", scene_text("gltf", "gltf")));
  ASSERT_EQ(obj.triangles.size(), 2 * 36u);
  expect_same_scene(obj, gltf, false);
  // gltf files appear in scene.files like OBJ files.
  EXPECT_NE(std::find(gltf.files.begin(), gltf.files.end(), box_dir / "box.gltf"), gltf.files.end());
}

TEST(GltfBox, MaterialsAreMappedAndNamed) {
  const scene s = load_scene(box_dir / "box.gltf");
  auto find = [&](const std::string& name) -> const material& {
    for (const auto& m : s.materials)
      if (m.name == name) return m;
    ADD_FAILURE() << "no material " << name;
    return s.materials.front();
  };
  for (const auto& m : s.materials) EXPECT_EQ(m.kind, material_kind::gltf) << m.name;
  EXPECT_EQ(find("white").metallic, 0.0f);
  EXPECT_EQ(find("white").roughness, 1.0f);  // glTF's default
  EXPECT_EQ(find("mirror").metallic, 1.0f);
  EXPECT_EQ(find("mirror").roughness, 0.0f);
  EXPECT_EQ(find("glass").transmission, 1.0f);
  EXPECT_TRUE(find("glass").thin) << "no KHR_materials_volume: thin-walled";
  EXPECT_EQ(find("glass").ior, 1.5f);
  EXPECT_TRUE(same_bits(find("light").emission, vec3{16, 8, 4}));
}

TEST(GltfBox, MaterialsOverrideByName) {
  const fs::path dir = temp_dir();
  const scene s = load_scene(write(dir / "s.toml", "[[objects]]\ngltf = \"" + (box_dir / "box.gltf").string() +
                                                        "\"\n[[materials]]\nname = \"glass\"\ntype = \"diffuse\"\n"));
  for (const auto& m : s.materials)
    if (m.name == "glass") {
      EXPECT_EQ(m.kind, material_kind::diffuse);
    }
}

// ------------------------------------------------------------------------------------------------
// What the loader reads from a glTF.

TEST(Gltf, NodeTransformsApplyParentThenChild) {
  json doc = quad_gltf();
  // parent: translate (10, 0, 0); child: scale 2 then rotate 90 degrees about +z then translate (0, 0, 5).
  doc["nodes"] = json::array({{{"translation", {10, 0, 0}}, {"children", {1}}},
                              {{"mesh", 0}, {"translation", {0, 0, 5}}, {"rotation", {0, 0, std::sqrt(0.5), std::sqrt(0.5)}},
                               {"scale", {2, 2, 2}}}});
  const scene s = load_scene(write_gltf(temp_dir(), doc), sky);
  ASSERT_EQ(s.triangles.size(), 2u);
  // Vertex (1, 0, 0) -> scaled (2, 0, 0) -> rotated (0, 2, 0) -> (0, 2, 5) -> (10, 2, 5).
  const vec3 v = s.triangles[0].v1;
  EXPECT_NEAR(v.x, 10, 1e-5);
  EXPECT_NEAR(v.y, 2, 1e-5);
  EXPECT_NEAR(v.z, 5, 1e-5);
  // A matrix node gives the same.
  const float c = 0, sn = 1;
  doc["nodes"][1] = {{"mesh", 0},
                     {"matrix", {2 * c, 2 * sn, 0, 0, -2 * sn, 2 * c, 0, 0, 0, 0, 2, 0, 0, 0, 5, 1}}};
  const scene m = load_scene(write_gltf(temp_dir(), doc), sky);
  EXPECT_NEAR(m.triangles[0].v1.x, 10, 1e-5);
  EXPECT_NEAR(m.triangles[0].v1.y, 2, 1e-5);
  EXPECT_NEAR(m.triangles[0].v1.z, 5, 1e-5);
}

TEST(Gltf, InstancesAndNoSceneMeansEveryRoot) {
  json doc = quad_gltf();
  doc.erase("scene");
  doc.erase("scenes");
  doc["nodes"] = json::array({{{"mesh", 0}}, {{"mesh", 0}, {"translation", {0, 0, 1}}, {"children", {2}}},
                              {{"mesh", 0}, {"translation", {0, 0, 1}}}});
  const scene s = load_scene(write_gltf(temp_dir(), doc), sky);
  ASSERT_EQ(s.triangles.size(), 6u);  // node 2 is drawn once, under node 1
  EXPECT_EQ(s.triangles[0].v0.z, 0);
  EXPECT_EQ(s.triangles[2].v0.z, 1);
  EXPECT_EQ(s.triangles[4].v0.z, 2);
}

TEST(Gltf, StripsAndFansFollowTheSpec) {
  json doc = quad_gltf();
  auto& prim = doc["meshes"][0]["primitives"][0];
  prim.erase("indices");
  prim["mode"] = 5;  // strip: (0 1 2) (1 3 2)
  const scene strip = load_scene(write_gltf(temp_dir(), doc), sky);
  ASSERT_EQ(strip.triangles.size(), 2u);
  EXPECT_TRUE(same_bits(strip.triangles[1].v0, vec3{1, 0, 0}));
  EXPECT_TRUE(same_bits(strip.triangles[1].v1, vec3{0, 1, 0}));
  EXPECT_TRUE(same_bits(strip.triangles[1].v2, vec3{1, 1, 0}));
  prim["mode"] = 6;  // fan: (1 2 0) (2 3 0)
  const scene fan = load_scene(write_gltf(temp_dir(), doc), sky);
  ASSERT_EQ(fan.triangles.size(), 2u);
  EXPECT_TRUE(same_bits(fan.triangles[1].v0, vec3{1, 1, 0}));
  EXPECT_TRUE(same_bits(fan.triangles[1].v1, vec3{0, 1, 0}));
  EXPECT_TRUE(same_bits(fan.triangles[1].v2, vec3{0, 0, 0}));
}

TEST(Gltf, PointsAndLinesAreSkippedTrianglesKept) {
  json doc = quad_gltf();
  json lines = doc["meshes"][0]["primitives"][0];
  lines["mode"] = 1;
  doc["meshes"][0]["primitives"].push_back(lines);
  ::testing::internal::CaptureStderr();
  const scene s = load_scene(write_gltf(temp_dir(), doc), sky);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(s.triangles.size(), 2u);
  EXPECT_NE(err.find("sieve: warning: "), std::string::npos) << err;
  EXPECT_NE(err.find("points or lines skipped"), std::string::npos) << err;
  // Only lines: nothing to render.
  doc["meshes"][0]["primitives"].erase(0);
  ::testing::internal::CaptureStderr();
  expect_error([&] { load_scene(write_gltf(temp_dir(), doc), sky); }, {"model.gltf", "no triangles"});
  ::testing::internal::GetCapturedStderr();
}

TEST(Gltf, CameraIsUsedWhenLoadedAlone) {
  json doc = quad_gltf();
  // A camera at (1, 2, 3) turned 180 degrees about +y: it looks along +z.
  doc["cameras"] = json::array({{{"type", "perspective"}, {"perspective", {{"yfov", 0.5}, {"znear", 0.1}}}}});
  doc["nodes"].push_back({{"camera", 0}, {"translation", {1, 2, 3}}, {"rotation", {0, 1, 0, 0}}});
  doc["scenes"][0]["nodes"].push_back(1);
  const fs::path path = write_gltf(temp_dir(), doc);
  const scene s = load_scene(path);
  EXPECT_TRUE(same_bits(s.camera.position, vec3{1, 2, 3}));
  const vec3 dir = normalize(s.camera.look_at - s.camera.position);
  EXPECT_NEAR(dir.x, 0, 1e-6);
  EXPECT_NEAR(dir.y, 0, 1e-6);
  EXPECT_NEAR(dir.z, 1, 1e-6);
  EXPECT_NEAR(s.camera.up.y, 1, 1e-6);
  EXPECT_NEAR(s.camera.vfov_degrees, 0.5 * 180 / pi, 1e-4);
  // Overrides win, key by key.
  const scene o = load_scene(path, {"camera.vfov=30", "camera.position=[0, 0, -9]"});
  EXPECT_EQ(o.camera.vfov_degrees, 30);
  EXPECT_TRUE(same_bits(o.camera.position, vec3{0, 0, -9}));
  // Without a camera the model is framed as a bare OBJ is: from +z (glTF's front), looking at the
  // box's centre, under a grey sky with a key light.
  const scene framed = load_scene(write_gltf(temp_dir(), quad_gltf()));
  EXPECT_TRUE(same_bits(framed.camera.look_at, vec3{0.5f, 0.5f, 0}));
  EXPECT_GT(framed.camera.position.z, 0);
  EXPECT_TRUE(same_bits(framed.environment, vec3{0.35f, 0.35f, 0.35f}));
  EXPECT_EQ(framed.emissive.size(), 2u);
}

TEST(Gltf, PrimitiveWithoutMaterialGetsTheGreyDefault) {
  json doc = quad_gltf();
  doc["meshes"][0]["primitives"][0].erase("material");
  const scene s = load_scene(write_gltf(temp_dir(), doc), sky);
  ASSERT_EQ(s.materials.size(), 1u);
  EXPECT_EQ(s.materials[0].name, "default");
  EXPECT_TRUE(same_bits(s.materials[0].albedo, vec3{0.8f, 0.8f, 0.8f}));
}

TEST(Gltf, MetallicRoughnessMapping) {
  struct row {
    double metallic, roughness, transmission;
  };
  for (const row r : {row{0, 1, 0}, row{1, 1, 0}, row{1, 0.2, 0}, row{0.4, 0, 0}, row{0, 0, 1}}) {
    json doc = quad_gltf();
    auto& m = doc["materials"][0];
    m["pbrMetallicRoughness"]["metallicFactor"] = r.metallic;
    m["pbrMetallicRoughness"]["roughnessFactor"] = r.roughness;
    if (r.transmission > 0) {
      m["extensions"]["KHR_materials_transmission"]["transmissionFactor"] = r.transmission;
      m["extensions"]["KHR_materials_ior"]["ior"] = 1.33;
    }
    const scene s = load_scene(write_gltf(temp_dir(), doc), sky);
    EXPECT_EQ(s.materials[0].kind, material_kind::gltf);
    EXPECT_EQ(s.materials[0].metallic, static_cast<float>(r.metallic));
    EXPECT_EQ(s.materials[0].roughness, static_cast<float>(r.roughness));
    EXPECT_EQ(s.materials[0].transmission, static_cast<float>(r.transmission));
    EXPECT_TRUE(same_bits(s.materials[0].albedo, vec3{0.5f, 0.25f, 0.125f}));
    if (r.transmission > 0) {
      EXPECT_EQ(s.materials[0].ior, 1.33f);
    }
  }
}

// alphaMode: MASK (a cut-out at alphaCutoff) and BLEND (a stochastic opacity) take baseColorFactor's
// alpha as the material's opacity; OPAQUE ignores it; another word is an error.
TEST(Gltf, AlphaModes) {
  json doc = quad_gltf();
  auto& m = doc["materials"][0];
  m["pbrMetallicRoughness"]["baseColorFactor"] = {0.5, 0.25, 0.125, 0.6};
  const scene opaque = load_scene(write_gltf(temp_dir(), doc), sky);
  EXPECT_EQ(opaque.materials[0].alpha, alpha_mode::opaque);
  EXPECT_EQ(opaque.materials[0].opacity, 1.0f);
  m["alphaMode"] = "MASK";
  m["alphaCutoff"] = 0.3;
  const scene mask = load_scene(write_gltf(temp_dir(), doc), sky);
  EXPECT_EQ(mask.materials[0].alpha, alpha_mode::mask);
  EXPECT_EQ(mask.materials[0].opacity, 0.6f);
  EXPECT_EQ(mask.materials[0].alpha_cutoff, 0.3f);
  const std::vector<alpha_material> table = alpha_table(mask);
  ASSERT_EQ(table.size(), 1u);
  EXPECT_EQ(table[0].mode, alpha_mode::mask);
  EXPECT_EQ(table[0].factor, 0.6f);
  m["alphaMode"] = "BLEND";
  const scene blend = load_scene(write_gltf(temp_dir(), doc), sky);
  EXPECT_EQ(blend.materials[0].alpha, alpha_mode::blend);
  EXPECT_TRUE(alpha_table(opaque).empty());  // no alpha anywhere: no table, the traversals skip the predicate
  m["alphaMode"] = "CUTOUT";
  expect_error([&] { load_scene(write_gltf(temp_dir(), doc)); }, {"materials[0]", "alphaMode", "CUTOUT"});
  m["alphaMode"] = "MASK";
  m["alphaCutoff"] = -1;
  expect_error([&] { load_scene(write_gltf(temp_dir(), doc)); }, {"materials[0]", "alphaCutoff"});
}

TEST(Gltf, NormalsAndTextureCoordinates) {
  json doc = quad_gltf();
  // Normals along +z; texture coordinates in glTF's convention (v down) as normalized bytes.
  const std::vector<float> normals = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 2};  // the last is normalised
  const std::vector<std::uint8_t> uvs = {0, 255, 255, 255, 255, 0, 0, 0};
  const std::string pos = bytes_of(quad_positions), idx = bytes_of(quad_indices);
  const std::string nrm = bytes_of(normals), tex = bytes_of(uvs);
  doc["buffers"][0] = buffer_of(pos + idx + nrm + tex);
  doc["bufferViews"].push_back({{"buffer", 0}, {"byteOffset", 60}, {"byteLength", 48}});
  doc["bufferViews"].push_back({{"buffer", 0}, {"byteOffset", 108}, {"byteLength", 8}});
  doc["accessors"].push_back({{"bufferView", 2}, {"componentType", 5126}, {"count", 4}, {"type", "VEC3"}});
  doc["accessors"].push_back(
      {{"bufferView", 3}, {"componentType", 5121}, {"normalized", true}, {"count", 4}, {"type", "VEC2"}});
  doc["meshes"][0]["primitives"][0]["attributes"]["NORMAL"] = 2;
  doc["meshes"][0]["primitives"][0]["attributes"]["TEXCOORD_0"] = 3;
  const scene s = load_scene(write_gltf(temp_dir(), doc), sky);
  ASSERT_EQ(s.normals.size(), 2u);
  ASSERT_EQ(s.uvs.size(), 2u);
  EXPECT_TRUE(same_bits(s.normals[1].n2, vec3{0, 0, 1}));
  // Triangle 0 is vertices 0, 1, 2: glTF (0, 1), (1, 1), (1, 0) are sieve's (0, 0), (1, 0), (1, 1).
  EXPECT_EQ(s.uvs[0].t0.u, 0.0f);
  EXPECT_EQ(s.uvs[0].t0.v, 0.0f);
  EXPECT_EQ(s.uvs[0].t1.u, 1.0f);
  EXPECT_EQ(s.uvs[0].t1.v, 0.0f);
  EXPECT_EQ(s.uvs[0].t2.v, 1.0f);

  // A normal map: tangents computed along +u (here +x; the bitangent along +v, +y: handedness +1),
  // or the file's TANGENT where the primitive has one (its w the handedness).
  {
    const fs::path dir = temp_dir();
    write_png(dir / "flat.png", 1, 1, std::vector<vec3>{vec3{0.5f, 0.5f, 1}});
    json mapped = doc;
    mapped["images"] = json::array({{{"uri", "flat.png"}}});
    mapped["textures"] = json::array({{{"source", 0}}});
    mapped["materials"][0]["normalTexture"] = {{"index", 0}, {"scale", 0.5}};
    const scene c = load_scene(write_gltf(dir, mapped), sky);
    ASSERT_EQ(c.tangents.size(), 2u);
    EXPECT_EQ(c.materials[0].normal_scale, 0.5f);
    EXPECT_GE(c.materials[0].normal_texture, 0);
    EXPECT_NEAR(c.tangents[0].t0.x, 1, 1e-6);
    EXPECT_NEAR(c.tangents[1].t2.x, 1, 1e-6);
    EXPECT_EQ(c.tangents[0].sign, 1.0f);
    const std::vector<float> tangents = {0, 1, 0, -1, 0, 1, 0, -1, 0, 1, 0, -1, 0, 1, 0, -1};
    mapped["buffers"][0] = buffer_of(pos + idx + nrm + tex + bytes_of(tangents));
    mapped["bufferViews"].push_back({{"buffer", 0}, {"byteOffset", 116}, {"byteLength", 64}});
    mapped["accessors"].push_back({{"bufferView", 4}, {"componentType", 5126}, {"count", 4}, {"type", "VEC4"}});
    mapped["meshes"][0]["primitives"][0]["attributes"]["TANGENT"] = 4;
    const scene f = load_scene(write_gltf(dir, mapped), sky);
    ASSERT_EQ(f.tangents.size(), 2u);
    EXPECT_NEAR(f.tangents[0].t1.y, 1, 1e-6);
    EXPECT_EQ(f.tangents[0].sign, -1.0f);
    mapped["accessors"][4]["count"] = 3;
    expect_error([&] { load_scene(write_gltf(dir, mapped)); }, {"TANGENT", "3 tangents for 4 positions"});
  }

  // A mirroring node (scale -1 in x): the winding turns (glTF's rule), so the geometric normal and
  // the shading normal still agree (+z).
  doc["nodes"][0]["scale"] = {-1, 1, 1};
  const scene m = load_scene(write_gltf(temp_dir(), doc), sky);
  const triangle& t = m.triangles[0];
  EXPECT_GT(cross(t.v1 - t.v0, t.v2 - t.v0).z, 0);
  EXPECT_EQ(m.normals[0].n0.x, 0.0f);
  EXPECT_EQ(m.normals[0].n0.y, 0.0f);
  EXPECT_EQ(m.normals[0].n0.z, 1.0f) << m.normals[0].n0.x << " " << m.normals[0].n0.y;
  // A rotation turns the normals with the vertices: 90 degrees about +x takes +z to -y.
  doc["nodes"][0].erase("scale");
  doc["nodes"][0]["rotation"] = {std::sqrt(0.5), 0, 0, std::sqrt(0.5)};
  const scene r = load_scene(write_gltf(temp_dir(), doc), sky);
  EXPECT_NEAR(r.normals[0].n0.y, -1, 1e-6);
  EXPECT_NEAR(r.normals[0].n0.z, 0, 1e-6);

  // Bad attributes.
  json bad = doc;
  bad["accessors"][3]["normalized"] = false;
  expect_error([&] { load_scene(write_gltf(temp_dir(), bad)); }, {"TEXCOORD_0", "must be normalized"});
  bad = doc;
  bad["accessors"][2]["count"] = 3;
  expect_error([&] { load_scene(write_gltf(temp_dir(), bad)); }, {"NORMAL", "3 normals for 4 positions"});
  bad = doc;
  std::vector<float> nan_normals = normals;
  nan_normals[5] = std::numeric_limits<float>::quiet_NaN();
  bad["buffers"][0] = buffer_of(pos + idx + bytes_of(nan_normals) + tex);
  expect_error([&] { load_scene(write_gltf(temp_dir(), bad)); }, {"NORMAL", "normal 1", "not finite"});
}

// The textured quad of texture_test (OBJ + MTL map_Kd + PNG) and a glTF of the same triangles, uvs
// and image give the same texels and uvs, bit for bit; the glTF with the PNG as a file beside it and
// embedded as a data URI render the same image (the OBJ's is Lambert's, the glTF's the glTF model's).
TEST(Gltf, TexturedQuadMatchesItsObjTwin) {
  const fs::path dir = temp_dir();
  const fs::path toml = sieve::render::testing::write_textured_quad(dir, 2);
  const scene obj = load_scene(toml);
  ASSERT_EQ(obj.textures.size(), 1u);
  ASSERT_EQ(obj.uvs.size(), obj.triangles.size());
  std::vector<float> positions, uvs;
  for (std::size_t i = 0; i < obj.triangles.size(); ++i) {
    for (const vec3 v : {obj.triangles[i].v0, obj.triangles[i].v1, obj.triangles[i].v2}) positions.insert(positions.end(), {v.x, v.y, v.z});
    for (const tex_coord t : {obj.uvs[i].t0, obj.uvs[i].t1, obj.uvs[i].t2}) uvs.insert(uvs.end(), {t.u, 1 - t.v});
  }
  const std::string pos = bytes_of(positions), tex = bytes_of(uvs);
  const auto n = positions.size() / 3;
  json doc = {
      {"asset", {{"version", "2.0"}}},
      {"nodes", json::array({{{"mesh", 0}}})},
      {"meshes", json::array({{{"primitives", json::array({{{"attributes", {{"POSITION", 0}, {"TEXCOORD_0", 1}}},
                                                             {"material", 0}}})}}})},
      {"materials", json::array({{{"name", "painted"},
                                  {"pbrMetallicRoughness", {{"baseColorTexture", {{"index", 0}}}, {"metallicFactor", 0}}}}})},
      {"textures", json::array({{{"source", 0}}})},
      {"images", json::array({{{"uri", "quad.png"}}})},
      {"accessors", json::array({{{"bufferView", 0}, {"componentType", 5126}, {"count", n}, {"type", "VEC3"}},
                                 {{"bufferView", 1}, {"componentType", 5126}, {"count", n}, {"type", "VEC2"}}})},
      {"bufferViews", json::array({{{"buffer", 0}, {"byteLength", pos.size()}},
                                   {{"buffer", 0}, {"byteOffset", pos.size()}, {"byteLength", tex.size()}}})},
      {"buffers", json::array({buffer_of(pos + tex)})},
  };
  std::string text = read(toml);
  text.replace(text.find("obj = \"quad.obj\""), 16, "gltf = \"quad.gltf\"");
  const fs::path gltf_toml = write(dir / "quad-gltf.toml", text);
  std::vector<vec3> expected;
  for (const bool embedded : {false, true}) {
    if (embedded) doc["images"][0] = {{"uri", "data:image/png;base64," + base64(read(dir / "quad.png"))}};
    write_gltf(dir, doc, "quad.gltf");
    const scene g = load_scene(gltf_toml);
    ASSERT_EQ(g.textures.size(), 1u) << embedded;
    EXPECT_TRUE(same_bytes(g.textures[0].texels, obj.textures[0].texels)) << embedded;
    ASSERT_EQ(g.uvs.size(), obj.uvs.size());
    EXPECT_TRUE(same_bytes(g.uvs, obj.uvs)) << embedded;
    const std::vector<vec3> image = render(g);
    if (!embedded) expected = image;
    ASSERT_EQ(image.size(), expected.size());
    EXPECT_TRUE(same_bytes(image, expected)) << embedded;
  }
  // baseColorFactor multiplies what the texture reads (its scale; the texels stay as stored); an
  // emissive texture is read per texel (the unscaled image, its own texture), the factor kept on
  // the material.
  doc["materials"][0]["pbrMetallicRoughness"]["baseColorFactor"] = {0.5, 0.5, 0.25, 1};
  doc["materials"][0]["emissiveFactor"] = {1, 1, 1};
  doc["materials"][0]["emissiveTexture"] = {{"index", 0}};
  write_gltf(dir, doc, "quad.gltf");
  const scene f = load_scene(gltf_toml);
  ASSERT_EQ(f.textures.size(), 2u);
  const material& fm = f.materials[0];
  ASSERT_GE(fm.albedo_texture, 0);
  ASSERT_GE(fm.emission_texture, 0);
  const texture& base = f.textures[static_cast<std::size_t>(fm.albedo_texture)];
  EXPECT_TRUE(same_bytes(base.texels, obj.textures[0].texels));
  EXPECT_TRUE(same_bits(base.scale, vec3{0.5f, 0.5f, 0.25f}));
  const vec3 a = obj.textures[0].texel(0, 0), b = bilinear(base.view(), 0.5f / base.width, 1 - 0.5f / base.height);
  EXPECT_EQ(b.x, a.x * 0.5f);
  EXPECT_EQ(b.z, a.z * 0.25f);
  EXPECT_TRUE(same_bytes(f.textures[fm.emission_texture].texels, obj.textures[0].texels));
  EXPECT_TRUE(same_bits(fm.emission, vec3{1, 1, 1}));
  EXPECT_EQ(fm.opacity_texture, -1);  // OPAQUE: the base colour's alpha is not read
  // MASK: the base colour texture's alpha channel becomes the opacity texture; an image without
  // one (this RGB PNG) is opaque throughout, one texel of 1.
  doc["materials"][0]["alphaMode"] = "MASK";
  write_gltf(dir, doc, "quad.gltf");
  const scene masked = load_scene(gltf_toml);
  ASSERT_GE(masked.materials[0].opacity_texture, 0);
  const texture& alpha = masked.textures[static_cast<std::size_t>(masked.materials[0].opacity_texture)];
  EXPECT_EQ(alpha.width * alpha.height, 1u);
  EXPECT_TRUE(same_bits(alpha.texel(0, 0), vec3{1, 1, 1}));
  doc["materials"][0].erase("alphaMode");
  // KHR_texture_transform (offset, rotation, scale) becomes the material's map of sieve's (u, v):
  // glTF's u' = -v + 0.5, v' = 2 u, with v = 1 - v_sieve.
  const json transform = {{"offset", {0.5, 0}}, {"rotation", 1.5707963267948966}, {"scale", {2, 1}}};
  doc["materials"][0]["pbrMetallicRoughness"]["baseColorTexture"]["extensions"]["KHR_texture_transform"] = transform;
  doc["materials"][0]["emissiveTexture"]["extensions"]["KHR_texture_transform"] = transform;
  write_gltf(dir, doc, "quad.gltf");
  const scene tt = load_scene(gltf_toml);
  const float want[6] = {0, 1, -0.5f, -2, 0, 1};
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(tt.materials[0].uv.m[k], want[k], 1e-6f) << k;
  doc["materials"][0]["emissiveTexture"]["extensions"]["KHR_texture_transform"]["scale"] = {1, 2, 3};
  write_gltf(dir, doc, "quad.gltf");
  expect_error([&] { load_scene(gltf_toml); }, {"emissiveTexture", "KHR_texture_transform", "scale"});
  doc["materials"][0]["pbrMetallicRoughness"]["baseColorTexture"].erase("extensions");
  doc["materials"][0]["emissiveTexture"].erase("extensions");
  // A missing image file is a warning; the material keeps its factor.
  doc["images"][0] = {{"uri", "gone.png"}};
  write_gltf(dir, doc, "quad.gltf");
  ::testing::internal::CaptureStderr();
  const scene w = load_scene(gltf_toml);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(w.textures.empty());
  EXPECT_EQ(w.materials[0].albedo_texture, -1);
  EXPECT_NE(err.find("gone.png"), std::string::npos) << err;
  EXPECT_NE(err.find("not found"), std::string::npos) << err;
  // A corrupt image, a texture index past the textures, an image index past the images: errors.
  write(dir / "bad.png", "not a png");
  doc["images"][0] = {{"uri", "bad.png"}};
  expect_error([&] { load_scene(write_gltf(dir, doc, "quad.gltf")); }, {"bad.png"});
  doc["materials"][0]["emissiveTexture"] = {{"index", 4}};
  expect_error([&] { load_scene(write_gltf(dir, doc, "quad.gltf")); }, {"materials[0].emissiveTexture", "texture 4 does not exist"});
  doc["materials"][0]["emissiveTexture"] = {{"index", 0}};
  doc["textures"][0]["source"] = 3;
  expect_error([&] { load_scene(write_gltf(dir, doc, "quad.gltf")); }, {"textures[0]", "source 3 does not exist"});
}

// ------------------------------------------------------------------------------------------------
// Bad input: one sieve::error naming the file and what is wrong.

TEST(GltfBadInput, MalformedJson) {
  const fs::path dir = temp_dir();
  expect_error([&] { load_scene(write(dir / "a.gltf", "{\"asset\": {\"version\": \"2.0\"")); }, {"a.gltf"});
  expect_error([&] { load_scene(write(dir / "b.gltf", "")); }, {"b.gltf"});
  expect_error([&] { load_scene(write(dir / "c.gltf", "[1, 2, 3]")); }, {"c.gltf"});
}

TEST(GltfBadInput, IndicesOutOfRange) {
  const fs::path dir = temp_dir();
  struct mutation {
    std::function<void(json&)> change;
    std::vector<std::string> parts;
  };
  const std::vector<mutation> cases = {
      {[](json& d) { d["meshes"][0]["primitives"][0]["attributes"]["POSITION"] = 9; },
       {"attributes.POSITION", "accessor 9 does not exist"}},
      {[](json& d) { d["meshes"][0]["primitives"][0]["indices"] = 7; }, {"accessor"}},
      {[](json& d) { d["accessors"][0]["bufferView"] = 5; }, {"accessors[0]", "bufferView 5 does not exist"}},
      {[](json& d) { d["bufferViews"][0]["buffer"] = 3; }, {"bufferViews[0]"}},
      {[](json& d) { d["meshes"][0]["primitives"][0]["material"] = 4; }, {"material 4 does not exist"}},
      {[](json& d) { d["nodes"][0]["mesh"] = 2; }, {"nodes[0]", "mesh 2 does not exist"}},
      {[](json& d) { d["scenes"][0]["nodes"] = {0, 6}; }, {"node 6 does not exist"}},
      {[](json& d) { d["scene"] = 3; }, {"scene"}},
      {[](json& d) { d["nodes"][0]["camera"] = 0; }, {"camera 0 does not exist"}},
  };
  for (const auto& c : cases) {
    json doc = quad_gltf();
    c.change(doc);
    const std::string msg = expect_error([&] { load_scene(write_gltf(dir, doc), sky); }, {"model.gltf"});
    for (const auto& p : c.parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  }
}

TEST(GltfBadInput, AccessorsAndViewsPastTheirData) {
  const fs::path dir = temp_dir();
  const std::vector<std::pair<std::function<void(json&)>, std::string>> cases = {
      {[](json& d) { d["accessors"][0]["count"] = 5; }, "reach past the 48 bytes of bufferViews[0]"},
      {[](json& d) { d["accessors"][0]["count"] = std::uint64_t{1} << 40; }, "reach past"},
      {[](json& d) { d["accessors"][0]["count"] = std::uint64_t{1} << 62; }, "accessors[0]"},
      {[](json& d) { d["accessors"][0]["byteOffset"] = 40; }, "reach past"},
      {[](json& d) { d["accessors"][1]["byteOffset"] = std::uint64_t{1} << 63; }, "accessors[1]"},
      {[](json& d) { d["bufferViews"][1]["byteLength"] = 1000; }, "reach past the 60 bytes of buffers[0]"},
      {[](json& d) { d["bufferViews"][1]["byteOffset"] = std::uint64_t{1} << 62; }, "bufferViews[1]"},
      {[](json& d) { d["bufferViews"][0]["byteStride"] = 8; }, "less than the 12-byte element"},
      {[](json& d) { d["accessors"][0]["count"] = 0; }, "count 0"},
  };
  for (const auto& [change, part] : cases) {
    json doc = quad_gltf();
    change(doc);
    expect_error([&] { load_scene(write_gltf(dir, doc), sky); }, {"model.gltf", part});
  }
}

TEST(GltfBadInput, TruncatedBuffers) {
  const fs::path dir = temp_dir();
  json doc = quad_gltf();
  doc["buffers"][0]["byteLength"] = 100;  // the data URI holds 60
  expect_error([&] { load_scene(write_gltf(dir, doc), sky); }, {"model.gltf"});
  // An external buffer shorter than its byteLength, one missing, one that is a directory.
  doc = quad_gltf();
  const std::string bytes = bytes_of(quad_positions) + bytes_of(quad_indices);
  write(dir / "short.bin", bytes.substr(0, 50));
  doc["buffers"][0] = {{"byteLength", 60}, {"uri", "short.bin"}};
  expect_error([&] { load_scene(write_gltf(dir, doc), sky); }, {"model.gltf"});
  doc["buffers"][0]["uri"] = "missing.bin";
  expect_error([&] { load_scene(write_gltf(dir, doc), sky); }, {"model.gltf", "missing.bin"});
  fs::create_directories(dir / "folder.bin");
  doc["buffers"][0]["uri"] = "folder.bin";
  expect_error([&] { load_scene(write_gltf(dir, doc), sky); }, {"folder.bin", "not a regular file"});
  // The right external file loads, and is listed among the scene's files.
  write(dir / "good.bin", bytes);
  doc["buffers"][0]["uri"] = "good.bin";
  const scene s = load_scene(write_gltf(dir, doc), sky);
  EXPECT_EQ(s.triangles.size(), 2u);
  EXPECT_NE(std::find(s.files.begin(), s.files.end(), dir / "good.bin"), s.files.end());
  // A truncated GLB, and a GLB header with nothing behind it.
  const std::string glb = read(box_dir / "box.glb");
  expect_error([&] { load_scene(write(dir / "cut.glb", glb.substr(0, glb.size() - 100))); }, {"cut.glb"});
  expect_error([&] { load_scene(write(dir / "head.glb", glb.substr(0, 12))); }, {"head.glb"});
  std::string bad_length = glb;
  bad_length[12] = '\xff', bad_length[13] = '\xff', bad_length[14] = '\xff';  // JSON chunk length
  expect_error([&] { load_scene(write(dir / "chunk.glb", bad_length)); }, {"chunk.glb"});
}

TEST(GltfBadInput, WrongTypes) {
  const fs::path dir = temp_dir();
  const std::vector<std::pair<std::function<void(json&)>, std::string>> cases = {
      {[](json& d) { d["accessors"][0]["componentType"] = 5123; }, "component type UNSIGNED_SHORT (5123), expected FLOAT"},
      {[](json& d) { d["accessors"][0]["type"] = "VEC2"; }, "type VEC2, expected VEC3"},
      {[](json& d) { d["accessors"][1]["componentType"] = 5126; }, "component type FLOAT"},
      {[](json& d) { d["accessors"][1]["componentType"] = 5122; }, "component type SHORT"},
      {[](json& d) { d["meshes"][0]["primitives"][0]["mode"] = 9; }, "mode 9"},
      {[](json& d) { d["meshes"][0]["primitives"][0]["attributes"].erase("POSITION"); }, "no POSITION"},
      {[](json& d) { d["accessors"][1]["count"] = 5; }, "not a multiple of 3"},
      {[](json& d) { d["nodes"][0]["matrix"] = {1, 0, 0}; }, "matrix has 3 numbers"},
      {[](json& d) { d["nodes"][0]["rotation"] = {0, 0, 0, 0}; }, "rotation"},
      {[](json& d) { d["materials"][0]["pbrMetallicRoughness"]["baseColorFactor"] = {2, 0, 0, 1}; }, "baseColorFactor 2"},
      {[](json& d) { d["materials"][0]["emissiveFactor"] = {-1, 0, 0}; }, "emissiveFactor -1"},
      {[](json& d) { d["extensionsRequired"] = {"KHR_texture_basisu"}; }, "KHR_texture_basisu"},
      {[](json& d) {
         d["accessors"][0]["sparse"] = {{"count", 1},
                                        {"indices", {{"bufferView", 1}, {"componentType", 5123}}},
                                        {"values", {{"bufferView", 0}}}};
       },
       "sparse"},
  };
  for (const auto& [change, part] : cases) {
    json doc = quad_gltf();
    change(doc);
    expect_error([&] { load_scene(write_gltf(dir, doc), sky); }, {"model.gltf", part});
  }
}

TEST(GltfBadInput, IndexPastTheVertices) {
  expect_error([&] { load_scene(write_gltf(temp_dir(), quad_gltf(quad_positions, {0, 1, 2, 0, 2, 4}))); },
               {"model.gltf", "meshes[0].primitives[0].indices", "index 5 is 4, past the 4 vertices"});
}

TEST(GltfBadInput, NonFinitePositionsAndTransforms) {
  std::vector<float> p = quad_positions;
  p[4] = std::numeric_limits<float>::quiet_NaN();
  expect_error([&] { load_scene(write_gltf(temp_dir(), quad_gltf(p))); }, {"model.gltf", "vertex 1", "not finite"});
  p = quad_positions;
  p[6] = std::numeric_limits<float>::infinity();
  expect_error([&] { load_scene(write_gltf(temp_dir(), quad_gltf(p))); }, {"vertex 2", "not finite"});
  json doc = quad_gltf();
  doc["nodes"][0]["scale"] = {1e300, 1, 1};
  expect_error([&] { load_scene(write_gltf(temp_dir(), doc), sky); }, {"overflow a float"});
}

TEST(GltfBadInput, NodeCyclesAndSharedChildren) {
  json doc = quad_gltf();
  doc["nodes"][0]["children"] = {0};
  expect_error([&] { load_scene(write_gltf(temp_dir(), doc), sky); }, {"nodes[0]", "reached twice"});
  doc = quad_gltf();
  doc["nodes"] = json::array({{{"children", {1, 1}}}, {{"mesh", 0}}});
  expect_error([&] { load_scene(write_gltf(temp_dir(), doc), sky); }, {"nodes[1]", "reached twice"});
  // A long chain is no problem (the walk is not recursive).
  doc = quad_gltf();
  doc["nodes"] = json::array();
  for (int i = 0; i < 100000; ++i) doc["nodes"].push_back({{"children", {i + 1}}});
  doc["nodes"].push_back({{"mesh", 0}});
  EXPECT_EQ(load_scene(write_gltf(temp_dir(), doc), sky).triangles.size(), 2u);
}

TEST(GltfBadInput, ImageViewPastItsBuffer) {
  json doc = quad_gltf();
  doc["bufferViews"].push_back({{"buffer", 0}, {"byteOffset", std::uint64_t{1} << 62}, {"byteLength", 8}});
  doc["images"] = json::array({{{"bufferView", 2}, {"mimeType", "image/png"}}});
  // An image no material uses is not read; once a base colour texture names it, it is refused.
  EXPECT_NO_THROW(load_scene(write_gltf(temp_dir(), doc), sky));
  doc["textures"] = json::array({{{"source", 0}}});
  doc["materials"][0]["pbrMetallicRoughness"]["baseColorTexture"] = {{"index", 0}};
  expect_error([&] { load_scene(write_gltf(temp_dir(), doc), sky); }, {"bufferViews[2]", "reach past the 60 bytes"});
}

TEST(GltfBadInput, TriangleLimitAndNotAFile) {
  scene_limits limits;
  limits.max_triangles = 1;
  expect_error([&] { load_scene(write_gltf(temp_dir(), quad_gltf()), {}, limits); }, {"model.gltf", "more than 1 triangles"});
  const fs::path dir = temp_dir();
  fs::create_directories(dir / "x.gltf");
  expect_error([&] { load_scene(dir / "x.gltf"); }, {"x.gltf", "directory"});
  expect_error([&] { load_scene(dir / "none.glb"); }, {"none.glb", "not found"});
  // In a TOML scene: a missing glTF, and obj and gltf together.
  expect_error([&] { load_scene(write(dir / "s.toml", "[[objects]]\ngltf = \"none.gltf\"\n")); },
               {"s.toml", "objects[0].gltf", "not found"});
  expect_error([&] { load_scene(write(dir / "t.toml", "[[objects]]\ngltf = \"a.gltf\"\nobj = \"a.obj\"\n")); },
               {"t.toml", "objects[0]", "give one of obj, gltf and ply"});
}

// ------------------------------------------------------------------------------------------------
// Compressed geometry: real files made by other tools against their uncompressed twins
// (tests/data/gltf-compressed/LICENSE.md), and each way a compressed file can be wrong.

const fs::path compressed_dir = fs::path(SIEVE_TEST_DATA_DIR) / "gltf-compressed";

// A GLB split into its JSON and its BIN chunk.
std::pair<json, std::string> glb_parts(const fs::path& path) {
  const std::string glb = read(path);
  std::uint32_t json_length = 0, bin_length = 0;
  std::memcpy(&json_length, glb.data() + 12, 4);
  std::memcpy(&bin_length, glb.data() + 20 + json_length, 4);
  return {json::parse(glb.substr(20, json_length)), glb.substr(28 + json_length, bin_length)};
}

// The GLB rewritten as a .gltf in `dir` with its BIN chunk as buffers[0]'s data URI, after `change`.
fs::path as_gltf(const fs::path& glb, const fs::path& dir, const std::function<void(json&, std::string&)>& change) {
  auto [doc, bin] = glb_parts(glb);
  change(doc, bin);
  const std::uint64_t length = doc["buffers"][0]["byteLength"];
  doc["buffers"][0] = buffer_of(bin.substr(0, std::min<std::uint64_t>(length, bin.size())));
  doc["buffers"][0]["byteLength"] = length;
  return write_gltf(dir, doc);
}

// The largest distance between a corner of a triangle of `a` and the same corner of its match in `b`
// (the same three corners in the same winding, from any of the three), each triangle of `b` matched
// once; infinity where the counts differ or a triangle finds no match within `tolerance`.
double worst_match(const std::vector<triangle>& a, const std::vector<triangle>& b, double tolerance) {
  if (a.size() != b.size()) return HUGE_VAL;
  auto cx = [](const triangle& t) { return (t.v0.x + t.v1.x + t.v2.x) / 3; };
  std::vector<std::size_t> order(b.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return cx(b[i]) < cx(b[j]); });
  std::vector<float> keys;
  for (const std::size_t i : order) keys.push_back(cx(b[i]));
  std::vector<bool> used(b.size(), false);
  double worst = 0;
  for (const triangle& t : a) {
    double best = HUGE_VAL;
    std::size_t best_k = 0;
    const auto lo = std::lower_bound(keys.begin(), keys.end(), cx(t) - tolerance) - keys.begin();
    for (auto k = static_cast<std::size_t>(lo); k < keys.size() && keys[k] <= cx(t) + tolerance; ++k) {
      if (used[k]) continue;
      const triangle& u = b[order[k]];
      const vec3 c[3] = {u.v0, u.v1, u.v2};
      for (int r = 0; r < 3; ++r) {
        const double d = std::max({length(t.v0 - c[r]), length(t.v1 - c[(r + 1) % 3]), length(t.v2 - c[(r + 2) % 3])});
        if (d < best) best = d, best_k = k;
      }
    }
    if (!(best <= tolerance)) return HUGE_VAL;
    used[best_k] = true;
    worst = std::max(worst, best);
  }
  return worst;
}

// Every corner of `a`'s triangles against the nearest corner of `b`'s (positions within `tolerance`):
// the largest distance (infinity where one has none), and the mean over corners of the best cosine
// between their normals.
struct corner_match {
  double worst = 0, mean_dot = 0;
};
corner_match match_corners(const scene& a, const scene& b, double tolerance) {
  struct corner {
    vec3 p, n;
  };
  auto corners = [](const scene& s) {
    std::vector<corner> out;
    for (std::size_t i = 0; i < s.triangles.size(); ++i) {
      const triangle_normals n = s.normals.empty() ? triangle_normals{} : s.normals[i];
      out.push_back({s.triangles[i].v0, n.n0});
      out.push_back({s.triangles[i].v1, n.n1});
      out.push_back({s.triangles[i].v2, n.n2});
    }
    return out;
  };
  std::vector<corner> ca = corners(a), cb = corners(b);
  std::sort(cb.begin(), cb.end(), [](const corner& x, const corner& y) { return x.p.x < y.p.x; });
  corner_match m;
  for (const corner& c : ca) {
    double best = HUGE_VAL, dot_best = -1;
    auto k = std::lower_bound(cb.begin(), cb.end(), c.p.x - tolerance, [](const corner& x, double v) { return x.p.x < v; });
    for (; k != cb.end() && k->p.x <= c.p.x + tolerance; ++k) {
      const double d = length(k->p - c.p);
      best = std::min(best, d);
      if (d <= tolerance) dot_best = std::max(dot_best, static_cast<double>(dot(k->n, c.n)));
    }
    m.worst = std::max(m.worst, best);
    m.mean_dot += dot_best / static_cast<double>(ca.size());
  }
  return m;
}

double area(const std::vector<triangle>& ts) {
  double sum = 0;
  for (const triangle& t : ts) sum += 0.5 * length(cross(t.v1 - t.v0, t.v2 - t.v0));
  return sum;
}

struct box3 {
  vec3 lo{HUGE_VALF, HUGE_VALF, HUGE_VALF}, hi{-HUGE_VALF, -HUGE_VALF, -HUGE_VALF};
};
box3 bounds(const std::vector<triangle>& ts) {
  box3 b;
  for (const triangle& t : ts)
    for (const vec3 v : {t.v0, t.v1, t.v2}) b.lo = min(b.lo, v), b.hi = max(b.hi, v);
  return b;
}

// The two files' models under one material, camera and sky, rendered; the mean over the image of the
// per-pixel difference, relative to the mean brightness.
double render_difference(const fs::path& a, const fs::path& b, const std::string& camera) {
  const fs::path dir = temp_dir();
  auto toml = [&](fs::path model) {
    if (model.extension() == ".obj") {  // a copy with an MTL of its materials (the file names one it lacks)
      const std::string text = read(model);
      std::string mtl;
      for (std::size_t at = text.find("usemtl "); at != std::string::npos; at = text.find("usemtl ", at + 1))
        mtl += "newmtl " + text.substr(at + 7, text.find('\n', at) - at - 7) + "\nKd 0.5 0.5 0.5\n";
      write(dir / "pirate.mtl", mtl);
      model = write(dir / model.filename(), text);
    }
    return write(dir / (model.stem().string() + ".toml"),
                 std::string("[[objects]]\n") + (model.extension() == ".obj" ? "obj" : "gltf") + " = \"" + model.string() +
                     "\"\nmaterial = \"clay\"\n[[materials]]\nname = \"clay\"\ntype = \"diffuse\"\nalbedo = [0.7, 0.6, 0.5]\n" +
                     "[environment]\ncolor = [1, 1, 1]\n" + camera + "[film]\nwidth = 48\nheight = 40\nspp = 8\nmax_bounces = 2\n");
  };
  const std::vector<vec3> x = render(load_scene(toml(a))), y = render(load_scene(toml(b)));
  EXPECT_EQ(x.size(), y.size());
  double diff = 0, sum = 0;
  for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
    diff += std::fabs(x[i].x - y[i].x) + std::fabs(x[i].y - y[i].y) + std::fabs(x[i].z - y[i].z);
    sum += x[i].x + x[i].y + x[i].z;
  }
  EXPECT_GT(sum, 0) << "a black image proves nothing";
  return diff / sum;
}

TEST(CompressedGltf, DracoBoxMatchesItsUncompressedTwin) {
#ifndef SIEVE_HAVE_DRACO
  expect_error([&] { load_scene(compressed_dir / "Box_Draco.glb", sky); }, {"KHR_draco_mesh_compression", "libdraco"});
  GTEST_SKIP() << "built without libdraco: Draco files are refused (checked above)";
#endif
  const scene plain = load_scene(compressed_dir / "Box.glb", sky), draco = load_scene(compressed_dir / "Box_Draco.glb", sky);
  ASSERT_EQ(plain.triangles.size(), 12u);
  // Draco quantises the unit box's positions to at least 10 bits: within 1/1000 of the file's.
  const double worst = worst_match(plain.triangles, draco.triangles, 1e-3);
  EXPECT_LE(worst, 1e-3);
  const box3 p = bounds(plain.triangles), d = bounds(draco.triangles);
  EXPECT_LE(length(p.lo - d.lo) + length(p.hi - d.hi), 2e-3);
  ASSERT_EQ(draco.normals.size(), draco.triangles.size());  // Draco's normals came through
  EXPECT_LT(render_difference(compressed_dir / "Box.glb", compressed_dir / "Box_Draco.glb",
                              "[camera]\nposition = [1.2, 0.9, 1.6]\nlook_at = [0, 0, 0]\n"),
            0.01);
}

// The Crytek Sponza as shipped (scenes/third-party/sponza): KHR_mesh_quantization's BYTE normals on a
// real scene, every triangle of the model, inside its known extent.
TEST(CompressedGltf, SponzaLoads) {
  const scene s = load_scene(scenes_dir / "third-party" / "sponza" / "sponza.toml");
  ASSERT_EQ(s.triangles.size(), 262267u);
  ASSERT_EQ(s.normals.size(), s.triangles.size());
  const box3 b = bounds(s.triangles);
  EXPECT_NEAR(b.lo.x, -12.0, 0.01);
  EXPECT_NEAR(b.hi.y, 8.93, 0.01);  // the floor at -0.79, y up
  EXPECT_NEAR(b.lo.y, -0.79, 0.01);
  // Smooth normals agree with the counter-clockwise winding (the script turned Godot's).
  std::size_t along = 0;
  for (std::size_t i = 0; i < s.triangles.size(); ++i) {
    const triangle& t = s.triangles[i];
    along += dot(cross(t.v1 - t.v0, t.v2 - t.v0), s.normals[i].n0 + s.normals[i].n1 + s.normals[i].n2) > 0;
  }
  EXPECT_GT(static_cast<double>(along), 0.99 * static_cast<double>(s.triangles.size()));
}

TEST(CompressedGltf, MeshoptPirateMatchesItsObj) {
#ifndef SIEVE_HAVE_MESHOPT
  expect_error([&] { load_scene(compressed_dir / "pirate.glb", sky); }, {"EXT_meshopt_compression", "libmeshoptimizer"});
  GTEST_SKIP() << "built without libmeshoptimizer: meshopt files are refused (checked above)";
#endif
  // 16-bit positions under the node's scale 1.16282179e-4 (gltfpack's quantisation step), octahedral
  // 8-bit normals, indices by the index codec: the decoded triangles are the OBJ's to within a step.
  const double step = 1.16282179e-4;
  const scene obj = load_scene(compressed_dir / "pirate.obj", sky), glb = load_scene(compressed_dir / "pirate.glb", sky);
  ASSERT_EQ(obj.triangles.size(), 5010u);
  const corner_match m = match_corners(glb, obj, step), back = match_corners(obj, glb, step);
  const double worst = std::max(m.worst, back.worst);
  EXPECT_LE(worst, step);
  EXPECT_GT(worst, 0) << "quantised positions can not all be exact";
  const box3 o = bounds(obj.triangles), g = bounds(glb.triangles);
  EXPECT_LE(std::max(length(o.lo - g.lo), length(o.hi - g.hi)), step);
  ASSERT_EQ(glb.normals.size(), glb.triangles.size());
  // The normals, decoded from 8-bit octahedral, point the OBJ's way at the same corners.
  EXPECT_GT(m.mean_dot, 0.99);
  // The OBJ's quads may be split along the other diagonal: the surface area agrees, not each triangle.
  EXPECT_NEAR(area(glb.triangles), area(obj.triangles), 1e-3 * area(obj.triangles));
  EXPECT_LT(render_difference(compressed_dir / "pirate.obj", compressed_dir / "pirate.glb",
                              "[camera]\nposition = [0.6, 1.2, 2.4]\nlook_at = [0, 0.9, 0]\n"),
            0.01);
}

// Each change to the GLB (rewritten as a .gltf) ends in one error holding all of its parts.
using glb_change = std::function<void(json&, std::string&)>;
void expect_each_error(const fs::path& glb, const std::vector<std::pair<glb_change, std::vector<std::string>>>& cases) {
  for (const auto& [change, parts] : cases) {
    const fs::path file = as_gltf(glb, temp_dir(), change);
    const std::string msg = expect_error([&] { load_scene(file, sky); }, {"model.gltf"});
    for (const std::string& part : parts) EXPECT_NE(msg.find(part), std::string::npos) << msg << " lacks " << part;
  }
}

TEST(CompressedGltfBadInput, Meshopt) {
#ifndef SIEVE_HAVE_MESHOPT
  GTEST_SKIP() << "built without libmeshoptimizer";
#endif
  const fs::path pirate = compressed_dir / "pirate.glb";
  const char* ext = "EXT_meshopt_compression";
  const std::vector<std::pair<glb_change, std::vector<std::string>>> cases = {
      {[&](json& d, std::string&) { d["bufferViews"][0]["extensions"][ext]["byteLength"] = 100; }, {"bufferViews[0]", "does not decode"}},
      {[&](json&, std::string& bin) { bin[0] = 0; }, {"bufferViews[0]", "does not decode"}},  // the codec's header byte
      {[&](json& d, std::string&) { d["bufferViews"][2]["extensions"][ext]["byteOffset"] = 17000; }, {"bufferViews[2]", "does not decode"}},
      {[&](json& d, std::string&) { d["bufferViews"][0]["extensions"][ext]["count"] = 2886; }, {"count 2886", "disagrees"}},
      {[&](json& d, std::string&) { d["bufferViews"][0]["extensions"][ext]["byteStride"] = 6; }, {"byteStride 6", "not allowed"}},
      {[&](json& d, std::string&) { d["bufferViews"][2]["extensions"][ext]["byteStride"] = 3; }, {"byteStride 3", "2 or 4"}},
      {[&](json& d, std::string&) { d["bufferViews"][0]["extensions"][ext]["mode"] = "POINTS"; }, {"mode \"POINTS\""}},
      {[&](json& d, std::string&) { d["bufferViews"][1]["extensions"][ext]["filter"] = "QUATERNION"; }, {"filter \"QUATERNION\""}},
      {[&](json& d, std::string&) { d["bufferViews"][0]["extensions"][ext]["byteLength"] = 1 << 20; }, {"reach past"}},
      {[&](json& d, std::string&) { d["bufferViews"][0]["extensions"][ext]["buffer"] = 7; }, {"buffer 7 does not exist"}},
      {[&](json& d, std::string&) { d["bufferViews"][0]["extensions"][ext].erase("count"); }, {"no count"}},
      {[&](json& d, std::string&) { d["bufferViews"][0]["extensions"][ext]["count"] = -1; }, {"count is not a non-negative integer"}},
      // A decoded size past the byte budget is refused before anything is allocated.
      {[&](json& d, std::string&) {
         d["bufferViews"][0]["extensions"][ext]["count"] = 1 << 28;
         d["bufferViews"][0]["extensions"][ext]["byteStride"] = 256;
         d["bufferViews"][0]["byteLength"] = 1ull << 36;
       },
       {"past 4 GiB"}},
      // A view that is not compressed reading the fallback buffer, which holds nothing.
      {[&](json& d, std::string&) { d["bufferViews"][0].erase("extensions"); }, {"buffers[1]", "meshopt fallback buffer"}},
  };
  expect_each_error(pirate, cases);
  // The untouched file, rewritten the same way, loads: the cases fail for what they change.
  EXPECT_EQ(load_scene(as_gltf(pirate, temp_dir(), [](json&, std::string&) {}), sky).triangles.size(), 5010u);
}

TEST(CompressedGltfBadInput, Draco) {
#ifndef SIEVE_HAVE_DRACO
  GTEST_SKIP() << "built without libdraco";
#endif
  const fs::path box = compressed_dir / "Box_Draco.glb";
  const char* ext = "KHR_draco_mesh_compression";
  auto prim = [&](json& d) -> json& { return d["meshes"][0]["primitives"][0]["extensions"][ext]; };
  const std::vector<std::pair<glb_change, std::vector<std::string>>> cases = {
      {[&](json& d, std::string&) { d["bufferViews"][0]["byteLength"] = 40; }, {"Draco data does not decode"}},
      {[&](json&, std::string& bin) { bin.replace(0, 5, "XXXXX"); }, {"Draco data does not decode"}},
      {[&](json&, std::string& bin) { std::fill(bin.begin() + 20, bin.end(), '\xff'); }, {"KHR_draco_mesh_compression"}},
      {[&](json& d, std::string&) { prim(d)["attributes"]["NORMAL"] = 7; }, {"attribute id 7 does not exist"}},
      {[&](json& d, std::string&) { d["accessors"][1]["count"] = 25; }, {"Draco decodes 24 points", "has 25"}},
      {[&](json& d, std::string&) { d["accessors"][0]["count"] = 30; }, {"Draco decodes 12 triangles", "has 30 indices"}},
      {[&](json& d, std::string&) { prim(d)["bufferView"] = 3; }, {"bufferView 3 does not exist"}},
      {[&](json& d, std::string&) { d["bufferViews"][0]["byteOffset"] = 100; }, {"reach past"}},
      {[&](json& d, std::string&) { d["meshes"][0]["primitives"][0]["mode"] = 5; }, {"Draco meshes are TRIANGLES"}},
      {[&](json& d, std::string&) { prim(d)["attributes"] = 3; }, {"attributes is not an object"}},
  };
  expect_each_error(box, cases);
  EXPECT_EQ(load_scene(as_gltf(box, temp_dir(), [](json&, std::string&) {}), sky).triangles.size(), 12u);
  // More triangles than the scene has room for: refused before they are made.
  scene_limits limits;
  limits.max_triangles = 5;
  expect_error([&] { load_scene(box, sky, limits); }, {"Box_Draco.glb", "room"});
}

}  // namespace
