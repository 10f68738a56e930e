// The `sieve` command against hostile image files, end to end: sieve reads every image's header
// before the decoder does and refuses what the decoders mishandle (a colour-mapped TGA past its
// map, a JPEG of thousands of scans, samples past the memory budget), and every error a decoder
// reports fails the file (a truncated JPEG or TIFF is not a grey texture). Each case is one line
// naming the file and a non-zero exit, never a crash, a long wait or a silent success.
#include "cli_support.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace {

using namespace sieve_cli_test;

const fs::path corpus_dir = fs::path(SIEVE_SCENES_DIR).parent_path() / "tests" / "fuzz" / "corpus" / "image";

std::string le16(std::uint32_t v) { return {static_cast<char>(v & 0xFF), static_cast<char>(v >> 8 & 0xFF)}; }
std::string le32(std::uint32_t v) { return le16(v & 0xFFFF) + le16(v >> 16); }

// A colour-mapped TGA (type 1) of w x h pixels, every index `index` (bits 8 or 16), a map of
// `entries` 24-bit entries starting at entry `first`.
std::string colour_mapped_tga(std::uint32_t first, std::uint32_t entries, std::uint32_t bits, std::uint32_t index,
                              std::uint32_t w = 4, std::uint32_t h = 4) {
  std::string t;
  t += '\0';      // no image id
  t += '\1';      // a colour map
  t += '\1';      // type 1: colour-mapped, uncompressed
  t += le16(first) + le16(entries);
  t += static_cast<char>(24);
  t += le16(0) + le16(0) + le16(w) + le16(h);
  t += static_cast<char>(bits);
  t += '\0';
  for (std::uint32_t i = 0; i < entries; ++i) t += std::string("\x20\x40\x80", 3);
  for (std::uint32_t p = 0; p < w * h; ++p) t += bits == 8 ? std::string(1, static_cast<char>(index)) : le16(index);
  return t;
}

// A little-endian TIFF header and one directory: w x h, `samples` samples of 8 bits, no pixels.
std::string tiff_header(std::uint32_t w, std::uint32_t h, std::uint32_t samples) {
  std::string t = std::string("II*\0", 4) + le32(8);
  const std::uint32_t tags[][3] = {{256, 4, w}, {257, 4, h},   {258, 3, 8},  {259, 3, 1},
                                   {262, 3, 1}, {273, 4, 200}, {277, 3, samples}, {279, 4, 16}};
  t += le16(std::size(tags));
  for (const auto& tag : tags) t += le16(tag[0]) + le16(tag[1]) + le32(1) + (tag[1] == 3 ? le16(tag[2]) + le16(0) : le32(tag[2]));
  t += le32(0);
  t.resize(216, '\0');
  return t;
}

class HostileImages : public Cli {
 protected:
  // A quad textured by `texture` (its bytes written under that name), in a scene of its own.
  fs::path textured_scene(const std::string& texture, const std::string& bytes) const {
    file(texture, bytes);
    file("quad.obj", "mtllib quad.mtl\nv -1 -1 0\nv 1 -1 0\nv 1 1 0\nv -1 1 0\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\n"
                     "usemtl t\nf 1/1 2/2 3/3\nf 1/1 3/3 4/4\n");
    file("quad.mtl", "newmtl t\nKd 1 1 1\nmap_Kd " + texture + "\n");
    return file("quad.toml", "[camera]\nposition = [0, 0, -3]\nlook_at = [0, 0, 0]\n[[objects]]\nobj = \"quad.obj\"\n"
                             "[[lights]]\ncorner = [-1, -1, -2]\nedge1 = [2, 0, 0]\nedge2 = [0, 0.1, 0]\n"
                             "emission = [1, 1, 1]\n");
  }
  // `sieve check` of that scene: one error line naming the texture and holding `needle`.
  void expect_refused(const std::string& texture, const std::string& bytes, const std::string& needle) const {
    const fs::path scene = textured_scene(texture, bytes);
    const outcome o = run({"check", scene.string()});
    EXPECT_EQ(o.rc, 1) << texture << ": " << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    EXPECT_NE(o.err.find(texture), std::string::npos) << o.err;
    EXPECT_NE(o.err.find(needle), std::string::npos) << "expected '" << needle << "' in: " << o.err;
  }
};

