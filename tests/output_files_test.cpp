// report/output_files: outputs compared with each other and with the inputs by filesystem
// identity, special files refused, every write checked, all-or-nothing renames, temporaries removed
// on every path (a failure, an output_set dropped, the signal path's remove_temporaries).
#include <output_files.hpp>
#include <rows.hpp>

#include <sieve/compaction/error.hpp>

#include <gtest/gtest.h>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;
using sieve::report::output_set;

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class OutputFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sieve_outputs_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (mounted_) ::umount2((dir_ / "disk").c_str(), MNT_DETACH);
    fs::remove_all(dir_);
  }
  fs::path file(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  bool temporaries() const {
    for (const auto& e : fs::recursive_directory_iterator(dir_))
      if (e.path().filename().string().find(".tmp-") != std::string::npos) return true;
    return false;
  }
  // The message of the sieve::error f throws ("" when it does not throw).
  template <class F>
  static std::string error_of(F&& f) {
    try {
      f();
    } catch (const sieve::error& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
  bool mounted_ = false;
};

TEST_F(OutputFiles, OutputsAreComparedByIdentityNotSpelling) {
  const fs::path a = file("a.png", "a");
  fs::create_directories(dir_ / "sub");
  fs::create_hard_link(a, dir_ / "hard.png");
  fs::create_symlink(a, dir_ / "soft.png");
  for (const fs::path& other : {dir_ / "hard.png", dir_ / "soft.png", dir_ / "sub" / ".." / "a.png", dir_ / "." / "a.png"}) {
    output_set s;
    s.add_output(a, "--out");
    EXPECT_NE(error_of([&] { s.add_output(other, "--json"); }).find("the same file as --out"), std::string::npos) << other;
  }
  // Not there yet: by the folder's identity and the name.
  output_set s;
  s.add_output(dir_ / "new" / "x.json", "--json");
  EXPECT_NE(error_of([&] { s.add_output(dir_ / "new" / ".." / "new" / "x.json", "--csv"); }).find("the same file"),
            std::string::npos);
  EXPECT_NE(error_of([&] { s.add_output(dir_ / "sub" / ".." / "new" / "x.json", "--csv"); }).find("the same file"),
            std::string::npos);
  s.add_output(dir_ / "new" / "y.json", "--csv");  // a different file is fine
  s.add_output(dir_ / "sub" / "x.json", "--exr");
}

TEST_F(OutputFiles, AnInputIsNeverAnOutput) {
  const fs::path scene = file("s.toml", "scene");
  fs::create_hard_link(scene, dir_ / "h.toml");
  {
    output_set s;
    s.add_input(scene);
    EXPECT_NE(error_of([&] { s.add_output(dir_ / "h.toml", "--out"); }).find("a file this run reads"), std::string::npos);
  }
  {
    output_set s;  // the input found after the output (the loader's OBJ and MTL files)
    s.add_output(dir_ / "h.toml", "--out");
    EXPECT_NE(error_of([&] { s.add_input(scene); }).find("--out"), std::string::npos);
    s.add_input(dir_ / "missing.obj");  // the loader reports it
  }
  EXPECT_EQ(slurp(scene), "scene");
}

TEST_F(OutputFiles, OnlyRegularFilesAreReplaced) {
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0644), 0);
  fs::create_symlink(dir_ / "nowhere", dir_ / "dangling");
  const fs::path f = file("f", "file");
  output_set s;
  EXPECT_NE(error_of([&] { s.add_output(dir_ / "fifo", "--json"); }).find("a FIFO"), std::string::npos);
  EXPECT_NE(error_of([&] { s.add_output(dir_, "--json"); }).find("is a folder"), std::string::npos);
  EXPECT_NE(error_of([&] { s.add_output(dir_ / "sub" / "..", "--json"); }).find("names a folder"), std::string::npos);
  fs::create_directories(dir_ / "d");
  EXPECT_NE(error_of([&] { s.add_output(dir_ / "d" / ".", "--json"); }).find("names a folder"), std::string::npos);
  fs::create_directories(dir_ / "e");
  EXPECT_NE(error_of([&] { s.add_output(dir_ / "e" / "", "--json"); }).find("names a folder"), std::string::npos);
  EXPECT_NE(error_of([&] { s.add_output(dir_ / "dangling", "--json"); }).find("symbolic link to nowhere"), std::string::npos);
  EXPECT_NE(error_of([&] { s.add_output(f / "x.json", "--json"); }).find("is not a folder"), std::string::npos);
  EXPECT_NE(error_of([&] { s.add_output(std::string("a\0b", 3), "--json"); }).find("NUL"), std::string::npos);
  s.add_output("", "--json");  // no output
  s.stage("", "ignored");
  EXPECT_TRUE(fs::is_fifo(dir_ / "fifo"));
}

TEST_F(OutputFiles, StagedOutputsAreRenamedTogetherOrNotAtAll) {
  const fs::path a = file("a.txt", "old a"), b = file("b.txt", "old b");
  {
    output_set s;
    s.add_output(a, "--a");
    s.add_output(b, "--b");
    s.stage(a, "new a");
    EXPECT_TRUE(temporaries());
    // dropped before commit (an error while preparing b): nothing replaced, nothing left
  }
  EXPECT_EQ(slurp(a), "old a");
  EXPECT_FALSE(temporaries());
  output_set s;
  s.add_output(a, "--a");
  s.add_output(b, "--b");
  s.add_output(dir_ / "deep" / "er" / "c.txt", "--c");
  s.stage(a, "new a");
  s.stage(b, "new b");
  s.stage(dir_ / "deep" / "er" / "c.txt", "new c");
  EXPECT_EQ(slurp(b), "old b");
  s.commit();
  EXPECT_EQ(slurp(a), "new a");
  EXPECT_EQ(slurp(b), "new b");
  EXPECT_EQ(slurp(dir_ / "deep" / "er" / "c.txt"), "new c");
  EXPECT_FALSE(temporaries());
}

