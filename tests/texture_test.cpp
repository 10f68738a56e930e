// Textures, texture coordinates and smooth shading: the bilinear lookup and the shading-normal
// functions (the code the CPU and GPU stages share), image files (8-bit, 16-bit, .hdr; corrupt,
// absurd and non-finite ones), the OBJ loader's normals, texture coordinates and map_Kd, and renders:
// a textured quad shows its texture's colours, and a textured, smooth-shaded scene gives the same
// image whatever the compaction strategy, traversal or integrator.
#include <core/sampling.hpp>
#include <core/shading.hpp>
#include <core/texture.hpp>
#include <scene/image_file.hpp>
#include <scene/load.hpp>
#include <run/render.hpp>

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include "scene_test_support.hpp"
#include "textured_quad.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace sieve::render {
namespace {

namespace fs = std::filesystem;

void expect_near(vec3 a, vec3 b, float tol) {
  EXPECT_NEAR(a.x, b.x, tol);
  EXPECT_NEAR(a.y, b.y, tol);
  EXPECT_NEAR(a.z, b.z, tol);
}

// A fresh folder under the test's temporary directory.
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("sieve-texture-test-" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write_bytes(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

// ------------------------------------------------------------------------------------------------
// The lookup.

TEST(Texture, BilinearHitsTexelCentresAndBlendsBetweenThem) {
  const std::vector<vec3> texels = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}};  // 2 x 2, row 0 at the top
  const texture stored = make_texture("t", 2, 2, texels, wrap_mode::clamp);
  const texture_view t = stored.view();
  // Texel (x, y) has its centre at u = (x + 0.5) / 2, v = 1 - (y + 0.5) / 2.
  expect_near(bilinear(t, 0.25f, 0.75f), {1, 0, 0}, 1e-6f);  // top-left
  expect_near(bilinear(t, 0.75f, 0.75f), {0, 1, 0}, 1e-6f);  // top-right
  expect_near(bilinear(t, 0.25f, 0.25f), {0, 0, 1}, 1e-6f);  // bottom-left
  expect_near(bilinear(t, 0.75f, 0.25f), {1, 1, 1}, 1e-6f);
  expect_near(bilinear(t, 0.5f, 0.75f), {0.5f, 0.5f, 0}, 1e-6f);   // halfway along the top row
  expect_near(bilinear(t, 0.5f, 0.5f), {0.5f, 0.5f, 0.5f}, 1e-6f);  // the four averaged
}

TEST(Texture, RepeatWrapsAndClampExtendsTheEdges) {
  const std::vector<vec3> texels = {{0, 0, 0}, {1, 1, 1}};  // 2 x 1: black, white
  const texture stored = make_texture("t", 2, 1, texels, wrap_mode::repeat);
  texture_view t = stored.view();
  // At u = 0 (the left edge) repeat blends the last texel (white) and the first (black).
  expect_near(bilinear(t, 0.0f, 0.5f), {0.5f, 0.5f, 0.5f}, 1e-6f);
  expect_near(bilinear(t, 1.25f, 0.5f), bilinear(t, 0.25f, 0.5f), 1e-6f);
  expect_near(bilinear(t, -0.75f, 0.5f), bilinear(t, 0.25f, 0.5f), 1e-6f);
  t.wrap = wrap_mode::clamp;
  expect_near(bilinear(t, 0.0f, 0.5f), {0, 0, 0}, 1e-6f);
  expect_near(bilinear(t, -3.0f, 0.5f), {0, 0, 0}, 1e-6f);
  expect_near(bilinear(t, 7.0f, 0.5f), {1, 1, 1}, 1e-6f);
}

TEST(Texture, NonFiniteOrHugeCoordinatesStayInside) {
  const std::vector<vec3> texels = {{0.25f, 0.5f, 0.75f}};
  for (const wrap_mode w : {wrap_mode::repeat, wrap_mode::clamp}) {
    const texture stored = make_texture("t", 1, 1, texels, w);
    const texture_view t = stored.view();
    for (const float bad : {NAN, INFINITY, -INFINITY, 3e9f, -3e9f})
      expect_near(bilinear(t, bad, 0.5f), texels[0], 0);
  }
}

// ------------------------------------------------------------------------------------------------
// Shading normals.

TEST(ShadingNormal, InterpolatesTheVertexNormals) {
  const vec3 ng{0, 0, 1};
  const triangle_normals tn{normalize(vec3{-1, 0, 1}), normalize(vec3{1, 0, 1}), vec3{0, 0, 1}};
  expect_near(shading_normal(tn, 0, 0, ng), tn.n0, 1e-6f);  // at v0
  expect_near(shading_normal(tn, 1, 0, ng), tn.n1, 1e-6f);  // at v1 (b1 = 1)
  expect_near(shading_normal(tn, 0, 1, ng), tn.n2, 1e-6f);
  expect_near(shading_normal(tn, 0.5f, 0, ng), {0, 0, 1}, 1e-6f);  // halfway v0-v1: the mean, normalised
  const vec3 n = shading_normal(tn, 0.25f, 0.25f, ng);
  EXPECT_NEAR(length(n), 1.0f, 1e-6f);
  EXPECT_LT(n.x, 0);  // nearer v0, which leans to -x
}

TEST(ShadingNormal, TurnsToTheGeometricSideAndFallsBackWhenFlat) {
  const vec3 ng{0, 0, 1};
  const triangle_normals down{{0, 0, -1}, {0, 0, -1}, {0, 0, -1}};  // normals against the winding
  expect_near(shading_normal(down, 0.3f, 0.3f, ng), ng, 0);
  expect_near(shading_normal(triangle_normals{}, 0.3f, 0.3f, ng), ng, 0);  // zero: a flat triangle
  const triangle_normals cancel{{1, 0, 0}, {-1, 0, 0}, {0, 0, 0}};  // interpolates to zero halfway
  expect_near(shading_normal(cancel, 0.5f, 0, ng), ng, 0);
}

TEST(ShadingNormal, ViewerBelowTheShadingSurfaceGetsTheGeometricNormal) {
  const vec3 ng{0, 0, 1}, ns = normalize(vec3{1, 0, 1});
  expect_near(shading_normal_towards(ns, ng, normalize(vec3{0, 0.1f, 1})), ns, 0);  // both see wo above
  // wo just above the geometric surface but below the shading one (it leans away): flat there.
  expect_near(shading_normal_towards(ns, ng, normalize(vec3{-1, 0, 0.2f})), ng, 0);
}

TEST(ShadingNormal, DirectionsThroughTheGeometricSurfaceAreRefused) {
  const vec3 ng{0, 0, 1}, ns = normalize(vec3{1, 0, 1}), wo = normalize(vec3{0, 0, 1});
  EXPECT_TRUE(sides_agree(wo, normalize(vec3{0, 1, 1}), ng, ns));       // reflected by both
  EXPECT_TRUE(sides_agree(wo, normalize(vec3{-1, 0, -1}), ng, ns));     // transmitted by both
  EXPECT_FALSE(sides_agree(wo, normalize(vec3{1, 0, -0.2f}), ng, ns));  // above ns, below ng: a leak
  EXPECT_FALSE(sides_agree(wo, normalize(vec3{-1, 0, 0.2f}), ng, ns));  // below ns, above ng
  EXPECT_TRUE(sides_agree(wo, normalize(vec3{-1, 0, 0.2f}), ng, ng));   // flat: always consistent
}

// ------------------------------------------------------------------------------------------------
// Image files.

TEST(ImageFile, EightBitPngIsDecodedFromSrgb) {
  const fs::path dir = scratch("png8");
  const std::vector<vec3> px = {{0, 0.5f, 1}, {0.2f, 0.04f, 0.7f}};
  write_png(dir / "a.png", 2, 1, px);
  const image_rgb img = read_image(dir / "a.png", "texture");
  ASSERT_EQ(img.width, 2u);
  ASSERT_EQ(img.height, 1u);
  for (std::size_t i = 0; i < px.size(); ++i) expect_near(img.pixels[i], testing::stored(px[i]), 1e-6f);
  EXPECT_NEAR(img.pixels[0].y, 0.5f, 0.005f);  // linear again, not the sRGB code 188/255
}

// A 16-bit RGB PNG (uncompressed deflate blocks), row 0 at the top.
std::string png16(std::uint32_t w, std::uint32_t h, const std::vector<std::uint16_t>& rgb) {
  std::string raw;
  for (std::uint32_t y = 0; y < h; ++y) {
    raw += '\0';
    for (std::uint32_t x = 0; x < w * 3; ++x) {
      const std::uint16_t v = rgb[y * w * 3 + x];
      raw += static_cast<char>(v >> 8);
      raw += static_cast<char>(v & 255);
    }
  }
  auto be32 = [](std::uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
  };
  auto crc = [](const std::string& s) {
    std::uint32_t c = 0xffffffffU;
    for (const unsigned char b : s) {
      c ^= b;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320U & (0U - (c & 1)));
    }
    return ~c;
  };
  std::uint32_t a = 1, b = 0;  // adler32
  for (const unsigned char ch : raw) a = (a + ch) % 65521, b = (b + a) % 65521;
  std::string z = "\x78\x01";
  for (std::size_t at = 0; at < raw.size() || at == 0;) {
    const std::size_t n = std::min<std::size_t>(65535, raw.size() - at);
    const bool last = at + n >= raw.size();
    z += static_cast<char>(last ? 1 : 0);
    z += static_cast<char>(n & 255);
    z += static_cast<char>(n >> 8);
    z += static_cast<char>(~n & 255);
    z += static_cast<char>((~n >> 8) & 255);
    z += raw.substr(at, n);
    at += n;
    if (last) break;
  }
  z += be32((b << 16) | a);
  auto chunk = [&](const std::string& kind, const std::string& data) { return be32(static_cast<std::uint32_t>(data.size())) + kind + data + be32(crc(kind + data)); };
  const std::string ihdr = be32(w) + be32(h) + std::string{16, 2, 0, 0, 0};
  return std::string("\x89PNG\r\n\x1a\n", 8) + chunk("IHDR", ihdr) + chunk("IDAT", z) + chunk("IEND", "");
}

