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
import os
import sys

from report_common import *  # noqa: F401,F403  (plot_compaction.py reads load, plt, ... from here)
from report_compaction import *  # noqa: F401,F403
from report_suites import *  # noqa: F401,F403


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
