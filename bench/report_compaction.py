"""bench/report.py's compaction sections: each preset's grid, the papers' figures set beside
sieve's, the renderer's queues and the crossover of `auto`.
"""
from report_common import *  # noqa: F401,F403


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
