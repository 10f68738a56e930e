"""sieve: stream compaction of NumPy, CuPy and PyTorch arrays (and anything with __dlpack__ or
__cuda_array_interface__), without copies, on the CPU or on the GPU on the caller's stream.

    import numpy as np, sieve
    x = np.arange(10, dtype=np.float32)
    sieve.compact(x, x % 3 == 0)          # array([0., 3., 6., 9.], dtype=float32)
    sieve.remove(x, np.array([1, 2]))      # any integer width

See docs/python.md.
"""
import json as _json
import os as _os
import sys as _sys
import tempfile as _tempfile

from . import _core

Error = _core.Error  # every error sieve reports (a ValueError), with the library's message
__version__ = _core.version()

_FORMS = {"removal_list": 0, "byte_flags": 1, "bit_mask": 2, "predicate": 3}


class bits:
    """A bit mask: item i is kept when bit i % 32 of words[i // 32] is 1 (uint32 words, at least
    ceil(n / 32) of them). NumPy: bits(np.packbits(keep, bitorder="little").view(np.uint32)) after
    padding keep to a multiple of 32."""

    __slots__ = ("words",)

    def __init__(self, words):
        self.words = words


class comparison:
    """keep = x <op> value, evaluated by the array's own library (one elementwise pass) and
    compacted as byte flags; built by sieve.lt, le, gt, ge, eq, ne. For a record, column 0."""

    __slots__ = ("op", "value")
    _OPS = {"lt": "__lt__", "le": "__le__", "gt": "__gt__", "ge": "__ge__", "eq": "__eq__", "ne": "__ne__"}

    def __init__(self, op, value):
        if op not in self._OPS:
            raise Error(f"comparison: no operator {op!r} (one of {', '.join(self._OPS)})")
        self.op, self.value = op, value

    def flags(self, x):
        return getattr(x, self._OPS[self.op])(self.value)


def lt(value): return comparison("lt", value)
def le(value): return comparison("le", value)
def gt(value): return comparison("gt", value)
def ge(value): return comparison("ge", value)
def eq(value): return comparison("eq", value)
def ne(value): return comparison("ne", value)


def _module_of(a):
    """'numpy', 'torch', 'cupy' (the array's library, by its type's module, without importing any)
    or None for another kind of array."""
    top = type(a).__module__.partition(".")[0]
    return top if top in ("numpy", "torch", "cupy") else None


def _stream(a, kind, stream):
    """The caller's CUDA stream for a (an int): the one given, else the framework's current one."""
    if stream is not None:
        return int(getattr(stream, "cuda_stream", getattr(stream, "ptr", stream)))
    if kind == "torch" and a.is_cuda:
        return _sys.modules["torch"]._C._cuda_getCurrentRawStream(a.get_device())
    if kind == "cupy":
        return _sys.modules["cupy"].cuda.get_current_stream().ptr
    return 0


def _empty(a, kind, n):
    """An uninitialised array of n items shaped and typed like a's items, of a's kind and device."""
    if kind == "torch":
        return _sys.modules["torch"].empty((n, *a.shape[1:]), dtype=a.dtype, device=a.device)
    if kind == "cupy":
        return _sys.modules["cupy"].empty((n, *a.shape[1:]), dtype=a.dtype)
    if kind != "numpy" and (_on_cuda(a) or hasattr(a, "__cuda_array_interface__")):
        import cupy  # another CUDA array (JAX, Numba): the result is a CuPy array on the current device
        return cupy.empty((n, *a.shape[1:]), dtype=str(a.dtype))
    import numpy
    if kind != "numpy":  # another host array: bytes, memoryview, array.array, a DLPack host array
        try:
            a = numpy.asarray(memoryview(a))
        except TypeError:
            a = numpy.from_dlpack(a)
    return numpy.empty((n, *a.shape[1:]), dtype=a.dtype)  # the dtype itself: structured ones too


def _on_cuda(a):
    device = getattr(a, "__dlpack_device__", None)
    return device is not None and device()[0] in (2, 13)


class _Scratch:
    """The CUDA calls' workspace on one device and stream, kept between calls (calls on one stream
    run in order, so they can share it) and grown when a call needs more. While the stream is being
    captured into a CUDA graph each call gets a workspace of its own from the framework's allocator
    (PyTorch's graph pool; CuPy's pool), which the graph keeps using on replay."""

    __slots__ = ("kind", "device", "stream", "buffer")

    def __init__(self, kind, device, stream):
        self.kind, self.device, self.stream, self.buffer = kind, device, stream, None

    def _new(self, nbytes):
        if self.kind == "torch":
            torch = _sys.modules["torch"]
            return torch.empty(nbytes, dtype=torch.uint8, device=self.device)
        import cupy
        return cupy.empty(nbytes, dtype=cupy.uint8)

    def _capturing(self):
        if self.kind == "torch":
            return _sys.modules["torch"].cuda.is_current_stream_capturing()
        import cupy
        return cupy.cuda.runtime.streamIsCapturing(self.stream) != 0

    def __call__(self, nbytes):
        if self.stream is None or self._capturing():
            return self._new(nbytes)
        if self.buffer is None or len(self.buffer) < nbytes:
            self.buffer = None  # released before the larger one is taken
            self.buffer = self._new(max(nbytes, 1 << 16))
        return self.buffer


