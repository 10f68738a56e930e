// A glTF file's container, JSON, buffers and images, read by sieve (gltf_source.hpp).
#include "gltf_source.hpp"

#include "input_file.hpp"

#include <sieve/compaction/error.hpp>

#include <tiny_gltf.h>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace sieve::render::detail {

namespace fs = std::filesystem;

namespace {

// No file is larger (tinygltf takes the JSON's length as a 32-bit size).
constexpr std::uint64_t max_file_bytes = (std::uint64_t{1} << 31) - 1;

std::string idx(const char* array, std::size_t i) { return std::string(array) + "[" + std::to_string(i) + "]"; }

std::uint32_t u32_at(const std::vector<unsigned char>& b, std::size_t at) {
  std::uint32_t v = 0;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// True where `inner` is `outer` or below it (both absolute and normal).
bool is_within(const fs::path& outer, const fs::path& inner) {
  auto o = outer.begin(), i = inner.begin();
  for (; o != outer.end(); ++o, ++i) {
    if (o->empty()) continue;  // a trailing separator
    if (i == inner.end() || *o != *i) return false;
  }
  return true;
}

// A SAX handler that only follows the nesting of arrays and objects, stopping past the limit.
struct depth_probe : nlohmann::json_sax<nlohmann::json> {
  int depth = 0;
  bool open() { return ++depth <= max_gltf_json_depth; }
  bool close() { return --depth, true; }
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return open(); }
  bool key(string_t&) override { return true; }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
};

// A buffer that EXT_meshopt_compression (or KHR_meshopt_compression) marks as a fallback: it may
// have no uri, its views being decoded from another buffer.
bool meshopt_fallback(const nlohmann::json& buffer) {
  const auto ext = buffer.find("extensions");
  if (ext == buffer.end() || !ext->is_object()) return false;
  for (const char* name : {"EXT_meshopt_compression", "KHR_meshopt_compression"}) {
    const auto e = ext->find(name);
    if (e != ext->end() && e->is_object() && e->value("fallback", nlohmann::json(false)) == true) return true;
  }
  return false;
}

// A Draco-compressed primitive's index accessor has no bufferView until decoded, which tinygltf
// refuses: its number moves into the extension object (as "indices"), where the decoder
// (gltf_draco.cpp) takes it. One that has a bufferView (uncompressed fallback data) stays.
void move_draco_indices(nlohmann::json& doc) {
  const auto meshes = doc.find("meshes"), accessors = doc.find("accessors");
  if (meshes == doc.end() || !meshes->is_array() || accessors == doc.end() || !accessors->is_array()) return;
  for (nlohmann::json& mesh : *meshes) {
    if (!mesh.is_object() || !mesh.contains("primitives") || !mesh["primitives"].is_array()) continue;
    for (nlohmann::json& p : mesh["primitives"]) {
      if (!p.is_object() || !p.contains("indices") || !p["indices"].is_number_unsigned() || !p.contains("extensions")) continue;
      nlohmann::json& ext = p["extensions"];
      if (!ext.is_object() || !ext.contains("KHR_draco_mesh_compression") || !ext["KHR_draco_mesh_compression"].is_object())
        continue;
      const auto a = p["indices"].get<std::uint64_t>();
      if (a >= accessors->size() || !(*accessors)[a].is_object() || (*accessors)[a].contains("bufferView")) continue;
      ext["KHR_draco_mesh_compression"]["indices"] = p["indices"];
      p.erase("indices");
    }
  }
}

// The first `extensions` or `extras` below `j` (at `where`) whose value is of the wrong type: an
// extensions value that is not an object (tinygltf skips it, and every extension in it, silently).
// Returns its path, or empty. The JSON's depth is already bounded (max_gltf_json_depth).
std::string misplaced_extensions(const nlohmann::json& j, const std::string& where) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      const std::string at = where.empty() ? key : where + "." + key;
      if (key == "extensions" && !value.is_object()) return at;
      if (std::string found = misplaced_extensions(value, at); !found.empty()) return found;
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i)
      if (std::string found = misplaced_extensions(j[i], where + "[" + std::to_string(i) + "]"); !found.empty()) return found;
  }
  return {};
}

}  // namespace

