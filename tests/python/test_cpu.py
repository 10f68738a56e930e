"""The Python module on the CPU (NumPy): every dtype, form and strategy against NumPy's own boolean
indexing and np.delete; records; out=; counts; bad input as sieve.Error with the library's message;
a render returned as an array."""
import os

import numpy as np
import pytest

import sieve

DTYPES = [np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32, np.int64,
          np.float16, np.float32, np.float64, np.bool_, np.complex64]
ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def cpu_strategies(form):
    return [s for s in sieve.strategies() if form in s["cpu"]]


def info(name):
    return next(s for s in sieve.strategies() if s["name"] == name)


def same_items(got, want, stable):
    if stable:
        np.testing.assert_array_equal(got, want)
    else:  # an unstable strategy keeps the same items in another order
        np.testing.assert_array_equal(np.sort(got, axis=0), np.sort(want, axis=0))


def sample(dtype, n, rng):
    return (rng.integers(0, 100, n) if dtype is not np.bool_ else rng.integers(0, 2, n)).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("strategy", [s["name"] for s in cpu_strategies("byte_flags")])
def test_every_dtype_matches_boolean_indexing(dtype, strategy):
    rng = np.random.default_rng(7)
    stable = info(strategy)["stable"]
    for n, share in [(0, 0.5), (1, 1.0), (1000, 0.01), (100_003, 0.5), (65_536, 0.99)]:
        x = sample(dtype, n, rng)
        keep = rng.random(n) < share
        got = sieve.compact(x, keep, strategy=strategy)
        assert type(got) is np.ndarray and got.dtype == x.dtype
        same_items(got, x[keep], stable)


def test_flags_bits_and_comparisons_agree():
    rng = np.random.default_rng(1)
    x = rng.random(10_000).astype(np.float32)
    keep = x > 0.3
    padded = np.pad(keep, (0, (-len(keep)) % 32))
    words = np.packbits(padded, bitorder="little").view(np.uint32)
    np.testing.assert_array_equal(sieve.compact(x, keep.view(np.uint8)), x[keep])
    np.testing.assert_array_equal(sieve.compact(x, sieve.bits(words), strategy="billeter"), x[keep])
    np.testing.assert_array_equal(sieve.compact(x, sieve.gt(0.3)), x[keep])
    np.testing.assert_array_equal(sieve.compact(x, sieve.le(0.3)), x[~keep])


def test_records_and_wide_items_move_together():
    rng = np.random.default_rng(2)
    n = 5000
    a, b, c = np.arange(n, dtype=np.uint32), rng.random((n, 3)), rng.integers(0, 9, n).astype(np.int8)
    keep = rng.random(n) < 0.4
    ra, rb, rc = sieve.compact((a, b, c), keep, strategy="scan")
    np.testing.assert_array_equal(ra, a[keep])
    np.testing.assert_array_equal(rb, b[keep])
    np.testing.assert_array_equal(rc, c[keep])


@pytest.mark.parametrize("strategy", [s["name"] for s in cpu_strategies("removal_list")])
def test_remove_matches_np_delete(strategy):
    rng = np.random.default_rng(3)
    n = 50_000
    x = rng.random(n)
    dead = rng.choice(n, 700, replace=False).astype(np.uint32)
    before = dead.copy()
    if info(strategy)["out_of_place"]:
        got = sieve.remove(x, dead, strategy=strategy)
    else:  # in place only
        y = x.copy()
        got = sieve.remove(y, dead, strategy=strategy, out=y)
        assert np.shares_memory(got, y)
    same_items(got, np.delete(x, dead), info(strategy)["stable"])
    np.testing.assert_array_equal(dead, before)  # the caller's list is not used as scratch


def test_out_in_place_and_count():
    x = np.arange(100, dtype=np.int32)
    keep = x % 7 == 0
    out = np.full(100, -1, dtype=np.int32)
    got = sieve.compact(x, keep, out=out)
    assert np.shares_memory(got, out)
    np.testing.assert_array_equal(got, x[keep])
    count = np.zeros(1, dtype=np.int64)
    whole = sieve.compact(x, keep, count=count)
    assert count[0] == keep.sum() and len(whole) == 100
    np.testing.assert_array_equal(whole[:count[0]], x[keep])
    y = x.copy()
    got = sieve.compact(y, keep, out=y, strategy="std")
    assert np.shares_memory(got, y)
    np.testing.assert_array_equal(got, x[keep])


