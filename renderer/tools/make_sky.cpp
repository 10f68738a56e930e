// sieve_make_sky OUT.exr [WIDTH HEIGHT]: writes the project's procedural sky (scene/sky.hpp) as an
// EXR environment map. scenes/sky/sky.exr is its output at the default 256 x 128.
#include <scene/sky.hpp>

#include <sieve/compaction/error.hpp>

#include <cstdlib>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  try {
    if (argc != 2 && argc != 4) throw sieve::error("usage: sieve_make_sky OUT.exr [WIDTH HEIGHT]");
    const auto dim = [](const char* s) {
      char* end = nullptr;
      const unsigned long v = std::strtoul(s, &end, 10);
      if (*s == '\0' || *end != '\0' || v == 0 || v > 65536) throw sieve::error(std::string("bad size '") + s + "'");
      return static_cast<std::uint32_t>(v);
    };
    const std::uint32_t w = argc == 4 ? dim(argv[2]) : 256, h = argc == 4 ? dim(argv[3]) : 128;
    sieve::render::write_environment_image(argv[1], sieve::render::procedural_sky(w, h));
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "sieve: " << e.what() << "\n";
    return 1;
  }
}
