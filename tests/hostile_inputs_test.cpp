// The `sieve` command against hostile input, end to end: no input of the user's is written over (a
// texture is an input like the scene file), no glTF file crashes or steers the reader (deep JSON,
// lying GLB chunk lengths, URIs out of the folder, buffers read only when used), reads are bounded
// (a line, a scene file), signals the user ignored stay ignored, what a file says reaches the
// terminal escaped, and bench admits memory and refuses negative counts as render does.
#include "cli_support.hpp"

#include <nlohmann/json.hpp>

#include <sys/inotify.h>
#include <sys/resource.h>

#include <chrono>
#include <cstring>
#include <sstream>
#include <thread>

namespace {

using namespace sieve_cli_test;
using json = nlohmann::json;

class Hostile : public Cli {
 protected:
  // A triangle's positions (36 bytes), for tri.bin and GLB BIN chunks.
  static std::string triangle_bytes() {
    const float p[9] = {-1, -1, 0, 1, -1, 0, 0, 1, 0};
    return std::string(reinterpret_cast<const char*>(p), sizeof p);
  }
  // One triangle whose buffer is `uri` (no uri: a GLB's BIN chunk).
  static json triangle_gltf(const std::string& uri = "tri.bin") {
    json b = {{"byteLength", 36}};
    if (!uri.empty()) b["uri"] = uri;
    return {{"asset", {{"version", "2.0"}}},
            {"buffers", json::array({b})},
            {"bufferViews", json::array({{{"buffer", 0}, {"byteLength", 36}}})},
            {"accessors", json::array({{{"bufferView", 0}, {"componentType", 5126}, {"count", 3}, {"type", "VEC3"}}})},
            {"meshes", json::array({{{"primitives", json::array({{{"attributes", {{"POSITION", 0}}}}})}}})},
            {"nodes", json::array({{{"mesh", 0}}})},
            {"scenes", json::array({{{"nodes", json::array({0})}}})}};
  }
  fs::path gltf(const std::string& name, const json& doc) const {
    file("tri.bin", triangle_bytes());
    return file(name, doc.dump());
  }
  // A GLB of `doc` and `bin`, the BIN chunk's length field `bin_extra` bytes more than it holds.
  fs::path glb(const std::string& name, json doc, const std::string& bin, std::uint32_t bin_extra = 0) const {
    std::string j = doc.dump();
    while (j.size() % 4) j += ' ';
    std::string b = bin;
    while (b.size() % 4) b += '\0';
    auto u32 = [](std::uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); };
    const std::string body = u32(static_cast<std::uint32_t>(j.size())) + "JSON" + j +
                             u32(static_cast<std::uint32_t>(b.size()) + bin_extra) + std::string("BIN\0", 4) + b;
    return file(name, "glTF" + u32(2) + u32(static_cast<std::uint32_t>(12 + body.size())) + body);
  }
  std::vector<std::string> render(const fs::path& scene, std::vector<std::string> more = {}) const {
    return with(with({"render", scene.string(), "--out", (dir_ / "out.png").string()}, tiny), more);
  }
  // Runs sieve with its stdout on /dev/full (every write fails: ENOSPC).
  outcome run_onto_full_stdout(const std::vector<std::string>& args) const { return finish(start(args, {}, "/dev/full")); }
  // Runs sieve with `ignored` set to SIG_IGN (as nohup or `trap '' INT` leave it) and sends it that
  // signal every 100 ms until it ends.
  outcome run_ignoring(int ignored, const std::vector<std::string>& args) const {
    struct sigaction old {}, ign {};
    ign.sa_handler = SIG_IGN;
    sigaction(ignored, &ign, &old);
    const pid_t pid = start(args);
    sigaction(ignored, &old, nullptr);
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      ::kill(pid, ignored);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), slurp(dir_ / "stdout"), slurp(dir_ / "stderr")};
  }
};

