// sort_bench: `sieve bench sort` as a program of its own, for the GPU machine (same options; see
// suite.hpp). The `sieve` command wires the same suite in as a subcommand.
#include "suite.hpp"

#include <exception>
#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{"sort_bench: the GPU radix sorts of (u32, u32) pairs, own onesweep vs cub::DeviceRadixSort"};
  sieve::bench::sort_args args;
  sieve::bench::add_sort_options(app, args);
  CLI11_PARSE(app, argc, argv);
  std::string command_line = "sort_bench";
  for (int i = 1; i < argc; ++i) command_line += std::string(" ") + argv[i];
  try {
    return sieve::bench::run_sort_bench(args, command_line);
  } catch (const std::exception& e) {
    std::cerr << "sort_bench: " << e.what() << "\n";
    return 1;
  }
}
