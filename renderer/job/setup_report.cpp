// The setup's phases in the render report: what the user waits for before the first image.
#include "render_job.hpp"

namespace sieve::render {

namespace {

// Null where the tree was built on the host.
nlohmann::json device_build_json(const ploc_timing& t) {
  if (t.with_copies_ms <= 0) return nullptr;
  return {{"allocate_s", t.allocate_ms * 1e-3}, {"copy_in_s", t.copy_in_ms * 1e-3}, {"morton_s", t.morton_ms * 1e-3},
          {"binary_s", t.binary_ms * 1e-3},     {"collapse_s", t.collapse_ms * 1e-3}, {"layouts_s", t.layout_ms * 1e-3},
          {"release_s", t.release_ms * 1e-3},   {"total_s", t.with_copies_ms * 1e-3}};
}

}  // namespace

nlohmann::json setup_report(const render_outcome& out, std::size_t triangles) {
  const setup_times& s = out.setup;
  const bvh_phases& b = s.build_phases;
  const render_stats::first_wave_steps& f = s.first_frame_steps;
  const auto seconds_or_null = [](double v) { return v >= 0 ? nlohmann::json(v) : nlohmann::json(nullptr); };
  const bool gpu = out.backend == sieve::backend::cuda;
  return {{"load_s", out.load_seconds},
          {"load_bytes", s.load_bytes},
          {"load_mb_per_s", out.load_seconds > 0 ? static_cast<double>(s.load_bytes) / 1e6 / out.load_seconds : 0.0},
          {"triangles", triangles},
          {"build_s", out.bvh_seconds},
          // wall clock per phase of the tree's build; the rest of build_s: the surfaces and lights
          {"build_phases_s", {{"refs_s", b.refs}, {"binary_s", b.binary}, {"pairs_s", b.pairs}, {"collapse_s", b.collapse}, {"cw_s", b.cw}}},
          // a build on the device: its steps (allocation, the triangles copied in, the scratch freed) and phases
          {"device_build_s", device_build_json(s.device_build)},
          {"upload_s", gpu ? nlohmann::json(s.upload_s) : nlohmann::json(nullptr)},  // the CPU uploads nothing
          {"first_frame_s", seconds_or_null(s.first_frame_s)},
          // the first frame's parts on the GPU: queues allocated, the wave's graph captured and instantiated, its first run
          {"first_frame_steps_s", {{"queues_s", seconds_or_null(f.queues)}, {"capture_s", seconds_or_null(f.capture)},
                                   {"instantiate_s", seconds_or_null(f.instantiate)}, {"run_s", seconds_or_null(f.run)}}},
          {"first_frame_spp", s.first_frame_spp},
          {"preloaded_kernels", s.preloaded_kernels},
          {"preload_s", seconds_or_null(s.preload_s)},
          {"preload_wait_s", seconds_or_null(s.preload_wait_s)},
          {"first_image_s", seconds_or_null(s.first_image_s)}};
}

}  // namespace sieve::render
