// Files as third parties write them: McGuire's CornellBox-Original (shipped, public domain), images
// in every format sieve reads, MTL files as 3ds Max and Blender export them
// (faithful small replicas of their quirks), PLY files (ASCII with the body comments of the Stanford
// scans, binary both ways), glTF with a JPEG texture and with compressed geometry, and what a bare
// model is given: the front view, an open room seen through its open side, a flat model from above,
// an enclosed one (the shipped Sponza) from inside, a key light.
#include <scene/image_file.hpp>
#include <core/memory.hpp>
#include <scene/load.hpp>
#include <run/render.hpp>

#include "scene_test_support.hpp"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIEVE_ADDRESS_SANITIZER 1  // clang's; GCC defines __SANITIZE_ADDRESS__
#endif
#endif

namespace fs = std::filesystem;
using namespace sieve::render;

namespace {

const fs::path corpus = fs::path(SIEVE_SOURCE_DIR) / "tests" / "fuzz" / "corpus";

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

aabb bounds(const scene& s, std::size_t count) {
  aabb b;
  for (std::size_t i = 0; i < count; ++i) b.grow(s.triangles[i].v0), b.grow(s.triangles[i].v1), b.grow(s.triangles[i].v2);
  return b;
}

// The mean colour of the centre pixels of a small CPU render.
vec3 centre_colour(const scene& s) {
  const prepared_scene ps(s);
  const render_result r = render_cpu(ps, render_settings::from(s));
  const std::vector<vec3> m = r.mean();
  vec3 sum{0, 0, 0};
  for (std::uint32_t y = r.height / 2 - 2; y < r.height / 2 + 2; ++y)
    for (std::uint32_t x = r.width / 2 - 2; x < r.width / 2 + 2; ++x) sum = sum + m[y * r.width + x];
  return sum / 16.0f;
}

}  // namespace

// Whether this process has loaded OpenImageIO (its library among /proc/self/maps).
bool image_library_loaded() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("libOpenImageIO") != std::string::npos) return true;
  return false;
}

// TGA, TIFF and .hdr files are decoded by the OpenImageIO module alone; a build without it
// (-DSIEVE_OPENIMAGEIO=OFF) checks the formats it reads, PNG, JPEG and EXR.
bool readable_here(const char* name) {
#ifdef SIEVE_TEST_OPENIMAGEIO
  (void)name;
  return true;
#else
  const std::string n = name;
  return n.ends_with(".png") || n.ends_with(".jpg") || n.ends_with(".exr");
#endif
}

// The image library is loaded when a file needs it: PNG, JPEG and EXR are decoded without it (a
// plain render starts without OpenImageIO's ~260 libraries); the first TGA, TIFF or .hdr loads it.
// (ctest runs each test in a process of its own.)
TEST(RealImages, OpenImageIOIsLoadedOnFirstUse) {
  ASSERT_FALSE(image_library_loaded()) << "linked at start";
  for (const char* name : {"rgba16.png", "progressive.jpg", "grey-alpha-cutout.png", "half.exr"}) {
    const image_rgb img = read_image(corpus / "image" / name, "texture");
    EXPECT_GT(img.width, 0u) << name;
  }
  EXPECT_FALSE(image_library_loaded()) << "PNG, JPEG and EXR loaded it";
#ifdef SIEVE_TEST_OPENIMAGEIO
  const image_rgb tga = read_image(corpus / "image" / "rgb.tga", "texture");
  EXPECT_EQ(tga.width, 8u);
  EXPECT_TRUE(image_library_loaded());
#endif
}

// Every format of the corpus, decoded to the colours the fixture writer put in: left half
// (0.8, 0.25 + 0.1 y, 0.1), right half (0.1, ..., 0.9), as sRGB code values for 8/16-bit files.
TEST(RealImages, EveryFormatDecodesToItsColours) {
  for (const char* name : {"rgb.tga", "rgba.tga", "rgb.tif", "rgb16.tif", "half.exr", "progressive.jpg", "rgba16.png"}) {
    SCOPED_TRACE(name);
    if (!readable_here(name)) continue;
    const image_rgb img = read_image(corpus / "image" / name, "texture");
    ASSERT_EQ(img.width, 8u);
    ASSERT_EQ(img.height, 4u);
    const bool linear = std::string(name).find(".exr") != std::string::npos;
    const bool lossy = std::string(name).find(".jpg") != std::string::npos;
    auto expect = [&](float stored) { return linear ? stored : srgb_to_linear(stored); };
    const bool wide = std::string(name).find("16") != std::string::npos;  // 16-bit files
    const float tol = lossy ? 0.06f : linear || wide ? 2e-3f : 5e-3f;  // 8-bit: within a code value
    const vec3 left = img.pixels[1 * 8 + 1], right = img.pixels[1 * 8 + 6];
    EXPECT_NEAR(left.x, expect(0.8f), tol);
    EXPECT_NEAR(left.y, expect(0.35f), tol);
    EXPECT_NEAR(left.z, expect(0.1f), tol);
    EXPECT_NEAR(right.x, expect(0.1f), tol);
    EXPECT_NEAR(right.z, expect(0.9f), tol);
  }
}

TEST(RealImages, OpacityIsTheAlphaChannel) {
  for (const char* name : {"rgba.tga", "rgba16.png", "grey-alpha-cutout.png"}) {
    SCOPED_TRACE(name);
    if (!readable_here(name)) continue;
    const image_rgb img = read_image(corpus / "image" / name, "opacity map", {}, image_use::opacity);
    EXPECT_NEAR(img.pixels[0].x, 1.0f, 1e-3f);  // left: opaque, stored linear
    EXPECT_NEAR(img.pixels[7].x, 0.0f, 1e-3f);  // right: transparent
    EXPECT_EQ(img.pixels[7].x, img.pixels[7].y);
  }
}

