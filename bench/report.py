#!/usr/bin/env python3
"""The report of one results folder: bench/results/<device>/report.md and its PNG plots.

  bench/report.py FOLDER            (what `sieve bench all` runs at its end)

Reads the JSON (and CSV) files a `sieve bench all` run writes there, under fixed names
(compaction-{redzone,space,billeter,crossover}.json, sort.json, multisplit.json, trace.json, render-*.json,
image-*.png + .json, bench-all.json), and, where a fixed name is missing, the older files of the
folder that hold the same measurement (redzone-n2e28.json, select-n2e28.json, billeter-table3.json,
crossover-grid.csv, ...). Writes FOLDER/report.md and FOLDER/fig-*.png; touches nothing else.

Every table and figure names what it counts and the device, driver, commit and command it came
from. Times are shown, and ratios of times; where a rate is shown it is items, pairs or rays per
second, never bytes: SPACE's published GiB/s count skipped bytes as moved.

Without matplotlib the report is still written, with its tables and without plots.
"""
import argparse
import csv
import glob
import json
import math
import os
import re
import sys
import textwrap
from collections import defaultdict

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:  # the tables are still worth writing
    plt = None

# ---------------------------------------------------------------------------------------------
# What the papers published (the numbers the report puts beside this machine's).

PAPERS = {
    "redzone": "Bontes & Gain, Redzone (2024), Fig. 4: Redzone vs Thrust at k/n = 2 %, "
               "2 GiB of u32 (n = 2^29) on an A100: about 3x",
    "space": "Fett et al., SPACE (Euro-Par 2022), 1 % kept on an A100",
    "billeter": "Billeter et al., HPG 2009, Table 3: their compaction vs the scan-based baseline, "
                "mean over 0 .. 100 % kept, 4M 32-bit items: about 3x",
}

# Each measurement: the fixed name `sieve bench all` writes first, then older names that hold it.
SOURCES = {
    "redzone": ["compaction-redzone.json", "redzone-n2e28.json", "redzone-n2e26.json"],
    "space": ["compaction-space.json", "select-n2e28.json", "quick.json"],
    "billeter": ["compaction-billeter.json", "billeter-table3.json"],
    "crossover": ["compaction-crossover.json", "crossover-grid.csv"],
    "queues": ["compaction-queues.json", "queues-graph.json"],
    "queues-events": ["compaction-queues-events.json", "queues-events.json"],
    "sort": ["sort.json", "sort-onesweep-vs-cub.json"],
    "multisplit": ["multisplit.json"],
    "multisplit-dists": ["multisplit-dists.json"],
    "multisplit-cpu": ["multisplit-cpu.json"],
    "trace": ["trace.json", "trace-sphere-gpu.json", "trace-sphere-room.json"],
    "setup": ["setup.json"],
}

FIGURE_NAMES = {"redzone": "Redzone's grid", "space": "SPACE's grid", "billeter": "Billeter's Table 3",
                "crossover": "Crossover grid"}

STRATEGY_ORDER = ["redzone", "redzone-serial", "stencil", "std", "scan", "billeter", "space", "atomic",
                  "cub", "thrust", "auto", "onesweep", "radix", "tbb", "cub_sort", "cub_partition",
                  "std_stable_partition", "-"]


MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "*", "p", "d"]
# Series that are not strategies (traversals, algorithms without one): colours of their own.
OTHER_COLORS = {"dfs": "#1b1b1b", "wide": "#8c564b", "embree": "#e377c2", "bfs": "#17becf"}


def marker_of(name):
    """One marker per strategy (or series), the same in every figure: series apart without colour."""
    i = STRATEGY_ORDER.index(name) if name in STRATEGY_ORDER else len(STRATEGY_ORDER) + sum(map(ord, name))
    return MARKERS[i % len(MARKERS)]


def color_of(name):
    """One colour per strategy (or algorithm), the same in every figure."""
    palette = plt.get_cmap("tab20").colors
    i = STRATEGY_ORDER.index(name) if name in STRATEGY_ORDER else len(STRATEGY_ORDER) + sum(map(ord, name))
    return palette[(2 * i) % 20 if i < 10 else (2 * i + 1) % 20]


def log_axis(ax, values, axis="y"):
    """A log axis labelled in plain numbers (0.3, 2, 500, 20K, 1M); minor ticks labelled too where the
    data span few decades."""
    from matplotlib.ticker import FuncFormatter

    (ax.set_yscale if axis == "y" else ax.set_xscale)("log")
    target = ax.yaxis if axis == "y" else ax.xaxis

    def short(v):
        return f"{v / 1e6:g}M" if v >= 1e6 else f"{v / 1e3:g}K" if v >= 1e4 else f"{v:g}"

    plain = FuncFormatter(lambda v, _: short(v))
    target.set_major_formatter(plain)
    values = [v for v in values if v > 0]
    span = max(values) / min(values) if values else 1e9

    def minor(v, _):  # every minor tick within one decade, 2 and 5 within three, none beyond
        mantissa = round(v / 10 ** math.floor(math.log10(v)), 6)
        return short(v) if span < 10 or (span < 1000 and mantissa in (2, 5)) else ""

    target.set_minor_formatter(FuncFormatter(minor))
    ax.tick_params(axis=axis, which="minor", labelsize=7)


def legend_below(fig, handles, names, width_in):
    """A legend under the panels, as many columns as fit; returns the height it needs (figure share)."""
    cols = max(1, min(len(names), int(width_in / 1.5)))
    fig.legend(handles, names, loc="lower center", ncol=cols, fontsize=9, frameon=False)
    rows = math.ceil(len(names) / cols)
    return (0.35 + 0.25 * rows) / fig.get_figheight()


def strategy_key(name):
    return (STRATEGY_ORDER.index(name) if name in STRATEGY_ORDER else len(STRATEGY_ORDER), name)


# ---------------------------------------------------------------------------------------------
# Reading

def n_label(n):
    e = int(round(math.log2(n))) if n > 0 else 0
    return f"2^{e}" if n > 0 and 1 << e == n else f"{n:,}"


def pct(x, digits=0):
    p = 100.0 * x
    if digits == 0 and abs(p - round(p)) > 1e-9:
        digits = 1
    return f"{p:.{digits}f} %"


def ms(x):
    if x is None or x <= 0:
        return "-"
    return f"{x:.3f}" if x < 10 else f"{x:.1f}" if x < 1000 else f"{x:,.0f}"


def ratio(x):
    return f"{x:.2f}x" if x and x > 0 else "-"


# A point whose runs spread (max - min) by more than this share of its median is flagged: its median
# is shown with the flag and never as a headline.
SPREAD_MARGIN = 0.10


def spread(r):
    med = r.get("ms_median", 0) if r else 0
    if not med or med <= 0:
        return 0.0
    return (r.get("ms_max", med) - r.get("ms_min", med)) / med


def noisy(*rows):
    return any(r and spread(r) > SPREAD_MARGIN for r in rows)


def ms_range(r):
    """The median with its min..max, flagged (!) when the spread exceeds SPREAD_MARGIN."""
    text = ms(r["ms_median"])
    if "ms_min" in r and "ms_max" in r:
        text += f" [{ms(r['ms_min'])}..{ms(r['ms_max'])}]"
    return text + (" (!)" if noisy(r) else "")


def headline(text, *rows):
    """Bold, unless one of the points behind it is flagged: then plain, with the flag said."""
    if noisy(*rows):
        return f"{text} (flagged: runs spread over {pct(SPREAD_MARGIN)} of the median)"
    return f"**{text}**"


