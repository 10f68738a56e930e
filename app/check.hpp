// `sieve check SCENE`: loads a scene (a TOML file or a model alone) as `sieve render` would, renders
// nothing, and prints what it holds: triangles, materials by kind, textures with their sizes, lights,
// the camera and the film. The loader's warnings go to stderr as they arise; an error is one line
// and exit status 1.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace sieve::app {

struct check_args {
  std::string scene;
  std::vector<std::string> set;  // overrides, key=value
};

void add_check_options(CLI::App& cmd, check_args& args);
int run_check(const check_args& args);

}  // namespace sieve::app