_scratches = {}


def _scratch(a, kind, stream, given):
    """The workspace source for a CUDA call on `stream`; a stream named by the caller (stream=) gets
    a fresh workspace each call (the framework's allocator only knows its own current streams)."""
    if given:
        return _Scratch(kind, a.device if kind == "torch" else None, None)
    device = a.get_device() if kind == "torch" else -1
    key = (kind, device, stream)
    s = _scratches.get(key)
    if s is None:
        s = _scratches[key] = _Scratch(kind, a.device if kind == "torch" else None, stream)
    return s


def _copy(a, kind):
    """A copy of a removal list (the strategies use it as scratch)."""
    if kind == "torch":
        return a.clone()
    if kind in ("numpy", "cupy"):
        return a.copy()
    import numpy
    return numpy.array(a, copy=True)


def _columns(x):
    """The arrays of x: a record's (a tuple or list of arrays), else x alone."""
    cols = list(x) if isinstance(x, (tuple, list)) else [x]
    if not cols:
        raise Error("x: a record of no arrays (a record has 1 to 8)")
    return cols


def _call(x, keep, form, strategy, out, count, n, k, checked, stream, removed):
    if not isinstance(strategy, str):
        raise Error(f"strategy: {strategy!r} is not a strategy's name (see sieve.strategies())")
    if checked is not None and not isinstance(checked, bool):
        raise Error(f"checked: {checked!r} is not True, False or None")
    record = isinstance(x, (tuple, list))
    cols = _columns(x)
    a = cols[0]
    kind = _module_of(a)
    s = _stream(a, kind, stream)
    if kind is None:
        for c in cols:
            _core.check_array(c, "x")  # anything else with __dlpack__, __cuda_array_interface__ or a buffer
    if out is None:
        outs, in_place = [_empty(c, kind, len(c) - removed) for c in cols], False
    else:
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        in_place = len(outs) == len(cols) and all(o is c for o, c in zip(outs, cols))
    scratch = _scratch(a, kind, s, stream is not None) if kind in ("torch", "cupy") else None
    m = _core.compact(cols, keep, form, outs, in_place, count, n, k, strategy, checked, s, scratch)
    if m is not None:
        outs = [o[:m] for o in outs]
    return tuple(outs) if record else outs[0]


def compact(x, keep, *, strategy="auto", out=None, count=None, n=None, checked=None, stream=None):
    """The items of x whose keep entry is set, in order for stable strategies.

    x: an array (its first dimension counts the items), or a tuple of up to eight such arrays of
       equal length moved together as one record.
    keep: a bool or uint8 array of len(x) flags; sieve.bits(words) for a bit mask; or a comparison
       (sieve.gt(0.5), ...) against column 0.
    strategy: a name of sieve.strategies() ("auto" picks one; sieve.resolve says which).
    out: where to write (arrays like x, room for len(x) items); out=x compacts in place.
    count: None waits for the count and returns out[:m]. A one-element int64/uint64 array on x's
       device: the count is written there in stream order, nothing waits, and out (whole) is
       returned; this form can be captured in a CUDA graph (torch.cuda.graph, CuPy's capture).
    n: with count=, a one-element device array holding the live item count (len(x) is then the
       capacity): a graph replayed with other counts.
    """
    form = 1
    if isinstance(keep, bits):
        form, keep = 2, keep.words
    elif isinstance(keep, comparison):
        keep = keep.flags(_columns(x)[0])
    return _call(x, keep, form, strategy, out, count, n, None, checked, stream, 0)


def _is_integer_dtype(a, kind):
    if kind == "torch":
        return not (a.dtype.is_floating_point or a.dtype.is_complex or a.dtype == _sys.modules["torch"].bool)
    return a.dtype.kind in ("i", "u")  # NumPy and CuPy dtypes


