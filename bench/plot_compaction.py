#!/usr/bin/env python3
"""Plots of a `sieve bench compaction --csv` file (matplotlib).

  bench/plot_compaction.py RESULTS.csv OUT_PREFIX [--title TEXT] [--type u32]

Writes OUT_PREFIX-removal.png (time against k/n per strategy, one panel per n: the Redzone paper's
figure) and OUT_PREFIX-select.png (throughput against the kept share per strategy, one panel per
form and distribution, at the largest n: SPACE's figure) for the forms present in the file.
Throughput is items per second, n / time: no byte count, so nothing skipped is counted as moved
(SPACE's published GiB/s count skipped bytes as moved).
"""
import argparse
import csv
import math
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("validated") == "1" and float(r["ms_median"]) > 0]
    for r in rows:
        r["n"] = int(r["n"])
        r["fraction"] = float(r["fraction"])
        r["ms_median"] = float(r["ms_median"])
        r["gbps"] = float(r["gbps"])
    return rows


def n_label(n):
    e = int(round(math.log2(n)))
    return f"n = 2^{e}" if 1 << e == n else f"n = {n}"


def removal_plot(rows, out, title):
    rows = [r for r in rows if r["form"] == "removal"]
    if not rows:
        return None
    ns = sorted({r["n"] for r in rows})
    cols = min(4, len(ns))
    nrows = math.ceil(len(ns) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.4 * nrows), squeeze=False)
    for ax, n in zip(axes.flat, ns):
        by = defaultdict(list)
        for r in rows:
            if r["n"] == n:
                by[r["strategy"]].append((r["fraction"] * 100, r["ms_median"]))
        for s, pts in sorted(by.items()):
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=s)
        ax.set_title(n_label(n))
        ax.set_xlabel("k/n removed (%)")
        ax.set_ylabel("time per call (ms)")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[len(ns):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=8)
    fig.suptitle(title + " - removal lists (phase-1 marking included)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    return out


def select_plot(rows, out, title):
    rows = [r for r in rows if r["form"] in ("flags", "mask")]
    if not rows:
        return None
    n = max(r["n"] for r in rows)
    rows = [r for r in rows if r["n"] == n]
    panels = sorted({(r["form"], r["distribution"]) for r in rows})
    cols = min(3, len(panels))
    nrows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4.6 * cols, 3.6 * nrows), squeeze=False)
    for ax, (form, dist) in zip(axes.flat, panels):
        by = defaultdict(list)
        for r in rows:
            if r["form"] == form and r["distribution"] == dist:
                by[r["strategy"]].append((r["fraction"] * 100, r["n"] / (r["ms_median"] * 1e6)))
        for s, pts in sorted(by.items()):
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=s)
        ax.set_title(f"{form}, {dist}, {n_label(n)}")
        ax.set_xlabel("items kept (%)")
        ax.set_ylabel("G items/s (n / time)")
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=8)
    fig.suptitle(title + " - selections")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("csv")
    p.add_argument("prefix")
    p.add_argument("--title", default="sieve compaction")
    p.add_argument("--type", default="u32", help="item type to plot (the CSV's `type` column)")
    a = p.parse_args()
    rows = [r for r in load(a.csv) if r["type"] == a.type]
    for made in (removal_plot(rows, a.prefix + "-removal.png", a.title), select_plot(rows, a.prefix + "-select.png", a.title)):
        if made:
            print("wrote", made)


if __name__ == "__main__":
    main()
