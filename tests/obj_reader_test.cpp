// The OBJ reader's two paths: the common subset read in parallel chunks (scene/obj_fast.cpp) makes
// the scene the general reader (tinyobjloader behind the prescan) makes, to the byte, with the same
// warnings; a file outside the subset, or with a fault, is read by the general reader, whose message
// is the one given. Every OBJ shipped in the repository, generated meshes in every corner form with
// chunk boundaries forced everywhere, faults, and the fuzzer's OBJ corpus are read both ways.
#include <scene/load.hpp>
#include <scene/obj_fast.hpp>

#include "scene_test_support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using namespace sieve::render;

namespace {

const fs::path source = fs::path(SIEVE_SOURCE_DIR);

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// One read of a file: its scene, or its error; what it printed; whether the fast path read it.
struct outcome {
  std::optional<scene> sc;
  std::string error, printed;
  bool fast = false;
};

// `path` read by the general reader (chunk == 0) or with the fast path allowed, in chunks of `chunk` bytes.
outcome read_with(const fs::path& path, std::size_t chunk, const std::vector<std::string>& overrides = {},
                  const scene_limits& limits = {}) {
  if (chunk == 0) setenv("SIEVE_OBJ_READER", "general", 1);
  else unsetenv("SIEVE_OBJ_READER"), setenv("SIEVE_OBJ_CHUNK_BYTES", std::to_string(chunk).c_str(), 1);
  outcome o;
  const std::uint64_t before = detail::obj_fast_reads();
  ::testing::internal::CaptureStderr();
  try {
    o.sc = load_scene(path, overrides, limits);
  } catch (const sieve::error& e) {
    o.error = e.what();
  }
  o.printed = ::testing::internal::GetCapturedStderr();
  o.fast = detail::obj_fast_reads() > before;
  unsetenv("SIEVE_OBJ_READER"), unsetenv("SIEVE_OBJ_CHUNK_BYTES");
  return o;
}

template <class T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) {
      std::cout << "  item " << i << " of " << a.size() << " differs:";
      const auto* x = reinterpret_cast<const float*>(&a[i]);
      const auto* y = reinterpret_cast<const float*>(&b[i]);
      for (std::size_t k = 0; k < sizeof(T) / 4; ++k) std::cout << " " << x[k] << "|" << y[k];
      std::cout << "\n";
      return false;
    }
  return true;
}

