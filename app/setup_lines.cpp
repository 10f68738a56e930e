#include "setup_lines.hpp"

#include <report.hpp>

#include <oneapi/tbb/global_control.h>

#include <ostream>
#include <string>

namespace sieve::app {
namespace {

using report::fixed;

// The build's phases that ran (wall clock), e.g. " (references 12.0, binary 200.3 ms)".
std::string build_phases(const render::bvh_phases& b) {
  std::string s;
  for (const auto& [name, t] : {std::pair{"references", b.refs}, {"binary", b.binary}, {"pairs", b.pairs},
                                {"collapse", b.collapse}, {"cw", b.cw}})
    if (t > 0) s += (s.empty() ? "" : ", ") + std::string(name) + " " + fixed(t * 1e3, 1);
  return s.empty() ? s : " (" + s + " ms)";
}

// A build on the device, by step and phase, e.g. " (allocation 3.1, triangles in 12.0, morton 2.0, ... ms)".
std::string device_build_steps(const render::ploc_timing& t) {
  std::string s;
  for (const auto& [name, ms] : {std::pair{"allocation", t.allocate_ms}, {"triangles in", t.copy_in_ms}, {"morton", t.morton_ms},
                                 {"binary", t.binary_ms}, {"collapse", t.collapse_ms}, {"layouts", t.layout_ms},
                                 {"scratch freed", t.release_ms}})
    s += (s.empty() ? "" : ", ") + std::string(name) + " " + fixed(ms, 1);
  return " (" + s + " ms)";
}

}  // namespace

void print_setup_phase(std::ostream& out, render::setup_phase p, const render::render_job& job) {
  const render::render_outcome& o = job.outcome();
  const render::setup_times& s = o.setup;
  const std::size_t triangles = job.loaded().triangles.size();
  out << "setup: ";
  switch (p) {
    case render::setup_phase::load: {
      const double mb = static_cast<double>(s.load_bytes) / 1e6;
      out << "load " << fixed(o.load_seconds, 3) << " s, " << triangles << " triangles from "
          << (mb >= 0.1 ? fixed(mb, 1) + " MB" : fixed(mb * 1e3, 1) + " kB") << " of files";
      if (s.load_bytes >= (1U << 20) && o.load_seconds > 0) out << " at " << fixed(mb / o.load_seconds, 0) << " MB/s";
      break;
    }
    case render::setup_phase::build: {
      const auto threads = tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
      const bool device = s.device_build.with_copies_ms > 0;
      out << "BVH " << fixed(o.bvh_seconds, 3) << " s " << (device ? std::string("on the GPU") : "on " + std::to_string(threads) + " threads")
          << ", " << fixed(o.bvh_seconds > 0 ? static_cast<double>(triangles) / o.bvh_seconds / 1e6 : 0, 2) << " Mtris/s"
          << (device ? device_build_steps(s.device_build) : build_phases(s.build_phases));
      break;
    }
    case render::setup_phase::upload:
      out << "upload " << fixed(s.upload_s, 3) << " s (the scene and the film copied to the device)";
      break;
    case render::setup_phase::first_frame:
      out << "first frame " << fixed(s.first_frame_s, 3) << " s (" << s.first_frame_spp
          << " spp over the whole film), the first image " << fixed(s.first_image_s, 3) << " s after the start";
      break;
  }
  out << "\n" << std::flush;
}

}  // namespace sieve::app
