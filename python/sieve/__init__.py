"""sieve: stream compaction of NumPy, CuPy and PyTorch arrays (and anything with __dlpack__ or
__cuda_array_interface__), without copies, on the CPU or on the GPU on the caller's stream.

    import numpy as np, sieve
    x = np.arange(10, dtype=np.float32)
    sieve.compact(x, x % 3 == 0)          # array([0., 3., 6., 9.], dtype=float32)
    sieve.remove(x, np.array([1, 2], dtype=np.uint32))

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
    """'numpy', 'torch', 'cupy' or None, without importing any of them."""
    for name, attr in (("numpy", "ndarray"), ("torch", "Tensor"), ("cupy", "ndarray")):
        mod = _sys.modules.get(name)
        if mod is not None and isinstance(a, getattr(mod, attr)):
            return name
    return None


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
    shape = (n, *a.shape[1:])
    if kind == "torch":
        return _sys.modules["torch"].empty(shape, dtype=a.dtype, device=a.device)
    if kind == "cupy":
        return _sys.modules["cupy"].empty(shape, dtype=a.dtype)
    if kind != "numpy" and (_on_cuda(a) or hasattr(a, "__cuda_array_interface__")):
        import cupy  # another CUDA array (JAX, Numba): the result is a CuPy array on the current device
        return cupy.empty(shape, dtype=str(a.dtype))
    import numpy
    return numpy.empty(shape, dtype=numpy.dtype(str(a.dtype)))


def _on_cuda(a):
    device = getattr(a, "__dlpack_device__", None)
    return device is not None and device()[0] in (2, 13)


def _scratch(a, kind):
    if kind == "torch":
        torch = _sys.modules["torch"]
        return lambda nbytes: torch.empty(nbytes, dtype=torch.uint8, device=a.device)
    import cupy
    return lambda nbytes: cupy.empty(nbytes, dtype=cupy.uint8)


def _copy(a, kind):
    """A copy of a removal list (the strategies use it as scratch)."""
    if kind == "torch":
        return a.clone()
    if kind in ("numpy", "cupy"):
        return a.copy()
    import numpy
    return numpy.array(a, copy=True)


def _columns(x):
    return (list(x), True) if isinstance(x, (tuple, list)) else ([x], False)


def _call(x, keep, form, *, strategy, out, count, n, k, checked, stream, room):
    cols, is_record = _columns(x)
    kind = _module_of(cols[0])
    s = _stream(cols[0], kind, stream)
    in_place = out is not None and all(o is i for o, i in zip(_columns(out)[0], cols))
    if kind is None:
        for c in cols:
            _core.check_array(c, "x")  # anything else with __dlpack__, __cuda_array_interface__ or a buffer
    if out is None:
        out_cols = [_empty(c, kind, room(len(c))) for c in cols]
    else:
        out_cols = _columns(out)[0]
    m = _core.compact(cols, keep, form, out_cols, in_place, count, n, k, strategy, checked, s,
                      _scratch(cols[0], kind) if kind != "numpy" else None)
    result = [o if m is None else o[:m] for o in out_cols]
    return tuple(result) if is_record else result[0]


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
    if isinstance(keep, comparison):
        keep = keep.flags(_columns(x)[0][0])
    form = 2 if isinstance(keep, bits) else 1
    keep = keep.words if isinstance(keep, bits) else keep
    return _call(x, keep, form, strategy=strategy, out=out, count=count, n=n, k=None, checked=checked,
                 stream=stream, room=lambda size: size)


def remove(x, indices, *, strategy="auto", out=None, count=None, n=None, k=None, checked=None, stream=None):
    """x without the items at `indices` (distinct, each < len(x); uint32 or int32, checked unless
    checked=False). The indices are copied first (the strategies use the list as scratch).
    count, n: as for compact(); k: with n, a one-element device array holding the live index count."""
    cols = _columns(x)[0]
    kind = _module_of(indices)
    if kind is None and not hasattr(indices, "__dlpack__") and not hasattr(indices, "__cuda_array_interface__"):
        import numpy
        indices = numpy.asarray(indices, dtype=numpy.uint32)
        kind = "numpy"
    scratch = _copy(indices, kind)
    count_k = len(scratch)
    return _call(x, scratch, 0, strategy=strategy, out=out, count=count, n=n, k=k, checked=checked,
                 stream=stream, room=lambda size: size - min(count_k, size) if n is None else size)


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
    """Render a scene file (.toml, .obj, .gltf): returns (image, report), the image a float32 NumPy
    array (height, width, 3) of mean radiance, row 0 at the top, and the report the dict that
    `sieve render --json` writes. Settings: strategy, backend ("auto", "cpu", "cuda"), queue
    ("pass", "index", "append"), spp, width, height, integrator, traversal, reorder, sort,
    set (a list of "key=value" scene overrides), profile (per-stage times)."""
    known = {"strategy", "backend", "queue", "spp", "width", "height", "integrator", "traversal", "reorder",
             "sort", "set", "profile"}
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