TEST_F(OutputFiles, ALinkIsWrittenThrough) {
  const fs::path target = file("target.json", "old");
  fs::create_symlink(target, dir_ / "link.json");
  sieve::report::write_file_atomically(dir_ / "link.json", "new");
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.json"));
  EXPECT_EQ(slurp(target), "new");
}

// What a signal handler calls: the staged temporaries go; the commit then names the reason.
TEST_F(OutputFiles, RemoveTemporariesLeavesNone) {
  const fs::path a = file("a.txt", "old a");
  output_set s;
  s.add_output(a, "--a");
  s.stage(a, "new a");
  ASSERT_TRUE(temporaries());
  sieve::report::remove_temporaries();
  EXPECT_FALSE(temporaries());
  const std::string e = error_of([&] { s.commit(); });
  EXPECT_NE(e.find("a.txt"), std::string::npos) << e;
  EXPECT_NE(e.find("No such file"), std::string::npos) << e;
  EXPECT_EQ(slurp(a), "old a");
}

TEST_F(OutputFiles, AFullDiskIsAnErrorWithTheReason) {
  fs::create_directories(dir_ / "disk");
  if (::mount("tmpfs", (dir_ / "disk").c_str(), "tmpfs", 0, "size=65536") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here (needs root): " << std::strerror(errno);
  mounted_ = true;
  const fs::path f = dir_ / "disk" / "f.bin";
  sieve::report::write_file_atomically(f, "old");
  const std::string big(256 * 1024, 'x');
  const std::string e = error_of([&] { sieve::report::write_file_atomically(f, big, "--exr"); });
  EXPECT_NE(e.find("f.bin"), std::string::npos) << e;
  EXPECT_NE(e.find("No space left on device"), std::string::npos) << e;
  EXPECT_EQ(slurp(f), "old");
  EXPECT_FALSE(temporaries());
}

TEST_F(OutputFiles, AnUnwritableFolderIsFoundBeforeTheWork) {
  if (::geteuid() == 0) {
    fs::create_directories(dir_ / "ro");
    if (::mount("tmpfs", (dir_ / "ro").c_str(), "tmpfs", MS_RDONLY, "size=4096") != 0)
      GTEST_SKIP() << "root and cannot mount a read-only tmpfs: " << std::strerror(errno);
    output_set s;
    const std::string e = error_of([&] { s.add_output(dir_ / "ro" / "x" / "y.png", "--out"); });
    ::umount2((dir_ / "ro").c_str(), MNT_DETACH);
    EXPECT_NE(e.find("cannot write in"), std::string::npos) << e;
    EXPECT_NE(e.find("Read-only"), std::string::npos) << e;
    return;
  }
  fs::create_directories(dir_ / "ro");
  fs::permissions(dir_ / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  output_set s;
  EXPECT_NE(error_of([&] { s.add_output(dir_ / "ro" / "y.png", "--out"); }).find("cannot write in"), std::string::npos);
  fs::permissions(dir_ / "ro", fs::perms::owner_all);
}

// A benchmark's --csv and --json (report::result_files): registered before the work, written from
// one row schema after it, the JSON document with the rows as its "results"; a key a row leaves
// out (omitted()) is missing from that row only; no file named, none written.
TEST_F(OutputFiles, ResultFilesWriteTheRowsOfOneSchema) {
  struct row {
    std::string name;
    double ms;
    bool gpu;
  };
  using sieve::report::cell;
  sieve::report::row_schema<row> rows({
      {"name", "name", "name", [](const row& r) { return sieve::report::text_cell(r.name); }},
      {"ms", "ms", "ms", [](const row& r) { return sieve::report::ms_cell(r.ms, r.ms > 0); }},
      {"", "", "gpu_only", [](const row& r) { return cell{"", "", r.gpu ? nlohmann::json(1) : sieve::report::omitted()}; }},
  });
  rows.add({"a,b", 1.5, false});
  rows.add({"c", 0, true});
  sieve::report::result_files files{(dir_ / "r.csv").string(), (dir_ / "r.json").string()};
  output_set outputs;
  files.add_to(outputs);
  EXPECT_NE(error_of([&] { outputs.add_output(dir_ / "r.json", "--other"); }).find("the same file as --json"),
            std::string::npos);
  files.stage(outputs, rows, {{"benchmark", "test"}});
  EXPECT_FALSE(fs::exists(dir_ / "r.csv"));  // staged, not yet written
  outputs.commit();
  EXPECT_EQ(slurp(dir_ / "r.csv"), "name,ms\n\"a,b\",1.50000\nc,0.00000\n");
  const auto doc = nlohmann::json::parse(slurp(dir_ / "r.json"));
  EXPECT_EQ(doc["benchmark"], "test");
  EXPECT_EQ(doc["results"], nlohmann::json::parse(R"([{"name": "a,b", "ms": 1.5}, {"name": "c", "ms": 0.0, "gpu_only": 1}])"));

  sieve::report::result_files none;
  output_set nothing;
  none.add_to(nothing);
  none.stage(nothing, rows, {});
  nothing.commit();
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator{}), 2);
}

}  // namespace
