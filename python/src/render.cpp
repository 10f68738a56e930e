// sieve._core.render: the render job (renderer/job/render_job.hpp) from Python, kept thin: the request
// is filled from keyword arguments, the job runs, and the image comes back as a NumPy array.
#include "render.hpp"

#include <job/render_job.hpp>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>

namespace sieve::python {

py::array_t<float> render(const py::dict& settings, const std::string& report_path) {
  render::render_request rq;
  rq.scene = settings["scene"].cast<std::string>();
  // Names parsed here, once, into the request's typed values (parse_mode throws sieve::error naming
  // the known names).
  auto given = [&](const char* key) { return settings.contains(key) && !settings[key].is_none(); };
  auto text = [&](const char* key) { return settings[key].cast<std::string>(); };
  auto count = [&](const char* key, std::uint32_t& to) {
    if (given(key)) to = settings[key].cast<std::uint32_t>();
  };
  if (given("strategy")) rq.strategy = text("strategy");
  if (given("backend")) rq.backend = text("backend");
  if (given("integrator")) rq.integrator = render::parse_mode<render::integrator_kind>(text("integrator"));
  if (given("traversal")) rq.traversal = render::parse_mode<render::traversal_kind>(text("traversal"));
  if (given("queue")) rq.queue = render::parse_mode<render::queue_mode>(text("queue"));
  if (given("reorder")) rq.reorder = render::parse_mode<render::reorder_key>(text("reorder"));
  if (given("sort")) rq.sort = render::parse_mode<render::sort_kind>(text("sort"));
  if (given("routing")) rq.routing = render::parse_mode<render::routing_kind>(text("routing"));
  if (given("bvh")) rq.bvh = render::parse_mode<render::bvh_layout>(text("bvh"));
  count("spp", rq.spp);
  count("width", rq.width);
  count("height", rq.height);
  if (settings.contains("set")) rq.set = settings["set"].cast<std::vector<std::string>>();
  // Stage times are measured unless profile=False, as `sieve render` measures them unless --no-profile.
  rq.profile_stages = given("profile") ? settings["profile"].cast<bool>() : true;

  render::render_outcome out;
  {
    py::gil_scoped_release unlocked;
    out = render::render_to_files(rq, {"", "", report_path}, "sieve.render(" + rq.scene + ")");
  }
  const auto& r = out.result;
  py::array_t<float> image({static_cast<py::ssize_t>(r.height), static_cast<py::ssize_t>(r.width), py::ssize_t{3}});
  static_assert(sizeof(render::vec3) == 3 * sizeof(float));
  std::memcpy(image.mutable_data(), out.image.data(), out.image.size() * sizeof(render::vec3));
  return image;
}

}  // namespace sieve::python