// The header is read first: an image claiming more than the limits is refused from it, whatever
// its format, before a pixel is decoded; a truncated or foreign file is one line naming it.
TEST(RealImages, LimitsFromTheHeaderAndBadFiles) {
  const fs::path dir = sieve::render::testing::fresh_dir("img");
  image_limits small;
  small.max_side = 4;
  for (const char* name : {"rgb.tga", "rgb.tif", "half.exr", "progressive.jpg"}) {
    if (!readable_here(name)) continue;
    sieve::render::testing::expect_error([&] { (void)read_image(corpus / "image" / name, "texture", small); }, {name, "8 x 4 pixels", "limit of 4"});
  }
  std::string jpg = read_file(corpus / "image" / "progressive.jpg");
  sieve::render::testing::write(dir / "cut.jpg", jpg.substr(0, jpg.size() / 2));
  sieve::render::testing::write(dir / "x.bmp", "BM\x10\x00");
  sieve::render::testing::expect_error([&] { (void)read_image(dir / "cut.jpg", "texture"); }, {"cut.jpg", "texture"});
  // A truncated PNG: the one error, and nothing from libpng on stderr besides.
  const std::string png = read_file(corpus / "image" / "rgba16.png");
  sieve::render::testing::write(dir / "cut.png", png.substr(0, 60));
  ::testing::internal::CaptureStderr();
  sieve::render::testing::expect_error([&] { (void)read_image(dir / "cut.png", "texture"); }, {"cut.png: cannot decode the texture", "corrupt or truncated"});
  const std::string noise = ::testing::internal::GetCapturedStderr();
#if !defined(__SANITIZE_ADDRESS__) && !defined(SIEVE_ADDRESS_SANITIZER)
  EXPECT_EQ(noise, "");  // (the sanitizer builds keep stderr: their reports go there)
#endif
  sieve::render::testing::expect_error([&] { (void)read_image(dir / "x.bmp", "texture"); }, {"x.bmp", "not an image sieve reads"});
}

// McGuire's CornellBox-Original as found (comments after values, Ns/Ni on every material, two
// blocks with Ks only): loads, is framed through its open side (+z), keeps its own light alone.
TEST(RealFiles, McGuireCornellBoxOriginal) {
  const fs::path obj = fs::path(SIEVE_SCENES_DIR) / "third-party" / "cornell-box-original" / "CornellBox-Original.obj";
  ::testing::internal::CaptureStderr();
  const scene s = load_scene(obj);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(s.triangles.size(), 36u);
  EXPECT_EQ(s.emissive.size(), 2u);  // its own light, no key light added
  const aabb b = bounds(s, s.triangles.size());
  EXPECT_GT(s.camera.position.z, b.hi.z);  // outside the open side, looking in
  EXPECT_LT(s.camera.look_at.z, s.camera.position.z);
  EXPECT_NE(err.find("(its open side)"), std::string::npos) << err;
  bool red = false;
  for (const material& m : s.materials) {
    if (m.name == "leftWall") red = m.albedo.x == 0.63f && m.albedo.y == 0.065f && m.albedo.z == 0.05f;
    if (m.name == "tallBox") {
      EXPECT_EQ(m.kind, material_kind::mirror);  // Kd 0, Ks 0.725
      EXPECT_NEAR(m.roughness, std::sqrt(2.0f / 202.0f), 1e-6f);  // Ns 200
    }
  }
  EXPECT_TRUE(red);
}

// The Cornell data's own box opens towards -z: framed from there, seeing inside.
TEST(RealFiles, OpenRoomSeenThroughItsOpenSide) {
  const scene s = load_scene(fs::path(SIEVE_SCENES_DIR) / "cornell-box" / "cornell-box.obj");
  const aabb b = bounds(s, s.triangles.size());
  EXPECT_LT(s.camera.position.z, b.lo.z);
}

