// Compile-time checks of sieve::record (tests/CMakeLists.txt, record_const_compile_*): CASE 1-3
// must not compile, CASE 0 must.
#include <sieve/compaction/compact.hpp>

#include <cstdint>
#include <span>
#include <vector>

void calls() {
  std::vector<std::uint32_t> items(10), out(10);
  const std::vector<std::uint32_t> frozen(10);
  std::vector<std::uint8_t> flags(10, 1);
#if CASE == 1
  // In place on const items.
  sieve::compact("std", std::span(frozen), sieve::byte_flags{flags});
#elif CASE == 2
  // compact_copy into const items.
  sieve::compact_copy("billeter", std::span(items), std::span(frozen), sieve::byte_flags{flags});
#elif CASE == 3
  // A const_record where items are written.
  const sieve::const_record in{std::span(frozen)};
  sieve::compact("std", in, sieve::byte_flags{flags});
#else
  sieve::compact("std", std::span(items), sieve::byte_flags{flags});
  sieve::compact_copy("billeter", std::span(frozen), std::span(out), sieve::byte_flags{flags});
  sieve::compact_copy("billeter", sieve::const_record(std::span(frozen)), sieve::record(std::span(out)),
                      sieve::byte_flags{flags});
  sieve::compact_copy("billeter", sieve::record(std::span(items)), std::span(out), sieve::byte_flags{flags});
#endif
}
