// The scene loader: TOML scene files (toml++) and OBJ/MTL meshes (tinyobjloader). Schema and mapping:
// scenes/README.md.
#include "load.hpp"

#include "procedural.hpp"

#include "../core/memory.hpp"

#include <tiny_obj_loader.h>

#include <sieve/compaction/error.hpp>
#if __has_include(<toml++/toml.hpp>)
#include <toml++/toml.hpp>
#else
#include <toml++/toml.h>  // toml++ before 3.4 (Debian 12) has only this name
#endif

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sieve::render {
namespace {

namespace fs = std::filesystem;

constexpr double pi = 3.14159265358979323846;
constexpr double degrees = 180.0 / pi;

// `s` with its control characters (bytes below 0x20, and 0x7f) written as \xNN: what comes from an
// input file reaches the terminal as text, never as a line break or an escape sequence.
std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      constexpr char hex[] = "0123456789abcdef";
      out += {'\\', 'x', hex[c >> 4], hex[c & 15]};
    } else {
      out += ch;
    }
  }
  return out;
}

[[noreturn]] void fail(const std::string& message) { throw sieve::error(printable(message)); }

void print_warning(const std::string& message) { std::cerr << "sieve: warning: " << printable(message) << "\n"; }

// fs::exists without the exception it throws where the OS rejects the path. Only a path that names
// nothing is missing; any other error (a name past 255 bytes, a symbolic link loop, a folder that
// may not be searched) is left for input_file to report with the system's reason.
bool file_exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec) || (ec && ec != std::errc::no_such_file_or_directory);
}

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// An input file (scene, OBJ, MTL) open for reading. Only a regular file is read: a directory, FIFO,
// device or socket is refused before a byte is read (it is opened without blocking, so a FIFO with
// no writer cannot hang the load, and /dev/zero cannot grow a line until memory runs out), and no
// read goes past the size the file had when it was opened. stream() reads it from the start.
class input_file {
 public:
  input_file(const fs::path& path, const std::string& what) : path_(path.string()) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) {
      const int e = errno;
      if (e == ENOENT) fail(path_ + ": " + what + " not found");
      fail(path_ + ": cannot open the " + what + ": " + std::strerror(e));
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0) fail(path_ + ": cannot read the " + what + ": " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) {
      ::close(fd_);
      fd_ = -1;
      fail(path_ + ": the " + what + " is " + file_kind(st.st_mode) + ", not a regular file");
    }
    size_ = static_cast<std::uint64_t>(st.st_size);
  }
  ~input_file() {
    if (fd_ >= 0) ::close(fd_);
  }
  input_file(const input_file&) = delete;
  input_file& operator=(const input_file&) = delete;

  std::uint64_t size() const { return size_; }

  std::string text() {
    std::istream& in = stream();
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  std::istream& stream() {
    if (::lseek(fd_, 0, SEEK_SET) != 0) fail(path_ + ": cannot rewind: " + std::strerror(errno));
    buf_.restart(fd_, size_);
    in_.clear();
    return in_;
  }

 private:
  struct bounded_buf : std::streambuf {
    int fd = -1;
    std::uint64_t left = 0;  // bytes still to be read
    char data[1 << 16];
    void restart(int file, std::uint64_t bytes) {
      fd = file;
      left = bytes;
      setg(nullptr, nullptr, nullptr);
    }
    int_type underflow() override {
      if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
      while (left > 0) {
        const ssize_t n = ::read(fd, data, static_cast<std::size_t>(std::min<std::uint64_t>(sizeof data, left)));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // a read error or a file that shrank ends the input here
        left -= static_cast<std::uint64_t>(n);
        setg(data, data, data + n);
        return traits_type::to_int_type(*gptr());
      }
      left = 0;
      return traits_type::eof();
    }
  };
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  bounded_buf buf_;
  std::istream in_{&buf_};
};

// The next line of `in`, ended by LF, CR or CR LF (as tinyobjloader reads them); false at the end.
bool next_line(std::istream& in, std::string& line) {
  line.clear();
  std::streambuf* sb = in.rdbuf();
  for (int c; (c = sb->sbumpc()) != std::char_traits<char>::eof();) {
    if (c == '\n') return true;
    if (c == '\r') {
      if (sb->sgetc() == '\n') sb->sbumpc();
      return true;
    }
    line += static_cast<char>(c);
  }
  return !line.empty();
}

std::string in_quotes(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string str(double v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

std::string str(vec3 v) { return "(" + str(v.x) + ", " + str(v.y) + ", " + str(v.z) + ")"; }

std::string join(const std::vector<std::string_view>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + std::string(items[i]);
  return out;
}

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

const char* type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
    case toml::node_type::time:
    case toml::node_type::date_time:
      return "a date/time";
    default:
      return "nothing";
  }
}

// ------------------------------------------------------------------------------------------------
// The schema: the keys each table may hold.

const std::vector<std::string_view> top_keys = {"name",    "camera",    "film",   "environment", "compaction",
                                                "objects", "materials", "lights", "procedural"};
const std::map<std::string_view, std::vector<std::string_view>> table_keys = {
    {"camera", {"position", "look_at", "up", "vfov", "focal_length_mm", "film_height_mm"}},
    {"film", {"width", "height", "spp", "max_bounces", "seed"}},
    {"environment", {"color"}},
    {"compaction", {"strategy", "reorder", "sort"}},
    {"objects", {"obj", "translate", "scale", "rotate_y", "material"}},
    {"materials", {"name", "type", "albedo", "emission", "ior"}},
    {"lights", {"type", "corner", "edge1", "edge2", "emission"}},
    {"procedural", {"type", "n", "segments", "grid", "height", "seed"}},
};
bool is_array_table(std::string_view t) { return t == "objects" || t == "materials" || t == "lights"; }

