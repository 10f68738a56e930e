"""bench/report.py's other suites: the radix sort, the multisplit, the setup, the traversal, the
render workload and the images.
"""
from report_common import *  # noqa: F401,F403
from report_compaction import *  # noqa: F401,F403  (varying, pick, ...)


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
        save_figure(fig, os.path.join(folder, "fig-sort.png"))
        text += figure_md("fig-sort.png", "radix sort", "Sorted pairs per second (n / median time; solid: 32-bit keys, "
                          f"dashed: fewer key bits). {ds.provenance()}.")
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
    save_figure(fig, os.path.join(folder, f"fig-{name}.png"))
    return figure_md(f"fig-{name}.png", "multisplit", "cub_sort's median time over each algorithm's at the same point "
                     f"(above 1: faster; the dashed line is 2x). {ds.provenance()}.")


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
        save_figure(fig, os.path.join(folder, "fig-trace.png"))
        text += figure_md("fig-trace.png", "traversal", "Rays traced per second (closest hit), DFS and BFS with its "
                          f"frontier compacted by the strategy named. {ds.provenance()}.")
    return text


def config_label(r, keys):
    if r.get("integrator") == "megakernel":
        return "megakernel"
    skip = (None, "none", "dfs", "wavefront")
    head = [] if r.get("strategy") in (None, "-") else [r["strategy"]]  # append: no strategy
    return " ".join(head + [str(r[k]) for k in keys if k != "strategy" and r.get(k) not in skip])


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
    save_figure(fig, out)


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
    save_figure(fig, out)


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