def md_table(head, rows):
    """A markdown table, then a blank line."""
    lines = [head, ["---"] * len(head)] + [[str(c) for c in r] for r in rows]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines) + "\n\n"


class Dataset:
    """One results file: its rows and where they came from (device, driver, commit, command)."""

    def __init__(self, folder, path, doc, rows):
        self.folder, self.path, self.doc, self.rows = folder, path, doc, rows
        self.file = os.path.basename(path)
        run = doc.get("run", {})
        machine = doc.get("machine", {})
        self.commit = run.get("commit", "unknown")
        self.command = run.get("command", "unknown")
        self.date = run.get("date", "")
        backend = doc.get("backend") or (rows[0].get("backend") if rows and isinstance(rows[0], dict) else None)
        self.gpu = backend == "cuda" or doc.get("benchmark") == "sort"
        if self.gpu and machine.get("gpu"):
            self.device = machine["gpu"].split(" (")[0]
        else:
            threads = machine.get("tbb_threads")
            self.device = machine.get("cpu", "unknown CPU") + (f", {threads} threads" if threads else "")
            self.gpu = False
        self.driver = driver_of(folder, doc, self.gpu)

    def provenance(self):
        date = f", {self.date[:10]}" if self.date else ""
        driver = f"driver {self.driver}" if self.gpu else "CPU (no GPU driver)"
        return (f"{self.device}; {driver}; commit `{self.commit}`{date}; file `{self.file}`; "
                f"command: `{self.command}`")


_manifest_cache = {}


def manifest(folder):
    """bench-all.json, written by `sieve bench all`: the run's mode, steps and driver."""
    if folder not in _manifest_cache:
        path = os.path.join(folder, "bench-all.json")
        _manifest_cache[folder] = json.load(open(path)) if os.path.exists(path) else None
    return _manifest_cache[folder]


def of_this_run(folder, path):
    """Renders and images: with a bench-all.json, only the files its steps wrote (older ones of the
    folder stay out of its report); without one, every file."""
    m = manifest(folder)
    return not m or os.path.basename(path) in {f for s in m.get("steps", []) for f in s.get("files", [])}


def driver_of(folder, doc, gpu):
    if not gpu:
        return "-"
    for d in (doc, manifest(folder) or {}):
        if d.get("driver"):
            return d["driver"]
    gpu_desc = doc.get("machine", {}).get("gpu", "")
    m = re.search(r"driver ([0-9.]+)", gpu_desc)
    if m:
        return m.group(1)
    readme = os.path.join(folder, "README.md")  # older folders name the driver in their README
    if os.path.exists(readme):
        m = re.search(r"driver ([0-9][0-9.]+[0-9])", open(readme).read())
        if m:
            return m.group(1) + " (from the folder's README.md)"
    return "not recorded"


def numeric(row):
    """CSV values as numbers, as the JSON has them."""
    out = {}
    for k, v in row.items():
        if k in ("validated", "identical"):
            out[k] = v in ("1", "yes", "true", "True")
            continue
        try:
            out[k] = int(v) if re.fullmatch(r"-?\d+", v or "") else float(v) if v not in ("", None) else v
        except ValueError:
            out[k] = v
    return out


def load(folder, name):
    """A results file as a Dataset. A CSV borrows the provenance of the JSON whose command wrote it."""
    path = os.path.join(folder, name)
    if name.endswith(".json"):
        doc = json.load(open(path))
        return Dataset(folder, path, doc, doc.get("results", []))
    rows = [numeric(r) for r in csv.DictReader(open(path, newline=""))]
    doc = {}
    for other in sorted(glob.glob(os.path.join(folder, "*.json"))):
        d = json.load(open(other))
        if isinstance(d, dict) and name in d.get("run", {}).get("command", ""):
            doc = {"run": d["run"], "machine": d.get("machine", {}), "backend": d.get("backend")}
            if "machine" not in d:  # a crossover table names its device only
                key = "gpu" if d.get("backend") == "cuda" else "cpu"
                doc["machine"] = {key: d.get("device", "unknown")}
            break
    return Dataset(folder, path, doc, rows)


def find(folder, what):
    for name in SOURCES[what]:
        if os.path.exists(os.path.join(folder, name)):
            return load(folder, name)
    return None


# ---------------------------------------------------------------------------------------------
# Compaction

def compaction_rows(ds, forms=None):
    rows = [r for r in ds.rows if r.get("validated") and float(r.get("ms_median", 0)) > 0]
    return [r for r in rows if forms is None or r["form"] in forms]


def baselines_of(ds):
    b = ds.doc.get("baselines") or ([ds.doc["baseline"]] if ds.doc.get("baseline") else None)
    if b:
        return b
    keys = {k[len("speedup_vs_"):] for r in ds.rows for k in r if k.startswith("speedup_vs_")}
    return sorted(keys) or (["cub", "thrust"] if ds.gpu else ["std"])


def timing_note(ds):
    t = ds.doc.get("timing", {})
    if not t:
        return "median of repeated runs"
    w = t.get("warmup")
    return f"{t.get('statistic', 'median')} of {t.get('repeats')} runs after {w} warm-up{'s' if w != 1 else ''}"


def what_compaction_counts(ds, family):
    what = ("in-place call removing k of n items given as a removal list (phase-1 marking of the list "
            "included for every strategy)" if family == "removal" else
            "call keeping the selected share of n items given byte flags or a bit mask (out of place "
            "where the strategy can)")
    return f"Counts: ms per {what}; {timing_note(ds)}, {'CUDA events' if ds.gpu else 'CPU clock'}."


def varying(rows, keys):
    return [k for k in keys if len({r.get(k) for r in rows}) > 1]


def panel_title(rows):
    """What a panel's rows share: form, distribution, n."""
    r = rows[0]
    return f"{r['form']}, {r['distribution']}, n = {n_label(r['n'])}"


def plot_compaction(rows, family, out, title, caption, max_panels=16):
    """Time per call against k/n (removal lists) or the kept share (flags / masks), one line per
    strategy, one panel per (form, type, distribution, n) that varies. Returns the markdown."""
    if not plt or not rows:
        return ""
    note = ""
    keys = varying(rows, ["form", "type", "distribution", "n"])
    panels = sorted({tuple(r[k] for k in keys) for r in rows})
    if len(panels) > max_panels and "distribution" in keys:  # keep the uniform inputs, say so
        keep = "uniform" if any(r["distribution"] == "uniform" for r in rows) else rows[0]["distribution"]
        rows = [r for r in rows if r["distribution"] == keep]
        note = f" Plotted: distribution {keep} only (the tables and CSV hold the others)."
        keys = varying(rows, ["form", "type", "distribution", "n"])
        panels = sorted({tuple(r[k] for k in keys) for r in rows})
    panels = panels[:max_panels]
    cols = min(4, len(panels))
    nrows = math.ceil(len(panels) / cols)
    width = max(7.0, 4.3 * cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(width, 3.5 * nrows + 1.2), squeeze=False)
    handles = {}
    for ax, vals in zip(axes.flat, panels):
        by = defaultdict(list)
        mine = [r for r in rows if tuple(r[k] for k in keys) == vals]
        for r in mine:
            by[r["strategy"]].append((100 * r["fraction"], r["ms_median"]))
        for s in sorted(by, key=strategy_key):
            pts = sorted(by[s])
            (h,) = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker_of(s), ms=3.5, lw=1.4, label=s,
                           color=color_of(s))
            handles[s] = h
        ax.set_title(panel_title(mine), fontsize=10)
        ax.set_xlabel("k/n removed (%)" if family == "removal" else "items kept (%)")
        ax.set_ylabel("time per call (ms, log)")
        log_axis(ax, [r["ms_median"] for r in mine])
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    names = sorted(handles, key=strategy_key)
    bottom = legend_below(fig, [handles[s] for s in names], names, width)
    fig.suptitle("\n".join(textwrap.wrap(title, int(width * 11))), fontsize=11)
    fig.tight_layout(rect=(0, bottom, 1, 0.97 if len(title) <= width * 11 else 0.93))
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return f"![{title}]({os.path.basename(out)})\n\n*{caption}{note}*\n\n"