// 3ds Max writes d 1 and Tr 0 in every material, Tf 1 1 1, Windows paths; Blender d 0.000000 for
// opaque materials, comments, map_Bump with options; PBR exporters Pr/Pm and their maps.
TEST(RealFiles, ExporterMtlQuirks) {
  if (!readable_here("wall.tga")) GTEST_SKIP() << "its TGA map needs the OpenImageIO module (-DSIEVE_OPENIMAGEIO=ON)";
  const fs::path dir = sieve::render::testing::fresh_dir("mtl");
  fs::copy_file(corpus / "image" / "rgb.tga", dir / "wall.tga");
  fs::create_directories(dir / "tex");
  fs::copy_file(corpus / "image" / "grey-alpha-cutout.png", dir / "tex" / "leaf_mask.png");
  sieve::render::testing::write(dir / "m.mtl",
                 "# 3ds Max Wavefront OBJ Exporter v0.97b\n"
                 "newmtl max_wall\n\tNs 10.0000\n\tNi 1.5000\n\td 1.0000\n\tTr 0.0000\n\tTf 1.0000 1.0000 1.0000 \n"
                 "\tillum 2\n\tKa 0.5880 0.5880 0.5880\n\tKd 0.5880 0.5880 0.5880\n\tKs 0.0000 0.0000 0.0000\n"
                 "\tKe 0.0000 0.0000 0.0000\n\tmap_Kd tex\\..\\wall.tga\n"
                 "# Blender MTL File: 'sponza.blend'\n"
                 "newmtl blender_leaf\nNs 96.078431\nKa 0.000000 0.000000 0.000000\nKd 0.640000 0.640000 0.640000 # leaves\n"
                 "Ks 0.500000 0.500000 0.500000\nNi 1.000000\nd 0.000000\nillum 2\nmap_d tex/leaf_mask.png\n"
                 "map_Bump -bm 1.0 tex/leaf_ddn.png\n"
                 "newmtl blender_curtain\nKd 0.5 0.1 0.1\nd 0.000000\nillum 2\n"
                 "newmtl veil\nKd 0.8 0.8 0.8\nd 0.25\n"
                 "newmtl pbr_metal\nKd 0.9 0.6 0.2\nPr 0.2\nPm 1.0\nmap_Pr rough.png\n"
                 "newmtl glass\nNi 1.45\nillum 7\n"
                 "newmtl unused\nmap_Kd missing_and_never_read.jpg\n");
  std::string faces;
  const char* used[] = {"max_wall", "blender_leaf", "blender_curtain", "veil", "pbr_metal", "glass"};
  std::string obj = "mtllib m.mtl\nv 0 0 0\nv 1 0 0 # a comment after the values\nv 1 1 0\nvt 0 0\nvt 1 0\nvt 1 1\n";
  for (const char* m : used) obj += std::string("usemtl ") + m + "\nf 1/1 2/2 3/3 # one triangle\n";
  sieve::render::testing::write(dir / "m.obj", obj);
  ::testing::internal::CaptureStderr();
  const scene s = load_scene(dir / "m.obj");
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(s.materials.size(), 7u);  // six and the key light
  auto find = [&](const std::string& n) -> const material& {
    for (const material& m : s.materials)
      if (m.name == n) return m;
    ADD_FAILURE() << n;
    return s.materials[0];
  };
  EXPECT_EQ(find("max_wall").kind, material_kind::diffuse);  // d 1 and Tr 0: opaque, no complaint
  EXPECT_EQ(find("max_wall").opacity, 1.0f);
  EXPECT_GE(find("max_wall").albedo_texture, 0);  // tex\..\wall.tga
  const material& leaf = find("blender_leaf");
  EXPECT_EQ(leaf.kind, material_kind::diffuse);  // d 0 with map_d: a cut-out, never glass
  EXPECT_GE(leaf.opacity_texture, 0);
  EXPECT_EQ(leaf.bump_map, "tex/leaf_ddn.png");
  EXPECT_NEAR(leaf.roughness, std::sqrt(2.0 / 98.078431), 1e-6);
  EXPECT_EQ(leaf.specular.x, 0.5f);
  EXPECT_EQ(find("blender_curtain").opacity, 1.0f);  // d 0 and no map_d: opaque, noted
  EXPECT_TRUE(find("blender_curtain").dissolve_ignored);
  EXPECT_EQ(find("veil").kind, material_kind::diffuse);
  EXPECT_EQ(find("veil").opacity, 0.25f);
  EXPECT_EQ(find("pbr_metal").kind, material_kind::mirror);  // Pm 1, Pr 0.2
  EXPECT_EQ(find("pbr_metal").roughness_map, "rough.png");
  EXPECT_EQ(find("glass").kind, material_kind::dielectric);
  EXPECT_EQ(find("glass").ior, 1.45f);
  EXPECT_EQ(s.textures.size(), 2u);  // the unused material's texture is never opened
  EXPECT_EQ(err.find("Tr"), std::string::npos) << err;
  EXPECT_EQ(err.find("missing_and_never_read"), std::string::npos) << err;
  // One line names every approximation.
  EXPECT_NE(err.find("approximates"), std::string::npos) << err;
  for (const char* part : {"glossy layer", "cut-out", "d 0 and no map_d", "bump/normal maps"})
    EXPECT_NE(err.find(part), std::string::npos) << part << " not in: " << err;
}

TEST(RealFiles, MtlErrorsNameTheMtlAndLine) {
  const fs::path dir = sieve::render::testing::fresh_dir("mtl-error");
  sieve::render::testing::write(dir / "m.obj", "mtllib m.mtl\nusemtl a\nv 0 0 0\nv 1 0 0\nv 1 1 0\nf 1 2 3\n");
  sieve::render::testing::write(dir / "m.mtl", "newmtl a\nKd 0.5 0.5 0.5\nKs 1.5 0 0 # too bright\n");
  sieve::render::testing::expect_error([&] { (void)load_scene(dir / "m.obj"); }, {(dir / "m.mtl").string() + ":3: Ks 1.5 is out of range"});
}

// Stanford-style PLY files: ASCII with a comment in the body, binary little and big endian; the
// same geometry from each.
TEST(RealFiles, PlyAsciiAndBinary) {
  const scene a = load_scene(corpus / "ply" / "ascii-colours.ply", {"environment.color=[0,0,0]"});
  const scene le = load_scene(corpus / "ply" / "binary-le.ply", {"environment.color=[0,0,0]"});
  const scene be = load_scene(corpus / "ply" / "binary-be.ply", {"environment.color=[0,0,0]"});
  ASSERT_EQ(a.triangles.size(), 3u);  // a quad (2) and a triangle; the body comment skipped
  ASSERT_EQ(le.triangles.size(), 3u);
  ASSERT_EQ(be.triangles.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(le.triangles[i].v1.x, be.triangles[i].v1.x);
    EXPECT_EQ(le.triangles[i].v2.y, be.triangles[i].v2.y);
    EXPECT_EQ(a.triangles[i].v2.y, le.triangles[i].v2.y);
  }
  EXPECT_FALSE(le.normals.empty());
  EXPECT_EQ(le.normals[0].n0.z, 1.0f);
  EXPECT_EQ(le.uvs[0].t1.u, 1.0f);  // s, t of vertex 1
  // Vertex colours: the quad red, the last triangle mostly blue (one blue vertex of three).
  ASSERT_EQ(a.textures.size(), 1u);
  const std::uint32_t side = a.textures[0].width;
  EXPECT_NEAR(a.textures[0].texel(0, 0).x, 1.0f, 1e-6f);
  EXPECT_NEAR(a.textures[0].texel(2 % side, 2 / side).z, srgb_to_linear(1.0f / 3), 1e-5f);
}

