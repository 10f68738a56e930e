// What the running binary was built from (generated at build time by cmake/BuildInfo.cmake).
#pragma once

namespace sieve::build {
extern const char* const commit;         // `git describe --always` of HEAD, "unknown" outside git
extern const bool local_changes;         // the tree had changes not committed when it was built
extern const char* const type;           // CMAKE_BUILD_TYPE
extern const char* const compiler;       // "GNU 12.2.0"
extern const char* const cuda_compiler;  // "NVIDIA 13.0.88", or "" without CUDA
}  // namespace sieve::build
