#!/usr/bin/env python3
"""The scaling efficiency of several bench/ranks.py runs against the rank count, one line per scene.

  bench/plot_ranks.py OUT.png RANKS.json|RANKS.txt [...] [--title TEXT]

Solid lines: efficiency of the whole job (loading to the end of the reduction); dashed: of
rendering alone. Configurations mixing CPU ranks (1+K) are left out: they are no GPU count. A .txt
is the table bench/ranks.py printed (kept where its JSON was not): the efficiencies are read from
the two columns headed "effic.".
"""
import argparse
import json
import os
import sys


def rows_of(path):
    """The rows of a ranks.json, or of a ranks.txt table: ranks, efficiency, efficiency_rendering."""
    if not path.endswith(".txt"):
        with open(path) as f:
            d = json.load(f)
        return [r for r in d["rows"] if r["efficiency"] is not None], d["scene"]
    with open(path) as f:
        lines = f.read().splitlines()
    header = next((ln for ln in lines if ln.lstrip().startswith("ranks") and "effic." in ln), None)
    if header is None:
        sys.exit(f"bench/plot_ranks.py: {path}: no table headed 'ranks ... effic.'")
    ends = [i + len("effic.") for i in range(len(header)) if header.startswith("effic.", i)]
    rows = []
    for ln in lines[lines.index(header) + 1:]:
        first = ln.split()[0] if ln.split() else ""
        if not first.isdigit():
            if rows or not first:
                break
            continue
        whole, rendering = (ln[e - 6:e].strip() for e in ends[:2])
        rows.append({"ranks": int(first), "efficiency": float(whole), "efficiency_rendering": float(rendering)})
    return rows, path


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("results", nargs="+")
    p.add_argument("--title", default="sieve render over MPI ranks: scaling efficiency")
    a = p.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("bench/plot_ranks.py: needs matplotlib (Debian: apt-get install python3-matplotlib)")
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    markers = "osD^vP*X"
    ranks_seen = set()
    for i, path in enumerate(a.results):
        rows, scene = rows_of(path)
        n = [r["ranks"] for r in rows]
        ranks_seen.update(n)
        name = (os.path.splitext(os.path.basename(path))[0] if path.endswith(".txt")
                else os.path.basename(os.path.dirname(os.path.abspath(path))).removeprefix("ranks-") or scene)
        line, = ax.plot(n, [r["efficiency"] for r in rows], marker=markers[i % len(markers)], label=f"{name}: whole job")
        ax.plot(n, [r["efficiency_rendering"] for r in rows], marker=markers[i % len(markers)], linestyle="--",
                color=line.get_color(), alpha=0.7, label=f"{name}: rendering")
    ax.axhline(0.9, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xticks(sorted(ranks_seen))
    ax.set_xlabel("GPUs (MPI ranks)")
    ax.set_ylabel("efficiency (speedup / ranks)")
    ax.set_ylim(0, 1.1)
    ax.set_title(a.title, fontsize=10)
    ax.legend(fontsize=7, loc="lower left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)


if __name__ == "__main__":
    main()