bool contains(const std::vector<std::string_view>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// ------------------------------------------------------------------------------------------------
// Reading values with errors that point at the file, the line and the key.

struct reader {
  std::string file;                               // the scene file as given (TOML or OBJ)
  scene_limits limits;
  std::map<std::string, std::string> overridden;  // key path -> the override that set it

  std::string where(const toml::node* n, std::string_view key) const {
    for (const auto& [k, text] : overridden) {
      if (key == k || (key.size() > k.size() && key.substr(0, k.size()) == k &&
                       (key[k.size()] == '.' || key[k.size()] == '['))) {
        return file + ": " + std::string(key) + " (from override " + in_quotes(text) + ")";
      }
    }
    if (n && n->source().begin.line > 0) {
      return file + ":" + std::to_string(n->source().begin.line) + ": " + std::string(key);
    }
    return file + ": " + std::string(key);
  }
  [[noreturn]] void fail_at(const toml::node* n, std::string_view key, const std::string& what) const {
    fail(where(n, key) + ": " + what);
  }

  // The scene's triangle count, `what` saying where it stands (e.g. "with 'bunny.obj'").
  void check_triangles(std::uint64_t count, const std::string& what) const {
    if (count > limits.max_triangles) {
      fail(file + ": " + std::to_string(count) + " triangles " + what + " is more than the limit of " +
           std::to_string(limits.max_triangles));
    }
  }

  // The memory the scene's triangles and film take (core/memory.hpp), against what is available.
  void check_memory(std::uint64_t triangles, const film_desc& film) const {
    memory::counts c;
    c.triangles = triangles;
    c.pixels = std::uint64_t{film.width} * film.height;
    memory::check(c, limits.available_memory ? std::optional(limits.available_memory) : std::nullopt, std::nullopt,
                  file);
  }

  void known_keys(const toml::table& t, const std::string& prefix, const std::vector<std::string_view>& keys,
                  std::string_view table) const {
    for (auto&& [k, v] : t) {
      if (!contains(keys, k.str())) {
        fail_at(&v, prefix + std::string(k.str()),
                "unknown key (" + std::string(table) + " takes: " + join(keys) + ")");
      }
    }
  }

  const toml::table& table(const toml::node& n, std::string_view key) const {
    if (!n.is_table()) fail_at(&n, key, std::string("expected a table, got ") + type_name(n));
    return *n.as_table();
  }

  double number(const toml::node& n, std::string_view key) const {
    double v;
    if (n.is_integer()) {
      v = static_cast<double>(n.as_integer()->get());
    } else if (n.is_floating_point()) {
      v = n.as_floating_point()->get();
    } else {
      fail_at(&n, key, std::string("expected a number, got ") + type_name(n));
    }
    if (!std::isfinite(v) || !std::isfinite(static_cast<float>(v))) {
      fail_at(&n, key, str(v) + " is not a finite number");
    }
    return v;
  }

  std::int64_t integer(const toml::node& n, std::string_view key) const {
    if (n.is_floating_point()) {
      fail_at(&n, key, "expected an integer, got the float " + str(n.as_floating_point()->get()));
    }
    if (!n.is_integer()) fail_at(&n, key, std::string("expected an integer, got ") + type_name(n));
    return n.as_integer()->get();
  }

  std::int64_t integer(const toml::node& n, std::string_view key, std::int64_t lo, std::int64_t hi) const {
    const std::int64_t v = integer(n, key);
    if (v < lo || v > hi) {
      fail_at(
          &n, key,
          std::to_string(v) + " is out of range (" + std::to_string(lo) + " .. " + std::to_string(hi) + ")");
    }
    return v;
  }

  std::string string(const toml::node& n, std::string_view key) const {
    if (!n.is_string()) fail_at(&n, key, std::string("expected a string, got ") + type_name(n));
    return n.as_string()->get();
  }

  vec3 vector(const toml::node& n, std::string_view key) const {
    if (!n.is_array()) fail_at(&n, key, std::string("expected an array of 3 numbers, got ") + type_name(n));
    const toml::array& a = *n.as_array();
    if (a.size() != 3) {
      fail_at(&n, key, "expected an array of 3 numbers, got " + std::to_string(a.size()) + " elements");
    }
    float c[3];
    for (std::size_t i = 0; i < 3; ++i) {
      c[i] = static_cast<float>(number(a[i], std::string(key) + "[" + std::to_string(i) + "]"));
    }
    return {c[0], c[1], c[2]};
  }

  vec3 color(const toml::node& n, std::string_view key, float hi) const {
    const vec3 v = vector(n, key);
    for (int i = 0; i < 3; ++i) {
      if (v[i] < 0 || v[i] > hi) {
        fail_at(&n, key,
                str(v) + " is out of range (each component in 0 .. " + (hi > 1 ? "inf" : str(hi)) + ")");
      }
    }
    return v;
  }
};

// ------------------------------------------------------------------------------------------------
// Overrides: "key=value" applied to the document before it is read.

void apply_override(toml::table& doc, const std::string& text, reader& rd) {
  const auto eq = text.find('=');
  const std::string what = rd.file + ": override " + in_quotes(text) + ": ";
  if (eq == std::string::npos) fail(what + "expected key=value");
  std::string key(trim(std::string_view(text).substr(0, eq)));
  const std::string value(trim(std::string_view(text).substr(eq + 1)));
  if (key.empty()) fail(what + "empty key");

  // objects[0].scale -> objects.0.scale
  for (std::size_t p; (p = key.find('[')) != std::string::npos;) {
    const auto q = key.find(']', p);
    if (q == std::string::npos) fail(what + "unbalanced '[' in the key");
    key = key.substr(0, p) + "." + key.substr(p + 1, q - p - 1) + key.substr(q + 1);
  }
  std::vector<std::string> seg;
  for (std::size_t b = 0;;) {
    const auto e = key.find('.', b);
    seg.emplace_back(trim(std::string_view(key).substr(b, e == std::string::npos ? e : e - b)));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  const std::string unknown = what + "unknown key " + in_quotes(key);
  if (!contains(top_keys, seg[0])) fail(unknown + " (top-level keys: " + join(top_keys) + ")");

  // Parse the value as TOML; what is not TOML is a bare string.
  toml::table parsed;
  bool is_toml = false;
  try {
    const std::string doc_text = "v = " + value + "\n";
    parsed = toml::parse(std::string_view(doc_text), std::string_view("override"));
    is_toml = parsed.size() == 1 && parsed.contains("v");
  } catch (const toml::parse_error&) {
  }
  auto set = [&](toml::table& t, const std::string& k) {
    if (is_toml) {
      t.insert_or_assign(k, std::move(*parsed.get("v")));
    } else {
      t.insert_or_assign(k, value);
    }
  };

  if (seg[0] == "name") {
    if (seg.size() != 1) fail(unknown + " (name is a string)");
    set(doc, "name");
    rd.overridden["name"] = text;
    return;
  }
  const auto& keys = table_keys.at(seg[0]);
  if (!is_array_table(seg[0])) {
    if (seg.size() == 1)
      fail(what + "[" + seg[0] + "] is a table: override one of its keys (" + join(keys) + ")");
    if (seg.size() != 2 || !contains(keys, seg[1])) {
      fail(unknown + " ([" + seg[0] + "] takes: " + join(keys) + ")");
    }
    toml::node* t = doc.get(seg[0]);
    if (!t) t = doc.insert_or_assign(seg[0], toml::table{}).first->second.as_table();
    if (!t->is_table()) fail(what + seg[0] + " in the scene is not a table");
    toml::table& tbl = *t->as_table();
    if (seg[0] == "camera") {  // vfov and focal_length_mm + film_height_mm exclude each other
      if (seg[1] == "vfov") {
        tbl.erase("focal_length_mm");
        tbl.erase("film_height_mm");
      } else if (seg[1] == "focal_length_mm" || seg[1] == "film_height_mm") {
        tbl.erase("vfov");
      }
    }
    set(tbl, seg[1]);
    rd.overridden[seg[0] + "." + seg[1]] = text;
    return;
  }
  // objects.N.key, materials.N.key, lights.N.key
  if (seg.size() != 3 || !contains(keys, seg[2])) {
    fail(unknown + " (expected " + seg[0] + ".N.key, key one of: " + join(keys) + ")");
  }
  char* end = nullptr;
  errno = 0;
  const unsigned long long index = std::strtoull(seg[1].c_str(), &end, 10);
  if (seg[1].empty() || *end != '\0' || errno != 0 || seg[1][0] == '-') {
    fail(what + in_quotes(seg[1]) + " is not an index into [[" + seg[0] + "]]");
  }
  toml::node* arr = doc.get(seg[0]);
  const std::size_t count = arr && arr->is_array() ? arr->as_array()->size() : 0;
  if (index >= count) {
    fail(what + seg[0] + "[" + seg[1] + "] does not exist (the scene has " + std::to_string(count) + " [[" +
         seg[0] + "]])");
  }
  toml::node& entry = (*arr->as_array())[index];
  if (!entry.is_table()) fail(what + seg[0] + "[" + seg[1] + "] is not a table");
  set(*entry.as_table(), seg[2]);
  rd.overridden[seg[0] + "[" + seg[1] + "]." + seg[2]] = text;
}

// ------------------------------------------------------------------------------------------------
// Materials: one list for the scene, merged by name.

struct registry {
  std::vector<material> list;
  std::vector<std::string> origin;  // where each came from, for conflict messages
  std::unordered_map<std::string, std::uint32_t> by_name;  // the first material of each name

  std::optional<std::uint32_t> find(const std::string& name) const {
    const auto it = by_name.find(name);
    if (it == by_name.end()) return std::nullopt;
    return it->second;
  }

  // Appends `m` whatever its name (a light's or a procedural material); returns its index.
  std::uint32_t push(material m, std::string from) {
    const auto i = static_cast<std::uint32_t>(list.size());
    by_name.emplace(m.name, i);
    list.push_back(std::move(m));
    origin.push_back(std::move(from));
    return i;
  }

  static bool same(const material& a, const material& b) {
    auto eq = [](vec3 x, vec3 y) { return x.x == y.x && x.y == y.y && x.z == y.z; };
    return a.kind == b.kind && eq(a.albedo, b.albedo) && eq(a.emission, b.emission) && a.ior == b.ior;
  }

  // Adds `m`, or returns the material of that name when it is the same; a different material of the
  // same name is an error (names are how [[materials]] and `material =` refer to them).
  std::uint32_t add(const material& m, const std::string& from) {
    if (auto i = find(m.name)) {
      if (!same(list[*i], m)) {
        fail(from + ": material " + in_quotes(m.name) + " differs from the material of that name in " +
             origin[*i] + " (material names must be unique across a scene's MTL files)");
      }
      return *i;
    }
    return push(m, from);
  }

  std::uint32_t default_grey() {
    if (auto i = find("default")) return *i;
    material m;
    m.name = "default";
    m.kind = material_kind::diffuse;
    m.albedo = {0.8f, 0.8f, 0.8f};
    return add(m, "the default material");
  }
};

// The MTL mapping of scene.hpp / scenes/README.md.
material map_mtl(const tinyobj::material_t& m, const std::string& from) {
  auto v3 = [](const tinyobj::real_t* a) {
    return vec3{static_cast<float>(a[0]), static_cast<float>(a[1]), static_cast<float>(a[2])};
  };
  const std::string where = from + ": material " + in_quotes(m.name) + ": ";
  auto check = [&](vec3 c, const char* key, bool unit) {
    for (int i = 0; i < 3; ++i) {
      if (!std::isfinite(c[i]) || c[i] < 0 || (unit && c[i] > 1)) {
        fail(where + key + " " + str(c) + " is out of range (each component in 0 .. " + (unit ? "1" : "inf") +
             ")");
      }
    }
  };
  const vec3 kd = v3(m.diffuse), ks = v3(m.specular), tf = v3(m.transmittance), ke = v3(m.emission);
  check(kd, "Kd", true);
  check(ks, "Ks", true);
  check(tf, "Tf", true);
  check(ke, "Ke", false);
  if (!std::isfinite(m.dissolve) || m.dissolve < 0 || m.dissolve > 1) {
    fail(where + "d " + str(m.dissolve) + " is out of range (0 .. 1)");
  }
  if (!std::isfinite(m.ior) || m.ior < 0) fail(where + "Ni " + str(m.ior) + " is out of range (>= 0)");

  material out;
  out.name = m.name;
  out.emission = ke;
  out.ior = m.ior > 1 ? static_cast<float>(m.ior) : 1.5f;
  const bool dielectric = m.illum == 4 || m.illum == 6 || m.illum == 7 || m.dissolve < 1;
  const bool mirror = m.illum == 3 || m.illum == 5 || (max_component(ks) > 0 && max_component(kd) == 0);
  if (dielectric) {
    out.kind = material_kind::dielectric;
    out.albedo = max_component(tf) > 0 ? tf : max_component(ks) > 0 ? ks : vec3{1, 1, 1};
  } else if (mirror) {
    out.kind = material_kind::mirror;
    out.albedo = max_component(ks) > 0 ? ks : vec3{1, 1, 1};
  } else {
    out.kind = material_kind::diffuse;
    out.albedo = kd;
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// OBJ files.

// Faces with more vertices are refused before triangulation (tinyobjloader's ear clipping takes
// time quadratic in a face's vertex count).
constexpr std::size_t max_face_vertices = 256;

struct obj_options {
  bool strict = true;         // a missing MTL or an unknown usemtl is an error (TOML objects)
  bool use_materials = true;  // false: the object's `material =` replaces every face's
  std::string context;        // " (objects[0] in scene.toml)", appended to messages
  std::uint64_t max_triangles = std::numeric_limits<std::uint64_t>::max();  // room left in the scene
  std::string limit_text;     // how to name that limit in the message
  std::function<void(std::uint64_t)> admit;  // given the file's triangle count before it is parsed
};

std::vector<std::string_view> tokens(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t b = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > b) out.push_back(line.substr(b, i - b));
  }
  return out;
}

// `s` as a finite float, or nothing where it is not a number at all; `finite` says which.
std::optional<double> number_token(std::string_view s, bool& finite) {
  const std::string t(s);
  char* end = nullptr;
  const double d = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || *end != '\0') return std::nullopt;
  finite = std::isfinite(d) && std::isfinite(static_cast<float>(d));
  return d;
}

struct obj_scan {
  std::vector<std::pair<std::string, std::size_t>> mtllibs;  // the MTL files the OBJ names, with their lines
  std::uint64_t triangles = 0;                                // its faces' triangles
};

// What tinyobjloader does not check (it reads "nan" as 0 and keeps triangles that index past the
// vertex list): every vertex coordinate a finite number, every face index inside the vertex list,
// no face past max_face_vertices, the triangles counted against the limit as they are read.
obj_scan prescan_obj(std::istream& in, const std::string& file, const obj_options& opt) {
  obj_scan out;
  std::string line;
  std::size_t line_no = 0;
  long long vertices = 0, max_index = 0;
  std::size_t max_index_line = 0;
  auto at = [&](std::size_t l) { return file + ":" + std::to_string(l) + ": "; };
  while (next_line(in, line)) {
    ++line_no;
    const std::vector<std::string_view> tok = tokens(trim(line));
    if (tok.empty()) continue;
    if (tok[0] == "v") {
      ++vertices;
      if (tok.size() < 4) {
        fail(at(line_no) + "vertex " + std::to_string(vertices) + " has fewer than 3 coordinates" +
             opt.context);
      }
      for (std::size_t i = 1; i <= 3; ++i) {
        bool finite = false;
        if (!number_token(tok[i], finite)) {
          fail(at(line_no) + "vertex " + std::to_string(vertices) + ": coordinate " + in_quotes(tok[i]) +
               " is not a number" + opt.context);
        }
        if (!finite) {
          fail(at(line_no) + "vertex " + std::to_string(vertices) + " has a non-finite coordinate " +
               in_quotes(tok[i]) + opt.context);
        }
      }
    } else if (tok[0] == "f") {
      if (tok.size() < 4) fail(at(line_no) + "a face needs at least 3 vertices" + opt.context);
      if (tok.size() - 1 > max_face_vertices) {
        fail(at(line_no) + "a face of " + std::to_string(tok.size() - 1) + " vertices (at most " +
             std::to_string(max_face_vertices) + " are read; split the polygon)" + opt.context);
      }
      out.triangles += tok.size() - 3;
      if (out.triangles > opt.max_triangles) {
        fail(at(line_no) + "more than " + std::to_string(opt.max_triangles) + " triangles " + opt.limit_text +
             opt.context);
      }
      for (std::size_t i = 1; i < tok.size(); ++i) {
        const std::string s(tok[i].substr(0, tok[i].find('/')));
        char* end = nullptr;
        errno = 0;
        const long long idx = std::strtoll(s.c_str(), &end, 10);
        if (end == s.c_str() || *end != '\0' || errno != 0) {
          fail(at(line_no) + "face vertex " + in_quotes(tok[i]) + " is not a vertex index" + opt.context);
        }
        if (idx == 0) fail(at(line_no) + "face index 0 (OBJ indices start at 1)" + opt.context);
        if (idx < 0 && vertices + idx < 0) {
          fail(at(line_no) + "face index " + std::to_string(idx) + " reaches before the first vertex (" +
               std::to_string(vertices) + " vertices so far)" + opt.context);
        }
        if (idx > max_index) {
          max_index = idx;
          max_index_line = line_no;
        }
      }
    } else if (tok[0] == "mtllib") {
      for (std::size_t i = 1; i < tok.size(); ++i) out.mtllibs.emplace_back(std::string(tok[i]), line_no);
    }
  }
  if (max_index > vertices) {
    fail(at(max_index_line) + "face index " + std::to_string(max_index) + " is past the " +
         std::to_string(vertices) + " vertices of the file" + opt.context);
  }
  if (out.triangles == 0) {
    fail(file + ": no triangles: no face in its " + std::to_string(line_no) + " lines (" +
         std::to_string(vertices) + " vertices); is it an OBJ file?" + opt.context);
  }
  return out;
}

// What tinyobjloader does not check in an MTL file (it reads "nan" or a word as 0): every number a
// finite number, and d and Tr (which it folds into one dissolve) in 0 .. 1, named by their own key.
void prescan_mtl(std::istream& in, const std::string& file, const std::string& context) {
  static const std::vector<std::string_view> numeric = {"Ka", "Kd", "Ks", "Ke", "Tf", "Ni", "Ns", "d", "Tr"};
  std::string line;
  for (std::size_t line_no = 1; next_line(in, line); ++line_no) {
    const std::vector<std::string_view> tok = tokens(trim(line));
    if (tok.empty() || !contains(numeric, tok[0])) continue;
    const std::string at = file + ":" + std::to_string(line_no) + ": " + std::string(tok[0]) + " ";
    for (std::size_t i = 1; i < tok.size(); ++i) {
      if (tok[i] == "xyz" || tok[i] == "spectral") break;        // colour forms tinyobjloader skips
      if (tok[i].size() > 1 && tok[i][0] == '-' && std::isalpha(static_cast<unsigned char>(tok[i][1]))) {
        ++i;  // an option with its value (d -halo 0.5)
        continue;
      }
      bool finite = false;
      const std::optional<double> v = number_token(tok[i], finite);
      if (!v) fail(at + in_quotes(tok[i]) + " is not a number" + context);
      if (!finite) fail(at + in_quotes(tok[i]) + " is not a finite number" + context);
      if ((tok[0] == "d" || tok[0] == "Tr") && (*v < 0 || *v > 1)) fail(at + str(*v) + " is out of range (0 .. 1)" + context);
    }
  }
}

// tinyobjloader's MTL source: the files read as input_file, checked by prescan_mtl first. A missing
// file is reported the way tinyobjloader reports it (load_obj has named it already).
class mtl_reader : public tinyobj::MaterialReader {
 public:
  mtl_reader(fs::path dir, std::string context) : dir_(std::move(dir)), context_(std::move(context)) {}
  bool operator()(const std::string& name, std::vector<tinyobj::material_t>* materials,
                  std::map<std::string, int>* by_name, std::string* warn, std::string* err) override {
    const fs::path path = dir_ / name;
    if (name.empty() || !file_exists(path)) {
      if (warn) *warn += "Material file [ " + name + " ] not found\n";
      return false;
    }
    input_file f(path, "MTL file");
    prescan_mtl(f.stream(), path.string(), context_);
    tinyobj::LoadMtl(by_name, materials, &f.stream(), warn, err);
    return true;
  }

 private:
  fs::path dir_;
  std::string context_;
};

struct obj_mesh {
  std::vector<triangle> triangles;
  std::vector<std::uint32_t> material_of;  // into the registry; unset when !use_materials
  std::vector<fs::path> files;             // the OBJ and the MTL files found
};

obj_mesh load_obj(const fs::path& path, const obj_options& opt, registry& reg) {
  const std::string file = path.string();
  if (!file_exists(path)) fail(file + ": OBJ file not found" + opt.context);
  input_file obj(path, "OBJ file");
  const obj_scan scan = prescan_obj(obj.stream(), file, opt);
  if (opt.admit) opt.admit(scan.triangles);

  const fs::path dir = path.parent_path();
  std::string mtl_files;
  bool mtl_missing = false;
  for (const auto& [name, line] : scan.mtllibs) {
    const fs::path mtl = dir / name;
    mtl_files += (mtl_files.empty() ? "" : ", ") + mtl.string();
    if (!file_exists(mtl)) {
      mtl_missing = true;
      const std::string msg = file + ":" + std::to_string(line) + ": MTL file " + in_quotes(name) +
                              " not found (looked for " + mtl.string() + ")" + opt.context;
      if (opt.strict) fail(msg);
      if (opt.use_materials) print_warning(msg + "; using the grey default material");
    }
  }
  if (mtl_files.empty()) mtl_files = file + "'s MTL";

  tinyobj::attrib_t attrib;
  std::vector<tinyobj::shape_t> shapes;
  std::vector<tinyobj::material_t> mtl;
  std::string warn, err;
  mtl_reader mtl_source(dir, opt.context);
  const bool ok = tinyobj::LoadObj(&attrib, &shapes, &mtl, &warn, &err, &obj.stream(), &mtl_source, true);
  if (!ok || !trim(err).empty()) {
    fail(file + ": " + std::string(trim(err.empty() ? warn : err)) + opt.context);
  }
  // Warnings that matter are errors; the tolerated ones (a missing MTL for a bare .obj, an unknown
  // material where the object's `material =` replaces them anyway) go to stderr.
  {
    std::istringstream lines(warn);
    for (std::string w; std::getline(lines, w);) {
      const std::string_view t = trim(w);
      if (t.empty() || t == ".") continue;
      const bool missing_mtl = t.find("Material file [") != std::string_view::npos ||
                               t.find("Failed to load material file") != std::string_view::npos ||
                               t.find("empty filename for mtllib") != std::string_view::npos;
      const bool unknown_material = t.find("not found in .mtl") != std::string_view::npos;
      if (!opt.use_materials && (missing_mtl || unknown_material)) continue;
      if (!opt.strict && (missing_mtl || unknown_material)) {
        // A missing MTL was reported above, and explains the unknown materials.
        if (!mtl_missing) print_warning(file + ": " + std::string(t));
        continue;
      }
      fail(file + ": " + std::string(t) + opt.context);
    }
  }

  std::vector<material> mapped;
  std::unordered_map<std::string_view, std::size_t> first_of;  // tinyobjloader keeps the first of a name
  for (const auto& m : mtl) {
    mapped.push_back(map_mtl(m, mtl_files));
    const auto [it, fresh] = first_of.emplace(m.name, mapped.size() - 1);
    if (!fresh && !registry::same(mapped[it->second], mapped.back())) {
      fail(mtl_files + ": newmtl " + in_quotes(m.name) + " is defined twice, with different values" + opt.context);
    }
  }
  std::vector<std::optional<std::uint32_t>> reg_index(mtl.size());
  if (!opt.use_materials) {  // the object's `material =` may name one of its own MTL's materials
    for (std::size_t i = 0; i < mapped.size(); ++i) reg_index[i] = reg.add(mapped[i], mtl_files);
  }

  obj_mesh out;
  out.files.push_back(path);
  for (const auto& [name, line] : scan.mtllibs)
    if (file_exists(dir / name)) out.files.push_back(dir / name);
  const std::size_t nv = attrib.vertices.size() / 3;
  for (const auto& shape : shapes) {
    std::size_t offset = 0;
    for (std::size_t f = 0; f < shape.mesh.num_face_vertices.size(); ++f) {
      const std::size_t fv = shape.mesh.num_face_vertices[f];
      vec3 p[256];
      if (fv < 3 || fv > 256)
        fail(file + ": a face of " + in_quotes(shape.name) + " has " + std::to_string(fv) + " vertices" +
             opt.context);
      for (std::size_t j = 0; j < fv; ++j) {
        const int idx = shape.mesh.indices[offset + j].vertex_index;
        if (idx < 0 || static_cast<std::size_t>(idx) >= nv) {
          fail(file + ": a face of " + in_quotes(shape.name) + " refers to vertex " +
               std::to_string(idx + 1) + ", past the " + std::to_string(nv) + " vertices" + opt.context);
        }
        p[j] = {static_cast<float>(attrib.vertices[3 * idx]),
                static_cast<float>(attrib.vertices[3 * idx + 1]),
                static_cast<float>(attrib.vertices[3 * idx + 2])};
      }
      std::uint32_t mat = 0;
      if (opt.use_materials) {
        const int id = f < shape.mesh.material_ids.size() ? shape.mesh.material_ids[f] : -1;
        if (id < 0 || static_cast<std::size_t>(id) >= mapped.size()) {
          mat = reg.default_grey();
        } else {
          if (!reg_index[id]) reg_index[id] = reg.add(mapped[id], mtl_files);
          mat = *reg_index[id];
        }
      }
      for (std::size_t j = 1; j + 1 < fv; ++j) {  // a fan (tinyobjloader has triangulated already)
        out.triangles.push_back({p[0], p[j], p[j + 1]});
        out.material_of.push_back(mat);
      }
      offset += fv;
    }
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// The document.

struct material_entry {
  std::string name;
  const toml::node* node;
  std::string key;
  std::optional<material_kind> kind;
  std::optional<vec3> albedo, emission;
  std::optional<float> ior;
};

std::optional<material_kind> kind_of(std::string_view s) {
  if (s == "diffuse") return material_kind::diffuse;
  if (s == "mirror") return material_kind::mirror;
  if (s == "dielectric") return material_kind::dielectric;
  return std::nullopt;
}

const toml::array* array_of_tables(const toml::table& doc, std::string_view key, const reader& rd) {
  const toml::node* n = doc.get(key);
  if (!n) return nullptr;
  if (!n->is_array() || !n->as_array()->is_array_of_tables()) {
    rd.fail_at(
        n, key,
        std::string("expected an array of tables ([[") + std::string(key) + "]]), got " + type_name(*n));
  }
  return n->as_array();
}

scene read(const toml::table& doc, reader& rd, const fs::path& base_dir, bool obj_entry,
           std::string default_name) {
  scene sc;
  rd.known_keys(doc, "", top_keys, "the scene file");

  sc.name = std::move(default_name);
  if (const toml::node* n = doc.get("name")) sc.name = rd.string(*n, "name");

  // [camera]
  bool has_position = false, has_look_at = false;
  if (const toml::node* n = doc.get("camera")) {
    const toml::table& t = rd.table(*n, "camera");
    rd.known_keys(t, "camera.", table_keys.at("camera"), "[camera]");
    if (const toml::node* v = t.get("position"))
      sc.camera.position = rd.vector(*v, "camera.position"), has_position = true;
    if (const toml::node* v = t.get("look_at"))
      sc.camera.look_at = rd.vector(*v, "camera.look_at"), has_look_at = true;
    if (const toml::node* v = t.get("up")) sc.camera.up = rd.vector(*v, "camera.up");
    const toml::node* vfov = t.get("vfov");
    const toml::node* focal = t.get("focal_length_mm");
    const toml::node* film = t.get("film_height_mm");
    if (vfov && (focal || film)) {
      rd.fail_at(vfov, "camera.vfov", "give either vfov or focal_length_mm + film_height_mm, not both");
    }
    if (vfov) {
      const double d = rd.number(*vfov, "camera.vfov");
      if (!(d > 0 && d < 180))
        rd.fail_at(vfov, "camera.vfov", str(d) + " is out of range (0 < vfov < 180 degrees)");
      sc.camera.vfov_degrees = static_cast<float>(d);
    } else if (focal || film) {
      if (!focal || !film) {
        rd.fail_at(focal ? focal : film, focal ? "camera.focal_length_mm" : "camera.film_height_mm",
                   "focal_length_mm and film_height_mm go together");
      }
      const double f = rd.number(*focal, "camera.focal_length_mm");
      const double h = rd.number(*film, "camera.film_height_mm");
      if (!(f > 0)) rd.fail_at(focal, "camera.focal_length_mm", str(f) + " is out of range (> 0)");
      if (!(h > 0)) rd.fail_at(film, "camera.film_height_mm", str(h) + " is out of range (> 0)");
      sc.camera.vfov_degrees = static_cast<float>(2 * std::atan(h / 2 / f) * degrees);
    }
  }

  // [film]
  if (const toml::node* n = doc.get("film")) {
    const toml::table& t = rd.table(*n, "film");
    rd.known_keys(t, "film.", table_keys.at("film"), "[film]");
    const auto max_pixels = static_cast<std::int64_t>(rd.limits.max_pixels);
    if (const toml::node* v = t.get("width"))
      sc.film.width = static_cast<std::uint32_t>(rd.integer(*v, "film.width", 1, max_pixels));
    if (const toml::node* v = t.get("height"))
      sc.film.height = static_cast<std::uint32_t>(rd.integer(*v, "film.height", 1, max_pixels));
    if (std::uint64_t{sc.film.width} * sc.film.height > static_cast<std::uint64_t>(max_pixels)) {
      rd.fail_at(t.get("width") ? t.get("width") : t.get("height"), "film.width * film.height",
                 std::to_string(sc.film.width) + " x " + std::to_string(sc.film.height) +
                     " pixels is more than the limit of " + std::to_string(max_pixels) + " pixels");
    }
    if (const toml::node* v = t.get("spp"))
      sc.film.spp = static_cast<std::uint32_t>(rd.integer(*v, "film.spp", 1, std::int64_t{1} << 20));
    if (const toml::node* v = t.get("max_bounces"))
      sc.film.max_bounces = static_cast<std::uint32_t>(rd.integer(*v, "film.max_bounces", 0, 1024));
    if (const toml::node* v = t.get("seed"))
      sc.film.seed = static_cast<std::uint32_t>(rd.integer(*v, "film.seed", 0, 0xffffffffLL));
  }

  // [environment]
  if (const toml::node* n = doc.get("environment")) {
    const toml::table& t = rd.table(*n, "environment");
    rd.known_keys(t, "environment.", table_keys.at("environment"), "[environment]");
    if (const toml::node* v = t.get("color")) sc.environment = rd.color(*v, "environment.color", 1e30f);
  }

  // [compaction]
  if (const toml::node* n = doc.get("compaction")) {
    const toml::table& t = rd.table(*n, "compaction");
    rd.known_keys(t, "compaction.", table_keys.at("compaction"), "[compaction]");
    if (const toml::node* v = t.get("strategy")) {
      sc.compaction.strategy = rd.string(*v, "compaction.strategy");
      if (sc.compaction.strategy.empty()) rd.fail_at(v, "compaction.strategy", "empty strategy name");
    }
    if (const toml::node* v = t.get("reorder")) {
      const std::string name = rd.string(*v, "compaction.reorder");
      const auto key = find_mode<reorder_key>(name);
      if (!key) rd.fail_at(v, "compaction.reorder", in_quotes(name) + " is not one of " + mode_names_joined<reorder_key>());
      sc.compaction.reorder = *key;
    }
    if (const toml::node* v = t.get("sort")) {
      const std::string name = rd.string(*v, "compaction.sort");
      const auto sort = find_mode<sort_kind>(name);
      if (!sort) rd.fail_at(v, "compaction.sort", in_quotes(name) + " is not one of " + mode_names_joined<sort_kind>());
      sc.compaction.sort = *sort;
    }
  }

  const toml::array* objects = array_of_tables(doc, "objects", rd);
  const toml::array* materials = array_of_tables(doc, "materials", rd);
  const toml::array* lights = array_of_tables(doc, "lights", rd);
  if ((!objects || objects->empty()) && (!lights || lights->empty()) && !doc.get("procedural")) {
    fail(rd.file + ": nothing to render: the scene has no [[objects]], [[lights]] or [procedural]");
  }

  // [[materials]]: read now, applied after the objects' MTL materials are known.
  std::vector<material_entry> mat_entries;
  std::unordered_map<std::string, std::size_t> entry_of;  // name -> index into mat_entries
  if (materials) {
    for (std::size_t i = 0; i < materials->size(); ++i) {
      const std::string key = "materials[" + std::to_string(i) + "]";
      const toml::table& t = *(*materials)[i].as_table();
      rd.known_keys(t, key + ".", table_keys.at("materials"), "[[materials]]");
      material_entry e;
      e.node = &(*materials)[i];
      e.key = key;
      const toml::node* name = t.get("name");
      if (!name) rd.fail_at(e.node, key, "a material needs a name");
      e.name = rd.string(*name, key + ".name");
      if (e.name.empty()) rd.fail_at(name, key + ".name", "empty material name");
      if (const auto [it, fresh] = entry_of.emplace(e.name, mat_entries.size()); !fresh)
        rd.fail_at(name, key + ".name", in_quotes(e.name) + " is already defined by " + mat_entries[it->second].key);
      if (const toml::node* v = t.get("type")) {
        const std::string s = rd.string(*v, key + ".type");
        e.kind = kind_of(s);
        if (!e.kind)
          rd.fail_at(v, key + ".type", in_quotes(s) + " is not one of diffuse, mirror, dielectric");
      }
      if (const toml::node* v = t.get("albedo")) e.albedo = rd.color(*v, key + ".albedo", 1);
      if (const toml::node* v = t.get("emission")) e.emission = rd.color(*v, key + ".emission", 1e30f);
      if (const toml::node* v = t.get("ior")) {
        const double d = rd.number(*v, key + ".ior");
        if (!(d > 1)) rd.fail_at(v, key + ".ior", str(d) + " is out of range (> 1)");
        e.ior = static_cast<float>(d);
      }
      mat_entries.push_back(std::move(e));
    }
  }

  // [[objects]]
  registry reg;
  struct pending {
    std::size_t begin, end;
    std::string material;
    const toml::node* node;
    std::string key;
  };
  std::vector<pending> material_overrides;
  if (objects) {
    for (std::size_t i = 0; i < objects->size(); ++i) {
      const std::string key = "objects[" + std::to_string(i) + "]";
      const toml::table& t = *(*objects)[i].as_table();
      rd.known_keys(t, key + ".", table_keys.at("objects"), "[[objects]]");
      const toml::node* obj = t.get("obj");
      if (!obj) rd.fail_at(&(*objects)[i], key, "an object needs obj = \"path.obj\"");
      const std::string rel = rd.string(*obj, key + ".obj");
      const fs::path obj_path = base_dir / fs::path(rel);
      if (!file_exists(obj_path)) {
        rd.fail_at(obj, key + ".obj",
                   "OBJ file " + in_quotes(rel) + " not found (looked for " + obj_path.string() + ")");
      }
      vec3 translate{0, 0, 0}, scale{1, 1, 1};
      double rotate = 0;
      if (const toml::node* v = t.get("translate")) translate = rd.vector(*v, key + ".translate");
      if (const toml::node* v = t.get("scale")) {
        if (v->is_array()) {
          scale = rd.vector(*v, key + ".scale");
        } else {
          const float s = static_cast<float>(rd.number(*v, key + ".scale"));
          scale = {s, s, s};
        }
        if (scale.x == 0 || scale.y == 0 || scale.z == 0)
          rd.fail_at(v, key + ".scale", "a scale of 0 flattens the object");
      }
      if (const toml::node* v = t.get("rotate_y")) rotate = rd.number(*v, key + ".rotate_y");
      std::optional<std::string> material_name;
      if (const toml::node* v = t.get("material")) material_name = rd.string(*v, key + ".material");

      obj_options opt;
      opt.strict = !obj_entry;
      opt.use_materials = !material_name;
      if (!obj_entry) opt.context = " (" + key + " in " + rd.file + ")";
      const std::uint64_t before = sc.triangles.size(), limit = rd.limits.max_triangles;
      opt.max_triangles = limit > before ? limit - before : 0;
      opt.admit = [&](std::uint64_t count) { rd.check_memory(before + count, sc.film); };
      opt.limit_text = before == 0 ? "(the scene's limit)"
                                   : "(what is left of the scene's limit of " + std::to_string(limit) + " with " +
                                         std::to_string(before) + " before this object)";
      obj_mesh mesh = load_obj(obj_path, opt, reg);
      sc.files.insert(sc.files.end(), mesh.files.begin(), mesh.files.end());
      rd.check_triangles(sc.triangles.size() + mesh.triangles.size(), "with " + in_quotes(rel));

      const double c = std::cos(rotate / degrees), s = std::sin(rotate / degrees);
      auto xf = [&](vec3 p) {
        p = p * scale;
        p = {static_cast<float>(c * p.x + s * p.z), p.y, static_cast<float>(-s * p.x + c * p.z)};
        return p + translate;
      };
      const std::size_t begin = sc.triangles.size();
      for (std::size_t k = 0; k < mesh.triangles.size(); ++k) {
        const triangle& tri = mesh.triangles[k];
        const triangle out{xf(tri.v0), xf(tri.v1), xf(tri.v2)};
        if (!finite(out.v0) || !finite(out.v1) || !finite(out.v2)) {
          rd.fail_at(&(*objects)[i], key,
                     "the transformed vertices of " + in_quotes(rel) + " overflow a float");
        }
        sc.triangles.push_back(out);
        sc.material_of.push_back(material_name ? 0 : mesh.material_of[k]);
      }
      if (material_name) {
        material_overrides.push_back(
            {begin, sc.triangles.size(), *material_name, t.get("material"), key + ".material"});
      }
    }
  }

  // [[materials]] override MTL materials of the same name or add new ones.
  for (const auto& e : mat_entries) {
    std::optional<std::uint32_t> i = reg.find(e.name);
    if (!i) {
      material m;
      m.name = e.name;
      i = reg.push(m, e.key);
    }
    material& m = reg.list[*i];
    if (e.kind) m.kind = *e.kind;
    if (e.albedo) m.albedo = *e.albedo;
    if (e.emission) m.emission = *e.emission;
    if (e.ior) m.ior = *e.ior;
  }
  for (const auto& p : material_overrides) {
    const auto i = reg.find(p.material);
    if (!i) {
      std::vector<std::string_view> names;
      for (const auto& m : reg.list) names.push_back(m.name);
      rd.fail_at(p.node, p.key,
                 "no material named " + in_quotes(p.material) +
                     " (known: " + (names.empty() ? "none" : join(names)) + "; [[materials]] can define it)");
    }
    std::fill(sc.material_of.begin() + static_cast<std::ptrdiff_t>(p.begin),
              sc.material_of.begin() + static_cast<std::ptrdiff_t>(p.end), *i);
  }

  // [[lights]]
  if (lights) {
    for (std::size_t i = 0; i < lights->size(); ++i) {
      const std::string key = "lights[" + std::to_string(i) + "]";
      const toml::node* node = &(*lights)[i];
      const toml::table& t = *node->as_table();
      rd.known_keys(t, key + ".", table_keys.at("lights"), "[[lights]]");
      if (const toml::node* v = t.get("type")) {
        const std::string s = rd.string(*v, key + ".type");
        if (s != "quad") rd.fail_at(v, key + ".type", in_quotes(s) + " is not a light type (quad)");
      }
      auto need = [&](const char* k) -> const toml::node& {
        const toml::node* v = t.get(k);
        if (!v) rd.fail_at(node, key, std::string("a quad light needs ") + k);
        return *v;
      };
      const vec3 corner = rd.vector(need("corner"), key + ".corner");
      const vec3 e1 = rd.vector(need("edge1"), key + ".edge1");
      const vec3 e2 = rd.vector(need("edge2"), key + ".edge2");
      const vec3 emission = rd.color(need("emission"), key + ".emission", 1e30f);
      if (!(max_component(emission) > 0))
        rd.fail_at(t.get("emission"), key + ".emission", "a light needs an emission > 0");
      if (!(length(cross(e1, e2)) > 0)) rd.fail_at(node, key, "edge1 and edge2 span no area");
      material m;
      m.name = key;
      m.kind = material_kind::diffuse;
      m.albedo = {0, 0, 0};
      m.emission = emission;
      const std::uint32_t mi = reg.push(m, key);
      sc.triangles.push_back({corner, corner + e1, corner + e1 + e2});
      sc.triangles.push_back({corner, corner + e1 + e2, corner + e2});
      sc.material_of.push_back(mi);
      sc.material_of.push_back(mi);
    }
  }

  // [procedural]: generated geometry with its own materials (scene/procedural.hpp).
  if (const toml::node* n = doc.get("procedural")) {
    const toml::table& t = rd.table(*n, "procedural");
    rd.known_keys(t, "procedural.", table_keys.at("procedural"), "[procedural]");
    const toml::node* type_node = t.get("type");
    if (!type_node) rd.fail_at(n, "procedural", "needs a type (spheres or heightfield)");
    const std::string type = rd.string(*type_node, "procedural.type");
    auto integer = [&](const char* key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
      const toml::node* v = t.get(key);
      return v ? rd.integer(*v, std::string("procedural.") + key, lo, hi) : fallback;
    };
    scene proc;
    auto check_count = [&](std::uint64_t count) {
      rd.check_triangles(sc.triangles.size() + count, "with the procedural " + type);
      rd.check_memory(sc.triangles.size() + count, sc.film);
    };
    if (type == "spheres") {
      const auto spheres = static_cast<std::uint32_t>(integer("n", 32, 1, 256));
      const auto segments = static_cast<std::uint32_t>(integer("segments", 32, 4, 512));
      check_count(sphere_room_triangles(spheres, segments));
      add_sphere_room(proc, spheres, segments);
    } else if (type == "heightfield") {
      const auto grid = static_cast<std::uint32_t>(integer("grid", 2048, 2, 8192));
      check_count(heightfield_triangles(grid));
      const toml::node* h = t.get("height");
      const double height = h ? rd.number(*h, "procedural.height") : grid / 8.0;
      if (!(height >= 0 && height <= 1e6)) rd.fail_at(h, "procedural.height", str(height) + " is out of range (0 .. 1e6)");
      add_heightfield(proc, grid, static_cast<float>(height), static_cast<std::uint32_t>(integer("seed", 1, 0, 0xffffffffLL)));
    } else {
      rd.fail_at(type_node, "procedural.type", in_quotes(type) + " is not a procedural scene (spheres, heightfield)");
    }
    const auto base = static_cast<std::uint32_t>(reg.list.size());
    for (const material& m : proc.materials) reg.push(m, "procedural");
    sc.triangles.insert(sc.triangles.end(), proc.triangles.begin(), proc.triangles.end());
    for (const std::uint32_t m : proc.material_of) sc.material_of.push_back(base + m);
    if (!doc.get("camera")) sc.camera = proc.camera;
    if (!doc.get("environment")) sc.environment = proc.environment;
  }

  if (sc.triangles.empty()) fail(rd.file + ": the scene has no triangles");
  rd.check_triangles(sc.triangles.size(), "in all");

  // Keep the materials some triangle uses, in their order.
  std::vector<std::uint32_t> remap(reg.list.size(), ~0u);
  for (std::uint32_t m : sc.material_of) remap[m] = 0;
  for (std::size_t i = 0; i < reg.list.size(); ++i) {
    if (remap[i] == 0) {
      remap[i] = static_cast<std::uint32_t>(sc.materials.size());
      sc.materials.push_back(std::move(reg.list[i]));
    }
  }
  for (auto& m : sc.material_of) m = remap[m];
  for (std::size_t i = 0; i < sc.triangles.size(); ++i) {
    if (max_component(sc.materials[sc.material_of[i]].emission) > 0)
      sc.emissive.push_back(static_cast<std::uint32_t>(i));
  }

  // A bare OBJ: frame its bounding box from the -z side, looking along +z at its centre.
  if (obj_entry) {
    aabb box;
    for (const auto& t : sc.triangles) box.grow(t.v0), box.grow(t.v1), box.grow(t.v2);
    const vec3 c = box.center(), half = box.extent() * 0.5f;
    const double tan_v = std::tan(sc.camera.vfov_degrees / degrees / 2);
    const double tan_h = tan_v * sc.film.width / sc.film.height;
    double d = std::max(half.y / tan_v, half.x / tan_h);  // from the box's front face (z = lo.z)
    d = std::max(d * 1.05, 1e-3 * std::max(1.0, double(max_component(box.extent()))));  // a margin; never 0
    if (!has_look_at) sc.camera.look_at = c;
    if (!has_position) sc.camera.position = {c.x, c.y, static_cast<float>(box.lo.z - d)};
    if (!finite(sc.camera.look_at) || !finite(sc.camera.position)) {
      fail(rd.file + ": the mesh's bounding box " + str(box.lo) + " .. " + str(box.hi) +
           " is too large to frame: the camera's position overflows a float (give camera.position and look_at)");
    }
  }

  const vec3 dir = sc.camera.look_at - sc.camera.position;
  if (!finite(dir) || !std::isfinite(length(dir))) {
    fail(rd.where(doc.get("camera"), "camera") + ": position " + str(sc.camera.position) + " and look_at " +
         str(sc.camera.look_at) + " are too far apart: the view direction overflows a float");
  }
  if (!(length(dir) > 0)) fail(rd.where(doc.get("camera"), "camera") + ": position and look_at coincide");
  if (!(length(sc.camera.up) > 0) || !(length(cross(normalize(dir), normalize(sc.camera.up))) > 1e-6f)) {
    fail(rd.where(doc.get("camera"), "camera.up") + ": " + str(sc.camera.up) +
         " is zero or parallel to the view direction");
  }
  return sc;
}

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace

scene load_scene(const std::filesystem::path& path, const std::vector<std::string>& overrides,
                 const scene_limits& limits) {
  reader rd;
  rd.file = path.string();
  rd.limits = limits;
  if (!file_exists(path)) fail(rd.file + ": scene file not found");

  const std::string ext = lower(path.extension().string());
  toml::table doc;
  bool obj_entry = false;
  if (ext == ".toml") {
    try {
      const std::string text = input_file(path, "scene file").text();
      doc = toml::parse(std::string_view(text), rd.file);
    } catch (const toml::parse_error& e) {
      fail(rd.file + ":" + std::to_string(e.source().begin.line) + ":" +
           std::to_string(e.source().begin.column) + ": " + std::string(e.description()));
    }
  } else if (ext == ".obj") {
    input_file(path, "scene file");  // refuses what is not a regular file before anything else
    obj_entry = true;
    toml::table object;
    object.insert("obj", path.filename().string());
    doc.insert("objects", toml::array{std::move(object)});
    doc.insert("environment", toml::table{{"color", toml::array{1.0, 1.0, 1.0}}});
  } else {
    fail(rd.file + ": unknown scene file type " + in_quotes(path.extension().string()) +
         " (expected .toml or .obj)");
  }

  for (const auto& o : overrides) apply_override(doc, o, rd);
  scene sc = read(doc, rd, path.parent_path(), obj_entry, path.stem().string());
  if (!obj_entry) sc.files.insert(sc.files.begin(), path);  // an .obj is listed as the object
  return sc;
}

}  // namespace sieve::render
