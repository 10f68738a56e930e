// Reading environment maps: EXR and Radiance HDR decoded, [environment] map/rotation/scale/sample
// read from a scene file, the shipped sky equal to its generator's output, and every bad input one
// sieve::error naming the file: missing, not an image, malformed, absurdly large, NaN, infinite or
// negative texels.
#include <core/environment.hpp>
#include <core/image_io.hpp>
#include <scene/environment_map.hpp>
#include <scene/load.hpp>
#include <scene/sky.hpp>

#include <gtest/gtest.h>
#include <tinyexr.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace sieve::render {
namespace {

namespace fs = std::filesystem;
const fs::path scenes_dir = SIEVE_SCENES_DIR;

class EnvironmentMapFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sieve-envmap-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& bytes) const {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
    return dir_ / name;
  }
  // A scene of one light quad under [environment] `env` (TOML lines).
  fs::path scene_with(const std::string& env) const {
    return write("scene.toml", "[environment]\n" + env +
                                   "\n[[lights]]\ncorner = [0, 0, 0]\nedge1 = [1, 0, 0]\nedge2 = [0, 1, 0]\n"
                                   "emission = [1, 1, 1]\n");
  }
  std::string error_of(const fs::path& scene) const {
    try {
      (void)load_scene(scene);
    } catch (const sieve::error& e) {
      return e.what();
    }
    return "(no error)";
  }
  fs::path dir_;
};

image_rgb ramp(std::uint32_t w, std::uint32_t h) {
  image_rgb im;
  im.width = w;
  im.height = h;
  for (std::uint32_t i = 0; i < w * h; ++i) im.pixels.push_back({0.5f * i, 1.0f + i, 0.25f});
  return im;
}

void expect_error_hdr(const std::string& bytes, const std::string& part);

std::string exr_bytes(const image_rgb& im) { return encode_exr("t.exr", im.width, im.height, im.pixels); }

// A Radiance HDR file of w x h flat (uncompressed) RGBE texels, every one 2^(e - 136) * (r, g, b).
std::string hdr_bytes(int w, int h, unsigned char r, unsigned char g, unsigned char b, unsigned char e) {
  std::string s = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y " + std::to_string(h) + " +X " + std::to_string(w) + "\n";
  for (int i = 0; i < w * h; ++i) s += {static_cast<char>(r), static_cast<char>(g), static_cast<char>(b), static_cast<char>(e)};
  return s;
}

TEST(EnvironmentImage, ExrRoundTrip) {
  const image_rgb im = ramp(7, 3);
  const image_rgb got = decode_environment_image("t.exr", exr_bytes(im));
  ASSERT_EQ(got.width, 7U);
  ASSERT_EQ(got.height, 3U);
  for (std::size_t i = 0; i < im.pixels.size(); ++i) {
    EXPECT_EQ(got.pixels[i].x, im.pixels[i].x);
    EXPECT_EQ(got.pixels[i].y, im.pixels[i].y);
    EXPECT_EQ(got.pixels[i].z, im.pixels[i].z);
  }
}

TEST(EnvironmentImage, RadianceHdrDecodes) {
  // RGBE (128, 64, 0, 129): (128, 64, 0) * 2^(129 - 136) = (1, 0.5, 0).
  const image_rgb got = decode_environment_image("t.hdr", hdr_bytes(3, 2, 128, 64, 0, 129));
  ASSERT_EQ(got.width, 3U);
  ASSERT_EQ(got.height, 2U);
  for (const vec3& t : got.pixels) {
    EXPECT_FLOAT_EQ(t.x, 1.0f);
    EXPECT_FLOAT_EQ(t.y, 0.5f);
    EXPECT_FLOAT_EQ(t.z, 0.0f);
  }
}