TEST(RealFiles, HostilePly) {
  const fs::path dir = sieve::render::testing::fresh_dir("ply");
  const std::string head = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n";
  const std::string tri = "0 0 0\n1 0 0\n0 1 0\n";
  const std::pair<std::string, std::string> cases[] = {
      {"plx\n", "not a PLY file"},
      {head + "element face 1000000000000\nproperty list uchar int vertex_indices\nend_header\n" + tri, "more than the file holds"},
      {head + "element face 1\nproperty list uchar int vertex_indices\nend_header\n" + tri + "3 0 1 7\n", "past the 3 vertices"},
      {head + "element face 1\nproperty list uchar int vertex_indices\nend_header\n" + tri + "3 0 1\n", "ends inside face 0"},
      {head + "element face 1\nproperty list uchar int vertex_indices\nend_header\n" + tri + "255 0 1 2\n", "ends inside"},
      {head + "element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 nan\n1 0 0\n0 1 0\n3 0 1 2\n", "not a finite number"},
      {head + "property list uchar int vertex_indices\nformat binary_big_endian 1.0\n", "does not end"},
      {"ply\nformat ascii 1.0\nelement vertex 1\nproperty quux x\nend_header\n", "cannot read the property"},
  };
  for (const auto& [text, part] : cases) {
    sieve::render::testing::write(dir / "m.ply", text);
    sieve::render::testing::expect_error([&] { (void)load_scene(dir / "m.ply"); }, {"m.ply", part});
  }
}

namespace {

// A binary little-endian PLY of `n` vertices (x y z floats) and the faces' bytes as given.
std::string binary_ply(const std::string& elements, const std::vector<float>& xyz, const std::string& faces) {
  std::string out = "ply\nformat binary_little_endian 1.0\n" + elements + "end_header\n";
  out.append(reinterpret_cast<const char*>(xyz.data()), xyz.size() * sizeof(float));
  return out + faces;
}

std::string face_bytes(std::initializer_list<std::int32_t> idx) {
  std::string out(1, static_cast<char>(idx.size()));
  for (const std::int32_t i : idx) out.append(reinterpret_cast<const char*>(&i), 4);
  return out;
}

const std::string xyz_head = "property float x\nproperty float y\nproperty float z\n";

}  // namespace

// The element table is bounded as a whole, before the body is read: thousands of elements of a
// million items each (no property: no byte an item) are refused at once, not walked for minutes;
// elements each small enough alone but too many together likewise.
TEST(RealFiles, PlyElementTableIsBoundedAsAWhole) {
  const fs::path dir = sieve::render::testing::fresh_dir("ply-table");
  std::string many = "ply\nformat ascii 1.0\n";
  for (int i = 0; i < 2000; ++i) many += "element e" + std::to_string(i) + " 1000000\n";
  many += "element vertex 3\n" + xyz_head + "element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n";
  sieve::render::testing::write(dir / "m.ply", many);
  const auto t0 = std::chrono::steady_clock::now();
  sieve::render::testing::expect_error([&] { (void)load_scene(dir / "m.ply"); }, {"m.ply", "'e0' has 1000000 items but no property"});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  // 40 bytes of body: each element of 20 one-byte items fits alone, the three together do not.
  std::string three = "ply\nformat binary_little_endian 1.0\n";
  for (int i = 0; i < 3; ++i) three += "element e" + std::to_string(i) + " 20\nproperty uchar a\n";
  sieve::render::testing::write(dir / "t.ply", three + "end_header\n" + std::string(40, '\0'));
  sieve::render::testing::expect_error([&] { (void)load_scene(dir / "t.ply"); }, {"t.ply", "'e2' claims 20 items, more than the file holds"});
}

// The header is parsed before anything else is read: a header fault in a file of 17 GiB (sparse)
// is reported as such, at once, not as a file too large to read; a valid mesh followed by a
// large tail reads only what its elements need.
TEST(RealFiles, PlyHeaderIsReadFirst) {
  const fs::path dir = sieve::render::testing::fresh_dir("ply-header");
  const fs::path big = sieve::render::testing::write(dir / "big.ply", "ply\nformat binary_little_endian 1.0\nelement vertex x\nend_header\n");
  std::error_code ec;
  fs::resize_file(big, std::uint64_t{17} << 30, ec);
  if (ec) GTEST_SKIP() << "no sparse files here: " << ec.message();
  sieve::render::testing::expect_error([&] { (void)load_scene(big); }, {"big.ply:3:", "element needs a name and a count"});
  const std::vector<float> xyz = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  const fs::path tail = sieve::render::testing::write(
      dir / "tail.ply", binary_ply("element vertex 3\n" + xyz_head + "element face 1\nproperty list uchar int vertex_indices\n", xyz,
                                   face_bytes({0, 1, 2})));
  fs::resize_file(tail, std::uint64_t{4} << 30, ec);
  ASSERT_FALSE(ec);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(load_scene(tail, {"environment.color=[1,1,1]"}).triangles.size(), 1U);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  fs::remove(big), fs::remove(tail);
}