def excerpt(rows, limit=40):
    """The grid points a section's body shows (the rest go in a collapsed table): per item type its
    largest n (SPACE's grid is 1 GiB of each type); then, while the table is long, u32 only and five
    of the shares. Returns the rows and what was left out, in words."""
    kept, notes = rows, []
    big = {t: max(r["n"] for r in rows if r["type"] == t) for t in {r["type"] for r in rows}}
    if any(r["n"] != big[r["type"]] for r in rows):
        kept = [r for r in kept if r["n"] == big[r["type"]]]
        notes.append("the largest n")
    def points(rs):
        return len({(r["form"], r["type"], r["n"], r["distribution"], r["fraction"]) for r in rs})

    types = sorted({r["type"] for r in kept})
    if points(kept) > limit and len(types) > 1:
        t = "u32" if "u32" in types else types[0]
        kept = [r for r in kept if r["type"] == t]
        notes.append(f"{t} items")
    fracs = sorted({r["fraction"] for r in kept})
    if points(kept) > limit and len(fracs) > 5:
        chosen = {fracs[round(i * (len(fracs) - 1) / 4)] for i in range(5)}
        kept = [r for r in kept if r["fraction"] in chosen]
        notes.append("five of the shares")
    return kept, ", ".join(notes)


def compaction_table(rows, ds, family):
    """Per grid point: each strategy's ms and its ratio to the baselines."""
    if not rows:
        return ""
    bases = baselines_of(ds)
    strategies = sorted({r["strategy"] for r in rows}, key=strategy_key)
    keys = ["form", "type", "n", "distribution", "fraction"]
    points = defaultdict(dict)
    for r in rows:
        points[tuple(r[k] for k in keys)][r["strategy"]] = r
    head = ["form", "type", "n", "distribution", "k/n" if family == "removal" else "kept"] + strategies
    lines = []
    for key in sorted(points):
        cells = [key[0], key[1], n_label(key[2]), key[3], pct(key[4])]
        for s in strategies:
            r = points[key].get(s)
            if not r:
                cells.append("")
                continue
            rs = [(b, r.get("speedup_vs_" + b, 0)) for b in bases if s != b]
            rs = [f"{ratio(x)} vs {b}" for b, x in rs if x]
            cells.append(ms_range(r) + (" (" + ", ".join(rs) + ")" if rs else ""))
        lines.append(cells)
    return md_table(head, lines)


def compaction_figures(folder, ds, rows, what, heading, family):
    """One figure per item type: fig-<what>-<family>-<type>.png."""
    forms = {r["form"] for r in rows}
    label = ("removal lists" if family == "removal" else "flags and bit masks" if len(forms) > 1
             else "byte flags" if forms == {"flags"} else "bit masks")
    text = ""
    for t in sorted({r["type"] for r in rows}):
        text += plot_compaction([r for r in rows if r["type"] == t], family,
                                os.path.join(folder, f"fig-{what}-{family}-{t}.png"),
                                f"{FIGURE_NAMES[what]}: {label}, {t} items, {ds.device}",
                                f"Time per call against {'k/n' if family == 'removal' else 'the kept share'}, one line "
                                f"per strategy. {what_compaction_counts(ds, family)} {ds.provenance()}.")
    return text


def compaction_section(folder, what, heading, intro, families=("removal", "selection")):
    ds = find(folder, what)
    if not ds:
        return f"## {heading}\n\nNot measured in this run (no `{SOURCES[what][0]}`).\n\n"
    text = f"## {heading}\n\n{intro}\n\n"
    for family in families:
        rows = compaction_rows(ds, ["removal"] if family == "removal" else ["flags", "mask"])
        if not rows:
            continue
        label = "Removal lists" if family == "removal" else "Flags and bit masks"
        counts = what_compaction_counts(ds, family)
        text += compaction_figures(folder, ds, rows, what, heading, family)
        shown, left_out = excerpt(rows)
        bases = " and ".join(baselines_of(ds))
        text += (f"*{label}{' (' + left_out + ')' if left_out else ''}: ms per call; in brackets the time of {bases} "
                 f"over this strategy's, at the same point of the same run (> 1: faster). {counts} "
                 f"{ds.provenance()}.*\n\n")
        text += compaction_table(shown, ds, family)
        if left_out:
            text += ("<details><summary>every grid point</summary>\n\n" + compaction_table(rows, ds, family)
                     + "</details>\n\n")
    return text


# ---------------------------------------------------------------------------------------------
# Papers against this machine

def pick(rows, **want):
    for r in rows:
        if all(abs(r[k] - v) < 1e-9 if isinstance(v, float) else r[k] == v for k, v in want.items()):
            return r
    return None


