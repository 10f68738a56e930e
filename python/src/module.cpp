// sieve._core: the compiled half of the Python module `sieve` (python/sieve/__init__.py is the other).
#include "arrays.hpp"
#include "compact.hpp"
#include "render.hpp"

#include <sieve/compaction.hpp>

#include <pybind11/stl.h>

#include <algorithm>

namespace py = pybind11;

namespace {

sieve::backend backend_named(const std::string& name) { return sieve::backend_from_string(name); }

py::list strategy_list() {
  py::list out;
  for (const sieve::strategy_info& s : sieve::compaction_strategies()) {
    auto forms = [&](sieve::backend b) {
      py::list f;
      for (std::size_t i = 0; i < sieve::form_count; ++i)
        if (s.takes(b, static_cast<sieve::form>(i))) {
          std::string name(sieve::to_string(static_cast<sieve::form>(i)));  // "byte flags" -> "byte_flags"
          std::replace(name.begin(), name.end(), ' ', '_');
          f.append(name);
        }
      return f;
    };
    py::dict d;
    d["name"] = std::string(s.name);
    d["summary"] = std::string(s.summary);
    d["cpu"] = forms(sieve::backend::cpu);
    d["cuda"] = forms(sieve::backend::cuda);
    d["stable"] = s.stable;
    d["in_place"] = s.in_place;
    d["out_of_place"] = s.out_of_place;
    out.append(d);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "sieve's compiled core; use the package `sieve`";
  py::register_exception<sieve::error>(m, "Error", PyExc_ValueError);

  m.def("version", [] { return std::string(SIEVE_VERSION_STRING); });
  m.def("cuda_available", &sieve::cuda::available);
  m.def("device_description", &sieve::cuda::device_description);
  m.def("checked_default", &sieve::checked_default);
  m.def("set_checked_default", &sieve::set_checked_default);
  m.def("strategies", &strategy_list);
  m.def("resolve", [](const std::string& name, const std::string& backend, std::uint8_t form, bool in_place,
                      std::size_t n, std::size_t k, std::size_t item_bytes) {
    if (form >= sieve::form_count) throw sieve::error("resolve: no form " + std::to_string(form));
    return std::string(sieve::resolve_strategy(name, backend_named(backend), static_cast<sieve::form>(form), in_place, n,
                                               k, item_bytes));
  });
  m.def("compact", [](py::list items, py::object keep, std::uint8_t form, py::list out, bool in_place,
                      py::object count, py::object live_items, py::object live_removals, std::string strategy,
                      std::optional<bool> checked, std::uintptr_t stream, py::object scratch) {
    return sieve::python::compact({std::move(items), std::move(keep), form, std::move(out), in_place, std::move(count),
                                   std::move(live_items), std::move(live_removals), std::move(strategy), checked,
                                   stream, std::move(scratch)});
  });
  m.def("check_array", [](py::handle obj, const char* what) { sieve::python::view_of(obj, 0, what); });
  m.def("render", &sieve::python::render);
}