TEST(ImageFile, SixteenBitPngKeepsItsPrecision) {
  const fs::path dir = scratch("png16");
  write_bytes(dir / "a.png", png16(2, 1, {0, 32768, 65535, 1000, 2000, 3000}));
  const image_rgb img = read_image(dir / "a.png", "texture");
  ASSERT_EQ(img.pixels.size(), 2u);
  expect_near(img.pixels[0], {0, srgb_to_linear(32768 / 65535.0f), 1}, 1e-6f);
  // 1000/65535 is between two 8-bit codes: read at 16 bits it keeps its own value.
  EXPECT_NEAR(img.pixels[1].x, srgb_to_linear(1000 / 65535.0f), 1e-7f);
}

TEST(ImageFile, RadianceHdrIsLinearAndMayExceedOne) {
#if !defined(SIEVE_TEST_OPENIMAGEIO)
  GTEST_SKIP() << "this build reads no Radiance .hdr (configured with -DSIEVE_OPENIMAGEIO=OFF)";
#endif
  const fs::path dir = scratch("hdr");
  const float px[6] = {4.0f, 0.5f, 0.25f, 100.0f, 1.0f, 0.0f};
  // Radiance RGBE, flat (unencoded) scanlines: a shared exponent and three 8-bit mantissas.
  std::string bytes = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 1 +X 2\n";
  for (int i = 0; i < 2; ++i) {
    const float m = std::max({px[3 * i], px[3 * i + 1], px[3 * i + 2]});
    int e = 0;
    const float scale = std::frexp(m, &e) * 256.0f / m;
    for (int k = 0; k < 3; ++k) bytes += static_cast<char>(static_cast<unsigned char>(px[3 * i + k] * scale));
    bytes += static_cast<char>(e + 128);
  }
  write_bytes(dir / "sky.hdr", bytes);
  const image_rgb img = read_image(dir / "sky.hdr", "environment map");
  ASSERT_EQ(img.pixels.size(), 2u);
  expect_near(img.pixels[0], {4.0f, 0.5f, 0.25f}, 0.02f);  // RGBE keeps 8 bits of mantissa
  EXPECT_NEAR(img.pixels[1].x, 100.0f, 1.0f);
}