// A texture is an input: neither the default output (the scene's stem, brick.png) nor --json may
// name it; it stays as it was.
TEST_F(Hostile, TexturesAreInputs) {
  for (const char* f : {"textured.obj", "textured.mtl", "brick.png", "checker.png"})
    fs::copy_file(scenes_dir / "textured" / f, dir_ / f);
  fs::copy_file(scenes_dir / "textured" / "textured.toml", dir_ / "brick.toml");
  const std::string brick = slurp(dir_ / "brick.png");
  const outcome a = run(with({"render", "brick.toml"}, tiny), dir_);
  EXPECT_NE(a.rc, 0);
  EXPECT_NE(a.err.find("a file this run reads"), std::string::npos) << a.err;
  const outcome b = run(with({"render", "brick.toml", "--json", "checker.png"}, tiny), dir_);
  EXPECT_NE(b.rc, 0);
  EXPECT_NE(b.err.find("a file this run reads"), std::string::npos) << b.err;
  // [[materials]] texture = ...: the same.
  file("mat.toml", "[[objects]]\nobj = \"textured.obj\"\nmaterial = \"m\"\n[[materials]]\nname = \"m\"\n"
                   "type = \"diffuse\"\ntexture = \"brick.png\"\n[[lights]]\ncorner = [-1, 3, -1]\n"
                   "edge1 = [1, 0, 0]\nedge2 = [0, 0, 1]\nemission = [5, 5, 5]\n");
  expect_one_line_error(with({"render", (dir_ / "mat.toml").string(), "--exr", (dir_ / "brick.png").string()}, tiny),
                        "a file this run reads");
  EXPECT_EQ(slurp(dir_ / "brick.png"), brick);
}

// 20,000 nested arrays in asset.extras (any extras or extensions value) overflowed the stack.
TEST_F(Hostile, DeepJsonIsRefusedBeforeItIsParsed) {
  json doc = triangle_gltf();
  std::string text = doc.dump();
  text.insert(text.find("{\"version\"") + 1, "\"extras\":" + std::string(20000, '[') + std::string(20000, ']') + ",");
  file("tri.bin", triangle_bytes());
  const fs::path deep = file("deep.gltf", text);
  expect_one_line_error(render(deep), "deeper than 64 levels");
  expect_one_line_error(with({"bench", "trace", deep.string(), "--width", "8", "--height", "8"}, {}), "deeper than 64");
}

