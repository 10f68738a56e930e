// sieve._core.compact: one compaction call from Python, over arrays seen without a copy (arrays.hpp).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>

namespace sieve::python {

namespace py = pybind11;

struct compact_call {
  py::list items;              // the record's columns (arrays of equal length)
  py::object keep;             // byte flags (bool/uint8), bit-mask words (uint32) or removal indices (uint32/int32)
  std::uint8_t form = 1;       // sieve::form
  py::list out;                // the output's columns; `items` itself for in place
  bool in_place = false;
  py::object count;            // None: wait and return the count; else a device (or host) array of one 64-bit integer
  py::object live_items;       // None, or a device array of one 64-bit integer: the live n (items' size is the capacity)
  py::object live_removals;    // the same for the live k of a removal list
  std::string strategy = "auto";
  std::optional<bool> checked;
  std::uintptr_t stream = 0;   // the caller's CUDA stream (cudaStream_t)
  py::object scratch;          // scratch(nbytes) -> a uint8 array of nbytes on the items' device
};

// The number kept, or None when `count` was given (then it is written there, in stream order).
py::object compact(const compact_call& call);

}  // namespace sieve::python