// A run-length encoded .hdr scanline of width 8: per channel one run of 8, except red: 8 literals.
std::string hdr_rle_8x1(bool truncate) {
  std::string bytes = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 1 +X 8\n";
  bytes += std::string{2, 2, 0, 8};
  bytes += '\x08';  // 8 literal red mantissas
  for (int x = 0; x < 8; ++x) bytes += static_cast<char>(16 * x + 8);
  bytes += std::string{static_cast<char>(128 + 8), 64};   // green: a run of 8 x 64
  bytes += std::string{static_cast<char>(128 + 8), 0};    // blue: 0
  bytes += std::string{static_cast<char>(128 + 8), static_cast<char>(129)};  // exponent 129: 2^(129 - 136)
  return truncate ? bytes.substr(0, bytes.size() - 1) : bytes;
}

TEST(ImageFile, RunLengthHdrIsDecodedAndATruncatedOneIsAnError) {
#if !defined(SIEVE_TEST_OPENIMAGEIO)
  GTEST_SKIP() << "this build reads no Radiance .hdr (configured with -DSIEVE_OPENIMAGEIO=OFF)";
#endif
  const fs::path dir = scratch("hdr-rle");
  write_bytes(dir / "rle.hdr", hdr_rle_8x1(false));
  const image_rgb img = read_image(dir / "rle.hdr", "environment map");
  ASSERT_EQ(img.width, 8u);
  for (int x = 0; x < 8; ++x) expect_near(img.pixels[static_cast<std::size_t>(x)], {(16 * x + 8) / 128.0f, 0.5f, 0}, 0);
  // Cut inside the last run: stb_image 2.27 looped forever here; the error names the file.
  write_bytes(dir / "cut.hdr", hdr_rle_8x1(true));
  testing::expect_error([&] { (void)read_image(dir / "cut.hdr", "environment map"); },
                        {"cut.hdr: cannot decode the environment map: "});
  std::string zero = hdr_rle_8x1(false);
  zero[zero.size() - 2] = static_cast<char>(128);  // a run of 0
  write_bytes(dir / "zero.hdr", zero);
  EXPECT_THROW((void)read_image(dir / "zero.hdr", "environment map"), sieve::error);
}

