#include "output_files.hpp"

#include <sieve/compaction/error.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

namespace sieve::report {
namespace {

namespace fs = std::filesystem;

// The temporaries alive in this process, where a signal handler can reach them: a slot is free (0),
// being filled or emptied (1), or holds a temporary's path (2).
constexpr std::size_t max_temporaries = 64;
constexpr std::size_t max_path = 4096;
struct temporary_slot {
  std::atomic<int> state{0};
  char path[max_path] = {};
};
std::array<temporary_slot, max_temporaries> temporaries;

std::atomic<int> renaming{0};       // output_sets in commit(): a signal waits for them
std::atomic<int> deferred_signal{0};  // the signal that arrived meanwhile

int hold_temporary(const fs::path& p) {
  const std::string& s = p.native();
  if (s.size() >= max_path) throw sieve::error(s + ": the path is too long");
  for (std::size_t i = 0; i < temporaries.size(); ++i) {
    int expected = 0;
    if (!temporaries[i].state.compare_exchange_strong(expected, 1)) continue;
    std::memcpy(temporaries[i].path, s.c_str(), s.size() + 1);
    temporaries[i].state.store(2);
    return static_cast<int>(i);
  }
  throw sieve::error(s + ": more than " + std::to_string(max_temporaries) + " outputs written at once");
}

void release_temporary(int slot) noexcept {
  if (slot >= 0) temporaries[static_cast<std::size_t>(slot)].state.store(0);
}

std::string reason(int err) { return std::error_code(err, std::generic_category()).message(); }

const char* kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a folder";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

// Signals that end the process, handled while temporaries exist when nobody else handles them (a
// Ctrl-C while a benchmark writes its results): end_by_signal removes the temporaries.
constexpr std::array<int, 3> ending_signals = {SIGINT, SIGTERM, SIGHUP};
int signal_holders = 0;  // output_sets with temporaries
std::array<bool, ending_signals.size()> signal_installed{};

extern "C" void end_on_signal(int sig) { end_by_signal(sig); }

void hold_signals() {
  if (signal_holders++ > 0) return;
  for (std::size_t i = 0; i < ending_signals.size(); ++i) {
    struct sigaction old {};
    signal_installed[i] = false;
    if (sigaction(ending_signals[i], nullptr, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
      continue;
    struct sigaction sa {};
    sa.sa_handler = end_on_signal;
    sigemptyset(&sa.sa_mask);
    signal_installed[i] = sigaction(ending_signals[i], &sa, nullptr) == 0;
  }
}

void let_signals_go() noexcept {
  if (--signal_holders > 0) return;
  for (std::size_t i = 0; i < ending_signals.size(); ++i)
    if (std::exchange(signal_installed[i], false)) ::signal(ending_signals[i], SIG_DFL);
}

}  // namespace

void remove_temporaries() noexcept {
  for (auto& t : temporaries)
    if (t.state.load() == 2) ::unlink(t.path);
}

void end_by_signal(int sig) noexcept {
  if (renaming.load() > 0) {
    deferred_signal.store(sig);
    return;
  }
  remove_temporaries();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

output_set::~output_set() {
  for (auto& o : outputs_) discard(o);
  release_signals();
}

void output_set::release_signals() noexcept {
  if (std::exchange(holds_signals_, false)) let_signals_go();
}

output_set::identity output_set::identify(const fs::path& p, fs::path* nearest) {
  std::error_code ec;
  fs::path at = fs::absolute(p, ec);
  if (ec) at = p;
  fs::path rest;
  for (;;) {
    struct stat st {};
    if (::stat(at.c_str(), &st) == 0) {
      if (nearest) *nearest = at;
      const fs::path norm = rest.lexically_normal();
      // "missing/../x" is x: look again once the path below is normalised.
      if (norm != rest && !rest.empty()) return identify(at / norm, nearest);
      return {st.st_dev, st.st_ino, norm.generic_string()};
    }
    if (!at.has_relative_path()) return {0, 0, (at / rest).lexically_normal().generic_string()};
    rest = rest.empty() ? at.filename() : at.filename() / rest;
    at = at.parent_path();
  }
}

void output_set::add_input(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;
  const identity id{st.st_dev, st.st_ino, ""};
  for (const auto& o : outputs_)
    if (o.id == id)
      throw sieve::error(o.option + " " + o.path.string() + ": is " + path.string() +
                         ", a file this run reads; name another output file");
  inputs_.push_back({path, id});
}

void output_set::add_output(const fs::path& path, std::string_view option) {
  if (path.empty()) return;
  const std::string named = std::string(option) + " " + path.string();
  if (const auto nul = path.native().find('\0'); nul != std::string::npos)
    throw sieve::error(std::string(option) + " " + path.native().substr(0, nul) + "\\0...: the name holds a NUL byte");
  const fs::path leaf = path.filename();
  if (leaf.empty() || leaf == "." || leaf == "..") throw sieve::error(named + ": names a folder, not a file");

  output o{path, path, std::string(option), {}, {}, -1};
  struct stat st {};
  fs::path folder;  // the nearest existing folder: where it is created
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) {  // written where the link points
      if (::stat(path.c_str(), &st) != 0)
        throw sieve::error(named + ": a symbolic link to nowhere (" + reason(errno) + ")");
      std::error_code ec;
      o.target = fs::canonical(path, ec);
      if (ec) throw sieve::error(named + ": " + ec.message());
    }
    if (!S_ISREG(st.st_mode))
      throw sieve::error(named + ": exists and is " + kind_of(st.st_mode) + ", not a regular file");
    o.id = {st.st_dev, st.st_ino, ""};
    folder = o.target.has_parent_path() ? o.target.parent_path() : fs::path(".");
  } else {
    o.id = identify(path, &folder);
    if (::stat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      throw sieve::error(named + ": " + folder.string() + " is not a folder");
  }
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    throw sieve::error(named + ": cannot write in " + folder.string() + ": " + reason(errno));
  for (const auto& other : outputs_)
    if (other.id == o.id)
      throw sieve::error(named + ": the same file as " + other.option + " " + other.path.string() +
                         "; give each output its own file");
  for (const auto& in : inputs_)
    if (in.id == o.id)
      throw sieve::error(named + ": is " + in.path.string() + ", a file this run reads; name another output file");
  outputs_.push_back(std::move(o));
}

output_set::output& output_set::find(const fs::path& path) {
  for (auto& o : outputs_)
    if (o.path == path) return o;
  throw sieve::error(path.string() + ": not a registered output");
}

void output_set::discard(output& o) noexcept {
  if (o.temporary.empty()) return;
  ::unlink(o.temporary.c_str());
  release_temporary(o.slot);
  o.slot = -1;
  o.temporary.clear();
}

void output_set::stage(const fs::path& path, std::string_view bytes) {
  if (path.empty()) return;
  output& o = find(path);
  discard(o);
  if (!holds_signals_) {
    hold_signals();
    holds_signals_ = true;
  }
  const std::string named = o.path.string();
  const fs::path folder = o.target.parent_path();
  if (!folder.empty()) {
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec) throw sieve::error(named + ": cannot create the folder " + folder.string() + ": " + ec.message());
  }
  // A name of our own beside the target (O_EXCL: never an existing file, never through a link).
  int fd = -1;
  fs::path tmp;
  for (int attempt = 0; fd < 0; ++attempt) {
    tmp = o.target;
    tmp += ".tmp-" + std::to_string(::getpid()) + (attempt ? "-" + std::to_string(attempt) : "");
    o.slot = hold_temporary(tmp);
    o.temporary = tmp;
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
      const int err = errno;
      release_temporary(o.slot);
      o.slot = -1;
      o.temporary.clear();
      if (err != EEXIST || attempt >= 100) throw sieve::error(named + ": cannot write: " + reason(err));
    }
  }
  auto fail = [&](int err) {
    discard(o);
    throw sieve::error(named + ": cannot write: " + reason(err));
  };
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      fail(err);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
    const int err = errno;
    ::close(fd);
    fail(err);
  }
  if (::close(fd) != 0) fail(errno);
}

void output_set::commit() {
  renaming.fetch_add(1);
  std::string failed;
  for (auto& o : outputs_) {
    if (o.temporary.empty() || !failed.empty()) continue;
    if (::rename(o.temporary.c_str(), o.target.c_str()) != 0) {
      failed = o.path.string() + ": cannot replace it with " + o.temporary.filename().string() + ": " + reason(errno);
      continue;
    }
    release_temporary(o.slot);
    o.slot = -1;
    o.temporary.clear();
  }
  for (auto& o : outputs_) discard(o);
  release_signals();
  if (renaming.fetch_sub(1) == 1)
    if (const int sig = deferred_signal.exchange(0)) end_by_signal(sig);
  if (!failed.empty()) throw sieve::error(failed);
}

void write_file_atomically(const fs::path& path, std::string_view bytes, std::string_view option) {
  output_set set;
  set.add_output(path, option);
  set.stage(path, bytes);
  set.commit();
}

}  // namespace sieve::report