// The scene's memory is admitted when the faces' triangles are counted, before a vertex is parsed or
// a triangle made: a mesh too large for the budget is refused as such even where a vertex further
// on would have failed.
TEST(RealFiles, PlyMemoryIsAdmittedBeforeTrianglesAreMade) {
  const fs::path dir = sieve::render::testing::fresh_dir("ply-admit");
  std::vector<float> xyz = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  xyz[8] = std::nanf("");
  std::string faces;
  for (int i = 0; i < 1000; ++i) faces += face_bytes({0, 1, 2});
  sieve::render::testing::write(
      dir / "m.ply", binary_ply("element vertex 3\n" + xyz_head + "element face 1000\nproperty list uchar int vertex_indices\n", xyz, faces));
  scene_limits limits;
  limits.available_memory = memory::host_base + 999 * memory::host_per_triangle;
  sieve::render::testing::expect_error([&] { (void)load_scene(dir / "m.ply", {}, limits); }, {"m.ply", "1000 triangles", "need about"});
  // Within the budget the vertex is the fault.
  sieve::render::testing::expect_error([&] { (void)load_scene(dir / "m.ply"); }, {"m.ply", "vertex 2: z nan is not a finite number"});
}

// Only the face element's vertex index list holds vertex indices: other lists (per-face texture
// coordinates, long lists of flags) and properties are read over, in ASCII and binary bodies.
TEST(RealFiles, PlyOtherFaceListsAreReadOver) {
  const fs::path dir = sieve::render::testing::fresh_dir("ply-lists");
  const std::string elements = "element vertex 3\n" + xyz_head +
                               "element face 1\nproperty list uchar int vertex_indices\nproperty list uchar float texcoord\n"
                               "property list ushort uchar flags\nproperty uchar kind\n";
  std::string ascii = "ply\nformat ascii 1.0\n" + elements + "end_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2 6 0.25 0.5 0.75 0.5 0.5 0.5 300";
  for (int i = 0; i < 300; ++i) ascii += " 7";
  sieve::render::testing::write(dir / "a.ply", ascii + " 9\n");
  EXPECT_EQ(load_scene(dir / "a.ply", {"environment.color=[1,1,1]"}).triangles.size(), 1U);
  std::string faces = face_bytes({0, 1, 2}) + '\x02';
  const float uv[2] = {0.25f, 0.5f};
  faces.append(reinterpret_cast<const char*>(uv), sizeof uv);
  const std::uint16_t flags = 300;
  faces.append(reinterpret_cast<const char*>(&flags), 2).append(300, '\x07').append(1, '\x09');
  sieve::render::testing::write(dir / "b.ply", binary_ply(elements, {0, 0, 0, 1, 0, 0, 0, 1, 0}, faces));
  const scene b = load_scene(dir / "b.ply", {"environment.color=[1,1,1]"});
  ASSERT_EQ(b.triangles.size(), 1U);
  EXPECT_EQ(b.triangles[0].v1.x, 1.0f);
}

// Counts are decimal integers, indices integers of their type: hexadecimal and fractional forms
// are refused, as are float-typed index lists and a second vertex element (whose colours a face
// would otherwise read past the first's list).
TEST(RealFiles, PlyCountsAndIndicesAreIntegers) {
  const fs::path dir = sieve::render::testing::fresh_dir("ply-integers");
  const std::string tri = "0 0 0\n1 0 0\n0 1 0\n";
  const std::string face = "element face 1\nproperty list uchar int vertex_indices\n";
  const std::pair<std::string, std::string> cases[] = {
      {"element vertex 0x3\n" + xyz_head + face + "end_header\n" + tri + "3 0 1 2\n", ":3: element needs a name and a count"},
      {"element vertex 3.0\n" + xyz_head + face + "end_header\n" + tri + "3 0 1 2\n", ":3: element needs a name and a count"},
      {"element vertex 3\n" + xyz_head + face + "end_header\n" + tri + "3 0 0x1 2\n", "face 0: '0x1' is not a number"},
      {"element vertex 3\n" + xyz_head + face + "end_header\n" + tri + "3 0 1.5 2\n", "face 0: '1.5' is not an integer"},
      {"element vertex 3\n" + xyz_head + face + "end_header\n" + tri + "3.0 0 1 2\n", "face 0: '3.0' is not an integer"},
      {"element vertex 3\n" + xyz_head + "element face 1\nproperty list uchar float vertex_indices\nend_header\n" + tri + "3 0 1 2\n",
       "vertex_indices must be of an integer type"},
      {"element vertex 3\n" + xyz_head + "property uchar red\nproperty uchar green\nproperty uchar blue\n" + face +
           "element vertex 9\nproperty float x\nend_header\n",
       "a second 'vertex' element"},
  };
  for (const auto& [text, part] : cases) {
    sieve::render::testing::write(dir / "m.ply", "ply\nformat ascii 1.0\n" + text);
    sieve::render::testing::expect_error([&] { (void)load_scene(dir / "m.ply"); }, {"m.ply", part});
  }
}

