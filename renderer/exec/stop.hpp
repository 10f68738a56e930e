// A stop asked for (Ctrl-C, SIGTERM) seen by the long steps before a render, which carry no render
// settings: the scene's loading (files, textures, procedural geometry) and the BVH's build. The
// render job points the stop at its cancel flag for those steps (stop_scope); the loaders and
// builders call stop_point() at safe points (between files and textures, every few thousand
// triangles, at each large node of a build), which throws `stopped` once the flag is set. What the
// step had made is dropped with the exception; the render itself stops by its own settings
// (frame/settings.hpp's cancel), between bounces.
#pragma once

#include <atomic>
#include <exception>

namespace sieve::render {

// Not a sieve::error: no reader may turn it into a message about its file.
struct stopped : std::exception {
  const char* what() const noexcept override { return "stopped"; }
};

namespace detail {
inline std::atomic<const std::atomic<bool>*> stop_flag{nullptr};
}  // namespace detail

// While alive, stop_point() throws once *flag is true; a null flag changes nothing. Scopes nest (the
// previous flag comes back); one process-wide flag: the job that owns the process's signals sets it.
class stop_scope {
 public:
  explicit stop_scope(const std::atomic<bool>* flag) : set_(flag != nullptr) {
    if (set_) previous_ = detail::stop_flag.exchange(flag);
  }
  ~stop_scope() {
    if (set_) detail::stop_flag.store(previous_);
  }
  stop_scope(const stop_scope&) = delete;
  stop_scope& operator=(const stop_scope&) = delete;

 private:
  bool set_;
  const std::atomic<bool>* previous_ = nullptr;
};

inline bool stop_requested() {
  const std::atomic<bool>* flag = detail::stop_flag.load(std::memory_order_relaxed);
  return flag && flag->load(std::memory_order_relaxed);
}

inline void stop_point() {
  if (stop_requested()) throw stopped();
}

}  // namespace sieve::render
