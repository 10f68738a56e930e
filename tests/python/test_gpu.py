"""The Python module on a CUDA device with CuPy and PyTorch: every dtype and CUDA strategy against
the framework's own boolean indexing, removal lists, bit masks, records, zero-copy out=, the
device-count form captured in a CUDA graph and replayed with changing counts, and bad input.
Skipped (with the reason) where sieve has no CUDA backend or no device, or the framework is missing."""
import numpy as np
import pytest

import sieve

if not sieve.cuda_available():
    pytest.skip("sieve has no CUDA device here (a CPU-only build or no GPU)", allow_module_level=True)

DTYPES = ["uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
          "float16", "float32", "float64", "bool"]


def cuda_strategies(form):
    return [s for s in sieve.strategies() if form in s["cuda"]]


def info(name):
    return next(s for s in sieve.strategies() if s["name"] == name)


def check(got, want, stable):
    got, want = np.asarray(got), np.asarray(want)
    if stable:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_array_equal(np.sort(got, axis=0), np.sort(want, axis=0))


@pytest.fixture(params=["cupy", "torch"])
def xp(request):
    return pytest.importorskip(request.param)


def array(xp, host):
    return xp.asarray(host, device="cuda") if xp.__name__ == "torch" else xp.asarray(host)


def host(xp, a):
    return a.cpu().numpy() if xp.__name__ == "torch" else a.get()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("strategy", [s["name"] for s in cuda_strategies("byte_flags")])
def test_every_dtype_matches_boolean_indexing(xp, dtype, strategy):
    rng = np.random.default_rng(5)
    for n, share in [(1, 1.0), (1000, 0.01), (300_007, 0.5), (1 << 17, 0.99)]:
        hx = rng.integers(0, 100, n).astype(dtype)
        hk = rng.random(n) < share
        x, keep = array(xp, hx), array(xp, hk)
        s = info(strategy)
        if s["out_of_place"]:
            got = sieve.compact(x, keep, strategy=strategy)
        else:
            got = sieve.compact(x, keep, strategy=strategy, out=x)
        assert type(got) is type(x)
        check(host(xp, got), hx[hk], s["stable"])


@pytest.mark.parametrize("strategy", [s["name"] for s in cuda_strategies("removal_list")])
def test_remove_matches_np_delete(xp, strategy):
    rng = np.random.default_rng(6)
    n = 200_000
    hx = rng.random(n).astype(np.float32)
    dead = rng.choice(n, 3000, replace=False).astype(np.int32 if xp.__name__ == "torch" else np.uint32)
    x, d = array(xp, hx), array(xp, dead)
    if info(strategy)["out_of_place"]:
        got = sieve.remove(x, d, strategy=strategy)
    else:
        got = sieve.remove(x, d, strategy=strategy, out=x)
    check(host(xp, got), np.delete(hx, dead), info(strategy)["stable"])
    np.testing.assert_array_equal(host(xp, d), dead)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int64, np.uint8, np.uint16])
def test_remove_takes_device_indices_of_any_width(xp, dtype):
    if xp.__name__ == "torch" and dtype == np.uint16:
        pytest.skip("PyTorch has no general uint16 tensors before 2.3")
    hx = np.arange(1000, dtype=np.float32)
    dead = np.array([3, 17, 4, 99], dtype=dtype)
    got = sieve.remove(array(xp, hx), array(xp, dead))
    np.testing.assert_array_equal(host(xp, got), np.delete(hx, [3, 17, 4, 99]))
    # Out of range: refused without a wait on the device (the index becomes one the check refuses).
    with pytest.raises(sieve.Error, match="out of range"):
        sieve.remove(array(xp, hx), array(xp, np.array([5, 1 << 40], dtype=np.int64)))
    with pytest.raises(sieve.Error, match="out of range"):
        sieve.remove(array(xp, hx), array(xp, np.array([-1], dtype=np.int64)))