// A glTF with a JPEG base colour texture (as the Khronos DamagedHelmet has): read.
TEST(RealFiles, GltfWithJpegTexture) {
  const fs::path dir = sieve::render::testing::fresh_dir("gltf-jpeg");
  fs::copy_file(corpus / "image" / "progressive.jpg", dir / "albedo.jpg");
  const std::string gltf = R"({"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],
 "meshes":[{"primitives":[{"attributes":{"POSITION":0,"TEXCOORD_0":1},"material":0}]}],
 "materials":[{"pbrMetallicRoughness":{"baseColorTexture":{"index":0},"metallicFactor":0}}],
 "textures":[{"source":0}],"images":[{"uri":"albedo.jpg"}],
 "buffers":[{"byteLength":60,"uri":"data:application/octet-stream;base64,AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAAAAAAAAAAAAAAAIA/AAAAAAAAAAAAAIA/"}],
 "bufferViews":[{"buffer":0,"byteLength":36},{"buffer":0,"byteOffset":36,"byteLength":24}],
 "accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]},
              {"bufferView":1,"componentType":5126,"count":3,"type":"VEC2"}]})";
  sieve::render::testing::write(dir / "m.gltf", gltf);
  const scene s = load_scene(dir / "m.gltf");
  ASSERT_EQ(s.textures.size(), 1u);
  EXPECT_EQ(s.textures[0].width, 8u);
  EXPECT_EQ(s.textures[0].height, 4u);
  // An extension sieve does not read (compressed textures): one line naming it and how to convert.
  std::string basisu = gltf;
  basisu.insert(1, R"("extensionsRequired":["KHR_texture_basisu"],"extensionsUsed":["KHR_texture_basisu"],)");
  sieve::render::testing::write(dir / "d.gltf", basisu);
  sieve::render::testing::expect_error([&] { (void)load_scene(dir / "d.gltf"); }, {"KHR_texture_basisu", "PNG"});
}

// A glTF camera keeps its aspect ratio (the film's height stays).
TEST(RealFiles, GltfCameraAspect) {
  const fs::path dir = sieve::render::testing::fresh_dir("gltf-cam");
  sieve::render::testing::write(dir / "m.gltf", R"({"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0,1]}],
 "nodes":[{"mesh":0},{"camera":0,"translation":[0,0,3]}],
 "cameras":[{"type":"perspective","perspective":{"yfov":0.7,"aspectRatio":2.0,"znear":0.1}}],
 "meshes":[{"primitives":[{"attributes":{"POSITION":0}}]}],
 "buffers":[{"byteLength":36,"uri":"data:application/octet-stream;base64,AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAA"}],
 "bufferViews":[{"buffer":0,"byteLength":36}],
 "accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}]})");
  const scene s = load_scene(dir / "m.gltf");
  EXPECT_EQ(s.film.width, 2 * s.film.height);
  EXPECT_EQ(s.camera.position.z, 3.0f);
}

// An asymmetric model, red in front (+z) and blue behind, given alone as OBJ: the camera sees red.
TEST(BareModel, SeenFromTheFront) {
  const fs::path dir = sieve::render::testing::fresh_dir("front");
  sieve::render::testing::write(dir / "m.mtl", "newmtl front\nKd 0.9 0.05 0.05\nnewmtl back\nKd 0.05 0.05 0.9\n");
  sieve::render::testing::write(dir / "m.obj",
                 "mtllib m.mtl\nv -1 -1 0.5\nv 1 -1 0.5\nv 1 1 0.5\nv -1 1 0.5\nv -1 -1 -0.5\nv 1 -1 -0.5\nv 1 1 -0.5\nv -1 1 -0.5\n"
                 "usemtl front\nf 1 2 3 4\nusemtl back\nf 8 7 6 5\n");
  ::testing::internal::CaptureStderr();
  const scene s = load_scene(dir / "m.obj", {"film.width=24", "film.height=24", "film.spp=8"});
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_GT(s.camera.position.z, 0.5f);
  EXPECT_EQ(s.emissive.size(), 2u);  // the key light
  EXPECT_NE(err.find("added a camera framing it from +z (its front), a grey sky and a key light"), std::string::npos) << err;
  const vec3 c = centre_colour(s);
  EXPECT_GT(c.x, 4 * c.z) << c.x << " " << c.z;
  // The same model as glTF (which faces +z by the specification): red too.
  sieve::render::testing::write(dir / "m.gltf", R"({"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],
 "meshes":[{"primitives":[{"attributes":{"POSITION":0},"indices":1,"material":0},{"attributes":{"POSITION":0},"indices":2,"material":1}]}],
 "materials":[{"name":"front","pbrMetallicRoughness":{"baseColorFactor":[0.9,0.05,0.05,1],"metallicFactor":0}},
              {"name":"back","pbrMetallicRoughness":{"baseColorFactor":[0.05,0.05,0.9,1],"metallicFactor":0}}],
 "buffers":[{"byteLength":120,"uri":"data:application/octet-stream;base64,AACAvwAAgL8AAAA/AACAPwAAgL8AAAA/AACAPwAAgD8AAAA/AACAvwAAgD8AAAA/AACAvwAAgL8AAAC/AACAPwAAgL8AAAC/AACAPwAAgD8AAAC/AACAvwAAgD8AAAC/AAABAAIAAAACAAMABwAGAAUABwAFAAQA"}],
 "bufferViews":[{"buffer":0,"byteLength":96},{"buffer":0,"byteOffset":96,"byteLength":12},{"buffer":0,"byteOffset":108,"byteLength":12}],
 "accessors":[{"bufferView":0,"componentType":5126,"count":8,"type":"VEC3","min":[-1,-1,-0.5],"max":[1,1,0.5]},
              {"bufferView":1,"componentType":5123,"count":6,"type":"SCALAR"},{"bufferView":2,"componentType":5123,"count":6,"type":"SCALAR"}]})");
  ::testing::internal::CaptureStderr();
  const scene g = load_scene(dir / "m.gltf", {"film.width=24", "film.height=24", "film.spp=8"});
  ::testing::internal::GetCapturedStderr();
  EXPECT_GT(g.camera.position.z, 0.5f);
  const vec3 gc = centre_colour(g);
  EXPECT_GT(gc.x, 4 * gc.z) << gc.x << " " << gc.z;
}