// A JPEG of markers and no image (the decoder Debian 12's stb_image has wrote past a table on such
// files): one line naming the file.
TEST(ImageFile, CorruptJpegIsAnErrorNamingTheFile) {
  const fs::path dir = scratch("jpeg");
  static const char bytes[] = "\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9";
  const std::string jfif(bytes, sizeof bytes - 1);
  write_bytes(dir / "a.jpg", jfif);
  testing::expect_error([&] { (void)read_image(dir / "a.jpg", "texture"); },
                        {"a.jpg: cannot read the texture: "});
}

TEST(ImageFile, CorruptTruncatedAndForeignFilesAreErrorsNamingTheFile) {
  const fs::path dir = scratch("bad");
  const std::string good = encode_png(dir / "x.png", 4, 4, std::vector<vec3>(16, vec3{0.5f, 0.5f, 0.5f}));
  write_bytes(dir / "truncated.png", good.substr(0, good.size() / 2));
  write_bytes(dir / "text.png", "this is not an image\n");
  write_bytes(dir / "empty.png", "");
  for (const char* name : {"truncated.png", "text.png", "empty.png"}) {
    SCOPED_TRACE(name);
    testing::expect_error([&] { (void)read_image(dir / name, "texture"); }, {(dir / name).string()});
  }
  EXPECT_THROW((void)read_image(dir / "missing.png", "texture"), sieve::error);
  EXPECT_THROW((void)read_image(dir, "texture"), sieve::error);  // a directory
}

TEST(ImageFile, AbsurdSizesAreRefusedFromTheHeader) {
  const fs::path dir = scratch("size");
  write_bytes(dir / "wide.png", png16(40, 1, std::vector<std::uint16_t>(120, 0)));
  image_limits side;
  side.max_side = 32;
  testing::expect_error([&] { (void)read_image(dir / "wide.png", "texture", side); },
                        {"40 x 1 pixels, more than the limit of 32"});
  image_limits pixels;
  pixels.max_pixels = 39;
  testing::expect_error([&] { (void)read_image(dir / "wide.png", "texture", pixels); },
                        {"40 x 1 pixels, more than the limit of 39 pixels"});
  image_limits bytes;
  bytes.max_bytes = 40 * 12 - 1;
  EXPECT_THROW((void)read_image(dir / "wide.png", "texture", bytes), sieve::error);
  // A header claiming 100000 x 100000 pixels is refused before anything is allocated.
  std::string huge = png16(1, 1, {0, 0, 0});
  const std::string dims = {0, 1, (char)0x86, (char)0xa0, 0, 1, (char)0x86, (char)0xa0};
  huge.replace(16, 8, dims);
  write_bytes(dir / "huge.png", huge);
  testing::expect_error([&] { (void)read_image(dir / "huge.png", "texture"); },
                        {"100000 x 100000 pixels, more than the limit of 16384"});
}

TEST(ImageFile, NonFiniteTexelsAreAnError) {
  image_rgb img;
  img.width = 2;
  img.height = 2;
  img.pixels = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  EXPECT_NO_THROW(check_finite(img, "a.hdr", "texture"));
  for (const float bad : {NAN, INFINITY}) {
    img.pixels[3] = {0, bad, 0};
    testing::expect_error([&] { check_finite(img, "a.hdr", "texture"); },
                          {"a.hdr: the texture has a value that is not finite at pixel (1, 1)"});
  }
}

// ------------------------------------------------------------------------------------------------
// The OBJ loader.

