#include "arrays.hpp"

#include <sieve/compaction/error.hpp>

#include <dlpack/dlpack.h>

#include <unordered_map>
#include <utility>
#include <vector>

namespace sieve::python {
namespace {

[[noreturn]] void fail(const char* what, const std::string& msg) { throw sieve::error(std::string(what) + ": " + msg); }

// C order without gaps: each stride (in elements) is the product of the sizes after it; a dimension
// of size 1 may have any stride.
bool c_contiguous(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides) {
  std::int64_t expected = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

// Fills items and item_bytes from a shape (elements), checking the strides (elements; empty: C order).
void set_shape(array_view& v, const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides,
               const char* what) {
  if (shape.empty()) fail(what, "a 0-dimensional array (a scalar); sieve takes arrays of items");
  if (!strides.empty() && !c_contiguous(shape, strides))
    fail(what, "the " + v.dtype() + " array is not contiguous; pass a contiguous copy (e.g. x.copy(), x.contiguous())");
  std::uint64_t inner = v.element_bytes;
  for (std::size_t d = 1; d < shape.size(); ++d) inner *= static_cast<std::uint64_t>(shape[d]);
  if (inner == 0 || inner >= (std::uint64_t{1} << 31))
    fail(what, "an item (all dimensions after the first) of " + std::to_string(inner) + " bytes");
  v.items = static_cast<std::size_t>(shape[0]);
  v.item_bytes = static_cast<std::uint32_t>(inner);
}

std::vector<std::int64_t> ints(py::handle seq) {
  std::vector<std::int64_t> out;
  for (py::handle h : seq) out.push_back(h.cast<std::int64_t>());
  return out;
}

// Whether a buffer format holds Python object pointers: 'O' outside the field names (which sit
// between colons in a structured format, "T{<i:a:O:b:}").
bool holds_objects(const std::string& fmt) {
  bool in_name = false;
  for (const char c : fmt) {
    if (c == ':') in_name = !in_name;
    else if (!in_name && c == 'O') return true;
  }
  return false;
}

// The buffer protocol's format character (NumPy's: "<f", "=I", "?", "Zd"...) as kind and size.
void set_format(array_view& v, std::string fmt, std::size_t itemsize) {
  if (!fmt.empty() && (fmt[0] == '<' || fmt[0] == '=' || fmt[0] == '@' || fmt[0] == '!' || fmt[0] == '>'))
    fmt = fmt.substr(1);
  v.element_bytes = static_cast<std::uint32_t>(itemsize);
  if (holds_objects(fmt)) v.kind = 'O';
  else if (fmt == "?") v.kind = 'b';
  else if (fmt == "e" || fmt == "f" || fmt == "d" || fmt == "g") v.kind = 'f';
  else if (fmt.size() == 2 && fmt[0] == 'Z') v.kind = 'c';
  else if (fmt.size() == 1 && std::string("bhilq").find(fmt[0]) != std::string::npos) v.kind = 'i';
  else if (fmt.size() == 1 && std::string("BHILQ").find(fmt[0]) != std::string::npos) v.kind = 'u';
  else v.kind = 'V';  // a structured item: moved as bytes
}

// False when obj's buffer cannot be read (CuPy's arrays say they have one and refuse it).
bool from_buffer(py::handle obj, const char* what, array_view& v) {
  auto buf = std::shared_ptr<Py_buffer>(new Py_buffer{}, [](Py_buffer* b) {
    if (b->obj) PyBuffer_Release(b);
    delete b;
  });
  if (PyObject_GetBuffer(obj.ptr(), buf.get(), PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();
    buf->obj = nullptr;
    return false;
  }
  v.data = static_cast<std::byte*>(buf->buf);
  v.writable = !buf->readonly;
  set_format(v, buf->format ? buf->format : "B", static_cast<std::size_t>(buf->itemsize));
  // Python objects moved as bytes would be references copied without their counts: the interpreter
  // frees what the copies still point to.
  if (v.kind == 'O')
    fail(what, "an array of Python objects (dtype object); sieve moves plain data only (convert it, e.g. x.astype(np.int64))");
  std::vector<std::int64_t> shape(buf->shape, buf->shape + buf->ndim), strides;
  for (int d = 0; d < buf->ndim; ++d) {
    if (buf->strides[d] % buf->itemsize != 0) fail(what, "strides that are not a multiple of the element size");
    strides.push_back(buf->strides[d] / buf->itemsize);
  }
  set_shape(v, shape, strides, what);
  v.owner = std::move(buf);
  return true;
}

// PyTorch's dtypes (singletons) as kind and size, looked up by name once each.
std::pair<char, std::uint32_t> torch_dtype(py::handle dtype) {
  static std::unordered_map<PyObject*, std::pair<char, std::uint32_t>> known;
  if (auto it = known.find(dtype.ptr()); it != known.end()) return it->second;
  std::string name = py::str(dtype);  // "torch.float32"
  name = name.substr(name.find('.') + 1);
  const auto bytes = dtype.attr("itemsize").cast<std::uint32_t>();
  char kind = 'V';
  if (name == "bool") kind = 'b';
  else if (name.rfind("uint", 0) == 0) kind = 'u';
  else if (name.rfind("int", 0) == 0) kind = 'i';
  else if (name.rfind("float", 0) == 0 || name == "half" || name == "double") kind = 'f';
  else if (name.rfind("complex", 0) == 0) kind = 'c';
  return known[dtype.ptr()] = {kind, bytes};
}

array_view from_torch(py::handle t, const char* what) {
  array_view v;
  std::tie(v.kind, v.element_bytes) = torch_dtype(t.attr("dtype"));
  if (t.attr("is_cuda").cast<bool>()) v.device = t.attr("get_device")().cast<int>();
  else if (!t.attr("is_cpu").cast<bool>()) fail(what, "a tensor on " + std::string(py::str(t.attr("device"))) + "; sieve takes the CPU and CUDA");
  v.data = reinterpret_cast<std::byte*>(t.attr("data_ptr")().cast<std::uintptr_t>());
  set_shape(v, ints(t.attr("shape")), ints(t.attr("stride")()), what);
  return v;
}

array_view from_cuda_array_interface(py::handle obj, const char* what) {
  const py::dict cai = obj.attr("__cuda_array_interface__");
  const std::string typestr = py::str(cai["typestr"]);  // "<f4"
  array_view v;
  v.device = -2;  // the current device (the interface does not say)
  const char k = typestr.size() >= 3 ? typestr[1] : 'V';
  v.kind = k == 'b' || k == 'i' || k == 'u' || k == 'f' || k == 'c' ? k : 'V';
  v.element_bytes = static_cast<std::uint32_t>(std::stoul(typestr.substr(2)));
  const py::tuple data = cai["data"];
  v.data = reinterpret_cast<std::byte*>(data[0].cast<std::uintptr_t>());
  v.writable = !data[1].cast<bool>();
  std::vector<std::int64_t> strides;
  if (cai.contains("strides") && !cai["strides"].is_none()) {
    for (std::int64_t s : ints(cai["strides"])) {
      if (s % v.element_bytes != 0) fail(what, "strides that are not a multiple of the element size");
      strides.push_back(s / v.element_bytes);
    }
  }
  set_shape(v, ints(cai["shape"]), strides, what);
  return v;
}

char dlpack_kind(std::uint8_t code) {
  switch (code) {
    case kDLInt: return 'i';
    case kDLUInt: return 'u';
    case kDLFloat: return 'f';
    case kDLBfloat: return 'f';
    case kDLComplex: return 'c';
    case 6: return 'b';  // kDLBool (DLPack 0.8; Debian 12 ships 0.6)
    default: return 'V';
  }
}

array_view from_dlpack(py::handle obj, std::uintptr_t stream, const char* what) {
  const py::tuple device = obj.attr("__dlpack_device__")();
  const int type = device[0].cast<int>();
  const bool cuda = type == kDLCUDA || type == kDLCUDAManaged;
  if (!cuda && type != kDLCPU && type != kDLCUDAHost)
    fail(what, "an array on DLPack device type " + std::to_string(type) + "; sieve takes the CPU and CUDA");
  // DLPack's stream argument: the consumer's stream (1 is CUDA's legacy default stream, 0 is not allowed).
  py::object capsule = cuda ? obj.attr("__dlpack__")(py::arg("stream") = stream ? stream : 1) : obj.attr("__dlpack__")();
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (!managed) {
    PyErr_Clear();
    fail(what, "__dlpack__ returned no DLPack tensor");
  }
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");  // ours now: we call its deleter
  std::shared_ptr<void> owner(managed, [](void* m) {
    auto* t = static_cast<DLManagedTensor*>(m);
    if (t->deleter) t->deleter(t);
  });
  const DLTensor& t = managed->dl_tensor;
  array_view v;
  v.device = cuda ? t.device.device_id : -1;
  v.kind = dlpack_kind(t.dtype.code);
  v.element_bytes = static_cast<std::uint32_t>(t.dtype.bits / 8 * t.dtype.lanes);
  v.data = static_cast<std::byte*>(t.data) + t.byte_offset;
  std::vector<std::int64_t> shape(t.shape, t.shape + t.ndim), strides;
  if (t.strides) strides.assign(t.strides, t.strides + t.ndim);
  set_shape(v, shape, strides, what);
  v.owner = std::move(owner);
  return v;
}

bool is_torch_tensor(py::handle obj) {
  PyObject* modules = PyImport_GetModuleDict();
  PyObject* torch = PyDict_GetItemString(modules, "torch");  // loaded by the caller, never by us
  if (!torch) return false;
  static PyObject* tensor_type = nullptr;
  if (!tensor_type) tensor_type = PyObject_GetAttrString(torch, "Tensor");  // kept for the process
  if (!tensor_type) {
    PyErr_Clear();
    return false;
  }
  return PyObject_IsInstance(obj.ptr(), tensor_type) == 1;
}

}  // namespace

std::string array_view::dtype() const {
  const std::string bits = std::to_string(element_bytes * 8);
  switch (kind) {
    case 'b': return "bool";
    case 'i': return "int" + bits;
    case 'u': return "uint" + bits;
    case 'f': return "float" + bits;
    case 'c': return "complex" + bits;
    case 'O': return "object";
    default: return "void" + bits;
  }
}

array_view view_of(py::handle obj, std::uintptr_t stream, const char* what) {
  if (obj.is_none()) fail(what, "None where an array was expected");
  if (array_view v; PyObject_CheckBuffer(obj.ptr()) && from_buffer(obj, what, v)) return v;
  if (is_torch_tensor(obj)) return from_torch(obj, what);
  if (py::hasattr(obj, "__dlpack__") && py::hasattr(obj, "__dlpack_device__")) return from_dlpack(obj, stream, what);
  if (py::hasattr(obj, "__cuda_array_interface__")) return from_cuda_array_interface(obj, what);
  fail(what, "a " + std::string(py::str(py::type::of(obj).attr("__name__"))) +
                 " is no array (sieve takes NumPy, CuPy, PyTorch and anything with __dlpack__ or "
                 "__cuda_array_interface__)");
}

}  // namespace sieve::python
