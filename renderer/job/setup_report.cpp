// The setup's phases in the render report: what the user waits for before the first image.
#include "render_job.hpp"

namespace sieve::render {

nlohmann::json setup_report(const render_outcome& out, std::size_t triangles) {
  const setup_times& s = out.setup;
  const bvh_phases& b = s.build_phases;
  const auto seconds_or_null = [](double v) { return v >= 0 ? nlohmann::json(v) : nlohmann::json(nullptr); };
  const bool gpu = out.backend == "cuda";
  return {{"load_s", out.load_seconds},
          {"load_bytes", s.load_bytes},
          {"load_mb_per_s", out.load_seconds > 0 ? static_cast<double>(s.load_bytes) / 1e6 / out.load_seconds : 0.0},
          {"triangles", triangles},
          {"build_s", out.bvh_seconds},
          // wall clock per phase of the tree's build; the rest of build_s: the surfaces and lights
          {"build_phases_s", {{"refs_s", b.refs}, {"binary_s", b.binary}, {"pairs_s", b.pairs}, {"collapse_s", b.collapse}, {"cw_s", b.cw}}},
          {"upload_s", gpu ? nlohmann::json(s.upload_s) : nlohmann::json(nullptr)},  // the CPU uploads nothing
          {"first_frame_s", seconds_or_null(s.first_frame_s)},
          {"first_frame_spp", s.first_frame_spp},
          {"first_image_s", seconds_or_null(s.first_image_s)}};
}

}  // namespace sieve::render