// The fraction of a small CPU render's pixels that see geometry: a bare model's sky is a constant
// grey, so a pixel whose every camera ray missed holds exactly that colour.
double hit_fraction(const scene& s) {
  const prepared_scene ps(s);
  const render_result r = render_cpu(ps, render_settings::from(s));
  const std::vector<vec3> m = r.mean();
  std::size_t hit = 0;
  for (const vec3& p : m)
    if (std::fabs(p.x - s.environment.x) > 1e-6f || std::fabs(p.y - s.environment.y) > 1e-6f ||
        std::fabs(p.z - s.environment.z) > 1e-6f)
      ++hit;
  return double(hit) / double(m.size());
}

const std::vector<std::string> small_film = {"film.width=32", "film.height=24", "film.spp=2", "film.max_bounces=2"};

// A flat model (a floor, a terrain, a quad in the xz plane as exporters write them) is seen from
// above at an angle, not edge-on from +z where every ray misses.
TEST(BareModel, FlatModelSeenFromAbove) {
  const fs::path dir = sieve::render::testing::fresh_dir("flat");
  sieve::render::testing::write(dir / "floor.obj", "v -2 0 -2\nv 2 0 -2\nv 2 0 2\nv -2 0 2\nf 1 2 3 4\n");
  ::testing::internal::CaptureStderr();
  const scene s = load_scene(dir / "floor.obj", small_film);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("from above at an angle (it is flat)"), std::string::npos) << err;
  EXPECT_GT(s.camera.position.y, 1.0f);
  EXPECT_GT(hit_fraction(s), 0.3);  // edge-on from +z: 0
}

// The DamagedHelmet alone (.gltf with its JPEG textures): framed from the front, filling the view.
TEST(BareModel, HelmetFillsTheView) {
  ::testing::internal::CaptureStderr();
  const scene s = load_scene(fs::path(SIEVE_SCENES_DIR) / "helmet" / "DamagedHelmet.gltf", small_film);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("from +z (its front)"), std::string::npos) << err;
  EXPECT_GT(hit_fraction(s), 0.2);
}

// An enclosed model (the shipped Crytek Sponza: walls on every side) is seen from inside, in its
// open space, not as the outer wall from +z.
TEST(BareModel, EnclosedModelSeenFromInside) {
  ::testing::internal::CaptureStderr();
  const scene s = load_scene(fs::path(SIEVE_SCENES_DIR) / "third-party" / "sponza" / "sponza.glb", small_film);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("a camera inside it"), std::string::npos) << err;
  EXPECT_TRUE(s.emissive.empty());  // no key light outside the walls: a bright sky through the openings
  const aabb box = bounds(s, s.triangles.size());
  for (int a = 0; a < 3; a += 2) {  // inside the walls, well clear of them
    const float margin = 0.1f * box.extent()[a];
    EXPECT_GT(s.camera.position[a], box.lo[a] + margin) << a;
    EXPECT_LT(s.camera.position[a], box.hi[a] - margin) << a;
  }
  EXPECT_GT(s.camera.position.y, box.lo.y);
  EXPECT_LT(s.camera.position.y, box.lo.y + 0.5f * box.extent().y);  // on the ground floor
  const double hit = hit_fraction(s);
  EXPECT_GT(hit, 0.6);  // floor, walls, columns
}

// A TOML scene without any light warns; environment.map on the command line replaces a colour.
TEST(BareModel, NoLightWarnsAndEnvironmentMapOverride) {
  const fs::path dir = sieve::render::testing::fresh_dir("nolight");
  sieve::render::testing::write(dir / "m.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nf 1 2 3\n");
  sieve::render::testing::write(dir / "s.toml", "[environment]\ncolor = [0.5, 0.5, 0.5]\n[[objects]]\nobj = \"m.obj\"\n");
  sieve::render::testing::write(dir / "dark.toml", "[[objects]]\nobj = \"m.obj\"\n");
  ::testing::internal::CaptureStderr();
  (void)load_scene(dir / "dark.toml");
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("dark.toml: the scene has no light"), std::string::npos) << err;
  const std::string sky = (fs::path(SIEVE_SCENES_DIR) / "sky" / "sky.exr").string();
  const scene s = load_scene(dir / "s.toml", {"environment.map=" + sky});
  EXPECT_FALSE(s.environment_map.texels.empty());
  ::testing::internal::CaptureStderr();
  const scene bare = load_scene(dir / "m.obj", {"environment.map=" + sky});
  const std::string bare_err = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(bare.environment_map.texels.empty());
  EXPECT_TRUE(bare.emissive.empty());  // the user's sky: no key light
}

