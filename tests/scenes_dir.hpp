// Where the shipped scenes are: $SIEVE_SCENES_DIR when set (a test binary run away from its source
// tree, e.g. copied to another machine), else the source tree's scenes/ baked in at build time.
#pragma once

#include <cstdlib>
#include <string>

namespace sieve::test {

inline std::string scenes_dir() {
  const char* dir = std::getenv("SIEVE_SCENES_DIR");
  return dir != nullptr && *dir != '\0' ? std::string(dir) : std::string(SIEVE_SCENES_DIR);
}

}  // namespace sieve::test
