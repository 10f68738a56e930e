#!/usr/bin/env python3
"""Trace rates of one `sieve bench trace --json` run: Mrays/s per traversal, grouped by ray kind.

  bench/plot_trace.py OUT.png TRACE.json [--title TEXT] [--goal KIND=MRAYS ...]

Each bar is one configuration (the tree's builder when there are several, traversal, and the BFS
frontier's strategy), labelled with its rate
over the DFS's on the same rays; --goal draws a dotted line at a goal rate for a ray kind.
"""
import argparse
import json
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("result")
    p.add_argument("--title", default=None)
    p.add_argument("--goal", action="append", default=[], help="KIND=MRAYS, e.g. diffuse=2500")
    a = p.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("bench/plot_trace.py: needs matplotlib (Debian: apt-get install python3-matplotlib)")
    try:
        with open(a.result) as f:
            d = json.load(f)
        rows = [r for r in d["results"] if r.get("validated")]
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"bench/plot_trace.py: {a.result}: not a bench trace JSON ({e})")
    goals = {}
    for g in a.goal:
        kind, _, value = g.partition("=")
        try:
            goals[kind] = float(value)
        except ValueError:
            sys.exit(f"bench/plot_trace.py: --goal {g}: expected KIND=MRAYS")
    kinds = list(dict.fromkeys(r["rays"] for r in rows))
    configs = list(dict.fromkeys((r.get("build", "sah"), r["traversal"], r["strategy"]) for r in rows))
    several = len({c[0] for c in configs}) > 1  # more than one builder's tree: each bar names its tree
    if not kinds:
        sys.exit(f"bench/plot_trace.py: {a.result}: no validated rows")
    fig, ax = plt.subplots(figsize=(1.2 + 0.55 * len(configs) * len(kinds), 4.4))
    width = 0.8 / len(configs)
    for j, (build, traversal, strategy) in enumerate(configs):
        xs, ys, ratios = [], [], []
        for i, kind in enumerate(kinds):
            r = next((r for r in rows if r["rays"] == kind and (r.get("build", "sah"), r["traversal"], r["strategy"]) ==
                      (build, traversal, strategy)), None)
            if r is None:
                continue
            xs.append(i + (j - (len(configs) - 1) / 2) * width)
            ys.append(r["mrays_per_s"])
            ratios.append(r.get("vs_dfs"))
        label = traversal if strategy == "-" else f"{traversal} ({strategy})"
        if several:
            label = f"{build}: {label}"
        bars = ax.bar(xs, ys, width * 0.95, label=label)
        for b, x in zip(bars, ratios):
            if x:
                ax.annotate(f"{x:.2f}x", (b.get_x() + b.get_width() / 2, b.get_height()), ha="center", va="bottom",
                            fontsize=7)
    for i, kind in enumerate(kinds):
        if kind in goals:
            ax.hlines(goals[kind], i - 0.45, i + 0.45, colors="black", linestyles=":", linewidth=1)
            ax.annotate(f"goal {goals[kind]:g}", (i + 0.45, goals[kind]), ha="right", va="bottom", fontsize=7)
    ax.set_xticks(range(len(kinds)), kinds)
    ax.set_ylabel("Mrays/s (median)")
    device = d.get("device", "")
    ax.set_title(a.title or f"{d.get('scene', '')}: {device.split(' (')[0]}", fontsize=10)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)


if __name__ == "__main__":
    main()