namespace {

// A terrain of n x n quads as a binary little-endian PLY: x y z, normals, texture coordinates and
// uchar colours a vertex; each face a list of 3 (count `count_type`, int indices), followed by a
// uchar flag where `flag` (a layout the loader's fast path does not take: the general reader's).
struct ply_terrain {
  int n = 160;
  std::string count_type = "uchar";
  bool flag = false;
  std::string text() const {
    std::string head = "ply\nformat binary_little_endian 1.0\nelement vertex " + std::to_string((n + 1) * (n + 1)) + "\n" + xyz_head +
                       "property float nx\nproperty float ny\nproperty float nz\nproperty float s\nproperty float t\n"
                       "property uchar red\nproperty uchar green\nproperty uchar blue\nproperty float quality\n"
                       "element face " + std::to_string(2 * n * n) + "\nproperty list " + count_type + " int vertex_indices\n" +
                       (flag ? "property uchar flags\n" : "") + "end_header\n";
    auto put = [&](const auto& v) { head.append(reinterpret_cast<const char*>(&v), sizeof v); };
    for (int y = 0; y <= n; ++y)
      for (int x = 0; x <= n; ++x) {
        for (const float f : {float(x), std::sin(x * 0.1f) * std::cos(y * 0.07f), float(y), 0.0f, 1.0f, 0.0f, x / float(n), y / float(n)}) put(f);
        for (const std::uint8_t c : {std::uint8_t(x * 3), std::uint8_t(y * 5), std::uint8_t(x ^ y)}) put(c);
        put(0.5f);
      }
    const std::size_t count_bytes = count_type == "uchar" ? 1 : count_type == "ushort" ? 2 : 4;
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const std::int32_t a = y * (n + 1) + x, b = a + 1, c = a + n + 1, d = c + 1;
        for (const auto& f : {std::array<std::int32_t, 3>{a, b, d}, std::array<std::int32_t, 3>{a, d, c}}) {
          const std::uint32_t three = 3;
          head.append(reinterpret_cast<const char*>(&three), count_bytes);
          for (const std::int32_t i : f) put(i);
          if (flag) head += '\x01';
        }
      }
    return head;
  }
  // Where face k's first index is (its count just before), in text().
  std::size_t face_at(const std::string& t, std::size_t k) const {
    const std::size_t count_bytes = count_type == "uchar" ? 1 : count_type == "ushort" ? 2 : 4;
    const std::size_t faces = 2 * std::size_t(n) * n, stride = count_bytes + 12 + (flag ? 1 : 0);
    return t.size() - (faces - k) * stride + count_bytes;
  }
};

template <class T>
void expect_same_bytes(const std::vector<T>& a, const std::vector<T>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(T)), 0) << what;
}

}  // namespace

// The loader reads the common binary layouts (fixed-size vertices, faces that are all triangles
// of int indices) by a path of its own: the scene it makes is the general reader's to the byte
// (positions, normals, texture coordinates, colours), with a count of uchar, ushort or uint; a
// face of another length, an index past the vertices or below 0, a value that is not finite and
// a truncated file are reported in the general reader's words.
TEST(RealFiles, PlyFastLayoutsReadAsTheGeneralReader) {
  const fs::path dir = sieve::render::testing::fresh_dir("ply-fast");
  const std::vector<std::string> env = {"environment.color=[1,1,1]"};
  ply_terrain general;
  general.flag = true;
  sieve::render::testing::write(dir / "general.ply", general.text());
  const scene want = load_scene(dir / "general.ply", env);
  ASSERT_EQ(want.triangles.size(), 2U * 160 * 160);
  for (const char* count : {"uchar", "ushort", "uint"}) {
    ply_terrain fast;
    fast.count_type = count;
    sieve::render::testing::write(dir / "fast.ply", fast.text());
    const scene got = load_scene(dir / "fast.ply", env);
    expect_same_bytes(got.triangles, want.triangles, "triangles");
    expect_same_bytes(got.normals, want.normals, "normals");
    expect_same_bytes(got.uvs, want.uvs, "uvs");
    expect_same_bytes(got.material_of, want.material_of, "materials");
    ASSERT_EQ(got.textures.size(), 1U);
    expect_same_bytes(got.textures[0].texels, want.textures[0].texels, "vertex colours");
  }
  // Faults: the same message from either layout.
  const std::size_t k = 40000;
  const std::pair<std::function<void(std::string&, const ply_terrain&)>, std::string> faults[] = {
      {[&](std::string& t, const ply_terrain& p) { const std::int32_t i = 99999999; std::memcpy(&t[p.face_at(t, k) + 4], &i, 4); },
       "face 40000 refers to vertex 99999999, past the 25921 vertices"},
      {[&](std::string& t, const ply_terrain& p) { const std::int32_t i = -1; std::memcpy(&t[p.face_at(t, k) + 8], &i, 4); },
       "face 40000 refers to vertex -1"},
      {[&](std::string& t, const ply_terrain& p) { t[p.face_at(t, 2 * 160 * 160 - 1) - 1] = '\xc8'; },  // 200
       "the file ends inside face 51199"},
      {[&](std::string& t, const ply_terrain& p) { t.resize(p.face_at(t, k) + 2); }, "the file ends inside face 40000"},
      {[&](std::string& t, const ply_terrain&) {
         const float nan = std::nanf("");
         std::memcpy(&t[t.find("end_header\n") + 11 + 7 * 39 + 4], &nan, 4);
       },
       "vertex 7: y nan is not a finite number"},
      {[&](std::string& t, const ply_terrain&) {
         const float inf = INFINITY;
         std::memcpy(&t[t.find("end_header\n") + 11 + 9 * 39 + 35], &inf, 4);
       },
       "vertex 9: quality inf is not a finite number"},
  };
  for (const auto& [fault, part] : faults) {
    std::string messages[2];
    for (int i = 0; i < 2; ++i) {
      ply_terrain p;
      p.flag = i == 1;
      std::string t = p.text();
      fault(t, p);
      sieve::render::testing::write(dir / "m.ply", t);
      messages[i] = sieve::render::testing::expect_error([&] { (void)load_scene(dir / "m.ply", env); }, {"m.ply", part});
    }
    EXPECT_EQ(messages[0], messages[1]);
  }
  // A quad among the triangles: read by the general reader, one triangle more.
  ply_terrain p;
  std::string t = p.text();
  const std::size_t at = p.face_at(t, k) - 1;
  t.insert(at + 13, std::string("\0\0\0\0", 4));  // face k: 4 indices (its own 3 and vertex 0)
  t[at] = 4;
  sieve::render::testing::write(dir / "quad.ply", t);
  EXPECT_EQ(load_scene(dir / "quad.ply", env).triangles.size(), 2U * 160 * 160 + 1);
}
