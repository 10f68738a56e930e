// The files a run writes (images, reports, CSV), checked before the work starts and written
// all-or-nothing after it:
//   - an output may not be the same file as another output or as any input the run reads (scene
//     TOML, OBJ, MTL), compared by filesystem identity (device and inode; for a file not yet there,
//     its folder's identity and its name), so `--out scene.toml`, `--json mesh.obj` or
//     `--out X --json X` are refused, however the paths are spelled (../, links, hard links);
//   - an output that exists must be a regular file (not a device, FIFO, socket or folder);
//   - its nearest existing folder must be a writable folder (missing folders below it are created
//     when it is written);
//   - each output is written to a temporary file beside it (every write checked, fsync, close
//     checked) and renamed over it only when every output of the set is complete; a failure
//     removes the temporaries and names the file and the system's reason.
// Temporaries are listed where a signal handler can remove them (remove_temporaries): a signal
// that ends the process leaves no *.tmp-* file behind, and one that arrives while the outputs are
// being renamed ends the process after the last rename, so the outputs are all old or all new.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace sieve::report {

class output_set {
 public:
  output_set() = default;
  ~output_set();  // removes the temporaries of outputs staged but not committed
  output_set(const output_set&) = delete;
  output_set& operator=(const output_set&) = delete;

  // A file the run reads. Throws sieve::error when an output registered so far is that file.
  // A path that does not exist is ignored (the loader reports it).
  void add_input(const std::filesystem::path& path);
  // A file the run writes, `option` naming it in errors (e.g. "--json"); an empty path is no output
  // (the option not given) and is ignored, here and by stage(). Throws sieve::error (one
  // line naming the option and the path) for an empty or unusable name, an existing file that is not
  // a regular file, a nearest existing folder that is not a writable folder, or a file that is
  // another output or an input.
  void add_output(const std::filesystem::path& path, std::string_view option);

  // Writes `bytes` to the temporary of the registered output `path` (creating missing folders): every write checked, fsync and
  // close checked. Throws sieve::error naming the path and the system's reason (the temporary removed).
  void stage(const std::filesystem::path& path, std::string_view bytes);
  // Renames every staged temporary over its output (a signal meanwhile takes effect after the last
  // rename). Throws sieve::error naming the path when a rename fails; the temporaries left are removed.
  void commit();

 private:
  // A file by its device and inode or, when it is not there yet, its nearest existing ancestor's
  // and the rest of the path below it.
  struct identity {
    dev_t dev = 0;
    ino_t ino = 0;
    std::string rest;
    bool operator==(const identity&) const = default;
  };
  static identity identify(const std::filesystem::path& path, std::filesystem::path* nearest);
  struct output {
    std::filesystem::path path;  // as given
    std::filesystem::path target;  // where it is written: symbolic links resolved
    std::string option;
    identity id;
    std::filesystem::path temporary;  // staged: the complete temporary beside target
    int slot = -1;                    // in the signal handler's list of temporaries
  };
  struct input {
    std::filesystem::path path;
    identity id;
  };
  output& find(const std::filesystem::path& path);
  void discard(output& o) noexcept;
  void release_signals() noexcept;

  std::vector<output> outputs_;
  bool holds_signals_ = false;  // this set's temporaries exist: signals at their default action remove them
  std::vector<input> inputs_;
};

// Writes one file through an output_set of its own (checks, temporary, rename).
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes, std::string_view option = "output");

// Removes every temporary staged and not yet renamed, in this process. Async-signal-safe.
void remove_temporaries() noexcept;
// For a signal handler that ends the process: removes the temporaries and ends the process by
// `sig` (default action), or, while an output_set is renaming, ends it right after the last rename.
// Async-signal-safe.
void end_by_signal(int sig) noexcept;

}  // namespace sieve::report
