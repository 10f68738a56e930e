// `sieve bench setup SCENE`: what a user waits for before the first sample, phase by phase, at each
// thread count asked for (--threads 1,2,4,...): the scene's load (its files' bytes, MB/s) and the BVH
// build by phase (references, binary SAH tree, pair layout, 8-wide collapse, compressed encoding),
// each the median of --repeats runs, with the parallel efficiency against the first thread count's
// row. Every run is validated before it counts: the loaded triangles and every array of the tree
// are the same bytes as the first run's (at any thread count), and the tree is whole (every node
// reached once, every reference in one leaf).
#pragma once

#include "../options.hpp"

#include <report.hpp>

#include <string>
#include <vector>

namespace sieve::bench {

struct setup_args : scene_suite_args {
  std::vector<unsigned> threads = {0};  // oneTBB threads per row; 0: all
  int repeats = 3;
  bool load_only = false;  // --load-only: the load's rows alone
};

const option_schema<setup_args>& setup_options();
int run_setup_bench(const setup_args& args, const std::string& command_line);

}  // namespace sieve::bench