// The same w x h RGBE texels (texel i: (i % 7 * 9, i % 5 * 11, 100, 128 + i % 3)) flat, and run-length
// encoded: per scanline 2, 2, width, then each channel as literal runs of up to 128 bytes and, for
// the exponent, one repeat run per scanline half.
std::string rgbe_texel(int i, int k) {
  const int v[4] = {i % 7 * 9, i % 5 * 11, 100, 128 + i % 3};
  return std::string(1, static_cast<char>(v[k]));
}
std::string hdr_flat(int w, int h) {
  std::string s = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y " + std::to_string(h) + " +X " + std::to_string(w) + "\n";
  for (int i = 0; i < w * h; ++i)
    for (int k = 0; k < 4; ++k) s += rgbe_texel(i, k);
  return s;
}
std::string hdr_rle(int w, int h) {
  std::string s = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y " + std::to_string(h) + " +X " + std::to_string(w) + "\n";
  for (int y = 0; y < h; ++y) {
    s += {2, 2, static_cast<char>(w >> 8), static_cast<char>(w & 255)};
    for (int k = 0; k < 4; ++k)
      for (int x = 0; x < w;) {
        const int n = std::min(128, w - x);
        s += static_cast<char>(n);
        for (int z = 0; z < n; ++z) s += rgbe_texel(y * w + x + z, k);
        x += n;
      }
  }
  return s;
}

TEST(EnvironmentImage, RadianceHdrRunLengthEqualsFlat) {
  const image_rgb flat = decode_environment_image("flat.hdr", hdr_flat(300, 3));
  const image_rgb rle = decode_environment_image("rle.hdr", hdr_rle(300, 3));
  ASSERT_EQ(rle.pixels.size(), flat.pixels.size());
  for (std::size_t i = 0; i < flat.pixels.size(); ++i) {
    ASSERT_EQ(rle.pixels[i].x, flat.pixels[i].x) << i;
    ASSERT_EQ(rle.pixels[i].y, flat.pixels[i].y) << i;
  }
  // Texel 8: RGBE (9, 33, 100, 130): (9, 33, 100) * 2^(130 - 136).
  EXPECT_FLOAT_EQ(flat.pixels[8].x, 9.0f / 64);
  EXPECT_FLOAT_EQ(flat.pixels[8].y, 33.0f / 64);
  EXPECT_FLOAT_EQ(flat.pixels[8].z, 100.0f / 64);
  // A run of length 0 (stb_image looped forever on it) and a run past the scanline's end: errors
  // (OpenImageIO's reason).
  std::string zero = hdr_rle(16, 2);
  zero[zero.find(std::string{2, 2, 0, 16}) + 4] = 0;
  expect_error_hdr(zero, "cannot decode the environment map: ");
  std::string past = hdr_rle(16, 2);
  past[past.find(std::string{2, 2, 0, 16}) + 4] = static_cast<char>(128 + 17);
  expect_error_hdr(past, "cannot decode the environment map: ");
  expect_error_hdr(hdr_rle(16, 2).substr(0, 100), "cannot decode the environment map: ");
}

void expect_error(const std::string& bytes, const std::string& part) {
  try {
    (void)decode_environment_image("bad.img", bytes);
    ADD_FAILURE() << "no error; expected one containing '" << part << "'";
  } catch (const sieve::error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("bad.img: ", 0), 0U) << what;
    EXPECT_NE(what.find(part), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << "one line: " << what;
  }
}

void expect_error_hdr(const std::string& bytes, const std::string& part) { expect_error(bytes, part); }

// A NaN or infinity is the image decoder's error (every float image's), a negative radiance the map's.
TEST(EnvironmentImage, NonFiniteOrNegativeTexelsAreNamed) {
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), -1.0f}) {
    image_rgb im = ramp(5, 4);
    im.pixels[2 * 5 + 3].y = bad;
    expect_error(exr_bytes(im), bad < 0 ? "texel (3, 2) is -1" : "not finite at pixel (3, 2)");
  }
}

// An EXR image as tinyexr writes it: the planes given as floats (alphabetical channel names),
// stored as `stored` (TINYEXR_PIXELTYPE_HALF or _FLOAT) each.
std::string exr_planes(int w, int h, const std::vector<std::pair<const char*, std::vector<float>>>& planes,
                       const std::vector<int>& stored) {
  EXRHeader header;
  InitEXRHeader(&header);
  EXRImage image;
  InitEXRImage(&image);
  std::vector<EXRChannelInfo> channels(planes.size());
  std::vector<unsigned char*> data;
  for (std::size_t c = 0; c < planes.size(); ++c) {
    std::strncpy(channels[c].name, planes[c].first, 255);
    data.push_back(reinterpret_cast<unsigned char*>(const_cast<float*>(planes[c].second.data())));
  }
  std::vector<int> given(planes.size(), TINYEXR_PIXELTYPE_FLOAT), kept = stored;
  image.num_channels = header.num_channels = static_cast<int>(planes.size());
  image.images = data.data();
  image.width = w, image.height = h;
  header.channels = channels.data();
  header.pixel_types = given.data();
  header.requested_pixel_types = kept.data();
  unsigned char* memory = nullptr;
  const char* err = nullptr;
  const std::size_t n = SaveEXRImageToMemory(&image, &header, &memory, &err);
  EXPECT_GT(n, 0U) << (err ? err : "");
  std::string bytes(reinterpret_cast<const char*>(memory), n);
  std::free(memory);
  return bytes;
}

