// `sieve render`'s setup lines: one plain line on stdout as each phase the user waits for ends (the
// scene loaded, the BVH built, the scene uploaded, the first pass of samples), with its time.
#pragma once

#include <job/render_job.hpp>

#include <iosfwd>

namespace sieve::app {

// The line of phase `p` of `job` (its times in job.outcome()), written and flushed.
void print_setup_phase(std::ostream& out, render::setup_phase p, const render::render_job& job);

}  // namespace sieve::app
