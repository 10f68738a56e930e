#!/usr/bin/env python3
"""sieve.compact from Python against the frameworks' own compaction, on the same arrays.

  python3 bench/python_compact.py [--sizes 14,24,26,28] [--keep 1,50,99] [--reps 20] [--out FILE.json]
  python3 bench/python_compact.py --plot FILE.json      # the table (FILE.md) and plot (FILE.png) again

GPU (PyTorch, and CuPy when installed), float32 items, bool flags, uniform random keeps: torch
`x[mask]`, `torch.masked_select`, cupy `x[mask]`, `cupy.compress`, `sieve.compact(x, mask)` (waits
for the count and returns out[:m], as `x[mask]` does) and its device-count form
(`count=`: no wait; from --each-from on also with every CUDA strategy named), each the median of --reps calls bracketed by CUDA events; plus the host-side
time per call of a loop of --loop calls (what a Python caller waits for, launch overheads included)
and of the count form replayed from a torch.cuda.CUDAGraph. CPU: NumPy's `x[mask]` against
sieve.compact on NumPy arrays (wall clock, median). Every result is checked against x[mask] first.
Writes FILE.json (rows, device, versions, command), FILE.md (a table and the ratios) and FILE.png.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

sieve = None  # imported when measuring (--plot needs only the JSON)


def by_name(call):
    """A row of one CUDA strategy named (--each-from), left out of the plot and the host loop."""
    return call.startswith("sieve.compact count= [")


def median_events(torch, fn, reps):
    fn()
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def host_per_call(torch, fn, loop):
    """Host time per call (ms) of `loop` back-to-back calls, the device drained at the end."""
    fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(loop):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / loop * 1e3


def median_wall(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def gpu_rows(n, share, reps, loop, strategy, each):
    import torch
    try:
        import cupy
    except ImportError:
        cupy = None
    g = torch.Generator(device="cuda").manual_seed(n ^ int(share * 1000))
    x = torch.rand(n, device="cuda", generator=g)
    mask = torch.rand(n, device="cuda", generator=g) < share
    out = torch.empty_like(x)
    count = torch.zeros(1, dtype=torch.int64, device="cuda")
    want = x[mask]
    got = sieve.compact(x, mask, strategy=strategy)
    assert torch.equal(got, want), f"sieve.compact differs from x[mask] at n={n}, share={share}"
    sieve.compact(x, mask, out=out, count=count, strategy=strategy)
    assert count.item() == want.numel() and torch.equal(out[: want.numel()], want)
    calls = {
        "torch x[mask]": lambda: x[mask],
        "torch.masked_select": lambda: torch.masked_select(x, mask),
        "sieve.compact": lambda: sieve.compact(x, mask, strategy=strategy),
        "sieve.compact count=": lambda: sieve.compact(x, mask, out=out, count=count, strategy=strategy),
    }
    if cupy is not None:
        cx, cm = cupy.from_dlpack(x), cupy.from_dlpack(mask)
        assert bool((cx[cm] == cupy.from_dlpack(want)).all())
        calls["cupy x[mask]"] = lambda: cx[cm]
        calls["cupy.compress"] = lambda: cupy.compress(cm, cx)
    if each:  # every CUDA strategy that takes flags out of place, in the count form
        for st in sieve.strategies():
            if st["name"] != "auto" and "byte_flags" in st["cuda"] and st["out_of_place"]:
                count.zero_()
                sieve.compact(x, mask, out=out, count=count, strategy=st["name"])
                assert count.item() == want.numel(), st["name"]
                calls[f"sieve.compact count= [{st['name']}]"] = (
                    lambda name=st["name"]: sieve.compact(x, mask, out=out, count=count, strategy=name))
    rows = []
    for name, fn in calls.items():
        with torch.cuda.stream(torch.cuda.current_stream()):
            ms = median_events(torch, fn, reps)
            per_call = host_per_call(torch, fn, loop) if n <= 1 << 24 and not by_name(name) else None
        rows.append({"backend": "cuda", "call": name, "n": n, "keep": share, "ms": ms, "host_ms_per_call": per_call})
    # The count form captured once in a CUDA graph, replayed.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        sieve.compact(x, mask, out=out, count=count, strategy=strategy)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        sieve.compact(x, mask, out=out, count=count, strategy=strategy)
    count.zero_()
    graph.replay()
    torch.cuda.synchronize()
    assert count.item() == want.numel(), "the graph's replay gave another count"
    rows.append({"backend": "cuda", "call": "sieve.compact count= (graph replay)", "n": n, "keep": share,
                 "ms": median_events(torch, graph.replay, reps),
                 "host_ms_per_call": host_per_call(torch, graph.replay, loop) if n <= 1 << 24 else None})
    return rows


def cpu_rows(n, share, reps, strategy):
    rng = np.random.default_rng(n)
    x = rng.random(n, dtype=np.float32)
    mask = rng.random(n) < share
    out = np.empty_like(x)
    assert np.array_equal(sieve.compact(x, mask, out=out, strategy=strategy), x[mask])
    return [{"backend": "cpu", "call": name, "n": n, "keep": share, "ms": median_wall(fn, reps), "host_ms_per_call": None}
            for name, fn in (("numpy x[mask]", lambda: x[mask]),
                             ("sieve.compact", lambda: sieve.compact(x, mask, out=out, strategy=strategy)))]


def device_info():
    info = {"cpu": platform.processor() or platform.machine(), "cpus": os.cpu_count(), "sieve": sieve.__version__,
            "numpy": np.__version__, "python": platform.python_version()}
    try:
        import torch
        if torch.cuda.is_available():
            info["device"] = torch.cuda.get_device_name()
            info["torch"] = torch.__version__
            smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                 capture_output=True, text=True)
            info["driver"] = smi.stdout.strip()
        import cupy
        info["cupy"] = cupy.__version__
    except Exception:  # a framework missing: its rows are missing too
        pass
    return info


def table(doc):
    rows = doc["rows"]
    lines = [f"# sieve.compact from Python: {doc['info'].get('device', doc['info']['cpu'])}", "",
             f"`{doc['command']}` (commit {doc['commit']}); " + ", ".join(f"{k} {v}" for k, v in doc["info"].items()), "",
             "Median ms of the call bracketed by CUDA events (GPU) or the wall clock (CPU); host us/call: a loop of "
             "back-to-back calls, what the Python caller waits for.", "",
             "| backend | n | kept | call | ms | host us/call | sieve's speed-up |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        base = next((b for b in rows if b["backend"] == r["backend"] and b["n"] == r["n"] and b["keep"] == r["keep"]
                     and b["call"] in ("torch x[mask]", "numpy x[mask]")), None)
        speed = f"{base['ms'] / r['ms']:.2f}x" if base and r["call"].startswith("sieve") else ""
        host = f"{r['host_ms_per_call'] * 1e3:.1f}" if r["host_ms_per_call"] else ""
        lines.append(f"| {r['backend']} | 2^{r['n'].bit_length() - 1} | {r['keep'] * 100:g} % | {r['call']} | "
                     f"{r['ms']:.4f} | {host} | {speed} |")
    return "\n".join(lines) + "\n"


def plot(doc, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench/python_compact.py: no matplotlib, no plot (apt-get install python3-matplotlib)", file=sys.stderr)
        return
    gpu = [r for r in doc["rows"] if r["backend"] == "cuda" and not by_name(r["call"])]
    shares = sorted({r["keep"] for r in gpu})
    if not gpu:
        return
    fig, axes = plt.subplots(1, len(shares), figsize=(4.2 * len(shares), 3.6), sharey=True, squeeze=False)
    for ax, share in zip(axes[0], shares):
        for call in dict.fromkeys(r["call"] for r in gpu):
            pts = sorted((r["n"], r["ms"]) for r in gpu if r["keep"] == share and r["call"] == call)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=call)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{share * 100:g} % kept")
        ax.set_xlabel("items (float32)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("ms per call (CUDA events, median)")
    axes[0][-1].legend(fontsize=7)
    fig.suptitle(f"Compaction from Python on {doc['info'].get('device', '?')}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print("wrote", path)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="14,20,24,26,28", help="log2 of the item counts on the GPU")
    p.add_argument("--cpu-sizes", default="20,24,26", help="log2 of the item counts on the CPU")
    p.add_argument("--keep", default="1,50,99", help="percent of the items kept")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--loop", type=int, default=1000, help="calls in the host-time loop (n <= 2^24)")
    p.add_argument("--strategy", default="auto")
    p.add_argument("--each-from", type=int, default=24,
                   help="from n = 2^N on, also time every CUDA strategy by name (count form)")
    p.add_argument("--out", default="python-compact.json")
    p.add_argument("--plot", metavar="JSON", help="only write the table and plot of an earlier run")
    a = p.parse_args()
    if a.plot:
        with open(a.plot, encoding="utf-8") as f:
            doc = json.load(f)
        a.out = a.plot
    else:
        global sieve
        import sieve
        shares = [float(k) / 100 for k in a.keep.split(",")]
        rows = []
        try:
            import torch
            gpu = torch.cuda.is_available() and sieve.cuda_available()
        except ImportError:
            gpu = False
        for log_n in (map(int, a.sizes.split(",")) if gpu else []):
            for share in shares:
                rows += gpu_rows(1 << log_n, share, a.reps, a.loop, a.strategy, log_n >= a.each_from)
                print(rows[-1], flush=True)
        for log_n in map(int, a.cpu_sizes.split(",")):
            for share in shares:
                rows += cpu_rows(1 << log_n, share, a.reps, a.strategy)
                print(rows[-1], flush=True)
        commit = os.environ.get("SIEVE_COMMIT") or subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        doc = {"command": "python3 bench/python_compact.py " + " ".join(sys.argv[1:]), "commit": commit or "?",
               "info": device_info(), "rows": rows}
        with open(a.out, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
    stem = os.path.splitext(a.out)[0]
    with open(stem + ".md", "w", encoding="utf-8") as f:
        f.write(table(doc))
    plot(doc, stem + ".png")


if __name__ == "__main__":
    main()