TEST(ObjAttributes, NormalsAndTextureCoordinatesFollowTheirTriangles) {
  const fs::path dir = scratch("attrs");
  // A quad with normals and uvs, then a triangle with neither; a scene light after them.
  testing::write_text(dir / "m.obj",
                      "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 5 5 5\nv 6 5 5\nv 5 6 5\n"
                      "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\n"
                      "vn 0 0 2\nvn 1 0 1\nvn 0 1 1\nvn -1 0 1\n"
                      "f 1/1/1 2/2/2 3/3/3 4/4/4\nf 5 6 7\n");
  testing::write_text(dir / "s.toml",
                      "[[objects]]\nobj = \"m.obj\"\nscale = [2.0, 1.0, 1.0]\n"
                      "[[lights]]\ncorner = [0.0, 0.0, 9.0]\nedge1 = [1.0, 0.0, 0.0]\nedge2 = [0.0, 1.0, 0.0]\nemission = [1.0, 1.0, 1.0]\n");
  const scene s = load_scene(dir / "s.toml");
  ASSERT_EQ(s.triangles.size(), 5u);
  ASSERT_EQ(s.normals.size(), 5u);
  ASSERT_EQ(s.uvs.size(), 5u);
  // The quad's fan: (1, 2, 3), (1, 3, 4); normals unit length, divided by the scale (inverse transpose).
  expect_near(s.normals[0].n0, {0, 0, 1}, 1e-6f);
  expect_near(s.normals[0].n1, normalize(vec3{0.5f, 0, 1}), 1e-6f);
  expect_near(s.normals[1].n2, normalize(vec3{-0.5f, 0, 1}), 1e-6f);
  EXPECT_EQ(s.uvs[0].t1.u, 1.0f);
  EXPECT_EQ(s.uvs[1].t2.v, 1.0f);
  EXPECT_EQ(s.uvs[1].t2.u, 0.0f);
  // The bare triangle and the light: flat (zero normals), uvs zero.
  for (std::size_t i = 2; i < 5; ++i) {
    expect_near(s.normals[i].n0, {0, 0, 0}, 0);
    EXPECT_EQ(s.uvs[i].t1.u, 0.0f);
  }
}

TEST(ObjAttributes, MeshesWithoutAttributesStoreNone) {
  const scene s = load_scene(fs::path(SIEVE_SCENES_DIR) / "cornell-box" / "cornell-box.toml");
  EXPECT_TRUE(s.normals.empty());
  EXPECT_TRUE(s.uvs.empty());
  EXPECT_TRUE(s.textures.empty());
}

TEST(ObjAttributes, BadNormalsAndTextureCoordinatesAreErrors) {
  const fs::path dir = scratch("badattrs");
  const std::string quad = "v 0 0 0\nv 1 0 0\nv 1 1 0\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"vn nan 0 1\nf 1//1 2//1 3//1\n", "vertex normal: 'nan' is not a finite number"},
      {"vn 0 1\nf 1 2 3\n", "a vertex normal needs 3 numbers"},
      {"vt x 0\nf 1 2 3\n", "texture coordinate: 'x' is not a number"},
      {"vt 0 inf\nf 1 2 3\n", "texture coordinate: 'inf' is not a finite number"},
      {"vn 0 0 1\nf 1//1 2//1 3//7\n", "m.obj:5: face normal index 7 is past the 1 normals of the file"},
      {"vt 0 0\nf 1/1 2/1 3/4\n", "m.obj:5: face texture coordinate index 4 is past the 1 texture coordinates of the file"},
  };
  for (const auto& [body, message] : cases) {
    SCOPED_TRACE(body);
    testing::write_text(dir / "m.obj", quad + body);
    testing::expect_error([&] { (void)load_scene(dir / "m.obj"); }, {message});
  }
}

TEST(ObjTextures, MapKdIsReadOnceAndClampIsItsWrapMode) {
  const fs::path dir = scratch("mapkd");
  write_png(dir / "t.png", 2, 2, std::vector<vec3>(4, vec3{0.5f, 0.25f, 1}));
  testing::write_text(dir / "m.mtl",
                      "newmtl a\nKd 0.8 0.8 0.8\nmap_Kd t.png\n"
                      "newmtl b\nKd 0.1 0.1 0.1\nmap_Kd t.png\n"
                      "newmtl c\nKd 0.8 0.8 0.8\nmap_Kd -clamp on t.png\n"
                      "newmtl glass\nillum 7\nmap_Kd t.png\n");
  testing::write_text(dir / "m.obj", "mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n"
                                     "usemtl a\nf 1 2 3\nusemtl b\nf 1 3 4\nusemtl c\nf 2 3 4\nusemtl glass\nf 1 2 4\n");
  const scene s = load_scene(dir / "m.obj");
  ASSERT_EQ(s.textures.size(), 2u);  // t.png repeated and clamped; glass reads no texture
  ASSERT_EQ(s.materials.size(), 5u);  // and the bare model's key light
  EXPECT_EQ(s.materials[0].albedo_texture, s.materials[1].albedo_texture);
  EXPECT_EQ(s.textures[static_cast<std::size_t>(s.materials[0].albedo_texture)].wrap, wrap_mode::repeat);
  EXPECT_EQ(s.textures[static_cast<std::size_t>(s.materials[2].albedo_texture)].wrap, wrap_mode::clamp);
  EXPECT_EQ(s.materials[3].albedo_texture, -1);
  expect_near(s.textures[0].texel(1, 1), testing::stored({0.5f, 0.25f, 1}), 1e-6f);
}

