"""bench/report.py's common part: the figures' style, the formatting of numbers and tables, and
the loading of a results folder's files (Dataset).
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


def save_figure(fig, path):
    """Lays the figure out, writes it as a PNG (100 dpi) and frees it."""
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def figure_md(file, alt, caption):
    """The Markdown of a figure in the report's folder and its caption (in italics)."""
    return f"![{alt}]({file})\n\n*{caption}*\n\n"


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


def render_sets(folder):
    out = []
    for path in sorted(glob.glob(os.path.join(folder, "render*.json"))):
        doc = json.load(open(path))
        if isinstance(doc, dict) and doc.get("benchmark") == "render" and of_this_run(folder, path):
            out.append(load(folder, os.path.basename(path)))
    return out


def scene_name(ds):
    return os.path.splitext(os.path.basename(ds.doc.get("scene", "?")))[0]


def render_title(ds):
    """The scene, and what every configuration of the file shares when it is not the default."""
    rows = ds.rows
    extra = [f"{k} {rows[0][k]}" for k in ("traversal", "reorder") if rows and len({r.get(k) for r in rows}) == 1
             and rows[0].get(k) not in (None, "none", "dfs")]
    return scene_name(ds) + (f" ({', '.join(extra)})" if extra else "")