@pytest.mark.parametrize("call, message", [
    (lambda x: sieve.compact(x, x[:5] > 1), "keep: 5 flags for 10 items"),
    (lambda x: sieve.compact(x, x.astype(np.float32)), "keep: byte flags are a 1-D bool or uint8 array, got 10 float32"),
    (lambda x: sieve.compact(x[::2], np.ones(5, bool)), "not contiguous"),
    (lambda x: sieve.compact(x, x > 1, strategy="cub"), "strategy 'cub' does not run on cpu"),
    (lambda x: sieve.compact(x, x > 1, strategy="nope"), "nope"),
    (lambda x: sieve.remove(x, np.array([1, 1], np.uint32)), "index 1 appears more than once"),
    (lambda x: sieve.remove(x, np.array([10], np.uint32)), "10"),
    (lambda x: sieve.remove(x, np.array([1, 10], np.int64)), "indices: index 10 is out of range for 10 items"),
    (lambda x: sieve.remove(x, np.array([-1], np.int16)), "indices: index -1 is out of range for 10 items"),
    (lambda x: sieve.remove(x, np.array([2**40], np.uint64)), f"index {2**40} is out of range"),
    (lambda x: sieve.remove(x, [1.5]), "a removal list holds integers, got float64"),
    (lambda x: sieve.remove(x, np.array([True])), "a removal list holds integers, got bool"),
    (lambda x: sieve.compact(x, x > 1, out=np.empty(4, np.float64)), "out: column 0 holds 4 items of 8 bytes; needs 10"),
    (lambda x: sieve.compact(x, sieve.bits(np.zeros(0, np.uint32))), "a bit mask of 0 words for 10 items"),
    (lambda x: sieve.compact("text", x > 1), "no array"),
    (lambda x: sieve.compact(x, x > 1, n=np.ones(1, np.uint64), count=np.zeros(1, np.uint64)), "CUDA arrays"),
    (lambda x: sieve.resolve(n=10, form="sideways"), "no form"),
])
def test_bad_input_is_one_clear_error(call, message):
    with pytest.raises(sieve.Error, match=None) as e:
        call(np.arange(10, dtype=np.float64))
    assert message in str(e.value)


def test_strategies_and_resolve():
    names = [s["name"] for s in sieve.strategies()]
    assert names[0] == "auto" and "redzone" in names and "billeter" in names
    picked = sieve.resolve(n=1 << 20, backend="cpu")
    assert picked in names and picked != "auto"
    assert sieve.resolve("billeter", n=10, backend="cpu") == "billeter"


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64])
def test_remove_takes_integer_indices_of_any_width(dtype):
    x = np.arange(100, dtype=np.float32)
    dead = np.array([3, 17, 4], dtype=dtype)
    np.testing.assert_array_equal(sieve.remove(x, dead), np.delete(x, [3, 17, 4]))
    np.testing.assert_array_equal(sieve.remove(x, np.array([3, 17, 4])), np.delete(x, [3, 17, 4]))  # NumPy's default int64
    np.testing.assert_array_equal(sieve.remove(x, [3, 17, 4]), np.delete(x, [3, 17, 4]))
    np.testing.assert_array_equal(sieve.remove(x, []), x)
    assert dead.dtype == dtype and list(dead) == [3, 17, 4]  # the caller's list is not changed


def test_render_measures_by_default_and_takes_routing_and_bvh():
    scene = os.path.join(ROOT, "scenes", "cornell-box", "cornell-box.toml")
    image, report = sieve.render(scene, backend="cpu", width=16, height=12, spp=1, routing="multisplit", bvh="binary")
    assert report["profile_stages"] is True and report["schema_version"] == 2
    assert "extend" in report["stages_ms"] and report["compaction_percent"] is not None
    assert report["routing"] == "multisplit"
    bare, plain = sieve.render(scene, backend="cpu", width=16, height=12, spp=1, profile=False)
    assert plain["profile_stages"] is False and plain["stages_ms"] == {} and plain["compaction_percent"] is None
    with pytest.raises(sieve.Error, match="routing"):
        sieve.render(scene, backend="cpu", width=16, height=12, spp=1, routing="sideways")


def test_render_returns_the_image_and_the_report():
    scene = os.path.join(ROOT, "scenes", "cornell-box", "cornell-box.toml")
    a, report = sieve.render(scene, backend="cpu", width=24, height=16, spp=2, strategy="billeter")
    b, _ = sieve.render(scene, backend="cpu", width=24, height=16, spp=2, strategy="std", queue="index")
    assert a.shape == (16, 24, 3) and a.dtype == np.float32
    assert np.isfinite(a).all() and a.mean() > 0
    np.testing.assert_array_equal(a, b)  # every strategy gives the same image
    assert report["backend"] == "cpu" and report["spp"] == 2
    with pytest.raises(sieve.Error, match="no setting colour"):
        sieve.render(scene, colour="red")
    with pytest.raises(sieve.Error):
        sieve.render(os.path.join(ROOT, "scenes", "no-such-scene.toml"))


def test_object_arrays_are_refused_and_structured_ones_move():
    # Object arrays held PyObject pointers, copied without their references: a crash calls later.
    objs = np.array([object() for _ in range(10)], dtype=object)
    with pytest.raises(sieve.Error, match="x: an array of Python objects"):
        sieve.compact(objs, np.ones(10, bool))
    with pytest.raises(sieve.Error, match="keep: an array of Python objects"):
        sieve.compact(np.arange(10.0), np.ones(10, dtype=object))
    mixed = np.zeros(4, dtype=[("a", "<i8"), ("o", "O")])
    with pytest.raises(sieve.Error, match="Python objects"):
        sieve.compact(mixed, np.ones(4, bool))
    # A structured dtype without out= (a TypeError before: its dtype rebuilt from its name).
    rec = np.zeros(10, dtype=[("a", "<i4"), ("b", "<f8")])
    rec["a"] = np.arange(10)
    got = sieve.compact(rec, rec["a"] % 2 == 0, strategy="std")
    assert got.dtype == rec.dtype and list(got["a"]) == [0, 2, 4, 6, 8]