def papers_section(folder):
    lines = []
    missing = "not measured in this run"

    # Redzone vs Thrust at k = 2 %.
    ds = find(folder, "redzone")
    rows = compaction_rows(ds, ["removal"]) if ds else []
    rows = [r for r in rows if r["type"] == "u32" and r["distribution"] == "uniform"]
    cell, where = missing, "-"
    if rows:
        n = max(r["n"] for r in rows if abs(r["fraction"] - 0.02) < 1e-9) if any(
            abs(r["fraction"] - 0.02) < 1e-9 for r in rows) else None
        rz = pick(rows, strategy="redzone", n=n, fraction=0.02) if n else None
        if rz and ds.gpu:
            th, cb = pick(rows, strategy="thrust", n=n, fraction=0.02), pick(rows, strategy="cub", n=n, fraction=0.02)
            cell = (f"{headline(ratio(th['ms_median'] / rz['ms_median']), th, rz)} vs thrust ({ms_range(rz)} vs "
                    f"{ms_range(th)} ms)" if th else "thrust not measured")
            if cb:
                cell += f"; {ratio(cb['ms_median'] / rz['ms_median'])} vs cub"
            where = f"{ds.device}, n = {n_label(n)} u32 ({n * 4 / 2**30:.2g} GiB)"
        elif rz:
            st = pick(rows, strategy="std", n=n, fraction=0.02)
            cell = (f"{missing} (no Thrust on the CPU); on the CPU Redzone vs `std`: "
                    f"{headline(ratio(st['ms_median'] / rz['ms_median']), st, rz)} ({ms_range(rz)} vs {ms_range(st)} ms)"
                    if st else missing)
            where = f"{ds.device}, n = {n_label(n)} u32"
    lines.append(["Redzone vs Thrust, removal list, k/n = 2 %, uniform", PAPERS["redzone"], cell, where,
                  ds.file if ds else "-"])

    # SPACE vs CUB at 1 % kept.
    ds = find(folder, "space")
    rows = compaction_rows(ds, ["flags", "mask"]) if ds else []
    for dist, published in (("uniform", "3.55x"), ("cluster", "10.05x")):
        cell, where = missing, "-"
        sub = [r for r in rows if r["distribution"] == dist and r["type"] == "u32" and abs(r["fraction"] - 0.01) < 1e-9]
        if sub:
            n = max(r["n"] for r in sub)
            cub = pick(sub, strategy="cub", form="flags", n=n)
            parts = []
            for form in ("mask", "flags"):
                sp = pick(sub, strategy="space", form=form, n=n)
                if sp and cub:
                    parts.append(f"{form}: {headline(ratio(cub['ms_median'] / sp['ms_median']), cub, sp)} "
                                 f"({ms_range(sp)} vs {ms_range(cub)} ms)")
            if parts:
                cell = "; ".join(parts)
                where = f"{ds.device}, n = {n_label(n)} u32 ({n * 4 / 2**30:.2g} GiB)"
            elif not ds.gpu:
                cell = f"{missing} (SPACE and CUB are GPU strategies)"
        elif ds and not ds.gpu:
            cell = f"{missing} (SPACE and CUB are GPU strategies)"
        lines.append([f"SPACE vs CUB (`DeviceSelect::Flagged` given byte flags), 1 % kept, {dist}",
                      f"{published} ({PAPERS['space']})", cell, where, ds.file if ds else "-"])

    # Billeter vs the scan baseline, Table 3's mean over 0 .. 100 % kept.
    ds = find(folder, "billeter")
    rows = compaction_rows(ds, ["flags"]) if ds else []
    cell, where = missing, "-"
    if rows:
        n = max(r["n"] for r in rows)
        mean = {}
        behind = [r for r in rows if r["strategy"] in ("billeter", "scan") and r["n"] == n]
        for s in ("billeter", "scan"):
            t = [r["ms_median"] for r in behind if r["strategy"] == s]
            if t:
                mean[s] = (sum(t) / len(t), len(t))
        if len(mean) == 2:
            flagged = sum(1 for r in behind if noisy(r))
            cell = (f"{headline(ratio(mean['scan'][0] / mean['billeter'][0]), *behind)} "
                    f"({flagged} of {len(behind)} points flagged; mean of {mean['billeter'][1]} kept shares: "
                    f"{ms(mean['billeter'][0])} vs {ms(mean['scan'][0])} ms)")
            where = f"{ds.device}, n = {n_label(n)} u32, byte flags"
    lines.append(["Billeter vs the scan baseline, byte flags", PAPERS["billeter"], cell, where, ds.file if ds else "-"])

    # Where Redzone stops paying.
    cross = crossover_data(folder)
    cell, where = missing, "-"
    if cross:
        ds, rows = cross
        summary = stops_paying(rows, ds)
        rz = [(n, v) for (t, n, s), v in summary.items() if s == "redzone" and t == "u32"]
        if rz:
            cell = "; ".join(f"n = {n_label(n)}: {v}" for n, v in sorted(rz))
            where = ds.device
    lines.append([f"Redzone's crossover: the largest k/n at which it still beats "
                  f"{'cub (marking included)' if cross and cross[0].gpu else 'std'}",
                  "Redzone's O(k) work pays while k/n < 1/2 (its paper, section 5)", cell, where,
                  cross[0].file if cross else "-"])

    # The renderer: compaction's share of the frame.
    for ds in render_sets(folder):
        rows = [r for r in ds.rows if r.get("integrator", "wavefront") == "wavefront" and
                r.get("reorder", "none") == "none"]
        if not rows:
            continue
        best = min(rows, key=lambda r: r["compaction_share"])
        worst = max(rows, key=lambda r: r["compaction_share"])
        lines.append([f"Compaction's share of a frame, {render_title(ds)}", "- (the papers time compaction alone)",
                      f"best `{best['strategy']}` **{pct(best['compaction_share'], 1)}**, worst `{worst['strategy']}` "
                      f"{pct(worst['compaction_share'], 1)}", ds.device, ds.file])

    return ("## What the papers published, and what this machine measured\n\n"
            "Ratios are of times (the baseline's over the strategy's: > 1 is faster), at the same grid point in "
            "the same run. The papers ran on other GPUs (an A100 for Redzone and SPACE, a GTX 280 for Billeter), "
            "so compare ratios, not times. SPACE's published GiB/s count skipped bytes as moved; this report "
            "shows no byte rates.\n\n"
            + md_table(["claim", "published", "this machine", "measured on", "source"], lines))


# ---------------------------------------------------------------------------------------------
# Crossover: where each strategy stops paying

def queues_section(folder):
    """Small queues: per item type, n and form, each strategy's time per call two ways, counts on the
    device and CUDA-graph replays beside one call between two events, and the copy floor."""
    graph, events = find(folder, "queues"), find(folder, "queues-events")
    if not graph:
        return ""
    by_events = {}
    if events:
        for r in compaction_rows(events):
            by_events[(r["type"], r["n"], r["form"], r["strategy"])] = r["ms_median"]
    text = "## Queues as the renderer has them\n\n"
    text += ("The path queue's record (`paths48`: columns of 4, 28 and 12 and 4 bytes moved in one call) and u32 "
             "items, 93 % kept. Graph: the counts in device memory, each call the mean of many replays of a CUDA "
             "graph holding it (the GPU's time per call); events: one call between two CUDA events (the host's "
             "launch path included). Times in microseconds; floor: the bytes at the copy bandwidth.\n\n")
    rows = []
    for r in sorted(compaction_rows(graph), key=lambda r: (r["type"], r["n"], r["form"], strategy_key(r["strategy"]))):
        ev = by_events.get((r["type"], r["n"], r["form"], r["strategy"]))
        rows.append([r["type"], r["n"], r["form"], r["strategy"], f"{1000 * r['ms_median']:.1f}",
                     f"{1000 * ev:.1f}" if ev else "-", f"{1000 * r.get('floor_ms', 0):.1f}",
                     r.get("timing", "graph"), ratio(r.get("speedup_vs_cub"))])
    text += md_table(["type", "n", "form", "strategy", "graph us", "events us", "floor us", "timed as", "x cub"], rows)
    text += f"*{graph.provenance()}*\n\n"
    if events:
        text += f"*{events.provenance()}*\n\n"
    return text


def crossover_data(folder):
    for what in ("crossover", "redzone"):
        ds = find(folder, what)
        if ds and compaction_rows(ds):
            return ds, compaction_rows(ds)
    return None


def stops_paying(rows, ds):
    """Removal lists: per (type, n, strategy) the largest measured k/n at which the strategy is faster
    than the baseline (cub on the GPU, std on the CPU), and the next k/n, where it no longer is."""
    base = "cub" if ds.gpu else "std"
    rows = [r for r in rows if r["form"] == "removal" and r["distribution"] == "uniform"]
    out = {}
    for t in sorted({r["type"] for r in rows}):
        for n in sorted({r["n"] for r in rows if r["type"] == t}):
            pts = [r for r in rows if r["type"] == t and r["n"] == n]
            fracs = sorted({r["fraction"] for r in pts})
            for s in sorted({r["strategy"] for r in pts} - {base}, key=strategy_key):
                wins = []
                for f in fracs:
                    a, b = pick(pts, strategy=s, fraction=f), pick(pts, strategy=base, fraction=f)
                    if a and b:
                        wins.append((f, a["ms_median"] < b["ms_median"]))
                if not wins:
                    continue
                if all(w for _, w in wins):
                    out[(t, n, s)] = f"at every k/n measured (to {pct(wins[-1][0])})"
                elif not any(w for _, w in wins):
                    out[(t, n, s)] = f"never (from {pct(wins[0][0])})"
                elif [w for _, w in wins] == sorted((w for _, w in wins), reverse=True):  # wins, then losses
                    first_loss = next(f for f, w in wins if not w)
                    last_win = max(f for f, w in wins if w)
                    out[(t, n, s)] = f"to {pct(last_win)}, not from {pct(first_loss)}"
                else:
                    out[(t, n, s)] = ("at " + ", ".join(pct(f) for f, w in wins if w) + "; not at "
                                      + ", ".join(pct(f) for f, w in wins if not w))
    return out