// A GLB whose BIN chunk claims more bytes than the file holds: tinygltf read past its buffer.
TEST_F(Hostile, GlbChunkLengthsAreChecked) {
  const fs::path lying = glb("lying.glb", triangle_gltf(""), triangle_bytes(), 8);
  expect_one_line_error(render(lying), "BIN chunk");
  expect_one_line_error(render(lying), "lying.glb");
  // The honest one renders.
  EXPECT_EQ(run(render(glb("ok.glb", triangle_gltf(""), triangle_bytes()))).rc, 0);
  // A GLB buffer of byteLength 0: an error naming the file and the buffer.
  json zero = triangle_gltf("");
  zero["buffers"][0]["byteLength"] = 0;
  const outcome o = run(render(glb("zero.glb", zero, triangle_bytes())));
  EXPECT_NE(o.rc, 0);
  EXPECT_NE(o.err.find("zero.glb: buffers[0]"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("_M_range_check"), std::string::npos) << o.err;
}

// Buffers and images no primitive or material uses are never read: missing files there are no error.
TEST_F(Hostile, UnusedBuffersAndImagesAreNotRead) {
  json doc = triangle_gltf();
  for (int i = 0; i < 40; ++i) doc["buffers"].push_back({{"byteLength", 1000000000}, {"uri", "huge" + std::to_string(i) + ".bin"}});
  doc["images"] = json::array({{{"uri", "missing.png"}}});
  const outcome o = run(render(gltf("unused.gltf", doc)));
  EXPECT_EQ(o.rc, 0) << o.err;
  // A used buffer past the budget is refused before it is read (a sparse file of 5 GiB).
  const fs::path big = dir_ / "big.bin";
  { std::ofstream(big) << ""; }
  fs::resize_file(big, std::uint64_t{5} << 30);
  json used = triangle_gltf("big.bin");
  used["buffers"][0]["byteLength"] = std::uint64_t{5} << 30;
  expect_one_line_error(render(file("big.gltf", used.dump())), "GiB");
}

// URIs are percent-decoded and confined to the glTF file's folder; a NUL is refused.
TEST_F(Hostile, UrisStayInTheGltfFilesFolder) {
  fs::create_directories(dir_ / "model");
  file("tri.bin", triangle_bytes());  // outside the model's folder
  for (const std::string& uri : std::vector<std::string>{"../tri.bin", "%2e%2e/tri.bin", "sub/../../tri.bin", (dir_ / "tri.bin").string()})
    expect_one_line_error(render(file("model/m.gltf", triangle_gltf(uri).dump())), "folder");
  fs::create_symlink(dir_ / "tri.bin", dir_ / "model" / "link.bin");
  expect_one_line_error(render(file("model/l.gltf", triangle_gltf("link.bin").dump())), "symbolic link");
  file("model/tri.bin", triangle_bytes());
  expect_one_line_error(render(file("model/nul.gltf", triangle_gltf("tri.bin%00.png").dump())), "NUL");
  EXPECT_EQ(run(render(file("model/ok.gltf", triangle_gltf("t%72i.bin").dump()))).rc, 0);  // %72: 'r'
}

// An image file that exists but is empty is an error saying so, not "not found".
TEST_F(Hostile, EmptyImageIsNotMissing) {
  json doc = triangle_gltf();
  doc["images"] = json::array({{{"uri", "empty.png"}}});
  doc["textures"] = json::array({{{"source", 0}}});
  doc["materials"] = json::array({{{"pbrMetallicRoughness", {{"baseColorTexture", {{"index", 0}}}}}}});
  doc["meshes"][0]["primitives"][0]["material"] = 0;
  file("empty.png", "");
  expect_one_line_error(render(gltf("img.gltf", doc)), "empty.png' is empty");
}

// Values tinygltf read leniently and keys sieve ignored: errors.
TEST_F(Hostile, WrongValuesAreErrors) {
  json neg = triangle_gltf();
  neg["bufferViews"][0]["byteOffset"] = -4;
  expect_one_line_error(render(gltf("neg.gltf", neg)), "byteOffset -4 is not a non-negative integer");
  json ext = triangle_gltf();
  ext["materials"] = json::array({{{"extensions", {{"KHR_materials_ior", {{"ior", "2.4"}}}}}}});
  ext["meshes"][0]["primitives"][0]["material"] = 0;
  expect_one_line_error(render(gltf("ext.gltf", ext)), "ior is not a number");
  file("hf.toml", "[procedural]\ntype = \"heightfield\"\nn = 4\ngrid = 4\n");
  expect_one_line_error(render(dir_ / "hf.toml"), "procedural.n");
}

// A NUL in a TOML path named another file (the path cut at it).
TEST_F(Hostile, NulInATomlPathIsRefused) {
  for (const char* f : {"cornell-box.obj", "cornell-box.mtl"}) fs::copy_file(scenes_dir / "cornell-box" / f, dir_ / f);
  file("nul.toml", "[[objects]]\nobj = \"cornell-box.obj\\u0000.png\"\n");
  expect_one_line_error(render(dir_ / "nul.toml"), "NUL");
}

// OBJ texture-coordinate and normal indices before their list (negative, or wrapping at 2^31).
TEST_F(Hostile, ObjAttributeIndicesAreChecked) {
  const std::string head = "v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvn 0 0 1\n";
  file("a.obj", head + "f 1/-5 2/1 3/1\n");
  expect_one_line_error(render(dir_ / "a.obj"), "texture coordinate index -5 reaches before");
  file("b.obj", head + "f 1//-3 2//1 3//1\n");
  expect_one_line_error(render(dir_ / "b.obj"), "normal index -3 reaches before");
  file("c.obj", head + "f 1/2147483649 2/1 3/1\n");
  expect_one_line_error(render(dir_ / "c.obj"), "is not a texture coordinate index");
  file("d.obj", head + "f 1/3 2/1 3/1\n");
  expect_one_line_error(render(dir_ / "d.obj"), "texture coordinate index 3 is past the 1");
}

// Reads are bounded: a line of an OBJ, a scene file (both sparse files without a newline).
TEST_F(Hostile, LongLinesAndHugeSceneFilesAreNotReadWhole) {
  const fs::path obj = dir_ / "long.obj";
  { std::ofstream(obj) << "v"; }
  fs::resize_file(obj, std::uint64_t{1} << 30);
  const auto t0 = std::chrono::steady_clock::now();
  expect_one_line_error(render(obj), "a line longer than 16 MiB");
  const fs::path toml = dir_ / "huge.toml";
  { std::ofstream(toml) << "name = \""; }
  fs::resize_file(toml, std::uint64_t{1} << 30);
  expect_one_line_error(render(toml), "more than the limit");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
}

// Control characters from a scene reach the terminal as \xNN: no escape sequence, no forged line.
TEST_F(Hostile, ControlCharactersAreEscaped) {
  for (const char* f : {"cornell-box.obj", "cornell-box.mtl"}) fs::copy_file(scenes_dir / "cornell-box" / f, dir_ / f);
  file("name.toml", "name = \"a\\u001b[2Jb\\nsieve: forged\"\n[[objects]]\nobj = \"cornell-box.obj\"\n");
  const outcome o = run({"render", (dir_ / "name.toml").string(), "--out", (dir_ / "o.png").string(),
                         "--set", "film.width=8", "--set", "film.height=8", "--spp", "1"});
  EXPECT_EQ(o.rc, 0) << o.err;
  EXPECT_EQ(o.out.find('\x1b'), std::string::npos);
  EXPECT_EQ(o.out.find("\nsieve: forged"), std::string::npos);
  file("strategy.toml", "[[objects]]\nobj = \"cornell-box.obj\"\n[compaction]\nstrategy = \"x\\u001b[31m\\nsieve: forged\"\n");
  const outcome s = run(render(dir_ / "strategy.toml"));
  EXPECT_NE(s.rc, 0);
  EXPECT_EQ(s.err.find('\x1b'), std::string::npos) << s.err;
  EXPECT_EQ(std::count(s.err.begin(), s.err.end(), '\n'), 1) << s.err;
  file("env.toml", "[[objects]]\nobj = \"cornell-box.obj\"\n[environment]\nmap = \"a\\u001b[31m\\nsieve: forged.exr\"\n");
  const outcome e = run(render(dir_ / "env.toml"));
  EXPECT_NE(e.rc, 0);
  EXPECT_EQ(e.err.find('\x1b'), std::string::npos) << e.err;
  EXPECT_EQ(std::count(e.err.begin(), e.err.end(), '\n'), 1) << e.err;
}

// An environment map's radiance times its scale overflowing a float rendered a black sky silently.
TEST_F(Hostile, EnvironmentScaleOverflowIsAnError) {
  for (const char* f : {"cornell-box.obj", "cornell-box.mtl"}) fs::copy_file(scenes_dir / "cornell-box" / f, dir_ / f);
  // One Radiance pixel of 0.5 * 2^34 in each channel.
  file("bright.hdr", std::string("#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 1 +X 1\n") + "\x80\x80\x80\xa2");
  file("sky.toml", "[[objects]]\nobj = \"cornell-box.obj\"\n[environment]\nmap = \"bright.hdr\"\nscale = 1e30\n");
  expect_one_line_error(render(dir_ / "sky.toml"), "overflows a float");
}

// nohup, or a shell's `trap '' INT`: the signal stays ignored and the render completes.
TEST_F(Hostile, IgnoredSignalsStayIgnored) {
  const std::string cornell = (scenes_dir / "cornell-box" / "cornell-box.toml").string();
  for (const int sig : {SIGHUP, SIGINT}) {
    const fs::path png = dir_ / "n.png";
    // Two waves of paths (a second or two; the signal meanwhile every 100 ms).
    const outcome o = run_ignoring(sig, {"render", cornell, "--backend", "cpu", "--set", "film.width=32", "--set",
                                         "film.height=32", "--set", "film.max_bounces=1", "--spp", "2048", "--quiet",
                                         "--out", png.string()});
    EXPECT_EQ(o.rc, 0) << "signal " << sig << ": " << o.err;
    EXPECT_TRUE(fs::exists(png));
    fs::remove(png);
  }
}

// One Ctrl-C while the outputs are written (sent when the first temporary appears): the outputs
// complete, and the exit status and a line say that it came (it was swallowed: exit 0, no word).
TEST_F(Hostile, CtrlCWhileWritingIsReported) {
  const std::string cornell = (scenes_dir / "cornell-box" / "cornell-box.toml").string();
  const fs::path out = dir_ / "o";
  for (int attempt = 0; attempt < 3; ++attempt) {
    fs::remove_all(out);
    fs::create_directories(out);
    const int watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    ASSERT_GE(watch, 0);
    ASSERT_GE(inotify_add_watch(watch, out.c_str(), IN_CREATE), 0);
    // A quick frame whose PNG and EXR take a while to encode and write.
    const pid_t pid = start({"render", cornell, "--set", "film.width=2048", "--set", "film.height=2048", "--set",
                             "film.max_bounces=1", "--spp", "1", "--quiet", "--out", (out / "p.png").string(), "--exr",
                             (out / "p.exr").string()});
    const bool seen = temporary_appears(watch, pid);
    if (seen) ::kill(pid, SIGINT);
    ::close(watch);
    const outcome o = finish(pid);
    if (!seen) continue;  // it finished before the signal could come: again
    EXPECT_EQ(o.rc, 128 + SIGINT) << o.err;
    EXPECT_NE(o.err.find("while the outputs were written"), std::string::npos) << o.err;
    EXPECT_EQ(slurp(out / "p.png").substr(1, 3), "PNG");
    EXPECT_GT(fs::file_size(out / "p.exr"), 1000U);
    return;
  }
  GTEST_SKIP() << "the render finished before a signal could be sent while it wrote";
}

// --dry-run refuses what the run refuses before it starts.
TEST_F(Hostile, DryRunChecksTheOutputFormat) {
  const std::string cornell = (scenes_dir / "cornell-box" / "cornell-box.toml").string();
  const outcome o = run({"--dry-run", "render", cornell, "--out", (dir_ / "x.jpg").string()});
  EXPECT_EQ(o.rc, 2) << o.err;
  EXPECT_NE(o.err.find(".png or .exr"), std::string::npos) << o.err;
}

// A failed write on stdout is an error, not a silent success.
TEST_F(Hostile, StdoutWriteErrorsAreReported) {
  const outcome o = run_onto_full_stdout({"info", "--json"});
  EXPECT_NE(o.rc, 0);
  EXPECT_NE(o.err.find("standard output"), std::string::npos) << o.err;
}

// bench: negative counts and seeds are usage errors; memory is admitted before it is allocated.
TEST_F(Hostile, BenchRefusesNegativesAndAdmitsMemory) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"bench", "compaction", "--n", "-1"},
                                                               {"bench", "compaction", "--seed", "-1"},
                                                               {"bench", "compaction", "--n", "1000,-2"}}) {
    const outcome o = run(args);
    EXPECT_EQ(o.rc, 2) << o.err;
    EXPECT_NE(o.err.find("negative"), std::string::npos) << o.err;
  }
  const auto t0 = std::chrono::steady_clock::now();
  expect_one_line_error({"bench", "compaction", "--backend", "cpu", "--suite", "select", "--type", "u64", "--n",
                         "4294967295", "--strategy", "std"},
                        "too large for this machine");
  const std::string cornell = (scenes_dir / "cornell-box" / "cornell-box.toml").string();
  expect_one_line_error({"bench", "trace", cornell, "--backend", "cpu", "--width", "16384", "--height", "16384", "--spp", "4"},
                        "too large for this machine");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
}

