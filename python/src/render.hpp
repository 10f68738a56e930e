#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

namespace sieve::python {

namespace py = pybind11;

// Renders settings["scene"] with the request's other settings (strategy, backend, queue, spp, width,
// height, integrator, traversal, reorder, sort, set, profile) and writes the JSON report to
// report_path; returns the image (height, width, 3) of mean radiance, row 0 at the top.
py::array_t<float> render(const py::dict& settings, const std::string& report_path);

}  // namespace sieve::python