def test_bytes_and_memoryviews_are_arrays():
    keep = np.array([1, 0, 1, 0, 1, 0], bool)
    assert bytes(sieve.compact(b"abcdef", keep, strategy="std")) == b"ace"
    assert bytes(sieve.compact(memoryview(bytearray(b"abcdef")), keep, strategy="std")) == b"ace"
    assert bytes(sieve.remove(b"abcdef", [0, 5], strategy="std")) == b"bcde"


@pytest.mark.parametrize("indices, message", [
    ([2**32 + 3], "index 4294967299 is out of range"),   # was wrapped to 3
    ([-1], "index -1 is out of range"),
    ([1.5], "holds integers, got float64"),
    ([True], "holds integers, got bool"),
    (["3"], "holds integers, got <U1"),
    (None, "holds integers, got object"),
    ("12", "holds integers, got <U2"),
])
def test_index_lists_are_never_wrapped(indices, message):
    with pytest.raises(sieve.Error, match=message):
        sieve.remove(np.arange(10.0), indices)


def test_index_lists_of_python_integers_work():
    x = np.arange(10.0)
    np.testing.assert_array_equal(sieve.remove(x, [3, np.int64(1)], strategy="std"), np.delete(x, [1, 3]))


@pytest.mark.parametrize("setting, message", [
    ({"spp": -1}, "spp -1 is not a whole number from 1 to 1048576"),
    ({"spp": 0}, "spp 0 is not"),
    ({"width": 0}, "width 0 is not"),            # was read as "the scene's"
    ({"height": 2**40}, "height 1099511627776 is not"),
    ({"width": 1.5}, "width 1.5 is not"),
    ({"spp": True}, "spp True is not"),
    ({"strategy": 5}, "strategy 5 is not a string"),
    ({"set": [1]}, "set holds 1"),
    ({"set": 3}, "set 3 is not a list"),
    ({"profile": "yes"}, "profile 'yes' is not True or False"),
])
def test_render_arguments_are_checked(setting, message):
    scene = os.path.join(ROOT, "scenes", "cornell-box", "cornell-box.toml")
    with pytest.raises(sieve.Error, match=message):
        sieve.render(scene, backend="cpu", **setting)


def test_random_arguments_give_results_or_clear_errors():
    """A plain random property test: compact, remove and render with arguments drawn from a pool of
    good and bad values either return a result of the right length or raise sieve.Error (a
    ValueError) or TypeError: never another exception, never a crash of the interpreter."""
    import random
    rng = random.Random(44)
    arrays = [np.arange(10.0), np.arange(10, dtype=np.uint32), np.ones(10, bool), np.zeros(0, np.uint8),
              np.ones(3, object), np.array(3.0), np.ones((10, 2), np.float32), np.arange(20.0)[::2],
              np.zeros(10, dtype=[("a", "<i4"), ("b", "<f8")]), np.zeros(4, dtype=[("a", "<i8"), ("o", "O")]),
              np.array([1, 1], np.uint32), np.array([9], np.int32), np.array([-1], np.int32), np.ones(10, np.int64)]
    scalars = [None, 0, -1, 2**32 + 3, 2**70, 1.5, float("nan"), "x", b"abcdefghij", memoryview(b"abcd"), [], [1, 2],
               [2**40], [-3], [[1]], (1, 2), sieve.bits(np.zeros(1, np.uint32)), sieve.gt(3), sieve.eq("a")]
    pool = arrays + scalars
    options = {"strategy": ["auto", "std", "billeter", "nope", 5], "out": [None, np.empty(10), np.empty(3, np.uint8), "x"],
               "count": [None, np.zeros(1, np.int64), np.zeros(1, np.float64), 7], "checked": [None, True, "yes"]}
    for _ in range(3000):
        f = rng.choice([sieve.compact, sieve.remove])
        x, keep = rng.choice(pool), rng.choice(pool)
        kwargs = {k: rng.choice(v) for k, v in options.items() if rng.random() < 0.3}
        try:
            got = f(x, keep, **kwargs)
        except (ValueError, TypeError):
            continue
        assert got is None or len(got) <= len(x) or kwargs.get("count") is not None
    scene = os.path.join(ROOT, "scenes", "no-such-scene.toml")
    values = [None, -1, 0, 1, 2**40, 1.5, "cpu", True, [], ["film.spp=1"], [1], {}, b"x"]
    for _ in range(300):
        settings = {k: rng.choice(values) for k in ("spp", "width", "height", "strategy", "backend", "queue", "set",
                                                     "profile", "integrator") if rng.random() < 0.3}
        with pytest.raises((ValueError, TypeError)):
            sieve.render(scene, **settings)
