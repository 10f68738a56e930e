// sieve._core.render: the render job (renderer/job/render_job.hpp) from Python, kept thin: the request
// is filled from keyword arguments, the job runs, and the image comes back as a NumPy array.
#include "render.hpp"

#include <job/render_job.hpp>

#include <sieve/compaction/error.hpp>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
#include <string>

namespace sieve::python {

py::array_t<float> render(const py::dict& settings, const std::string& report_path) {
  render::render_request rq;
  if (!py::isinstance<py::str>(settings["scene"]))
    throw sieve::error("render: the scene " + std::string(py::repr(settings["scene"])) + " is not a path");
  rq.scene = settings["scene"].cast<std::string>();
  // Names parsed here, once, into the request's typed values (parse_mode throws sieve::error naming
  // the known names).
  auto given = [&](const char* key) { return settings.contains(key) && !settings[key].is_none(); };
  auto text = [&](const char* key) {
    if (!py::isinstance<py::str>(settings[key]))
      throw sieve::error("render: " + std::string(key) + " " + std::string(py::repr(settings[key])) + " is not a string");
    return settings[key].cast<std::string>();
  };
  // A whole number in 1 .. most (the command line's ranges), never wrapped, truncated or read as 0
  // ("the scene's"): anything else is sieve.Error naming the setting and the value.
  auto count = [&](const char* key, std::uint32_t& to, std::uint32_t most) {
    if (!given(key)) return;
    const py::handle v = settings[key];
    const bool integer = PyLong_Check(v.ptr()) && !PyBool_Check(v.ptr());
    int overflow = 0;
    const long long n = integer ? PyLong_AsLongLongAndOverflow(v.ptr(), &overflow) : 0;
    if (!integer || overflow != 0 || n < 1 || n > static_cast<long long>(most)) {
      throw sieve::error("render: " + std::string(key) + " " + std::string(py::repr(v)) + " is not a whole number from 1 to " +
                         std::to_string(most));
    }
    to = static_cast<std::uint32_t>(n);
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
  count("spp", rq.spp, 1U << 20);
  count("width", rq.width, 1U << 16);
  count("height", rq.height, 1U << 16);
  if (given("set")) {
    const py::handle set = settings["set"];
    if (!py::isinstance<py::list>(set) && !py::isinstance<py::tuple>(set))
      throw sieve::error("render: set " + std::string(py::repr(set)) + " is not a list of \"key=value\" strings");
    for (const py::handle item : set) {
      if (!py::isinstance<py::str>(item))
        throw sieve::error("render: set holds " + std::string(py::repr(item)) + ", not a \"key=value\" string");
      rq.set.push_back(item.cast<std::string>());
    }
  }
  // Stage times are measured unless profile=False, as `sieve render` measures them unless --no-profile.
  rq.profile_stages = true;
  if (given("profile")) {
    if (!PyBool_Check(settings["profile"].ptr()))
      throw sieve::error("render: profile " + std::string(py::repr(settings["profile"])) + " is not True or False");
    rq.profile_stages = settings["profile"].cast<bool>();
  }

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