// OpenImageIO 2.4 offsets a colour index by the map's first entry and reads past the map: a first
// entry of 65535 with 16-bit indices crashed sieve (SIGSEGV), indices just past the map read heap
// bytes into texels. The header and every index are read first.
TEST_F(HostileImages, ColourMappedTgaPastItsMapIsRefused) {
  expect_refused("first.tga", colour_mapped_tga(65535, 2, 16, 65535, 64, 64), "starts at entry 65535");
  expect_refused("index.tga", colour_mapped_tga(0, 4, 8, 7), "colour index 7, past its colour map of 4 entries");
  expect_refused("index16.tga", colour_mapped_tga(0, 300, 16, 60000), "colour index 60000");
  std::string cut = colour_mapped_tga(0, 4, 8, 1);
  cut.resize(cut.size() - 3);
  expect_refused("cut.tga", cut, "ends before its last pixel");
  // Within its map it loads.
  const outcome ok = run({"check", textured_scene("ok.tga", colour_mapped_tga(0, 4, 8, 3)).string()});
  EXPECT_EQ(ok.rc, 0) << ok.err;
  EXPECT_NE(ok.out.find("ok.tga: 4 x 4"), std::string::npos) << ok.out;
}

// One scan of a progressive JPEG repeated: libjpeg decodes each over the whole image (20,000 of
// them took 79 s and were accepted). More than 500 scans are refused from the header, at once.
TEST_F(HostileImages, JpegOfThousandsOfScansIsRefusedAtOnce) {
  const std::string jpeg = slurp(corpus_dir / "progressive.jpg");
  const std::size_t sos = jpeg.find("\xff\xda");
  ASSERT_NE(sos, std::string::npos);
  std::size_t end = sos + 2;  // the first scan's header and entropy-coded data, to the next marker
  while (end + 1 < jpeg.size() &&
         !(jpeg[end] == '\xff' && jpeg[end + 1] != '\0' && (static_cast<unsigned char>(jpeg[end + 1]) & 0xF8) != 0xD0))
    ++end;
  std::string many = jpeg.substr(0, sos);
  for (int i = 0; i < 20000; ++i) many += jpeg.substr(sos, end - sos);
  many += "\xff\xd9";
  const auto t0 = std::chrono::steady_clock::now();
  expect_refused("scans.jpg", many, "more than 500 scans");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

// An uncompressed 64 x 64 RGB TIFF (one strip), its pixel data cut to `data_bytes`.
std::string strip_tiff(std::size_t data_bytes) {
  constexpr std::uint32_t w = 64, h = 64, entries = 9;
  constexpr std::uint32_t bits_at = 8 + 2 + 12 * entries + 4, data_at = bits_at + 6;
  const std::uint32_t tags[entries][3] = {{256, 3, w}, {257, 3, h},       {258, 3, bits_at}, {259, 3, 1}, {262, 3, 2},
                                          {273, 4, data_at}, {277, 3, 3}, {278, 3, h},     {279, 4, w * h * 3}};
  std::string t = std::string("II*\0", 4) + le32(8) + le16(entries);
  for (const auto& tag : tags) {
    const std::uint32_t count = tag[0] == 258 ? 3 : 1;
    t += le16(tag[0]) + le16(tag[1]) + le32(count) + (tag[1] == 3 && count == 1 ? le16(tag[2]) + le16(0) : le32(tag[2]));
  }
  t += le32(0) + le16(8) + le16(8) + le16(8);
  for (std::uint32_t i = 0; i < std::min<std::size_t>(data_bytes, w * h * 3); ++i) t += static_cast<char>(i * 7);
  return t;
}

// A JPEG cut inside its first scan's entropy-coded data: the header reads, the pixels do not.
std::string cut_in_first_scan(const std::string& jpeg) {
  const std::size_t sos = jpeg.find("\xff\xda");
  const std::size_t length = static_cast<unsigned char>(jpeg[sos + 2]) << 8 | static_cast<unsigned char>(jpeg[sos + 3]);
  return jpeg.substr(0, sos + 2 + length + 8);
}

// libjpeg's and libtiff's errors on truncated data stayed in OpenImageIO's geterror(): the texture
// loaded as grey or zero texels, silently.
TEST_F(HostileImages, TruncatedJpegAndTiffAreErrors) {
  for (const char* name : {"rgb.jpg", "progressive.jpg"}) {
    expect_refused(std::string("cut-") + name, cut_in_first_scan(slurp(corpus_dir / name)), "Premature end of JPEG file");
    const outcome ok = run({"check", textured_scene(name, slurp(corpus_dir / name)).string()});
    EXPECT_EQ(ok.rc, 0) << name << ": " << ok.err;
  }
  expect_refused("cut.tif", strip_tiff(64 * 32 * 3), "cannot decode the texture");
  const outcome ok = run({"check", textured_scene("whole.tif", strip_tiff(64 * 64 * 3)).string()});
  EXPECT_EQ(ok.rc, 0) << ok.err;
  EXPECT_NE(ok.out.find("whole.tif: 64 x 64"), std::string::npos) << ok.out;
}

// A TIFF of 1000 samples a pixel ended in a bare "out of memory" naming no file.
TEST_F(HostileImages, SamplesPastTheBudgetAreRefusedNamingTheFile) {
  expect_refused("wide.tif", tiff_header(4096, 4096, 1000), "1000 samples");
}

}  // namespace
