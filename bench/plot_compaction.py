#!/usr/bin/env python3
"""Plots of one `sieve bench compaction --csv` (or --json) file, drawn by bench/report.py's code.

  bench/plot_compaction.py RESULTS.csv OUT_PREFIX [--title TEXT] [--type u32]

Writes OUT_PREFIX-removal.png (removal lists: time per call against k/n) and OUT_PREFIX-select.png
(flags and bit masks: time per call against the kept share) for the forms present in the file: one
line per strategy, one panel per form, distribution and n that vary. Times, not byte rates: SPACE's
published GiB/s count skipped bytes as moved. A whole results folder, tables and all:
bench/report.py FOLDER.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("results", help="a CSV or JSON written by `sieve bench compaction`")
    p.add_argument("prefix")
    p.add_argument("--title", default="sieve compaction")
    p.add_argument("--type", default="u32", help="item type to plot (the `type` column)")
    a = p.parse_args()
    if report.plt is None:
        sys.exit("bench/plot_compaction.py: needs matplotlib (Debian: apt-get install python3-matplotlib)")
    folder, name = os.path.split(os.path.abspath(a.results))
    ds = report.load(folder, name)
    for family, forms, suffix, what in (("removal", ["removal"], "removal", "removal lists"),
                                        ("selection", ["flags", "mask"], "select", "flags and bit masks")):
        rows = [r for r in report.compaction_rows(ds, forms) if r["type"] == a.type]
        out = f"{a.prefix}-{suffix}.png"
        if rows and report.plot_compaction(rows, family, out, f"{a.title}: {what}, {a.type}", ""):
            print("wrote", out)


if __name__ == "__main__":
    main()