def crossover_section(folder):
    data = crossover_data(folder)
    if not data:
        return "## Crossover: where each strategy stops paying\n\nNot measured in this run.\n\n"
    ds, rows = data
    base = "cub" if ds.gpu else "std"
    text = "## Crossover: where each strategy stops paying\n\n"
    summary = stops_paying(rows, ds)
    if summary:
        strategies = sorted({s for (_, _, s) in summary}, key=strategy_key)
        keys = sorted({(t, n) for (t, n, _) in summary})
        text += (f"**Removal lists** (uniform): the largest k/n at which each strategy is still faster than `{base}` "
                 f"({'marking included' if ds.gpu else 'std::remove_if after marking'}), and the next k/n measured, "
                 f"where it no longer is. Counts: ms per in-place call removing k of n items, phase-1 marking "
                 f"included for every strategy. {ds.provenance()}.\n\n")
        text += md_table(["type", "n"] + strategies,
                         [[t, n_label(n)] + [summary.get((t, n, s), "") for s in strategies] for t, n in keys])
        text += compaction_figures(folder, ds, [r for r in rows if r["form"] == "removal"], "crossover",
                                           "Crossover grid", "removal")
    sel = [r for r in rows if r["form"] in ("flags", "mask") and r["distribution"] == "uniform"]
    if sel:
        fracs = sorted({r["fraction"] for r in sel})
        text += (f"**Flags and bit masks** (uniform): the fastest strategy at each kept share, and its time over "
                 f"`{base}`'s (> 1: faster). Counts: ms per call over n items. {ds.provenance()}.\n\n")
        table = []
        for key in sorted({(r["form"], r["type"], r["n"]) for r in sel}):
            cells = []
            for f in fracs:
                pts = [r for r in sel if (r["form"], r["type"], r["n"]) == key and abs(r["fraction"] - f) < 1e-9]
                if not pts:
                    cells.append("")
                    continue
                best = min(pts, key=lambda r: r["ms_median"])
                b = pick(pts, strategy=base)
                cells.append(f"`{best['strategy']}`" + (f" {ratio(b['ms_median'] / best['ms_median'])}" if b else ""))
            table.append([key[0], key[1], n_label(key[2])] + cells)
        text += md_table(["form", "type", "n"] + [pct(f) for f in fracs], table)
        text += compaction_figures(folder, ds, sel, "crossover", "Crossover grid", "selection")
    if os.path.basename(ds.path).startswith("compaction-crossover"):
        text += ("`auto` reads a table ranked from this grid: `crossover-measured.json` beside this report. To let "
                 "`auto` use it on this device, copy it to `compaction/tuning/<device>.json` and rebuild.\n\n")
    return text


# ---------------------------------------------------------------------------------------------
# Radix sort, traversal, renderer

def sort_section(folder):
    ds = find(folder, "sort")
    if not ds:
        return "## Radix sort\n\nNot measured in this run (GPU only).\n\n"
    rows = [r for r in ds.rows if r.get("validated")]
    text = (f"## Radix sort\n\n*Counts: ms per out-of-place sort of n (u32 key, u32 value) pairs over the key bits "
            f"named ({timing_note(ds)}, CUDA events); pairs/s = n / time. {ds.provenance()}.*\n\n")
    point = lambda r: (r["n"], f"{r['begin_bit']}:{r['end_bit']}", r.get("keys", "uniform"))  # noqa: E731
    groups = sorted({point(r) for r in rows})
    algos = sorted({r["algorithm"] for r in rows}, key=strategy_key)
    others = [a for a in algos if a != "cub"]
    table = []
    for g in groups:
        pts = {r["algorithm"]: r for r in rows if point(r) == g}
        table.append([n_label(g[0]), g[1], g[2]] + [ms(pts[a]["ms_median"]) if a in pts else "" for a in algos]
                     + [ratio(pts[a].get("speed_vs_cub")) if a in pts else "" for a in others])
    text += md_table(["n", "bits", "keys"] + [f"{a} ms" for a in algos] + [f"{a} vs cub" for a in others], table)
    if plt:
        fig, ax = plt.subplots(figsize=(6.4, 4))
        for a in algos:
            for bits in sorted({g[1] for g in groups}):
                pts = sorted((r["n"], r["n"] / (r["ms_median"] * 1e6)) for r in rows
                             if r["algorithm"] == a and f"{r['begin_bit']}:{r['end_bit']}" == bits)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker_of(a), color=color_of(a),
                            ls="-" if bits == "0:32" else "--", label=f"{a}, bits {bits}")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("pairs n (log2)")
        ax.set_ylabel("G pairs / s (n / time)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        ax.set_title(f"Radix sort of (u32, u32) pairs, {ds.device}", fontsize=10)
        fig.tight_layout()
        fig.savefig(os.path.join(folder, "fig-sort.png"), dpi=100)
        plt.close(fig)
        text += (f"![radix sort](fig-sort.png)\n\n*Sorted pairs per second (n / median time; solid: 32-bit keys, "
                 f"dashed: fewer key bits). {ds.provenance()}.*\n\n")
    return text


def multisplit_plot(ds, rows, folder, name):
    """Speed against cub_sort over the bucket count, one panel per item type, one line per (algorithm, n)."""
    items = [i for i in ("u32", "path") if any(r["items"] == i for r in rows)]
    algos = sorted({r["algorithm"] for r in rows if r["algorithm"] != "cub_sort"}, key=strategy_key)
    big = sorted({r["n"] for r in rows if r["n"] >= 1 << 24})
    if not (plt and items and algos and big):
        return ""
    fig, axes = plt.subplots(1, len(items), figsize=(5.2 * len(items), 3.8), squeeze=False)
    for ax, it in zip(axes[0], items):
        for a in algos:
            for k, n in enumerate(big):
                pts = sorted((r["buckets"], r["speed_vs_cub_sort"]) for r in rows if r["items"] == it and
                             r["algorithm"] == a and r["n"] == n and r.get("speed_vs_cub_sort", 0) > 0)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=color_of(a),
                            ls=["-", "--", ":"][k % 3], label=f"{a}, n = {n_label(n)}")
        ax.axhline(2.0, color="grey", lw=0.8, ls="--")
        ax.axhline(1.0, color="black", lw=0.6)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("buckets")
        ax.set_ylabel("speed vs cub SortPairs (bucket bits)")
        ax.set_title(f"{it} items, uniform ids", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6)
    fig.suptitle(f"Multisplit, {ds.device}", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(folder, f"fig-{name}.png"), dpi=100)
    plt.close(fig)
    return (f"![multisplit](fig-{name}.png)\n\n*cub_sort's median time over each algorithm's at the same point "
            f"(above 1: faster; the dashed line is 2x). {ds.provenance()}.*\n\n")


MULTISPLIT_BASELINES = {"cub_sort", "cub_partition", "std_stable_partition"}


