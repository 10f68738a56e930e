// The report library (report/: tables, statistics, machine and run info, output files) as the
// benchmarks use it: unqualified inside sieve::bench.
#pragma once

#include <output_files.hpp>
#include <report.hpp>

namespace sieve::bench {
using namespace sieve::report;
}  // namespace sieve::bench
