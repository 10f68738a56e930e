// What a glTF file is made of before tinygltf sees it, read and checked by sieve: the file itself
// (bounded), the GLB container (header and every chunk length checked against the file), the JSON
// (nesting depth limited, the integers tinygltf would read leniently checked), and the buffers and
// images, which sieve reads itself: only those the scene uses, the first time they are asked for,
// all within one byte budget, their URIs percent-decoded and confined to the glTF file's folder.
// Internal to the glTF reader (renderer/scene/gltf.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace sieve::render::detail {

// Deepest nesting of JSON arrays and objects a glTF file may have (glTF itself needs about 8; the
// rest is room for extras and extensions).
constexpr int max_gltf_json_depth = 64;
// Bytes a glTF file may read in all: the file, the buffers and the images it uses.
constexpr std::uint64_t gltf_byte_budget = std::uint64_t{4} << 30;

class gltf_source {
 public:
  // Reads and checks `path`; `context` is appended to every message. Throws sieve::error naming the
  // file (and the element at fault).
  gltf_source(const std::filesystem::path& path, std::string context);
  ~gltf_source();
  gltf_source(const gltf_source&) = delete;
  gltf_source& operator=(const gltf_source&) = delete;

  const std::string& file() const { return file_; }
  // The JSON for tinygltf: the file's, without its `buffers` and `images` (sieve reads those).
  const std::string& json() const { return json_; }
  std::size_t buffer_count() const { return buffers_.size(); }
  std::size_t image_count() const { return images_.size(); }

  // The bytes of buffers[i] (exactly its byteLength), read the first time they are asked for. A
  // meshopt fallback buffer (no uri, EXT_/KHR_meshopt_compression's `fallback`) has none: an error.
  const std::vector<unsigned char>& buffer(std::size_t i);
  // Decoded geometry (gltf_decode.hpp) added as one more buffer, its index returned; its size is
  // taken from the byte budget by reserve() before it is made.
  std::size_t add_buffer(std::vector<unsigned char> bytes);
  // `bytes` more taken from the byte budget, or an error at `where` past it.
  void reserve(std::uint64_t bytes, const std::string& where) { take(bytes, where); }

  struct image {
    std::string name;  // the file it is in, or "<gltf file>: images[i]" for one inside the glTF
    std::vector<unsigned char> bytes;
    bool missing = false;  // an external file that does not exist
  };
  // images[i], read now. `view` gives a buffer view's (buffer, byteOffset, byteLength).
  struct view_span {
    std::size_t buffer;
    std::uint64_t offset, length;
  };
  image read_image(std::size_t i, const std::vector<view_span>& views);

  // Every file read so far: the glTF file, then its buffers and images in the order read.
  const std::vector<std::filesystem::path>& files() const { return files_; }

 private:
  struct buffer_entry {
    std::uint64_t byte_length = 0;
    std::string uri;  // empty: the GLB's BIN chunk (or, with `fallback`, no data at all)
    bool fallback = false;  // a meshopt fallback buffer without a uri: its views are decoded, never read
    std::optional<std::vector<unsigned char>> bytes;
  };
  struct image_entry {
    std::string uri;
    std::int64_t buffer_view = -1;
  };
  [[noreturn]] void error(const std::string& where, const std::string& what) const;
  void read_glb(std::vector<unsigned char>& bytes, std::string& json_text);
  void read_json(const std::string& text);
  // The bytes a URI names (a data: URI decoded, else a file in the glTF's folder or below);
  // nothing where the file does not exist and `may_be_missing`.
  std::optional<std::vector<unsigned char>> read_uri(const std::string& uri, const std::string& where,
                                                     std::uint64_t max_bytes, bool may_be_missing);
  void take(std::uint64_t bytes, const std::string& where);

  std::string file_;
  std::string context_;
  std::filesystem::path folder_;  // the glTF file's folder
  int folder_fd_ = -1;            // ... open (O_PATH): every URI is opened below it (open_beneath)
  std::string json_;
  std::vector<unsigned char> bin_;  // a GLB's BIN chunk
  bool binary_ = false;
  std::vector<buffer_entry> buffers_;
  std::vector<image_entry> images_;
  std::uint64_t taken_ = 0;  // bytes read so far, of gltf_byte_budget
  std::vector<std::filesystem::path> files_;
};

// `uri` percent-decoded and resolved under `folder`: the file it names, or an error message (an
// absolute path, a scheme, a NUL, or a path that leaves the folder, lexically or through a link as
// the folder stands now). The file is then opened by open_beneath (input_file.hpp), which checks
// again what it opens: a link swapped in after this check is not followed out of the folder.
struct resolved_uri {
  std::filesystem::path path;
  std::string error;
  std::filesystem::path relative;  // the path below `folder` (what is opened, from the folder's descriptor)
};
resolved_uri resolve_gltf_uri(const std::filesystem::path& folder, const std::string& uri);

}  // namespace sieve::render::detail