def multisplit_table(ds, folder, name):
    rows = [r for r in ds.rows if r.get("validated")]
    point = lambda r: (r["items"], r["n"], r["buckets"], r["dist"])  # noqa: E731
    algos = sorted({r["algorithm"] for r in rows}, key=strategy_key)
    table = []
    for g in sorted({point(r) for r in rows}, key=lambda g: (g[0] != "u32", g[1], g[2], g[3])):
        pts = {r["algorithm"]: r for r in rows if point(r) == g}
        own = [r for r in pts.values() if r["algorithm"] not in MULTISPLIT_BASELINES] or list(pts.values())
        best = min(own, key=lambda r: r["ms_median"])
        table.append([g[0], n_label(g[1]), g[2], g[3]] + [ms(pts[a]["ms_median"]) if a in pts else "" for a in algos]
                     + [best["algorithm"], ratio(best.get("speed_vs_cub_sort")), ratio(best.get("of_copy_floor"))])
    text = f"*{ds.provenance()}. best: the fastest of the library's own designs.*\n\n"
    text += md_table(["items", "n", "buckets", "ids"] + [f"{a} ms" for a in algos] + ["best", "vs sort", "of copy"],
                     table)
    return text + (multisplit_plot(ds, rows, folder, name) if ds.gpu and name == "multisplit" else "")


def multisplit_section(folder):
    sets = [(w, find(folder, w)) for w in ("multisplit", "multisplit-dists", "multisplit-cpu")]
    sets = [(w, ds) for w, ds in sets if ds]
    if not sets:
        return "## Multisplit\n\nNot measured in this run.\n\n"
    text = ("## Multisplit\n\n*Counts: ms per out-of-place split of n items by an 8-bit bucket id, offsets written "
            "(median of CUDA events, or of the mean of CUDA-graph replays at small n; CPU: wall clock); of copy: the "
            "time to copy the ids and the items at the measured copy bandwidth over the split's; vs sort: cub "
            "SortPairs over the bucket bits (records: of (id, index), then a gather) over the split's.*\n\n")
    for w, ds in sets:
        text += f"### `{ds.file}`\n\n" + multisplit_table(ds, folder, w)
    return text


def setup_section(folder):
    ds = find(folder, "setup")
    if not ds:
        return "## Setup\n\nNot measured in this run.\n\n"
    text = (f"## Setup: the load and the BVH build\n\n*Scene `{ds.doc.get('scene')}`; median of the runs a row "
            f"(wall clock); build phases: references, binary SAH tree, pair layout, 8-wide collapse, compressed "
            f"encoding; efficiency: the one-thread row's time over this row's, per thread; every run's triangles "
            f"and tree the same bytes as the first run's. {ds.provenance()}.*\n\n")
    # Upload and first frame: measured where the backend uploads (CUDA); older files have no such keys.
    gpu = any(r.get("upload_ms") is not None for r in ds.rows)
    head = ["threads", "triangles", "load ms", "MB/s", "build ms", "refs", "binary", "pairs", "collapse", "cw",
            *(["upload ms", "first frame ms"] if gpu else []), "Mtris/s", "build efficiency", "SAH"]
    rows = [[str(r["threads"]), f"{r['triangles']:,}", ms(r["load_ms"]),
             f"{r['load_mb_per_s']:.0f}" if r.get("load_mb_per_s") else "-", ms(r["build_ms"]),
             ms(r["refs_ms"]), ms(r["binary_ms"]), ms(r["pairs_ms"]), ms(r["collapse_ms"]), ms(r["cw_ms"]),
             *([ms(r.get("upload_ms")), ms(r.get("first_frame_ms"))] if gpu else []),
             f"**{r['build_mtris_per_s']:.2f}**", f"{r['build_efficiency']:.2f}", f"{r['sah_cost']:.2f}"]
            for r in ds.rows if r.get("validated")]
    if gpu:
        text += ("*Upload: the scene and the film copied to the device; first frame: from then to one sample over "
                 "the whole film (the wave's graph captured).*\n\n")
    return text + md_table(head, rows)


def trace_section(folder):
    ds = find(folder, "trace")
    if not ds:
        return "## Traversal\n\nNot measured in this run.\n\n"
    rows = [r for r in ds.rows if r.get("validated")]
    bvh = ds.doc.get("bvh", {})
    builds = bvh.get("builds") or [bvh]  # one entry per builder (older results: the one tree's keys)
    built = "; ".join(f"{b.get('builder', 'sah')}: {b.get('nodes', 0):,} nodes, depth {b.get('depth')}, built in "
                      f"{ms(b.get('total_ms', b.get('build_ms')))} ms ({b.get('mtris_per_s', 0):.2f} M triangles/s, "
                      f"{b.get('where', 'CPU')}), SAH cost {b.get('sah_cost', 0):.2f}" for b in builds)
    text = (f"## Traversal: rays per second through the BVH\n\n"
            f"*Scene `{ds.doc.get('scene')}`, {ds.doc.get('triangles', 0):,} triangles; BVH {built}. "
            f"Counts: rays traced (primary: one per pixel "
            f"centre; diffuse: one cosine ray per primary hit), closest hit, Mrays/s = rays / median time "
            f"({'GPU kernel time, CUDA events' if ds.gpu else 'CPU clock'}); every configuration matched DFS first. "
            f"{ds.provenance()}.*\n\n")
    def shown(r):  # the GPU BFS names its level loop (graph: on the device; host: one sync a step)
        loop = r.get("bfs_loop", "-")
        return r["traversal"] + ("" if loop in ("-", None) else f" ({loop} loop)")
    text += md_table(["tree", "rays", "traversal", "BFS frontier strategy", "rays traced", "ms", "Mrays/s", "x DFS",
                      "x first tree", "host syncs"],
                     [[r.get("build", "sah"), r["rays"], shown(r), r["strategy"], f"{r['count']:,}", ms(r["ms_median"]),
                       f"**{r['mrays_per_s']:.2f}**", f"{r['vs_dfs']:.2f}" if r.get("vs_dfs") else "-",
                       f"{r['vs_first_build']:.2f}" if r.get("vs_first_build") else "-",
                       str(r.get("host_syncs", "-"))] for r in rows])
    if plt and rows:
        kinds = sorted({r["rays"] for r in rows}, key=lambda k: (k != "primary", k))
        multi = len({r.get("build", "sah") for r in rows}) > 1
        def label(r):  # the tree's builder first when there are several
            return ((r.get("build", "sah") + ": ") if multi else "") + r["traversal"] + (
                "" if r["strategy"] == "-" else f" + {r['strategy']}")
        configs = []
        for r in rows:
            c = label(r)
            if c not in configs:
                configs.append(c)
        fig, ax = plt.subplots(figsize=(max(5.5, 1.1 * len(configs) * len(kinds)), 4))
        w = 0.8 / len(configs)
        for i, c in enumerate(configs):
            ys = []
            for k in kinds:
                r = next((r for r in rows if r["rays"] == k and label(r) == c), None)
                ys.append(r["mrays_per_s"] if r else 0)
            name = c.split(" + ")[-1] if " + " in c else c.split(": ")[-1]
            hatch = ["", "//", "..", "xx", "\\\\", "++"][i % 6]  # apart in grey print too
            bars = ax.bar([j + i * w for j in range(len(kinds))], ys, w, label=c, hatch=hatch,
                          color=OTHER_COLORS.get(name, color_of(name)), edgecolor="white", linewidth=0.5)
            ax.bar_label(bars, [f"{y:.0f}" if y >= 100 else f"{y:.3g}" for y in ys], fontsize=7)
        ax.set_xticks([j + 0.4 - w / 2 for j in range(len(kinds))], [f"{k} rays" for k in kinds])
        ax.set_ylabel("M rays / s")
        ax.legend(fontsize=8)
        ax.grid(True, axis="y", which="both", alpha=0.3)
        ax.set_title(f"Traversal, {ds.doc.get('triangles', 0):,} triangles, {ds.device}", fontsize=10)
        fig.tight_layout()
        fig.savefig(os.path.join(folder, "fig-trace.png"), dpi=100)
        plt.close(fig)
        text += (f"![traversal](fig-trace.png)\n\n*Rays traced per second (closest hit), DFS and BFS with its "
                 f"frontier compacted by the strategy named. {ds.provenance()}.*\n\n")
    return text


