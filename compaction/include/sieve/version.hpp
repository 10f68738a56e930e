// The version of sieve (library and command). The top-level CMakeLists.txt reads the three numbers
// from this file, so they are written here once; CHANGELOG.md says what each version holds.
#pragma once

#define SIEVE_VERSION_MAJOR 0
#define SIEVE_VERSION_MINOR 2
#define SIEVE_VERSION_PATCH 0

#define SIEVE_VERSION_STRINGIFY_(x) #x
#define SIEVE_VERSION_STRINGIFY(x) SIEVE_VERSION_STRINGIFY_(x)
// "0.2.0"
#define SIEVE_VERSION_STRING                                                                         \
  SIEVE_VERSION_STRINGIFY(SIEVE_VERSION_MAJOR)                                                       \
  "." SIEVE_VERSION_STRINGIFY(SIEVE_VERSION_MINOR) "." SIEVE_VERSION_STRINGIFY(SIEVE_VERSION_PATCH)
// One integer that orders versions: 10000 * major + 100 * minor + patch.
#define SIEVE_VERSION (SIEVE_VERSION_MAJOR * 10000 + SIEVE_VERSION_MINOR * 100 + SIEVE_VERSION_PATCH)
