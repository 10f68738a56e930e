// The render job (renderer/job): the one owner of a render's steps. With no outputs it returns the
// image and the report (what a binding reads); its image is the render's, bit for bit; the request's
// settings reach the render as values, not through the scene file's text; the hooks are called in
// the order of the steps.
#include <frame/prepared_scene.hpp>
#include <job/render_job.hpp>
#include <run/render.hpp>
#include <scene/load.hpp>

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace sieve::render {
namespace {

const std::string cornell = std::string(SIEVE_SCENES_DIR) + "/cornell-box/cornell-box.toml";

render_request small_request() {
  render_request rq;
  rq.scene = cornell;
  rq.backend = "cpu";
  rq.set = {"film.width=24", "film.height=16"};
  rq.spp = 2;
  return rq;
}

TEST(RenderJob, WithoutOutputsReturnsTheRendersImageAndItsReport) {
  render_request rq = small_request();
  rq.strategy = "std";
  render_job job(rq, {}, "test");
  const render_outcome& out = job.run();
  // The same render by hand: the scene as overridden, the settings as the request types them.
  const scene sc = load_scene(cornell, {"film.spp=2", "film.width=24", "film.height=16"});
  render_settings settings = render_settings::from(sc);
  settings.strategy = "std";
  const prepared_scene ps(sc);
  const std::vector<vec3> expected = render_cpu(ps, settings).mean();
  ASSERT_EQ(out.image.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(out.image[i].x, expected[i].x) << i;
    EXPECT_EQ(out.image[i].y, expected[i].y) << i;
    EXPECT_EQ(out.image[i].z, expected[i].z) << i;
  }
  EXPECT_EQ(out.samples, 2U);
  EXPECT_FALSE(out.partial());
  EXPECT_EQ(out.report["strategy_asked"], "std");
  EXPECT_EQ(out.report["spp"], 2);
  EXPECT_EQ(out.report["width"], 24);
  EXPECT_EQ(out.report["backend"], "cpu");
  // --strategy is a value of the settings: the scene keeps its file's [compaction] strategy.
  EXPECT_EQ(job.settings().strategy, "std");
  EXPECT_EQ(job.loaded().compaction.strategy, sc.compaction.strategy);
}

TEST(RenderJob, HooksFollowTheSteps) {
  std::vector<std::string> seen;
  job_hooks hooks;
  hooks.step = [&](job_step s, const render_job& j) {
    static const char* names[] = {"load", "prepare", "render", "write"};
    seen.push_back(names[static_cast<int>(s)]);
    if (s == job_step::prepare) EXPECT_GT(j.loaded().triangles.size(), 0U);
  };
  hooks.ready = [&](const render_job& j) {
    seen.push_back("ready");
    EXPECT_EQ(j.settings().integrator, integrator_kind::megakernel);
  };
  hooks.progress = [&](std::uint32_t done, std::uint32_t total) {
    seen.push_back("progress " + std::to_string(done) + "/" + std::to_string(total));
  };
  // Each setup phase as it ends, its time already in the outcome (no upload on the CPU).
  hooks.phase = [&](setup_phase p, const render_job& j) {
    static const char* names[] = {"load", "build", "upload", "first_frame"};
    seen.push_back(std::string("phase ") + names[static_cast<int>(p)]);
    const render_outcome& o = j.outcome();
    if (p == setup_phase::load) EXPECT_GT(o.setup.load_bytes, 0U);
    if (p == setup_phase::build) {
      EXPECT_GT(o.bvh_seconds, 0.0);
      EXPECT_GT(o.setup.build_phases.binary, 0.0);
      EXPECT_LE(o.setup.build_phases.total(), o.bvh_seconds);
    }
    if (p == setup_phase::first_frame) {
      EXPECT_EQ(o.setup.first_frame_spp, 2U);
      EXPECT_GE(o.setup.first_frame_s, 0.0);
      EXPECT_GE(o.setup.first_image_s, o.load_seconds + o.bvh_seconds + o.setup.first_frame_s);
    }
  };
  render_request rq = small_request();
  rq.integrator = integrator_kind::megakernel;
  render_job job(rq, {}, "test", hooks);
  const render_outcome& out = job.run();
  const std::vector<std::string> expected = {"load", "ready", "phase load", "prepare", "phase build", "render",
                                             "phase first_frame", "progress 2/2"};
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(out.report["setup_s"]["first_frame_s"].get<double>(), out.setup.first_frame_s);
  EXPECT_TRUE(out.report["setup_s"]["upload_s"].is_null());
}

TEST(RenderJob, ABadOutputNameFailsBeforeAnyWork) {
  bool loaded = false;
  job_hooks hooks;
  hooks.ready = [&](const render_job&) { loaded = true; };
  render_job job(small_request(), {"image.tiff", "", ""}, "test", hooks);
  EXPECT_THROW(job.run(), sieve::error);
  EXPECT_FALSE(loaded) << "the image's format is checked before the render";
}

// One of --width / --height: the other side follows the aspect of the film the file and the --set
// overrides give, in one load; the scene is the one a load with both sides gives (a bare mesh framed
// for the final size).
TEST(RenderJob, OneSideOfTheFilmLoadsTheSceneOnce) {
  render_request rq = small_request();
  rq.set = {"film.width=30", "film.height=10"};
  rq.height = 4;
  render_job job(rq, {}, "test");
  job.run();
  EXPECT_EQ(job.loaded().film.width, 12U);
  EXPECT_EQ(job.loaded().film.height, 4U);

  int calls = 0;
  const std::string mesh = std::string(SIEVE_SCENES_DIR) + "/cornell-box/cornell-box.obj";
  const scene fitted = load_scene(mesh, {"film.width=30", "film.height=10"}, {}, [&](const film_desc& film) {
    ++calls;
    EXPECT_EQ(film.width, 30U);
    EXPECT_EQ(film.height, 10U);
    return std::pair<std::uint32_t, std::uint32_t>{12, 40};
  });
  EXPECT_EQ(calls, 1);
  const scene both = load_scene(mesh, {"film.width=12", "film.height=40"});
  EXPECT_EQ(fitted.film.width, 12U);
  EXPECT_EQ(fitted.film.height, 40U);
  EXPECT_EQ(fitted.camera.position.x, both.camera.position.x);
  EXPECT_EQ(fitted.camera.position.y, both.camera.position.y);
  EXPECT_EQ(fitted.camera.position.z, both.camera.position.z);
  // Framed for 12 x 40, not for the 30 x 10 the overrides gave before the fit.
  const scene wide = load_scene(mesh, {"film.width=30", "film.height=10"});
  EXPECT_NE(fitted.camera.position.z, wide.camera.position.z);
}

}  // namespace
}  // namespace sieve::render