TEST(ObjTextures, MissingTextureIsAWarningAndTheConstantColourStays) {
  const fs::path dir = scratch("missing");
  testing::write_text(dir / "m.mtl", "newmtl a\nKd 0.3 0.4 0.5\nmap_Kd nowhere.png\n");
  testing::write_text(dir / "m.obj", "mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 1 1 0\nusemtl a\nf 1 2 3\n");
  ::testing::internal::CaptureStderr();
  const scene s = load_scene(dir / "m.obj");
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("sieve: warning: "), std::string::npos) << err;
  EXPECT_NE(err.find("nowhere.png' not found; the material keeps its constant colour"), std::string::npos) << err;
  ASSERT_EQ(s.materials.size(), 2u);  // and the bare model's key light
  EXPECT_EQ(s.materials[0].albedo_texture, -1);
  expect_near(s.materials[0].albedo, {0.3f, 0.4f, 0.5f}, 0);
}

TEST(ObjTextures, UnreadableOrOversizedTexturesAreErrors) {
  const fs::path dir = scratch("unreadable");
  testing::write_text(dir / "bad.png", "GIF89a not a png\n");
  write_png(dir / "big.png", 40, 2, std::vector<vec3>(80, vec3{0.5f, 0.5f, 0.5f}));
  testing::write_text(dir / "m.obj", "mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 1 1 0\nusemtl a\nf 1 2 3\n");
  testing::write_text(dir / "m.mtl", "newmtl a\nmap_Kd bad.png\n");
  testing::expect_error([&] { (void)load_scene(dir / "m.obj"); }, {"bad.png: the texture is not an image sieve reads", "material 'a'"});
  testing::write_text(dir / "m.mtl", "newmtl a\nmap_Kd big.png\n");
  scene_limits limits;
  limits.max_texture_side = 32;
  EXPECT_THROW((void)load_scene(dir / "m.obj", {}, limits), sieve::error);
  limits = {};
  // The scene's budget for all textures, on what they take stored: 8-bit RGB with the pyramid.
  limits.max_texture_bytes = pyramid_bytes(40, 2, 3, texel_format::unorm8) - 1;
  testing::expect_error([&] { (void)load_scene(dir / "m.obj", {}, limits); },
                        {"big.png: the texture takes 354 bytes stored with its mipmaps", "past the scene's texture budget",
                         "material 'a'"});
  limits.max_texture_bytes = pyramid_bytes(40, 2, 3, texel_format::unorm8);
  EXPECT_EQ(load_scene(dir / "m.obj", {}, limits).textures.size(), 1u);
}

// The image files are decoded together, each its own task: the textures, their order and the
// materials' indices are the one-thread load's; where several fail, the first in the scene's order
// is the error, and the budget is checked in that order.
TEST(ObjTextures, DecodedTogetherAsASerialLoadWould) {
  const fs::path dir = scratch("together");
  std::string mtl, obj = "mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 1 1 0\nvt 0 0\nvt 1 0\nvt 1 1\n";
  for (int k = 0; k < 12; ++k) {
    const std::uint32_t w = 8 + 3 * static_cast<std::uint32_t>(k), h = 5 + static_cast<std::uint32_t>(k);
    std::vector<vec3> px(std::size_t{w} * h);
    for (std::size_t i = 0; i < px.size(); ++i)
      px[i] = {static_cast<float>((i * 7 + k) % 11) / 10.0f, static_cast<float>(k) / 12.0f, static_cast<float>(i % 5) / 4.0f};
    write_png(dir / ("t" + std::to_string(k) + ".png"), w, h, px);
    mtl += "newmtl m" + std::to_string(k) + "\nmap_Kd t" + std::to_string(k) + ".png\n";
    obj += "usemtl m" + std::to_string(k) + "\nf 1/1 2/2 3/3\n";
  }
  testing::write_text(dir / "m.mtl", mtl);
  testing::write_text(dir / "m.obj", obj);
  scene serial;
  {
    const tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    serial = load_scene(dir / "m.obj");
  }
  const scene together = load_scene(dir / "m.obj");
  ASSERT_EQ(serial.textures.size(), 12u);
  ASSERT_EQ(together.textures.size(), serial.textures.size());
  for (std::size_t k = 0; k < serial.textures.size(); ++k) {
    EXPECT_EQ(together.textures[k].name, serial.textures[k].name);
    EXPECT_EQ(together.textures[k].texels, serial.textures[k].texels) << k;
    EXPECT_EQ(together.materials[k].albedo_texture, serial.materials[k].albedo_texture);
  }
  // Two broken files: the first in the scene's order is the one reported, whatever decodes first.
  testing::write_text(dir / "t3.png", "not a png\n");
  testing::write_text(dir / "t9.png", "not a png either\n");
  for (int run = 0; run < 4; ++run)
    testing::expect_error([&] { (void)load_scene(dir / "m.obj"); }, {"t3.png: the texture is not an image sieve reads", "m3"});
}