resolved_uri resolve_gltf_uri(const fs::path& folder, const std::string& uri) {
  const std::size_t colon = uri.find(':'), slash = uri.find('/');
  if (colon != std::string::npos && (slash == std::string::npos || colon < slash))
    return {{}, "has a scheme (sieve reads data: URIs and paths relative to the glTF file's folder)"};
  std::string path;
  for (std::size_t i = 0; i < uri.size(); ++i) {
    if (uri[i] != '%') {
      path += uri[i];
      continue;
    }
    const int hi = i + 2 < uri.size() ? hex_digit(uri[i + 1]) : -1, lo = hi >= 0 ? hex_digit(uri[i + 2]) : -1;
    if (lo < 0) return {{}, "holds a '%' that is not followed by two hexadecimal digits"};
    path += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  if (path.empty()) return {{}, "is empty"};
  if (path.find('\0') != std::string::npos) return {{}, "holds a NUL byte"};
  if (path.front() == '/') return {{}, "is an absolute path (URIs are relative to the glTF file's folder)"};
  const fs::path rel = fs::path(path).lexically_normal();
  if (rel.empty() || *rel.begin() == ".." || rel == ".")
    return {{}, "leaves the glTF file's folder (URIs name files in it or below it)"};
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(folder, ec);
  const fs::path where = ec ? fs::path{} : fs::weakly_canonical(folder / rel, ec);
  if (ec || !is_within(base, where))
    return {{}, "leads out of the glTF file's folder through a symbolic link (URIs name files in it or below it)"};
  return {folder / rel, {}, rel};
}

gltf_source::~gltf_source() {
  if (folder_fd_ >= 0) ::close(folder_fd_);
}

void gltf_source::error(const std::string& where, const std::string& what) const {
  fail(file_ + ": " + (where.empty() ? "" : where + ": ") + what + context_);
}

gltf_source::gltf_source(const fs::path& path, std::string context) : file_(path.string()), context_(std::move(context)) {
  if (!file_exists(path)) fail(file_ + ": glTF file not found" + context_);
  std::vector<unsigned char> bytes = input_file(path, "glTF file").bytes(max_file_bytes);
  files_.push_back(path);
  taken_ = bytes.size();
  std::error_code ec;
  const fs::path abs = fs::absolute(path, ec);
  folder_ = (ec ? path : abs).parent_path();
  folder_fd_ = ::open(folder_.empty() ? "." : folder_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (folder_fd_ < 0) fail(file_ + ": cannot open the glTF file's folder: " + std::strerror(errno) + context_);
  std::string text;
  binary_ = bytes.size() >= 4 && std::memcmp(bytes.data(), "glTF", 4) == 0;
  if (binary_) {
    read_glb(bytes, text);
  } else {
    text.assign(bytes.begin(), bytes.end());
  }
  bytes = {};
  read_json(text);
}

// The GLB container: a 12-byte header ("glTF", version 2, the file's length), a JSON chunk, then
// chunks of which the first BIN one is the binary buffer (others are skipped). Every length is
// checked against the bytes that follow it.
void gltf_source::read_glb(std::vector<unsigned char>& bytes, std::string& json_text) {
  const std::uint64_t size = bytes.size();
  if (size < 20) error("", "a GLB file of " + std::to_string(size) + " bytes (its header and first chunk header take 20)");
  if (const std::uint32_t v = u32_at(bytes, 4); v != 2) error("", "GLB version " + std::to_string(v) + " (sieve reads 2)");
  if (const std::uint32_t length = u32_at(bytes, 8); length != size)
    error("", "the GLB header gives a length of " + std::to_string(length) + " bytes, the file holds " + std::to_string(size));
  std::uint64_t at = 12;
  bool first = true, have_bin = false;
  while (at < size) {
    if (size - at < 8) error("", "a GLB chunk header at byte " + std::to_string(at) + " is cut off by the end of the file");
    const std::uint64_t length = u32_at(bytes, at);
    const std::uint32_t type = u32_at(bytes, at + 4);
    const bool json = type == 0x4E4F534Au, bin = type == 0x004E4942u;
    const std::string name = json ? "JSON" : bin ? "BIN" : "unknown";
    if (length > size - at - 8) {
      error("", "the GLB " + name + " chunk at byte " + std::to_string(at) + " claims " + std::to_string(length) +
                    " bytes, the file holds " + std::to_string(size - at - 8) + " after its header");
    }
    const auto* data = bytes.data() + at + 8;
    if (first && !json) error("", "the first GLB chunk is not JSON");
    if (first) json_text.assign(reinterpret_cast<const char*>(data), length);
    if (!first && bin && !have_bin) bin_.assign(data, data + length), have_bin = true;
    first = false;
    at += 8 + length;
  }
}

// The JSON: parsed with its depth limited (a deeper file is refused before any recursion), the
// counts and offsets tinygltf would read leniently (a negative byteOffset as 0) checked, buffers
// and images taken out for sieve to read.
void gltf_source::read_json(const std::string& text) {
  using json = nlohmann::json;
  // First its depth, by a SAX pass that builds nothing (the parser itself is iterative).
  depth_probe probe;
  if (!json::sax_parse(text, &probe, json::input_format_t::json, false) && probe.depth > max_gltf_json_depth)
    error("", "the JSON nests arrays and objects deeper than " + std::to_string(max_gltf_json_depth) + " levels");
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    error("", std::string("not a glTF file: ") + e.what());
  }
  if (!doc.is_object()) error("", "not a glTF file: the JSON is not an object");
  auto array = [&](const char* key) -> json* {
    const auto it = doc.find(key);
    if (it == doc.end()) return nullptr;
    if (!it->is_array()) error(key, "not an array");
    return &*it;
  };
  auto each_object = [&](const char* key, auto&& f) {
    if (json* a = array(key))
      for (std::size_t i = 0; i < a->size(); ++i) {
        if (!(*a)[i].is_object()) error(idx(key, i), "not an object");
        f((*a)[i], idx(key, i));
      }
  };
  auto count = [&](const json& o, const std::string& where, const char* key) -> std::optional<std::uint64_t> {
    const auto it = o.find(key);
    if (it == o.end()) return std::nullopt;
    if (!it->is_number_unsigned()) error(where, std::string(key) + " " + it->dump() + " is not a non-negative integer");
    return it->get<std::uint64_t>();
  };
  auto string = [&](const json& o, const std::string& where, const char* key) -> std::string {
    const auto it = o.find(key);
    if (it == o.end()) return {};
    if (!it->is_string()) error(where, std::string(key) + " is not a string");
    return it->get<std::string>();
  };
  // Values tinygltf would replace by their defaults without a word where their type is wrong.
  if (const std::string at = misplaced_extensions(doc, ""); !at.empty()) error(at, "is not an object");
  auto shown = [](const json& v) {  // a value in a message, cut short
    const std::string text = v.dump();
    return text.size() > 40 ? text.substr(0, 40) + "..." : text;
  };
  each_object("materials", [&](const json& m, const std::string& where) {
    if (const auto it = m.find("alphaCutoff"); it != m.end() && !(it->is_number() && it->get<double>() >= 0))
      error(where, "alphaCutoff " + shown(*it) + " is not a number >= 0");
    if (const auto it = m.find("alphaMode"); it != m.end() && !(it->is_string() && (*it == "OPAQUE" || *it == "MASK" || *it == "BLEND")))
      error(where, "alphaMode " + shown(*it) + " is not \"OPAQUE\", \"MASK\" or \"BLEND\"");
    if (const auto it = m.find("doubleSided"); it != m.end() && !it->is_boolean())
      error(where, "doubleSided " + shown(*it) + " is not true or false");
  });
  each_object("bufferViews", [&](const json& v, const std::string& where) {
    for (const char* key : {"buffer", "byteOffset", "byteLength", "byteStride"}) count(v, where, key);
  });
  each_object("accessors", [&](const json& a, const std::string& where) {
    for (const char* key : {"bufferView", "byteOffset", "count"}) count(a, where, key);
  });
  each_object("buffers", [&](const json& b, const std::string& where) {
    buffer_entry e;
    const auto length = count(b, where, "byteLength");
    if (!length || *length == 0) error(where, "byteLength is missing or 0 (a buffer holds at least 1 byte)");
    e.byte_length = *length;
    e.uri = string(b, where, "uri");
    e.fallback = e.uri.empty() && meshopt_fallback(b);
    if (e.uri.empty() && !e.fallback) {
      if (!binary_ || !buffers_.empty()) error(where, "no uri (only the first buffer of a GLB file has its data in the file)");
      if (e.byte_length > bin_.size()) {
        error(where, "byteLength " + std::to_string(e.byte_length) + " is more than the " + std::to_string(bin_.size()) +
                         " bytes of the GLB's BIN chunk" + (bin_.empty() ? " (there is none)" : ""));
      }
    }
    buffers_.push_back(std::move(e));
  });
  each_object("images", [&](const json& im, const std::string& where) {
    image_entry e;
    e.uri = string(im, where, "uri");
    if (const auto v = count(im, where, "bufferView")) e.buffer_view = static_cast<std::int64_t>(std::min<std::uint64_t>(*v, INT64_MAX));
    if (e.uri.empty() == (e.buffer_view < 0)) error(where, "needs either a uri or a bufferView");
    images_.push_back(std::move(e));
  });
  move_draco_indices(doc);
  doc.erase("buffers");
  doc.erase("images");
  json_ = doc.dump();
}

void gltf_source::take(std::uint64_t bytes, const std::string& where) {
  if (bytes > gltf_byte_budget - taken_) {
    error(where, std::to_string(bytes) + " more bytes would take what the glTF file reads past " +
                     std::to_string(gltf_byte_budget >> 30) + " GiB (" + std::to_string(taken_) + " read so far)");
  }
  taken_ += bytes;
}

std::optional<std::vector<unsigned char>> gltf_source::read_uri(const std::string& uri, const std::string& where,
                                                                std::uint64_t max_bytes, bool may_be_missing) {
  if (uri.rfind("data:", 0) == 0) {
    std::vector<unsigned char> out;
    std::string mime;
    if (!tinygltf::IsDataURI(uri) || !tinygltf::DecodeDataURI(&out, mime, uri, 0, false))
      error(where, "a data: URI that is not base64 data of a type glTF allows, or is empty");
    return out;  // its bytes were counted with the file's
  }
  const resolved_uri r = resolve_gltf_uri(folder_, uri);
  if (!r.error.empty()) error(where, "uri " + in_quotes(uri) + " " + r.error);
  // Opened once, below the folder's descriptor: what was checked above is what is read.
  const int fd = open_beneath(folder_fd_, r.relative);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT && may_be_missing) return std::nullopt;
    if (e == ENOENT) error(where, "file " + in_quotes(r.path.string()) + " not found");
    if (e == EXDEV || e == ELOOP) {
      error(where, "uri " + in_quotes(uri) +
                       " leads out of the glTF file's folder through a symbolic link (URIs name files in it or below it)");
    }
    error(where, "cannot open the file " + in_quotes(r.path.string()) + " the glTF file names: " + std::strerror(e));
  }
  std::optional<input_file> opened;
  try {
    opened.emplace(fd, r.path, "file the glTF file names");
  } catch (const sieve::error& e) {
    error(where, e.what());
  }
  input_file& f = *opened;
  if (f.size() == 0) error(where, "file " + in_quotes(r.path.string()) + " is empty");
  if (max_bytes != 0 && f.size() != max_bytes) {
    error(where, "file " + in_quotes(r.path.string()) + " holds " + std::to_string(f.size()) + " bytes, byteLength says " +
                     std::to_string(max_bytes));
  }
  take(f.size(), where);
  std::vector<unsigned char> bytes = f.bytes(f.size());
  files_.push_back(r.path);
  return bytes;
}