def test_bits_records_and_zero_copy_out(xp):
    rng = np.random.default_rng(8)
    n = 100_000
    ha, hb = rng.random((n, 2)).astype(np.float32), np.arange(n, dtype=np.int64)
    hk = rng.random(n) < 0.3
    words = np.packbits(np.pad(hk, (0, (-n) % 32)), bitorder="little").view(np.uint32)
    if xp.__name__ == "torch":
        words = words.view(np.int32)
    a, b = array(xp, ha), array(xp, hb)
    out = (xp.empty_like(a), xp.empty_like(b))
    ra, rb = sieve.compact((a, b), sieve.bits(array(xp, words)), out=out, strategy="space")
    np.testing.assert_array_equal(host(xp, ra), ha[hk])
    np.testing.assert_array_equal(host(xp, rb), hb[hk])
    ptr = (lambda t: t.data_ptr()) if xp.__name__ == "torch" else (lambda t: t.data.ptr)
    assert ptr(ra) == ptr(out[0]) and ptr(rb) == ptr(out[1])


def test_torch_graph_replays_with_changing_counts():
    torch = pytest.importorskip("torch")
    n = 1 << 20
    x = torch.arange(n, dtype=torch.float32, device="cuda")
    keep = torch.zeros(n, dtype=torch.bool, device="cuda")
    out = torch.empty_like(x)
    count = torch.zeros(1, dtype=torch.int64, device="cuda")
    live = torch.full((1,), n, dtype=torch.int64, device="cuda")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):  # warm-up outside the capture
        sieve.compact(x, keep, out=out, count=count, n=live, strategy="auto")
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        sieve.compact(x, keep, out=out, count=count, n=live)
    for share, items in [(0.01, n), (0.5, n), (0.99, n // 3), (0.0, n), (1.0, 777)]:
        keep.copy_(torch.rand(n, device="cuda") < share)
        live.fill_(items)
        graph.replay()
        torch.cuda.synchronize()
        want = x[:items][keep[:items]]
        assert count.item() == want.numel()
        assert torch.equal(out[: count.item()], want)


def test_cupy_graph_replays_with_changing_counts():
    cupy = pytest.importorskip("cupy")
    n = 1 << 18
    x = cupy.arange(n, dtype=cupy.uint32)
    keep = cupy.zeros(n, dtype=cupy.uint8)
    out = cupy.empty_like(x)
    count = cupy.zeros(1, dtype=cupy.uint64)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        sieve.compact(x, keep, out=out, count=count, strategy="cub")
        stream.begin_capture()
        sieve.compact(x, keep, out=out, count=count, strategy="cub")
        graph = stream.end_capture()
    for share in (0.02, 0.6, 1.0):
        keep[...] = (cupy.random.random(n) < share).astype(cupy.uint8)
        graph.launch(stream)
        stream.synchronize()
        want = x[keep.astype(bool)]
        assert int(count[0]) == want.size
        assert bool((out[: want.size] == want).all())


def test_bad_input_on_the_device(xp):
    x = array(xp, np.arange(100, dtype=np.float32))
    with pytest.raises(sieve.Error, match="keep: 99 flags for 100 items"):
        sieve.compact(x, array(xp, np.ones(99, dtype=bool)))
    with pytest.raises(sieve.Error, match="keep: in host memory, the items are in CUDA device memory"):
        sieve.compact(x, np.ones(100, dtype=bool))
    with pytest.raises(sieve.Error, match="does not run on cpu"):
        sieve.compact(np.arange(10.0), np.ones(10, bool), strategy="cub")
    with pytest.raises(sieve.Error, match="not contiguous"):
        sieve.compact(x[::2], array(xp, np.ones(50, dtype=bool)))
    with pytest.raises(sieve.Error, match="appears more than once"):
        sieve.remove(x, array(xp, np.array([3, 3], dtype=np.int32)))
    with pytest.raises(sieve.Error, match="does not run on cuda"):
        sieve.compact(x, array(xp, np.ones(100, dtype=bool)), strategy="std")


def test_render_on_the_device_is_the_same_image_for_every_strategy():
    import os
    scene = os.path.join(os.path.dirname(__file__), "..", "..", "scenes", "cornell-box", "cornell-box.toml")
    a, report = sieve.render(scene, backend="cuda", width=64, height=48, spp=4, strategy="space")
    b, _ = sieve.render(scene, backend="cuda", width=64, height=48, spp=4, strategy="cub", queue="index")
    assert a.shape == (48, 64, 3) and np.isfinite(a).all() and a.mean() > 0
    np.testing.assert_array_equal(a, b)
    assert report["backend"] == "cuda"