TEST(TomlTextures, MaterialsTakeATextureAndAWrapMode) {
  const fs::path dir = scratch("toml-texture");
  write_png(dir / "t.png", 2, 2, std::vector<vec3>(4, vec3{0.25f, 0.5f, 0.75f}));
  testing::write_text(dir / "m.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nvt 0 0\nvt 1 0\nvt 1 1\nf 1/1 2/2 3/3\n");
  const std::string object = "[[objects]]\nobj = \"m.obj\"\nmaterial = \"paint\"\n";
  testing::write_text(dir / "s.toml", object + "[[materials]]\nname = \"paint\"\ntexture = \"t.png\"\nwrap = \"clamp\"\n");
  const scene s = load_scene(dir / "s.toml");
  ASSERT_EQ(s.textures.size(), 1u);
  ASSERT_EQ(s.materials.size(), 1u);
  EXPECT_EQ(s.materials[0].albedo_texture, 0);
  EXPECT_EQ(s.textures[0].wrap, wrap_mode::clamp);
  expect_near(s.textures[0].texel(0, 0), testing::stored({0.25f, 0.5f, 0.75f}), 1e-6f);

  const std::vector<std::pair<std::string, std::string>> bad = {
      {"wrap = \"mirror\"\ntexture = \"t.png\"\n", "materials[0].wrap: 'mirror' is not one of repeat, clamp"},
      {"wrap = \"clamp\"\n", "materials[0].wrap: wrap goes with texture"},
      {"type = \"mirror\"\ntexture = \"t.png\"\n", "materials[0].texture: only a diffuse or gltf material takes a texture"},
      {"texture = \"m.obj\"\n", "m.obj: the texture is not an image sieve reads"},
  };
  for (const auto& [keys, message] : bad) {
    SCOPED_TRACE(keys);
    testing::write_text(dir / "s.toml", object + "[[materials]]\nname = \"paint\"\n" + keys);
    testing::expect_error([&] { (void)load_scene(dir / "s.toml"); }, {message});
  }
  // Missing: a warning naming the key; the material keeps its albedo.
  testing::write_text(dir / "s.toml", object + "[[materials]]\nname = \"paint\"\nalbedo = [0.1, 0.2, 0.3]\ntexture = \"gone.png\"\n");
  ::testing::internal::CaptureStderr();
  const scene m = load_scene(dir / "s.toml");
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("s.toml:7: materials[0].texture: texture '"), std::string::npos) << err;
  EXPECT_EQ(m.materials[0].albedo_texture, -1);
  expect_near(m.materials[0].albedo, {0.1f, 0.2f, 0.3f}, 0);
}

// ------------------------------------------------------------------------------------------------
// Renders.

TEST(TexturedRender, QuadShowsItsTexturesColours) {
  const scene s = load_scene(testing::write_textured_quad(scratch("quad"), 16));
  const prepared_scene ps(s);
  const render_result r = render_cpu(ps, render_settings::from(s));
  const std::vector<vec3> image = r.mean();
  for (int q = 0; q < 4; ++q) {
    SCOPED_TRACE("quadrant " + std::to_string(q));
    const vec3 want = testing::stored(testing::quad_colours[static_cast<std::size_t>(q)]);
    const vec3 got = testing::quadrant_mean(image, q);
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(got[k], want[k], 0.03f * want[k] + 1e-3f);
  }
}

// The shipped textured scene: textures (repeat and clamp), a smooth sphere and a flat one.
scene small_textured() {
  return load_scene(fs::path(SIEVE_SCENES_DIR) / "textured" / "textured.toml",
                    {"film.width=40", "film.height=30", "film.spp=3", "film.seed=5", "film.max_bounces=4"});
}

TEST(TexturedRender, ImageIsBitIdenticalAcrossStrategiesTraversalsAndIntegrators) {
  const scene s = small_textured();
  ASSERT_FALSE(s.normals.empty());
  ASSERT_FALSE(s.textures.empty());
  const prepared_scene ps(s);
  render_settings base = render_settings::from(s);
  base.strategy = "std";
  base.max_queue = 500;
  const render_result want = render_cpu(ps, base);
  std::vector<render_settings> runs;
  for (const char* strategy : {"redzone", "billeter", "scan", "stencil"})
    for (const char* traversal : {"dfs", "bfs"}) {
      render_settings r = base;
      r.strategy = strategy;
      r.traversal = parse_mode<traversal_kind>(traversal);
      runs.push_back(r);
    }
  for (const char* queue : {"index", "append"}) {
    render_settings r = base;
    r.queue = parse_mode<queue_mode>(queue);
    r.strategy = "redzone";
    r.reorder = reorder_key::octant;
    runs.push_back(r);
  }
  render_settings mega = base;
  mega.integrator = integrator_kind::megakernel;
  runs.push_back(mega);
  for (const auto& r : runs) {
    SCOPED_TRACE(std::string(to_string(r.integrator)) + ", " + std::string(to_string(r.queue)) + " queue, " + r.strategy + ", " +
                 std::string(to_string(r.traversal)));
    const render_result got = render_cpu(ps, r);
    ASSERT_EQ(got.sum.size(), want.sum.size());
    EXPECT_EQ(std::memcmp(got.sum.data(), want.sum.data(), want.sum.size() * sizeof(vec3)), 0);
  }
}