const std::vector<unsigned char>& gltf_source::buffer(std::size_t i) {
  buffer_entry& b = buffers_.at(i);
  if (b.bytes) return *b.bytes;
  const std::string where = idx("buffers", i);
  if (b.fallback) {
    error(where, "holds no data (a meshopt fallback buffer) but a view that is not meshopt-compressed reads it");
  }
  if (b.uri.empty()) {
    bin_.resize(b.byte_length);  // the chunk may hold up to 3 bytes of padding
    b.bytes = std::move(bin_);
    return *b.bytes;
  }
  std::vector<unsigned char> bytes = *read_uri(b.uri, where, b.byte_length, false);
  if (bytes.size() != b.byte_length) {
    error(where, "its data: URI holds " + std::to_string(bytes.size()) + " bytes, byteLength says " +
                     std::to_string(b.byte_length));
  }
  b.bytes = std::move(bytes);
  return *b.bytes;
}

std::size_t gltf_source::add_buffer(std::vector<unsigned char> bytes) {
  buffer_entry e;
  e.byte_length = bytes.size();
  e.uri = "<decoded>";
  e.bytes = std::move(bytes);
  buffers_.push_back(std::move(e));
  return buffers_.size() - 1;
}

gltf_source::image gltf_source::read_image(std::size_t i, const std::vector<view_span>& views) {
  const image_entry& e = images_.at(i);
  const std::string where = idx("images", i);
  image out;
  out.name = file_ + ": " + where;
  if (e.buffer_view >= 0) {
    const auto v = static_cast<std::uint64_t>(e.buffer_view);
    if (v >= views.size())
      error(where, "bufferView " + std::to_string(v) + " does not exist (the file has " + std::to_string(views.size()) + ")");
    const view_span& s = views[v];
    const std::string vwhere = idx("bufferViews", v);
    if (s.buffer >= buffers_.size()) error(vwhere, "buffer does not name an existing buffer");
    const std::vector<unsigned char>& data = buffer(s.buffer);
    if (s.offset > data.size() || s.length > data.size() - s.offset) {
      error(vwhere, "bytes " + std::to_string(s.offset) + " + " + std::to_string(s.length) + " reach past the " +
                        std::to_string(data.size()) + " bytes of " + idx("buffers", s.buffer));
    }
    take(s.length, where);
    out.bytes.assign(data.begin() + static_cast<std::ptrdiff_t>(s.offset),
                     data.begin() + static_cast<std::ptrdiff_t>(s.offset + s.length));
    return out;
  }
  std::optional<std::vector<unsigned char>> bytes = read_uri(e.uri, where, 0, true);
  if (e.uri.rfind("data:", 0) != 0) out.name = resolve_gltf_uri(folder_, e.uri).path.string();
  out.missing = !bytes;
  if (bytes) out.bytes = std::move(*bytes);
  return out;
}

}  // namespace sieve::render::detail