def _index_list(indices, kind, n):
    """A removal list as the library takes it: a copy in uint32 (the strategies use the list as
    scratch). Integer arrays of any width are accepted: in host memory an index of another width than
    32 bits is checked to fit (0 <= i < n), the error naming it; on a CUDA device (no wait, so a
    CUDA graph can capture the call) an index outside 0 .. 2^32 - 1 becomes 2^32 - 1, which the
    library's check then refuses as out of range."""
    if kind is None and not hasattr(indices, "__dlpack__") and not hasattr(indices, "__cuda_array_interface__"):
        import numpy
        indices = numpy.asarray(indices)
        if indices.size == 0:
            indices = indices.astype(numpy.uint32)
        kind = "numpy"
    if kind is None:
        return _copy(indices, kind)  # another library's array: the core checks its dtype
    if not _is_integer_dtype(indices, kind):
        raise Error(f"indices: a removal list holds integers, got {indices.dtype}")
    if str(indices.dtype).rpartition(".")[2] in ("uint32", "int32"):
        return _copy(indices, kind)  # as the library takes them (it checks them unless checked=False)
    if (kind == "numpy" or (kind == "torch" and not indices.is_cuda)) and len(indices):
        lo, hi = int(indices.min()), int(indices.max())
        bad = lo if lo < 0 else hi if hi >= n else None
        if bad is not None:
            raise Error(f"indices: index {bad} is out of range for {n} items")
    if kind == "numpy":
        return indices.astype("uint32")  # a copy
    if kind == "torch":
        torch = _sys.modules["torch"]
        wide = indices.to(torch.int64)
        wide = torch.where((wide < 0) | (wide > 0xFFFFFFFF), torch.full_like(wide, 0xFFFFFFFF), wide)
        return wide.to(torch.int32)  # the same 32 bits as uint32, which older PyTorch lacks
    cupy = _sys.modules["cupy"]
    wide = indices.astype(cupy.int64) if indices.dtype.kind == "i" else indices.astype(cupy.uint64)
    return cupy.where((wide < 0) | (wide > 0xFFFFFFFF), 0xFFFFFFFF, wide).astype(cupy.uint32)


def remove(x, indices, *, strategy="auto", out=None, count=None, n=None, k=None, checked=None, stream=None):
    """x without the items at `indices` (distinct, each in 0 .. len(x) - 1; a list or an integer
    array of any width, checked unless checked=False). The indices are copied first (to uint32:
    the strategies use the list as scratch).
    count, n: as for compact(); k: with n, a one-element device array holding the live index count."""
    first = _columns(x)[0]
    scratch = _index_list(indices, _module_of(indices), len(first))
    removed = min(len(scratch), len(first)) if n is None else 0  # live counts: out holds the capacity
    return _call(x, scratch, 0, strategy, out, count, n, k, checked, stream, removed)


def strategies():
    """Every strategy of this build: name, summary, the forms it takes on the CPU and on CUDA,
    stable, in place, out of place."""
    return _core.strategies()


def resolve(strategy="auto", *, n, backend="cuda", form="byte_flags", k=0, item_bytes=4, in_place=False):
    """The strategy that runs for this call shape (what `auto` picks)."""
    if form not in _FORMS:
        raise Error(f"resolve: no form {form!r} (one of {', '.join(_FORMS)})")
    return _core.resolve(strategy, backend, _FORMS[form], in_place, n, k, item_bytes)


def cuda_available():
    """True when this build has the CUDA backend and a device is visible."""
    return _core.cuda_available()


def render(scene, **settings):
    """Render a scene file (.toml, .obj, .ply, .gltf, .glb): returns (image, report), the image a
    float32 NumPy array (height, width, 3) of mean radiance, row 0 at the top, and the report the
    dict that `sieve render --json` writes. Settings: strategy, backend ("auto", "cpu", "cuda"),
    queue ("pass", "index", "append"), routing ("branch", "multisplit", "queues", "sort",
    "megakernel"), bvh ("auto", "binary", "cwbvh", "cwbvh-thread"), spp, width, height, integrator,
    traversal, reorder, sort, set (a list of "key=value" scene overrides) and profile (per-stage
    times, measured by default as `sieve render` does; profile=False for the bare frame time)."""
    known = {"strategy", "backend", "queue", "routing", "bvh", "spp", "width", "height", "integrator", "traversal",
             "reorder", "sort", "set", "profile"}
    unknown = sorted(set(settings) - known)
    if unknown:
        raise Error(f"render: no setting {', '.join(unknown)} (one of {', '.join(sorted(known))})")
    if isinstance(settings.get("set"), str):
        settings["set"] = [settings["set"]]
    with _tempfile.TemporaryDirectory(prefix="sieve-render-") as tmp:
        path = _os.path.join(tmp, "report.json")
        image = _core.render({"scene": _os.fspath(scene), **settings}, path)
        with open(path, encoding="utf-8") as f:
            return image, _json.load(f)
