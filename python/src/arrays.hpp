// An array handed in from Python, seen without a copy: NumPy and anything with the buffer protocol on
// the host, PyTorch tensors, and anything with __dlpack__ or __cuda_array_interface__ (CuPy, JAX,
// Numba) on the host or a CUDA device. The first dimension counts the items; the others (C order,
// contiguous) make up one item, so an (n, 3) float32 array is n items of 12 bytes.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace sieve::python {

namespace py = pybind11;

struct array_view {
  std::byte* data = nullptr;
  std::size_t items = 0;         // the first dimension
  std::uint32_t item_bytes = 0;  // bytes of one item (the element times the other dimensions)
  char kind = 'u';               // 'b' bool, 'i' signed, 'u' unsigned, 'f' float, 'c' complex, 'V' bytes (structured), 'O' objects (refused)
  std::uint32_t element_bytes = 0;
  int device = -1;               // -1: host memory; else the CUDA device
  bool writable = true;
  std::shared_ptr<void> owner;   // keeps a DLPack tensor or a buffer alive while the view is used

  bool on_device() const { return device >= 0; }
  // "float32", "uint8", "bool": NumPy's name for the element type.
  std::string dtype() const;
};

// Sees `obj` as an array; `stream` is the CUDA stream the caller will use it on (DLPack's stream
// argument), `what` names it in errors ("x", "keep", "out"). Throws sieve::error for an object that
// is no array, a non-contiguous one, an unsupported element type or a device other than host/CUDA.
array_view view_of(py::handle obj, std::uintptr_t stream, const char* what);

}  // namespace sieve::python