// EXR is the one decoder's (decode_texels) in every build, textures and maps alike: half stays half
// with its alpha, a float channel makes the image float; linear, as stored.
TEST(ExrImage, TheImageDecoderKeepsPrecisionAndAlpha) {
  const std::vector<std::pair<const char*, std::vector<float>>> rgba = {
      {"A", {1.0f, 0.0f}}, {"B", {0.125f, 8.0f}}, {"G", {0.25f, 4.0f}}, {"R", {0.5f, 2.0f}}};
  const int half = TINYEXR_PIXELTYPE_HALF, full = TINYEXR_PIXELTYPE_FLOAT;
  for (const bool mixed : {false, true}) {
    SCOPED_TRACE(mixed ? "R float, the others half" : "half");
    const std::string bytes = exr_planes(2, 1, rgba, {half, half, half, mixed ? full : half});
    const texel_image t = decode_texels(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), "t.exr",
                                        "texture", image_limits{});
    EXPECT_EQ(t.format, mixed ? texel_format::float32 : texel_format::half);
    ASSERT_EQ(t.channels, 4U);
    EXPECT_FALSE(t.srgb);
    for (std::uint32_t c = 0; c < 4; ++c)  // R, G, B, A: every value exact in half
      for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(t.value(i, c), rgba[3 - c].second[i]) << "pixel " << i << " channel " << c;
  }
  // Grey (Y alone) is one channel; the map reads it as grey RGB.
  const std::string grey = exr_planes(2, 1, {{"Y", {0.5f, 3.0f}}}, {half});
  const texel_image g = decode_texels(reinterpret_cast<const unsigned char*>(grey.data()), grey.size(), "g.exr", "texture",
                                      image_limits{});
  EXPECT_EQ(g.channels, 1U);
  const image_rgb map = decode_environment_image("g.exr", grey);
  EXPECT_EQ(map.pixels[1].x, 3.0f);
  EXPECT_EQ(map.pixels[1].z, 3.0f);
}

TEST(EnvironmentImage, MalformedFilesAreErrors) {
  const std::string exr = exr_bytes(ramp(32, 16));
  expect_error("", "not an EXR or Radiance HDR image");
  expect_error("P6\n2 2\n255\n", "not an EXR or Radiance HDR image");
  expect_error(exr.substr(0, 4), "EXR");
  expect_error(exr.substr(0, exr.size() / 2), "EXR");
  std::string garbled = exr;
  for (std::size_t i = 8; i < garbled.size(); i += 3) garbled[i] = static_cast<char>(garbled[i] ^ 0x5a);
  expect_error(garbled, "EXR");
  expect_error("#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\nno size line\n", "cannot read the environment map: ");
  expect_error(hdr_bytes(4, 4, 1, 1, 1, 128).substr(0, 60), "cannot decode the environment map: ");
}

TEST(EnvironmentImage, AbsurdSizesAreRefusedFromTheHeader) {
  // An HDR header claiming 100000 x 100000 texels and holding none.
  expect_error("#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 100000 +X 100000\n", "more than the limit");
  // An EXR whose dataWindow attribute is patched to 100000 x 100000.
  std::string exr = exr_bytes(ramp(4, 4));
  const std::string attr = std::string("dataWindow") + '\0' + "box2i" + '\0';
  const std::size_t at = exr.find(attr);
  ASSERT_NE(at, std::string::npos);
  const std::size_t box = at + attr.size() + 4;  // past the attribute's size
  const std::int32_t corners[4] = {0, 0, 99999, 99999};
  std::memcpy(exr.data() + box, corners, sizeof corners);
  expect_error(exr, "more than the limit");
  // And a small limit for a small image.
  EXPECT_THROW((void)decode_environment_image("t.exr", exr_bytes(ramp(4, 4)), 15), sieve::error);
  EXPECT_NO_THROW((void)decode_environment_image("t.exr", exr_bytes(ramp(4, 4)), 16));
}

