// Reading users' files safely (input_file.hpp).
#include "input_file.hpp"

#include <report.hpp>

#include <sieve/compaction/error.hpp>

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <tbb/parallel_for.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <iterator>
#include <sstream>

namespace sieve::render::detail {

namespace fs = std::filesystem;

std::string printable(std::string_view s) { return report::printable(s); }

void fail(const std::string& message) { throw sieve::error(printable(message)); }

void print_warning(const std::string& message) { std::cerr << "sieve: warning: " << printable(message) << "\n"; }

bool file_exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec) || (ec && ec != std::errc::no_such_file_or_directory);
}

namespace {

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

input_file::input_file(const fs::path& path, const std::string& what) : path_(path.string()), what_(what) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    const int e = errno;
    if (e == ENOENT) fail(path_ + ": " + what + " not found");
    fail(path_ + ": cannot open the " + what + ": " + std::strerror(e));
  }
  check_opened();
}

input_file::input_file(int fd, const fs::path& path, const std::string& what) : path_(path.string()), what_(what), fd_(fd) {
  check_opened();
}

void input_file::check_opened() {
  const std::string& what = what_;
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int e = errno;
    ::close(fd_);
    fd_ = -1;
    fail(path_ + ": cannot read the " + what + ": " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    fail(path_ + ": the " + what + " is " + file_kind(st.st_mode) + ", not a regular file");
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
}

input_file::~input_file() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<unsigned char> input_file::bytes(std::uint64_t max_bytes) {
  if (size_ > max_bytes) {
    fail(path_ + ": the " + what_ + " is " + std::to_string(size_) + " bytes, more than the limit of " +
         std::to_string(max_bytes));
  }
  std::istream& in = stream();
  std::vector<unsigned char> out;
  out.reserve(static_cast<std::size_t>(size_));
  for (auto it = std::istreambuf_iterator<char>(in); it != std::istreambuf_iterator<char>(); ++it)
    out.push_back(static_cast<unsigned char>(*it));
  return out;
}

input_file::block input_file::read_parallel(std::uint64_t offset, std::uint64_t n) {
  if (offset >= size_) return {};
  if (n == 0 || n > size_ - offset) n = size_ - offset;
  block out{std::unique_ptr<unsigned char[]>(new unsigned char[static_cast<std::size_t>(n)]), 0};
  constexpr std::uint64_t chunk = std::uint64_t{4} << 20;
  const std::uint64_t chunks = (n + chunk - 1) / chunk;
  std::vector<std::uint64_t> got(chunks, 0);
  std::vector<int> err(chunks, 0);
  tbb::parallel_for(std::uint64_t{0}, chunks, [&](std::uint64_t c) {
    const std::uint64_t lo = c * chunk, hi = std::min(n, lo + chunk);
    std::uint64_t at = lo;
    while (at < hi) {
      const ssize_t r = ::pread(fd_, out.data.get() + at, static_cast<std::size_t>(hi - at), static_cast<off_t>(offset + at));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) err[c] = errno;
      if (r <= 0) break;  // a file that shrank ends here
      at += static_cast<std::uint64_t>(r);
    }
    got[c] = at - lo;
  });
  for (std::uint64_t c = 0; c < chunks; ++c) {
    if (err[c]) fail(path_ + ": cannot read the " + what_ + ": " + std::strerror(err[c]));
    out.size += static_cast<std::size_t>(got[c]);
    if (got[c] < std::min(n, (c + 1) * chunk) - c * chunk) break;  // the file ends inside this chunk
  }
  return out;
}

std::istream& input_file::stream() {
  if (::lseek(fd_, 0, SEEK_SET) != 0) fail(path_ + ": cannot rewind: " + std::strerror(errno));
  buf_.restart(fd_, size_);
  in_.clear();
  return in_;
}

void input_file::bounded_buf::restart(int file, std::uint64_t bytes) {
  fd = file;
  left = bytes;
  setg(nullptr, nullptr, nullptr);
}

input_file::bounded_buf::int_type input_file::bounded_buf::underflow() {
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

int open_beneath(int folder_fd, const fs::path& relative) {
  constexpr int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC;
  if (relative.empty() || relative.is_absolute()) {
    errno = EXDEV;
    return -1;
  }
  open_how how{};
  how.flags = flags;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  const long fd = ::syscall(SYS_openat2, folder_fd, relative.c_str(), &how, sizeof how);
  if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return static_cast<int>(fd);  // EPERM: a seccomp filter
  // No openat2: component by component, no symbolic link followed.
  int at = folder_fd;
  const auto last = std::prev(relative.end());
  for (auto it = relative.begin(); it != relative.end(); ++it) {
    const std::string part = it->string();
    if (part.empty() || part == "." || part == "..") {
      if (at != folder_fd) ::close(at);
      errno = EXDEV;
      return -1;
    }
    const int next = ::openat(at, part.c_str(), it == last ? flags | O_NOFOLLOW : O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int e = errno;
    if (at != folder_fd) ::close(at);
    if (next < 0) {
      errno = e == ENOTDIR ? ELOOP : e;  // a symbolic link where a folder was expected
      return -1;
    }
    at = next;
  }
  return at == folder_fd ? -1 : at;
}

bool next_line(std::istream& in, std::string& line, const std::string& file, std::size_t line_no) {
  line.clear();
  std::streambuf* sb = in.rdbuf();
  for (int c; (c = sb->sbumpc()) != std::char_traits<char>::eof();) {
    if (c == '\n') return true;
    if (c == '\r') {
      if (sb->sgetc() == '\n') sb->sbumpc();
      return true;
    }
    if (line.size() == max_line_bytes) {
      fail(file + ":" + std::to_string(line_no) + ": a line longer than " + std::to_string(max_line_bytes >> 20) +
           " MiB (is it a text file?)");
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

}  // namespace sieve::render::detail