bool same_vec(vec3 a, vec3 b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Everything a reader gives a scene: triangles, shading attributes, materials (as registered, in
// order), textures, inputs, and the camera the framing derived from them.
void expect_same(const outcome& got, const outcome& want, const std::string& what) {
  EXPECT_EQ(got.error, want.error) << what;
  EXPECT_EQ(got.printed, want.printed) << what;
  ASSERT_EQ(got.sc.has_value(), want.sc.has_value()) << what;
  if (!got.sc) return;
  const scene &g = *got.sc, &w = *want.sc;
  EXPECT_TRUE(same_bytes(g.triangles, w.triangles)) << what << ": triangles " << g.triangles.size() << " vs " << w.triangles.size();
  EXPECT_TRUE(same_bytes(g.normals, w.normals)) << what << ": normals";
  EXPECT_TRUE(same_bytes(g.uvs, w.uvs)) << what << ": uvs";
  EXPECT_TRUE(same_bytes(g.tangents, w.tangents)) << what << ": tangents";
  EXPECT_TRUE(same_bytes(g.material_of, w.material_of)) << what << ": material_of";
  EXPECT_TRUE(same_bytes(g.emissive, w.emissive)) << what << ": emissive";
  ASSERT_EQ(g.materials.size(), w.materials.size()) << what;
  for (std::size_t i = 0; i < g.materials.size(); ++i) {
    const material &a = g.materials[i], &b = w.materials[i];
    EXPECT_TRUE(a.name == b.name && a.kind == b.kind && same_vec(a.albedo, b.albedo) && same_vec(a.emission, b.emission) &&
                a.opacity == b.opacity && a.albedo_texture == b.albedo_texture && a.opacity_texture == b.opacity_texture &&
                a.roughness == b.roughness)
        << what << ": material " << i << " " << a.name << " vs " << b.name;
  }
  ASSERT_EQ(g.textures.size(), w.textures.size()) << what;
  for (std::size_t i = 0; i < g.textures.size(); ++i) EXPECT_TRUE(same_bytes(g.textures[i].texels, w.textures[i].texels)) << what;
  EXPECT_EQ(g.files, w.files) << what;
  EXPECT_TRUE(same_vec(g.camera.position, w.camera.position) && same_vec(g.camera.look_at, w.camera.look_at)) << what << ": camera";
}

// `path` read by the general reader, then with the fast path at each chunk size: the same outcome.
// Returns how many of those reads the fast path made.
int expect_both_ways(const fs::path& path, std::initializer_list<std::size_t> chunks,
                     const std::vector<std::string>& overrides = {}, const scene_limits& limits = {}) {
  const outcome want = read_with(path, 0, overrides, limits);
  EXPECT_FALSE(want.fast);
  int fast = 0;
  for (const std::size_t c : chunks) {
    const outcome got = read_with(path, c, overrides, limits);
    expect_same(got, want, path.string() + " in chunks of " + std::to_string(c));
    fast += got.fast;
  }
  return fast;
}

const std::vector<std::string> sky = {"environment.color=[1,1,1]"};

}  // namespace

// Every OBJ in the repository (scenes/, tests/data/), bare and through the scene files that name
// them (strict: a TOML object), read both ways at several chunk sizes; all are in the fast subset.
TEST(ObjReader, ShippedFilesReadAsTheGeneralReader) {
  int files = 0;
  for (const char* top : {"scenes", "tests/data"}) {
    for (const auto& entry : fs::recursive_directory_iterator(source / top)) {
      const fs::path& p = entry.path();
      if (p.extension() == ".obj") {
        ++files;
        EXPECT_EQ(expect_both_ways(p, {1 << 20, 4096, 61, 1}, sky), 4) << p << " left the fast path";
      } else if (p.extension() == ".toml" && read_file(p).find(".obj\"") != std::string::npos) {
        ++files;
        const int fast = expect_both_ways(p, {1 << 20, 61});
        EXPECT_EQ(fast, 2) << p << " left the fast path";
      }
    }
  }
  EXPECT_GE(files, 10);
}

namespace {

// A w x w grid of quads (or triangles, or pentagons) with every attribute form the subset reads.
struct grid {
  int w = 24;
  int corners = 4;            // 3: two triangles a cell; 4: a quad; 5: a pentagon with a repeated corner;
                              // 6: a hexagon over two cells; 8: an L over three (polygons overlap)
  bool uv = true, normal = true, relative = false, crlf = false, last_newline = true;
  bool some_bare = false;     // every third face without vt/vn, every fifth with vt only
  int materials = 3;          // usemtl switches cycle over this many (0: no usemtl, no MTL)
  bool noise = true;          // comments, o, g, s, blank lines, blanks between words, trailing comments
  bool flat = false;          // square cells in a plane: both diagonals of every quad alike

  std::string mtl() const {
    std::string m;
    for (int i = 0; i < materials; ++i) m += "newmtl m" + std::to_string(i) + "\nKd 0." + std::to_string(2 + i) + " 0.5 0.5\n";
    return m;
  }
  std::string text() const {
    std::ostringstream o;
    o.precision(9);
    const std::string nl = crlf ? "\r\n" : "\n";
    if (materials) o << "mtllib grid.mtl" << nl;
    if (noise) o << "# a grid" << nl << nl << "o grid" << nl;
    int v = 0;
    for (int y = 0; y <= w; ++y) {
      for (int x = 0; x <= w; ++x) {
        const double h = 0.3 * std::sin(x * 0.7) * std::cos(y * 0.4) + (x % 3 == 0 ? 1e-3 : 0);
        if (flat) o << "v " << x * 0.125 << " 0 " << y * 0.125 << nl;
        else o << (noise && x % 7 == 0 ? "v\t " : "v ") << x * 0.125 << " " << h << " " << -y * 0.1 + (y % 2 ? 0.02 : 0) << nl;
        if (uv) o << "vt " << x / double(w) << " " << y / double(w) << (x % 5 == 0 ? " 0" : "") << nl;
        if (normal) o << "vn " << std::sin(x * 0.1) << " 1 " << 0.5e-1 * y << nl;
        ++v;
        if (noise && x == w / 2) o << (y % 2 ? "s 1" : "s off") << nl << "  # mid-row" << nl;
      }
    }
    const int row = w + 1, total = v;
    int face = 0;
    for (int y = 0; y < w; ++y) {
      for (int x = 0; x < w; ++x, ++face) {
        if (materials && face % 37 == 0) o << "usemtl m" << (face / 37) % materials << (noise ? "  # switch" : "") << nl;
        if (noise && face % 101 == 0) o << "g part" << face << nl;
        auto id = [&](int i, int j) { return j * row + i; };
        const int k[4] = {id(x, y), id(x + 1, y), id(x + 1, y + 1), id(x, y + 1)};
        auto ref = [&](int i) { return relative ? std::to_string(i - total) : std::to_string(i + 1); };
        auto put = [&](std::initializer_list<int> ids) {
          o << "f";
          for (const int i : ids) {
            const bool bare = some_bare && face % 3 == 0, only_uv = some_bare && face % 5 == 0;
            o << (noise && i % 4 == 0 ? " \t" : " ") << ref(i);
            if (bare) continue;
            if (uv && normal && !only_uv) o << "/" << ref(i) << "/" << ref(i);
            else if (uv) o << "/" << ref(i);
            else if (normal && !only_uv) o << "//" << ref(i);
          }
          o << (noise && face % 11 == 0 ? " # face" : "") << nl;
        };
        const bool room = x + 2 <= w && y + 2 <= w;
        if (corners == 3) put({k[0], k[1], k[2]}), put({k[0], k[2], k[3]});
        else if (corners == 5) put({k[0], k[0], k[1], k[2], k[3]});  // a repeated corner
        else if (corners == 6 && room) put({k[0], k[1], id(x + 2, y), id(x + 2, y + 1), k[2], k[3]});
        else if (corners == 8 && room)  // an L of three cells: not convex
          put({k[0], k[1], id(x + 2, y), id(x + 2, y + 1), k[2], id(x + 1, y + 2), id(x, y + 2), k[3]});
        else put({k[0], k[1], k[2], k[3]});
      }
    }
    std::string s = o.str();
    if (!last_newline) s.resize(s.size() - nl.size());
    return s;
  }
};

// Writes g (and its MTL) into dir; returns the OBJ's path.
fs::path write_grid(const fs::path& dir, const grid& g, const std::string& name = "grid.obj") {
  if (g.materials) sieve::render::testing::write(dir / "grid.mtl", g.mtl());
  return sieve::render::testing::write(dir / name, g.text());
}

}  // namespace

// Generated meshes in every form of the subset, their chunk boundaries falling on every line (and
// inside every line: a chunk of 1 byte ends at the next line end): the general reader's scene.
TEST(ObjReader, GeneratedMeshesReadAsTheGeneralReader) {
  const fs::path dir = sieve::render::testing::fresh_dir("obj-fast");
  std::vector<std::pair<std::string, grid>> cases;
  auto add = [&](const std::string& name, auto&& change) {
    grid g;
    change(g);
    cases.emplace_back(name, g);
  };
  add("quads", [](grid&) {});
  add("triangles", [](grid& g) { g.corners = 3; });
  add("relative", [](grid& g) { g.relative = true; });
  add("crlf", [](grid& g) { g.crlf = true; });
  add("no last newline", [](grid& g) { g.last_newline = false; });
  add("crlf, no last newline", [](grid& g) { g.crlf = true, g.last_newline = false; });
  add("positions only", [](grid& g) { g.uv = g.normal = false; });
  add("uvs only", [](grid& g) { g.normal = false; });
  add("normals only", [](grid& g) { g.uv = false; });
  add("mixed corners", [](grid& g) { g.some_bare = true; });
  add("mixed, relative, triangles", [](grid& g) { g.some_bare = g.relative = true, g.corners = 3; });
  add("no materials", [](grid& g) { g.materials = 0; });
  add("one material", [](grid& g) { g.materials = 1; });
  add("plain", [](grid& g) { g.noise = false; });
  add("flat hexagons", [](grid& g) { g.corners = 6, g.flat = true; });
  add("flat Ls", [](grid& g) { g.corners = 8, g.some_bare = true, g.flat = true; });
  add("flat squares (every quad a tie)", [](grid& g) { g.flat = true; });
  for (const auto& [name, g] : cases) {
    SCOPED_TRACE(name);
    const fs::path p = write_grid(dir, g);
    EXPECT_EQ(expect_both_ways(p, {1 << 20, 1000, 97, 13, 1}, sky), 5) << name << " left the fast path";
  }
  // In a scene file (strict: an unknown usemtl is an error there), and with `material =` (MTL unused).
  const fs::path p = write_grid(dir, grid{});
  sieve::render::testing::write(dir / "scene.toml",
                                "[camera]\nposition = [1, 2, 3]\nlook_at = [0, 0, 0]\n[[objects]]\nobj = \"grid.obj\"\n"
                                "[[objects]]\nobj = \"grid.obj\"\nmaterial = \"m1\"\ntranslate = [0, 0, 4]\n");
  EXPECT_EQ(expect_both_ways(dir / "scene.toml", {1 << 20, 13}, sky), 2);
  // Pentagons with a repeated corner: the ear clipping's triangles, or (where it leaves corners
  // unclipped) the general reader's; the same scene.
  grid five;
  five.corners = 5;
  expect_both_ways(write_grid(dir, five, "five.obj"), {1 << 20, 13}, sky);
  // Hexagons on the bumpy grid: tinyobjloader's ear clipping leaves some of them with fewer than 4
  // triangles; so does the fast path, which closes its slices up (and the materials' runs with them).
  grid six;
  six.corners = 6;
  EXPECT_EQ(expect_both_ways(write_grid(dir, six, "six.obj"), {1 << 20, 1000, 13, 1}, sky), 4);
  six.some_bare = true;
  six.relative = true;
  EXPECT_EQ(expect_both_ways(write_grid(dir, six, "six.obj"), {1 << 20, 97}, sky), 2);
  (void)p;
}

namespace {

// `text` with the first `from` after `after` replaced by `to`.
std::string edit(std::string text, const std::string& after, const std::string& from, const std::string& to) {
  const std::size_t a = text.find(after);
  const std::size_t at = text.find(from, a == std::string::npos ? 0 : a);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

}  // namespace

// Faults and what the subset leaves out, anywhere in the file: the general reader's message (or
// scene, and warnings) whatever the chunks, and the fast path reads none of them.
TEST(ObjReader, FaultsAndOtherFormsGiveTheGeneralReadersWords) {
  const fs::path dir = sieve::render::testing::fresh_dir("obj-fast-faults");
  const grid g;
  const std::string t = g.text();
  sieve::render::testing::write(dir / "grid.mtl", g.mtl());
  const std::string late = "usemtl m2";  // past the middle of the file
  const std::string verts = "o grid";    // before the vertex lists
  std::string polygon = "f ";
  for (int i = 1; i <= 300; ++i) polygon += std::to_string(i) + " ";
  struct variant {
    std::string name, text;
    bool fast;  // read by the fast path (bare)
  };
  const std::vector<variant> variants = {
      {"index past", edit(t, late, "f 1", "f 99999"), false},
      {"index 0", edit(t, late, "f ", "f 0 "), false},
      {"relative before the first", edit(t, late, "f ", "f -999999 "), false},
      {"normal past", edit(t, late, "/", "/1/99999 "), false},
      {"nan", edit(t, verts, "v ", "v nan "), false},
      {"inf", edit(t, "vn", "vn ", "vn 1e39 "), false},
      {"a word", edit(t, verts, "vt ", "vt x"), false},
      {"two coordinates", edit(t, "v ", "v ", "v 1 2 #"), false},
      {"a face of 2", edit(t, late, "f ", "f 1 2 #"), false},
      {"truncated after a slash", t.substr(0, t.find('/', t.find(late) + 40) + 1), false},
      {"cut inside a face, a whole one left", t.substr(0, t.find(' ', t.find(late) + 40)), true},
      {"unknown material", edit(t, late, "usemtl m2", "usemtl nothing"), false},
      {"usemtl before mtllib", "usemtl m0\n" + t, false},
      {"lone CR", edit(t, late, "\n", "\r"), false},
      {"a line", edit(t, late, "f ", "l 1 2\nf "), false},
      {"a group without a name", edit(t, late, "f ", "g \nf "), false},
      {"g alone (both pass over it)", edit(t, late, "f ", "g\nf "), true},
      {"hex", edit(t, verts, "v ", "v 0x10 "), false},
      {"forward reference", "f 1 2 3\n" + t, false},
      {"a polygon of 300", edit(t, late, "f ", polygon), false},
      {"missing MTL (a warning bare, an error in a scene file)", edit(t, "", "grid.mtl", "none.mtl"), true},
      {"vertex colours", edit(t, verts, "\n", " 0.5 0.5 0.5\n"), true},
      {"exponent", edit(t, verts, "v 0.125 ", "v 1.5e-3 "), true},
  };
  int fast = 0, want_fast = 0;
  for (const variant& v : variants) {
    SCOPED_TRACE(v.name);
    sieve::render::testing::write(dir / "grid.obj", v.text);
    const int bare = expect_both_ways(dir / "grid.obj", {1 << 20, 97}, sky);
    EXPECT_EQ(bare, v.fast ? 2 : 0) << v.name;
    sieve::render::testing::write(dir / "s.toml", "[[objects]]\nobj = \"grid.obj\"\n");
    fast += expect_both_ways(dir / "s.toml", {1 << 20}, sky);
    want_fast += v.fast && v.name.find("MTL") == std::string::npos;
  }
  EXPECT_EQ(fast, want_fast);
}

// The fuzzer's OBJ corpus (OBJ text, a NUL, MTL text), each input read both ways: the same scene
// or the same message. Many of them sit at the subset's edges.
TEST(ObjReader, FuzzCorpusReadsAsTheGeneralReader) {
  const fs::path dir = sieve::render::testing::fresh_dir("obj-fast-corpus");
  int inputs = 0, fast = 0;
  scene_limits limits;
  limits.max_triangles = 1 << 16;
  limits.max_texture_side = 1024;
  limits.max_texture_bytes = std::uint64_t{1} << 24;
  for (const auto& entry : fs::directory_iterator(source / "tests" / "fuzz" / "corpus" / "obj")) {
    const std::string data = read_file(entry.path());
    const std::size_t nul = data.find('\0');
    sieve::render::testing::write(dir / "mesh.obj", data.substr(0, nul));
    sieve::render::testing::write(dir / "mesh.mtl", nul == std::string::npos ? "" : data.substr(nul + 1));
    SCOPED_TRACE(entry.path().filename().string());
    fast += expect_both_ways(dir / "mesh.obj", {1 << 20, 7}, {}, limits);
    ++inputs;
  }
  std::cout << inputs << " inputs, " << fast / 2 << " read by the fast path\n";
  EXPECT_GE(inputs, 100);
  EXPECT_GE(fast, 20);
}