// Coincident triangles: every traversal finds a closest hit at the same t; bench trace validates.
TEST_F(Hostile, BenchTraceValidatesCoincidentTriangles) {
  file("twin.obj", "v -1 -1 0\nv 1 -1 0\nv 1 1 0\nv -1 1 0\nf 1 2 3\nf 1 3 4\nf 1 2 3\nf 1 3 4\nf 3 2 1\n");
  file("twin.toml", "[camera]\nposition = [0, 0, -3]\nlook_at = [0, 0, 0]\n[[objects]]\nobj = \"twin.obj\"\n"
                    "[[lights]]\ncorner = [-1, -1, -2]\nedge1 = [2, 0, 0]\nedge2 = [0, 0.1, 0]\nemission = [1, 1, 1]\n");
  const outcome o = run({"bench", "trace", (dir_ / "twin.toml").string(), "--backend", "cpu", "--width", "64",
                         "--height", "64", "--repeats", "1"});
  EXPECT_EQ(o.rc, 0) << o.out << o.err;
  EXPECT_EQ(o.err.find("differs"), std::string::npos) << o.err;
  EXPECT_EQ(o.out.find(" NO "), std::string::npos) << o.out;
}

// `sieve check` counted materials in a 3-slot array indexed by a 6-value kind (a stack overflow on
// every glTF model): every family is counted and named, and emissive triangles are explained.
TEST_F(Hostile, CheckCountsEveryMaterialFamily) {
  const outcome g = run({"check", (scenes_dir / "gltf" / "box.gltf").string()});
  EXPECT_EQ(g.rc, 0) << g.err;
  for (const char* family : {" diffuse, ", " mirror, ", " dielectric, ", " conductor, ", " rough dielectric, ", " glTF metallic-roughness;"})
    EXPECT_NE(g.out.find(family), std::string::npos) << family << " not in: " << g.out;
  const outcome m = run({"check", (scenes_dir / "materials" / "materials.toml").string()});
  EXPECT_EQ(m.rc, 0) << m.err;
  // The counts add up to the materials' number.
  const std::size_t at = m.out.find("materials: ");
  ASSERT_NE(at, std::string::npos) << m.out;
  std::istringstream line(m.out.substr(at + 11, m.out.find(';', at) - at - 11));
  std::size_t total = 0, sum = 0, n = 0;
  char colon = 0;
  line >> total >> colon;
  for (std::string word; line >> n && std::getline(line, word, ',');) sum += n;
  EXPECT_EQ(sum, total) << m.out;
  const outcome c = run({"check", (scenes_dir / "cornell-box" / "cornell-box.toml").string()});
  EXPECT_NE(c.out.find("an emissive triangle is one whose material emits"), std::string::npos) << c.out;
}