TEST_F(EnvironmentMapFiles, SceneReadsTheMapWithRotationAndScale) {
  write("sky.exr", exr_bytes(ramp(8, 4)));
  const scene s = load_scene(scene_with("map = \"sky.exr\"\nrotation = 90\nscale = 2.5\n"));
  ASSERT_FALSE(s.environment_map.empty());
  EXPECT_EQ(s.environment_map.width, 8U);
  EXPECT_EQ(s.environment_map.height, 4U);
  EXPECT_EQ(s.environment_map.rotation_degrees, 90.0f);
  EXPECT_EQ(s.environment_map.scale, 2.5f);
  EXPECT_TRUE(s.environment_map.sample);
  EXPECT_EQ(s.environment_map.texels[9].y, 10.0f);
  EXPECT_TRUE(s.environment_map.view().sampled);
  EXPECT_NE(std::find(s.files.begin(), s.files.end(), dir_ / "sky.exr"), s.files.end());
  // A .hdr the same way, and sample = false.
  write("sky.hdr", hdr_bytes(4, 2, 128, 128, 128, 129));
  const scene h = load_scene(scene_with("map = \"sky.hdr\"\nsample = false\n"));
  EXPECT_EQ(h.environment_map.width, 4U);
  EXPECT_FALSE(h.environment_map.view().sampled);
}

TEST_F(EnvironmentMapFiles, BadEnvironmentsAreOneErrorNamingTheFile) {
  write("sky.exr", exr_bytes(ramp(8, 4)));
  image_rgb nan = ramp(8, 4);
  nan.pixels[5].x = std::numeric_limits<float>::quiet_NaN();
  write("nan.exr", exr_bytes(nan));
  write("junk.exr", "this is not an image");
  fs::create_directories(dir_ / "folder.exr");
  const struct {
    std::string env, part;
  } cases[] = {
      {"map = \"missing.exr\"", "environment map 'missing.exr' not found"},
      {"map = \"nan.exr\"", "nan.exr: the environment map has a value that is not finite at pixel (5, 0)"},
      {"map = \"junk.exr\"", "junk.exr: not an EXR or Radiance HDR image"},
      {"map = \"folder.exr\"", "is a directory"},
      {"map = \"sky.exr\"\ncolor = [1, 1, 1]", "environment.color: give either a color or a map"},
      {"scale = 2", "environment.scale: applies to a map"},
      {"map = \"sky.exr\"\nscale = -1", "environment.scale: -1 is out of range"},
      {"map = \"sky.exr\"\nsample = 1", "environment.sample: expected a boolean"},
      {"map = 3", "environment.map"},
      {"map = \"sky.exr\"\nrotaton = 3", "rotaton"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.env);
    const std::string what = error_of(scene_with(c.env));
    EXPECT_NE(what.find(c.part), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

// scenes/sky/sky.exr is what sieve_make_sky writes (the generator at its defaults, 256 x 128).
TEST(ShippedSky, EqualsItsGenerator) {
  std::ifstream in(scenes_dir / "sky" / "sky.exr", std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const image_rgb file = decode_environment_image("sky.exr", bytes);
  const image_rgb made = procedural_sky(256, 128);
  ASSERT_EQ(file.width, made.width);
  ASSERT_EQ(file.height, made.height);
  for (std::size_t i = 0; i < made.pixels.size(); ++i) {
    ASSERT_FLOAT_EQ(file.pixels[i].x, made.pixels[i].x) << "texel " << i << ": regenerate with sieve_make_sky";
    ASSERT_FLOAT_EQ(file.pixels[i].z, made.pixels[i].z) << "texel " << i;
  }
  const scene s = load_scene(scenes_dir / "sky" / "sky-terrain.toml");
  EXPECT_EQ(s.environment_map.width, 256U);
  EXPECT_TRUE(s.environment_map.view().sampled);
}

}  // namespace
}  // namespace sieve::render
