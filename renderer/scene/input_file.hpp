// Reading users' files safely (scene, OBJ, MTL, images): errors as sieve::error with the file named
// and control characters escaped, only regular files opened, reads bounded by the size at opening.
// Internal to the loader (renderer/scene/*.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <istream>
#include <memory>
#include <span>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

namespace sieve::render::detail {

// `s` with its control characters (bytes below 0x20, and 0x7f) written as \xNN: what comes from an
// input file reaches the terminal as text, never as a line break or an escape sequence.
std::string printable(std::string_view s);

// Throws sieve::error(printable(message)).
[[noreturn]] void fail(const std::string& message);

// "sieve: warning: <message>" on stderr.
void print_warning(const std::string& message);

// fs::exists without the exception it throws where the OS rejects the path. Only a path that names
// nothing is missing; any other error (a name past 255 bytes, a symbolic link loop, a folder that
// may not be searched) is left for input_file to report with the system's reason.
bool file_exists(const std::filesystem::path& p);

// An input file open for reading. Only a regular file is read: a directory, FIFO, device or socket
// is refused before a byte is read (it is opened without blocking, so a FIFO with no writer cannot
// hang the load, and /dev/zero cannot grow a line until memory runs out), and no read goes past the
// size the file had when it was opened. stream() reads it from the start. `what` names the kind of
// file in messages ("scene file", "OBJ file", "texture").
class input_file {
 public:
  input_file(const std::filesystem::path& path, const std::string& what);
  // The file already open as `fd` (taken over: closed by this object, also where it throws),
  // checked as above; `path` names it in messages.
  input_file(int fd, const std::filesystem::path& path, const std::string& what);
  ~input_file();
  input_file(const input_file&) = delete;
  input_file& operator=(const input_file&) = delete;

  std::uint64_t size() const { return size_; }
  // The whole file, at most max_bytes of it (a larger file is an error naming both sizes).
  std::vector<unsigned char> bytes(std::uint64_t max_bytes);
  // Bytes [offset, offset + n) (n == 0: to the end) read by every thread at once (pread in fixed
  // chunks, into memory never zeroed); fewer where the file ends first or shrank since it was
  // opened (never past its size at opening). A read error is an error naming the file.
  struct block {
    std::unique_ptr<unsigned char[]> data;
    std::size_t size = 0;
    std::span<const unsigned char> bytes() const { return {data.get(), size}; }
  };
  block read_parallel(std::uint64_t offset, std::uint64_t n = 0);
  std::istream& stream();

 private:
  void check_opened();
  struct bounded_buf : std::streambuf {
    int fd = -1;
    std::uint64_t left = 0;  // bytes still to be read
    char data[1 << 16];
    void restart(int file, std::uint64_t bytes);
    int_type underflow() override;
  };
  std::string path_;
  std::string what_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  bounded_buf buf_;
  std::istream in_{&buf_};
};

// Opens `relative` (a relative path without "." or ".." components) for reading below the folder
// open as `folder_fd`, in one step that never leaves it, so that what is checked is what is read (no
// window between a check and an open for a swapped symbolic link): openat2 with RESOLVE_BENEATH (a
// symbolic link may lead elsewhere inside the folder, never out of it); where the kernel has no
// openat2, every component opened from its parent's descriptor with O_NOFOLLOW (no symbolic link
// followed). Returns the descriptor (O_NONBLOCK, as input_file opens), or -1 with errno: ENOENT
// where nothing is there, EXDEV or ELOOP where the path leads out of the folder.
int open_beneath(int folder_fd, const std::filesystem::path& relative);

// The next line of `in`, ended by LF, CR or CR LF (as tinyobjloader reads them); false at the end.
// A line longer than max_line_bytes is an error naming `file` and `line_no` (read no further).
constexpr std::size_t max_line_bytes = std::size_t{16} << 20;
bool next_line(std::istream& in, std::string& line, const std::string& file, std::size_t line_no);

// The largest scene (TOML) file read.
constexpr std::uint64_t max_scene_file_bytes = std::uint64_t{64} << 20;

// Small text helpers for messages.
std::string in_quotes(std::string_view s);
std::string str(double v);  // 9 significant digits
std::string join(const std::vector<std::string_view>& items);
std::string_view trim(std::string_view s);

}  // namespace sieve::render::detail