// Texture names reached stdout raw: a name holding an escape sequence is written as \xNN.
TEST_F(Hostile, CheckEscapesTextureNames) {
  const std::string name = "a\x1b[2Jb.png";
  fs::copy_file(scenes_dir / "textured" / "checker.png", dir_ / name);
  file("q.obj", "mtllib q.mtl\nv -1 -1 0\nv 1 -1 0\nv 1 1 0\nvt 0 0\nvt 1 0\nvt 1 1\nusemtl t\nf 1/1 2/2 3/3\n");
  file("q.mtl", "newmtl t\nKd 1 1 1\nmap_Kd " + name + "\n");
  file("q.toml", "[camera]\nposition = [0, 0, -3]\n[[objects]]\nobj = \"q.obj\"\n");
  const outcome o = run({"check", (dir_ / "q.toml").string()});
  EXPECT_EQ(o.rc, 0) << o.err;
  EXPECT_EQ(o.out.find('\x1b'), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("a\\x1b[2Jb.png"), std::string::npos) << o.out;
}

// MTL -inf and -nan were read as options (like -halo) and skipped: the material loaded with 0.
TEST_F(Hostile, MtlNonFiniteNegativesAreRefused) {
  file("t.obj", "mtllib t.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl m\nf 1 2 3\n");
  for (const char* value : {"-inf", "-nan", "-infinity"}) {
    file("t.mtl", std::string("newmtl m\nKd 0.5 ") + value + " 0.5\n");
    expect_one_line_error({"check", (dir_ / "t.obj").string()}, std::string("'") + value + "' is not a finite number");
  }
}