// A floor whose vertex normals lean 45 degrees, seen from above, over a light that shines up at its
// underside, under a black sky: nothing above the floor is lit. Without the guards, directions the
// leaning normal takes for "above" but that go below the floor (BSDF samples and next-event rays
// alike) would carry the light through it.
TEST(SmoothShading, LeaksNoLightThroughASurface) {
  scene s;
  s.materials.push_back({"floor", material_kind::diffuse, {0.8f, 0.8f, 0.8f}, {0, 0, 0}, 1.5f});
  s.materials.push_back({"light", material_kind::diffuse, {0, 0, 0}, {10, 10, 10}, 1.5f});
  const vec3 lean = normalize(vec3{1, 1, 0});
  auto quad = [&](float y, float half, std::uint32_t m, bool up) {
    const vec3 a{-half, y, -half}, b{half, y, -half}, c{half, y, half}, d{-half, y, half};
    // Counter-clockwise seen from above: the normal points up.
    if (up) {
      s.triangles.push_back({a, d, c});
      s.triangles.push_back({a, c, b});
    } else {
      s.triangles.push_back({a, c, d});
      s.triangles.push_back({a, b, c});
    }
    s.material_of.insert(s.material_of.end(), 2, m);
  };
  quad(0, 10, 0, true);
  quad(-1, 2, 1, true);  // the light, facing up at the floor's underside
  s.normals = {{lean, lean, lean}, {lean, lean, lean}, {}, {}};
  s.emissive = {2, 3};
  s.camera = {{0, 3, 0}, {0, 0, 0}, {0, 0, 1}, 40};
  s.film = {24, 24, 16, 4, 1};
  ASSERT_GT(geometric_normal(s.triangles[0]).y, 0.0f);
  ASSERT_GT(geometric_normal(s.triangles[2]).y, 0.0f);
  const prepared_scene ps(s);
  for (const char* integrator : {"wavefront", "megakernel"}) {
    render_settings r = render_settings::from(s);
    r.integrator = parse_mode<integrator_kind>(integrator);
    const render_result got = render_cpu(ps, r);
    float brightest = 0;
    for (const vec3& p : got.sum) brightest = std::max(brightest, max_component(p));
    EXPECT_EQ(brightest, 0.0f) << integrator;
  }
  // The same floor flat shaded, lit from above by the light turned over: the scene is lit at all.
  s.normals.clear();
  s.triangles[2] = {{-2, 2, -2}, {2, 2, 2}, {-2, 2, 2}};
  s.triangles[3] = {{-2, 2, -2}, {2, 2, -2}, {2, 2, 2}};
  ASSERT_LT(geometric_normal(s.triangles[2]).y, 0.0f);
  s.camera = {{0, 1, -4}, {0, 0, 0}, {0, 1, 0}, 40};
  const prepared_scene lit(s);
  float brightest = 0;
  for (const vec3& p : render_cpu(lit, render_settings::from(s)).sum) brightest = std::max(brightest, max_component(p));
  EXPECT_GT(brightest, 0.0f);
}

TEST(TexturedRender, TexturesAndNormalsChangeTheImage) {
  // The same scene without its attributes (flat, untextured) renders differently: they are used.
  const scene s = small_textured();
  scene plain = s;
  plain.normals.clear();
  plain.uvs.clear();
  for (material& m : plain.materials) m.albedo_texture = -1;
  plain.textures.clear();
  scene flat = s;
  flat.normals.clear();
  const render_settings r = render_settings::from(s);
  const auto a = render_cpu(prepared_scene(s), r).sum, b = render_cpu(prepared_scene(plain), r).sum,
             c = render_cpu(prepared_scene(flat), r).sum;
  EXPECT_NE(std::memcmp(a.data(), b.data(), a.size() * sizeof(vec3)), 0);
  EXPECT_NE(std::memcmp(a.data(), c.data(), a.size() * sizeof(vec3)), 0);
}

}  // namespace
}  // namespace sieve::render