def render_sets(folder):
    out = []
    for path in sorted(glob.glob(os.path.join(folder, "render*.json"))):
        doc = json.load(open(path))
        if isinstance(doc, dict) and doc.get("benchmark") == "render" and of_this_run(folder, path):
            out.append(load(folder, os.path.basename(path)))
    return out


def scene_name(ds):
    return os.path.splitext(os.path.basename(ds.doc.get("scene", "?")))[0]


def config_label(r, keys):
    if r.get("integrator") == "megakernel":
        return "megakernel"
    skip = (None, "none", "dfs", "wavefront")
    head = [] if r.get("strategy") in (None, "-") else [r["strategy"]]  # append: no strategy
    return " ".join(head + [str(r[k]) for k in keys if k != "strategy" and r.get(k) not in skip])


def render_title(ds):
    """The scene, and what every configuration of the file shares when it is not the default."""
    rows = ds.rows
    extra = [f"{k} {rows[0][k]}" for k in ("traversal", "reorder") if rows and len({r.get(k) for r in rows}) == 1
             and rows[0].get(k) not in (None, "none", "dfs")]
    return scene_name(ds) + (f" ({', '.join(extra)})" if extra else "")


def plot_render(ds, rows, keys, out):
    """Per configuration a bar of compaction's share of the frame, stacked bounce by bounce (the BFS
    frontier's compaction, summed over levels, on top); beside it the live paths per bounce."""
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.4), gridspec_kw={"width_ratios": [2.2, 1]})
    labels = [config_label(r, keys) for r in rows]
    bounces = sorted({b["bounce"] for r in rows for b in r.get("bounces", [])})
    cmap = plt.get_cmap("viridis")
    bottoms = [0.0] * len(rows)
    for i, b in enumerate(bounces):
        ys = []
        for r in rows:
            v = next((x["compaction_ms"] for x in r.get("bounces", []) if x["bounce"] == b), 0.0)
            ys.append(100 * v / (r["seconds"] * 1e3))
        ax.bar(range(len(rows)), ys, 0.7, bottom=bottoms, color=cmap(i / max(1, len(bounces) - 1)), label=f"bounce {b}")
        bottoms = [x + y for x, y in zip(bottoms, ys)]
    bfs = [100 * r.get("bfs_frontier_compaction_ms", 0) / (r["seconds"] * 1e3) for r in rows]
    if any(v > 0 for v in bfs):
        ax.bar(range(len(rows)), bfs, 0.7, bottom=bottoms, color="0.7", hatch="//", label="BFS frontier (all levels)")
    totals = [b + f for b, f in zip(bottoms, bfs)]
    for x, t in enumerate(totals):
        ax.text(x, t, f"{t:.1f} %" if t >= 1 else f"{t:.2f} %", ha="center", va="bottom", fontsize=8)
    ax.set_ylim(0, 1.45 * max(totals + [1e-9]))
    ax.set_xticks(range(len(rows)), labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("compaction, % of the frame's time")
    ax.set_title(f"{render_title(ds)}: compaction's share, bounce by bounce", fontsize=10)
    ax.legend(fontsize=7, ncol=4, loc="upper center")
    ax.grid(True, axis="y", alpha=0.3)
    ref = rows[0]
    live = [(b["bounce"], b["live"]) for b in ref.get("bounces", [])]
    if live:
        ax2.bar([x[0] for x in live], [x[1] for x in live], color="0.45")
        log_axis(ax2, [x[1] for x in live])
    ax2.set_xlabel("bounce")
    ax2.set_ylabel("live paths entering the bounce (log)")
    ax2.set_title("paths per bounce (every strategy: the same)", fontsize=10)
    ax2.grid(True, axis="y", which="both", alpha=0.3)
    fig.suptitle(f"{ds.device}, commit {ds.commit}", fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


STAGE_ORDER = ["generate", "extend", "route", "shade", "connect", "compact", "reorder", "accumulate", "megakernel"]
STAGE_COLORS = {"generate": "#9ecae1", "extend": "#3182bd", "shade": "#31a354", "connect": "#a1d99b",
                "compact": "tab:red", "route": "#e6550d", "reorder": "#fdae6b", "accumulate": "#bdbdbd", "megakernel": "#756bb1"}


def plot_frame_split(ds, rows, keys, out):
    """Per configuration (the megakernel too) a bar of the profiled frame split stage by stage, in ms,
    and a tick at the frame's time without stage times: where the frame goes for each way of shrinking
    the path queue (a pass over the state, an index queue, producer-side append, no queue)."""
    fig, ax = plt.subplots(figsize=(12, 4.6))
    labels = [config_label(r, keys) for r in rows]
    stages = [s for s in STAGE_ORDER if any(s in r.get("stages", {}) for r in rows)]
    stages += sorted({s for r in rows for s in r.get("stages", {})} - set(stages))
    bottoms = [0.0] * len(rows)
    for s in stages:
        ys = [r.get("stages", {}).get(s, 0.0) for r in rows]
        color = STAGE_COLORS.get(s, "0.6")
        ax.bar(range(len(rows)), ys, 0.7, bottom=bottoms, color=color, label=s,
               edgecolor="black" if s == "compact" else None, linewidth=0.6)
        bottoms = [b + y for b, y in zip(bottoms, ys)]
    plain = [1e3 * r["seconds_unprofiled"] if r.get("seconds_unprofiled") else None for r in rows]
    xs = [x for x, v in enumerate(plain) if v]
    if xs:
        ax.scatter(xs, [plain[x] for x in xs], marker="_", s=500, color="black", zorder=3,
                   label="frame without stage times")
    for x, r in enumerate(rows):
        share = r.get("compaction_share")
        if share is not None and r.get("integrator") != "megakernel":
            ax.text(x, bottoms[x], pct(share, 1), ha="center", va="bottom", fontsize=7)
    ax.set_ylim(0, 1.3 * max(bottoms + [v or 0 for v in plain] + [1e-9]))
    ax.set_xticks(range(len(rows)), labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("ms of the frame (summed over waves)")
    ax.set_title(f"{render_title(ds)}: the frame split by stage (label: compaction's share)", fontsize=10)
    ax.legend(fontsize=7, ncol=5, loc="upper center")
    ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(f"{ds.device}, commit {ds.commit}", fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def render_section(folder):
    sets = render_sets(folder)
    if not sets:
        return "## The renderer: what compaction costs inside a frame\n\nNot measured in this run.\n\n"
    text = ("## The renderer: what compaction costs inside a frame\n\n"
            "Counts: the wall time of one whole render (median of the repeats after a checked warm-up), Mrays/s = "
            "(extension + shadow rays) / that time, compaction ms = the path queue's compaction (plus the BFS "
            "frontier's with BFS traversal) summed over the frame, share = compaction ms / frame time. Every "
            "configuration's image equals the first's bit for bit before it is timed.\n\n")
    for ds in sets:
        rows = ds.rows
        film = ds.doc.get("film", {})
        keys = varying(rows, ["strategy", "queue", "routing", "traversal", "reorder", "wave_launch", "integrator"]) or ["strategy"]
        text += (f"### {render_title(ds)}: {film.get('width')} x {film.get('height')}, {film.get('spp')} spp, "
                 f"{film.get('max_bounces')} bounces, {ds.doc.get('triangles', 0):,} triangles\n\n"
                 f"*Per configuration: the median frame's time, rays per second, and its compaction. "
                 f"{ds.provenance()}.*"
                 f"\n\n")
        table = []
        for r in rows:
            per = " ".join(f"{b['compaction_ms']:.2f}" for b in r.get("bounces", []))
            mega = r.get("integrator") == "megakernel"
            table.append([config_label(r, keys), r.get("form", "-"), ms(r["seconds"] * 1e3), f"{r['mrays_per_s']:.1f}"]
                         + (["-"] * 3 if mega else [ms(r["compaction_ms"]), pct(r["compaction_share"], 1), per]))
        text += md_table(["configuration", "form", "frame ms", "Mrays/s", "compaction ms", "share",
                          "compaction ms per bounce"], table)
        wave = [r for r in rows if r.get("integrator", "wavefront") != "megakernel"]
        if plt and wave:
            name = f"fig-{os.path.splitext(ds.file)[0]}.png"
            plot_render(ds, wave, keys, os.path.join(folder, name))
            text += (f"![{scene_name(ds)}]({name})\n\n*Left: the path queue's compaction time per bounce as a share "
                     f"of the frame's wall time, stacked (bar height: compaction's whole share; hatched: the BFS "
                     f"frontier's compaction over all levels). Right: live paths entering each bounce. "
                     f"{ds.provenance()}.*\n\n")
        if plt and any(r.get("stages") for r in rows):
            split = f"fig-{os.path.splitext(ds.file)[0]}-split.png"
            plot_frame_split(ds, rows, keys, os.path.join(folder, split))
            text += (f"![{scene_name(ds)}: frame split]({split})\n\n*The profiled frame, stage by stage (compaction "
                     f"in red), for every configuration; the black tick is the same render without stage times. "
                     f"{ds.provenance()}.*\n\n")
    return text


def images_section(folder):
    text = ""
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        doc = json.load(open(path))
        png = os.path.splitext(path)[0] + ".png"
        if (not isinstance(doc, dict) or "samples_completed" not in doc or not os.path.exists(png)
                or not of_this_run(folder, path)):
            continue
        ds = load(folder, os.path.basename(path))
        rays = doc.get("rays", {})
        text += (f"![{doc.get('scene')}]({os.path.basename(png)})\n\n*{doc.get('scene')}: {doc.get('width')} x "
                 f"{doc.get('height')}, {doc.get('samples_completed')} spp, {doc.get('triangles', 0):,} triangles, "
                 f"{doc.get('backend')} {doc.get('integrator')}"
                 + (f" with `{doc['strategy']}` ({doc.get('form')})" if doc.get("strategy") else "")  # null: none ran
                 + f", {doc.get('frame_seconds', doc.get('seconds', 0)):.2f} s, {doc.get('mrays_per_s', 0):.1f} Mrays/s "
                 f"(extension {rays.get('extension', 0):,} + shadow {rays.get('shadow', 0):,} rays). "
                 f"{ds.provenance()}.*\n\n")
    return "## Rendered images\n\n" + (text or "None in this folder.\n\n")


# ---------------------------------------------------------------------------------------------
# The whole report

def header(folder):
    m = manifest(folder)
    datasets = [d for d in (find(folder, w) for w in SOURCES) if d] + render_sets(folder)
    device = m["device"] if m else (datasets[0].device if datasets else os.path.basename(folder))
    text = f"# sieve benchmark report: {device}\n\n"
    if m:
        run = m.get("run", {})
        text += (f"Written by `{run.get('command')}` ({m.get('mode')} mode), commit `{run.get('commit')}`, "
                 f"{run.get('date', '')[:10]}, build {run.get('build_type')} ({run.get('compiler')}"
                 f"{', ' + run['cuda_compiler'] if run.get('cuda_compiler') else ''}). Backend {m.get('backend')}; "
                 f"device {m.get('device')}; driver {m.get('driver')}; machine: {m.get('machine', {}).get('cpu')}, "
                 f"{m.get('machine', {}).get('tbb_threads')} oneTBB threads, {m.get('machine', {}).get('os')}.\n\n")
        text += md_table(["step", "what", "seconds (expected)", "result", "files"],
                         [[s["name"], s["what"], f"{s.get('seconds', 0):.1f} ({s.get('expected_seconds', 0):.0f})",
                           s["status"], ", ".join(f"`{f}`" for f in s.get("files", []))] for s in m.get("steps", [])])
    else:
        commits = sorted({d.commit for d in datasets})
        text += (f"Assembled from the files in this folder (no `bench-all.json`: these were measured one command at "
                 f"a time); commits {', '.join('`' + c + '`' for c in commits)}. Each table names its own file, "
                 f"commit and command.\n\n")
    if m and m.get("mode") != "full":
        text += (f"**{m.get('mode')} mode**: small sizes and few repeats, to check that everything runs; the numbers "
                 f"are not the papers' grids. `sieve bench all` without `--quick` measures those.\n\n")
    if not plt:
        text += "*matplotlib was not found: no plots (Debian: `apt-get install python3-matplotlib`).*\n\n"
    return text


def reproduce(folder):
    m = manifest(folder)
    cmds = "\n".join(s["command"] for s in m.get("steps", []) if s.get("command")) if m else ""
    return ("## Reproducing\n\n"
            "```sh\nmake bench            # builds Release, runs `sieve bench all` (its plan and expected time first)\n"
            "make bench QUICK=1    # the quick mode: a few minutes\n"
            "bench/report.py bench/results/<device>   # this report again, from the JSON beside it\n```\n\n"
            + (f"The steps of this run, each as the single command that repeats it:\n\n```sh\n{cmds}\n```\n\n"
               if cmds else ""))


def write_report(folder):
    for old in glob.glob(os.path.join(folder, "fig-*.png")):  # an earlier report's plots (fig-* are this script's)
        os.remove(old)
    sections = [
        header(folder),
        papers_section(folder),
        compaction_section(folder, "redzone", "Removal lists: the Redzone paper's grid",
                           "Removal lists of k distinct random indices (r: share inside the red zone), removed in "
                           "place.", ["removal"]),
        compaction_section(folder, "space", "Selections: SPACE's grid",
                           "Byte flags and bit masks keeping a share of n items, uniform or clustered (one cluster; "
                           "32 clusters).", ["selection"]),
        compaction_section(folder, "billeter", "Billeter's Table 3",
                           "4M 32-bit items (Table 3's size), byte flags, 0 .. 100 % kept in steps of 10 %.",
                           ["selection"]),
        queues_section(folder),
        crossover_section(folder),
        sort_section(folder),
        multisplit_section(folder),
        trace_section(folder),
        setup_section(folder),
        render_section(folder),
        images_section(folder),
        reproduce(folder),
    ]
    path = os.path.join(folder, "report.md")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("".join(sections))
    os.replace(tmp, path)
    return path


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", help="a results folder, e.g. bench/results/h100-80gb-hbm3")
    a = p.parse_args()
    if not os.path.isdir(a.folder):
        sys.exit(f"bench/report.py: no folder {a.folder}")
    path = write_report(a.folder)
    figs = sorted(os.path.basename(f) for f in glob.glob(os.path.join(a.folder, "fig-*.png")))
    print(f"wrote {path}" + (f" and {len(figs)} plots" if plt else " without plots (no matplotlib)"))


if __name__ == "__main__":
    main()