// Ctrl-C or SIGTERM while the scene loads or the BVH builds stopped nothing until the step ended,
// then wrote an image of 0 samples over the output. Now the job stops at the next safe point and
// writes nothing: the old output stays.
TEST_F(Hostile, StopWhileLoadingWritesNothing) {
  const std::string heightfield = (scenes_dir / "procedural" / "heightfield.toml").string();
  for (const int sig : {SIGINT, SIGTERM}) {
    const fs::path png = dir_ / "old.png";
    file("old.png", "the old output");
    const pid_t pid = start({"render", heightfield, "--backend", "cpu", "--spp", "1", "--quiet", "--out", png.string()});
    ASSERT_TRUE(wait_for_handler(pid, sig));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // into the load (8.4M triangles) or the build
    ::kill(pid, sig);
    const auto t0 = std::chrono::steady_clock::now();
    const outcome o = finish(pid);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5)) << "the stop took that long";
    EXPECT_EQ(o.rc, 128 + sig) << o.err;
    EXPECT_NE(o.err.find("nothing was written"), std::string::npos) << o.err;
    EXPECT_EQ(slurp(png), "the old output");
  }
}

// --help, --version and --dry-run wrote onto a full stdout and exited 0; a render named a stale
// errno as the reason.
TEST_F(Hostile, FullStdoutIsAnErrorWithItsReason) {
  const std::string cornell = (scenes_dir / "cornell-box" / "cornell-box.toml").string();
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--help"}, {"--version"}, {"--dry-run", "render", cornell},
           {"render", cornell, "--backend", "cpu", "--set", "film.width=8", "--set", "film.height=8", "--spp", "1",
            "--out", (dir_ / "o.png").string()}}) {
    const outcome o = run_onto_full_stdout(args);
    EXPECT_NE(o.rc, 0) << args[0] << ": " << o.err;
    EXPECT_NE(o.err.find("cannot write to standard output: No space left on device"), std::string::npos)
        << args[0] << ": " << o.err;
  }
}

// An --out of the wrong extension was refused only after the scene had loaded (and after its errors).
TEST_F(Hostile, OutputExtensionIsCheckedBeforeTheLoad) {
  file("bad.toml", "[[objects]]\nobj = \"missing.obj\"\n");
  const outcome o = run({"render", (dir_ / "bad.toml").string(), "--out", (dir_ / "new.jpg").string()});
  EXPECT_EQ(o.rc, 2) << o.err;
  EXPECT_NE(o.err.find(".png or .exr"), std::string::npos) << o.err;
}

}  // namespace
