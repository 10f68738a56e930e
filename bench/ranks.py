#!/usr/bin/env python3
"""bench/ranks.py: `mpirun -np N sieve render` for N = 1, 2, ...: where each job's time goes (setup,
rendering, waiting, reduction), speedup and scaling efficiency against 1 rank on the whole job and on
rendering alone, and, with --cpu-ranks, one rank plus CPU ranks against that rank alone.

    bench/ranks.py SCENE [--ranks 1,2] [--repeat 5] [--threads 1] [--backend cpu] [--out DIR]
                   [--cpu-ranks K --cpu-threads T] [--sieve sieve] [--mpirun mpirun]
                   [-- more sieve render options]

Each run is `mpirun --bind-to none -np N sieve render SCENE --backend B --threads T --quiet --json
...`; the ranks take the film's tiles on demand. From each report's `ranks` object: `whole` is the
job from the scene's loading to the end of the reduction on rank 0 (no process start), `setup` the
slowest rank's loading, BVH build, upload and graph capture, `render` the slowest rank's rendering,
`wait` the longest a rank waited for the others to finish rendering, `reduce` rank 0's reduction
(the tiles brought to it and put together). Speedup and efficiency are given on the whole job and
on rendering alone. The repetitions of every configuration are interleaved (1, 2, 1, 2, ...) so a
change of machine load hits each alike; the tables show medians (and the load average before the
runs). `CPU s` is the ranks' CPU time while rendering, summed. Writes ranks.txt, ranks.csv and
ranks.json into --out.

--cpu-ranks K adds the configuration "1+K": one rank of --backend and K CPU ranks of --cpu-threads
threads each (mpirun's MPMD form, `-np 1 ... : -np K ... --backend cpu`), compared with 1 rank.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile


def mpirun_cmd(args, ranks):
    cmd = [args.mpirun, "--bind-to", "none"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    if ranks > os.cpu_count():
        cmd.append("--oversubscribe")
    return cmd


def render(args, config, extra, tmp):
    """config: (label, ranks of --backend, CPU ranks)."""
    label, n, k = config
    report = os.path.join(tmp, f"r{label}.json")
    own = [args.sieve, "render", args.scene, "--quiet", "--json", report] + extra
    first = own + ["--backend", args.backend, "--out", os.path.join(tmp, f"r{label}.png")]
    if args.threads:
        first += ["--threads", str(args.threads)]
    cmd = mpirun_cmd(args, n + k) + ["-np", str(n)] + first
    if k:
        cmd += [":", "-np", str(k)] + own + ["--backend", "cpu", "--out", os.path.join(tmp, f"r{label}.png")]
        if args.cpu_threads:
            cmd += ["--threads", str(args.cpu_threads)]
    load = os.getloadavg()[0]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench/ranks.py: {' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
    with open(report) as f:
        return json.load(f), load


def row_of(j, load):
    r = j["ranks"]
    per = r["per_rank"]
    return {"whole": r["job_seconds"], "seconds": j.get("frame_seconds", j.get("seconds")),  # schema 2: frame_seconds
            "setup": r["setup_seconds"], "render": r["render_seconds"],
            "wait": r["wait_seconds"], "reduce": r["reduction_seconds"], "rays": j["rays"]["extension"] + j["rays"]["shadow"],
            "load": load, "tiles": [x["tiles"] for x in per], "backends": [x["backend"] for x in per],
            "rank_render": [x["render_seconds"] for x in per], "cpu_seconds": sum(x["cpu_seconds"] for x in per),
            "load_s": max(x.get("load_seconds", 0) for x in per), "bvh_s": max(x.get("bvh_seconds", 0) for x in per),
            "upload_s": max(x.get("render_setup_seconds", 0) for x in per)}


def summary(label, n, runs, base):
    med = lambda key: statistics.median(r[key] for r in runs)  # noqa: E731
    whole, rendering = med("whole"), med("render")
    return {"config": label, "ranks": n, "whole_seconds": whole, "min_whole": min(r["whole"] for r in runs),
            "max_whole": max(r["whole"] for r in runs), "setup_seconds": med("setup"), "load_seconds": med("load_s"),
            "bvh_seconds": med("bvh_s"), "render_setup_seconds": med("upload_s"), "render_seconds": rendering,
            "wait_ms": med("wait") * 1e3, "reduction_ms": med("reduce") * 1e3, "reduction_share": med("reduce") / med("seconds"),
            "mrays_per_s": runs[0]["rays"] / med("seconds") / 1e6,
            "speedup": base["whole"] / whole, "efficiency": base["whole"] / whole / n,
            "speedup_rendering": base["render"] / rendering, "efficiency_rendering": base["render"] / rendering / n,
            "tiles_per_rank": runs[len(runs) // 2]["tiles"], "cpu_seconds": med("cpu_seconds"),
            "median_load": med("load")}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scene")
    p.add_argument("--ranks", default="1,2")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--threads", type=int, default=1, help="oneTBB threads per rank (0: sieve's default)")
    p.add_argument("--backend", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--cpu-ranks", type=int, default=0, metavar="K", help="also 1 rank + K CPU ranks")
    p.add_argument("--cpu-threads", type=int, default=0, metavar="T", help="threads of each of those CPU ranks")
    p.add_argument("--sieve", default="sieve")
    p.add_argument("--mpirun", default="mpirun")
    p.add_argument("--out", default=".")
    p.add_argument("--note", default="", help="a line about the conditions, kept in the outputs")
    args, extra = p.parse_known_args()
    extra = [e for e in extra if e != "--"]
    configs = [(str(n), n, 0) for n in (int(r) for r in args.ranks.split(","))]
    if args.cpu_ranks:
        if not any(c[1] == 1 for c in configs):
            configs.insert(0, ("1", 1, 0))
        configs.append((f"1+{args.cpu_ranks}cpu", 1, args.cpu_ranks))
    os.makedirs(args.out, exist_ok=True)

    runs = {c[0]: [] for c in configs}
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.repeat):
            for c in configs:
                j, load = render(args, c, extra, tmp)
                runs[c[0]].append(row_of(j, load))
                print(f"  {c[0]} ranks, run {rep + 1}: {j['ranks']['job_seconds']:.3f} s (load {load:.1f})", file=sys.stderr)
                if c[0] == configs[0][0]:
                    sample_json = j
    device = sample_json["device"]
    base_label = next((c[0] for c in configs if c[1] == 1 and c[2] == 0), configs[0][0])
    base = {"whole": statistics.median(r["whole"] for r in runs[base_label]),
            "render": statistics.median(r["render"] for r in runs[base_label])}
    rows = [summary(c[0], c[1] + c[2], runs[c[0]], base) for c in configs]
    for r, c in zip(rows, configs):
        if c[2]:  # against the one rank alone: the gain, not a per-rank efficiency
            r["efficiency"] = r["efficiency_rendering"] = None

    lines = [f"mpirun -np N sieve render {args.scene} {' '.join(extra)} --backend {args.backend}"
             f" --threads {args.threads or 'default'}: {args.repeat} runs per configuration, medians",
             f"device: {device}; {sample_json['width']} x {sample_json['height']}, {sample_json['spp']} spp, "
             f"{rows[0]['mrays_per_s'] * sample_json['seconds']:.1f} Mrays per render; commit {sample_json['run']['commit']}",
             *([f"CPU ranks: --backend cpu --threads {args.cpu_threads or 'default'}"] if args.cpu_ranks else []),
             *([f"note: {args.note}"] if args.note else []),
             "",
             f"{'ranks':>7} {'whole s':>8} {'setup s':>7} {'load':>5} {'BVH':>5} {'upl.':>5} {'render s':>8} {'wait ms':>7} {'reduce ms':>9} {'share':>6} "
             f"{'speedup':>7} {'effic.':>6} {'render x':>8} {'effic.':>6} {'Mrays/s':>8} {'tiles per rank':<20} {'load':>5}"]
    eff = lambda v: f"{v:>6.2f}" if v is not None else f"{'-':>6}"  # noqa: E731
    for r in rows:
        lines.append(f"{r['config']:>7} {r['whole_seconds']:>8.3f} {r['setup_seconds']:>7.3f} {r['load_seconds']:>5.2f} "
                     f"{r['bvh_seconds']:>5.2f} {r['render_setup_seconds']:>5.2f} {r['render_seconds']:>8.3f} "
                     f"{r['wait_ms']:>7.1f} {r['reduction_ms']:>9.2f} {100 * r['reduction_share']:>5.2f}% "
                     f"{r['speedup']:>7.2f} {eff(r['efficiency'])} {r['speedup_rendering']:>8.2f} {eff(r['efficiency_rendering'])} "
                     f"{r['mrays_per_s']:>8.1f} {','.join(map(str, r['tiles_per_rank'])):<20} {r['median_load']:>5.1f}")
    lines += ["", "whole: loading to the end of the reduction; setup: loading, BVH, upload, graph capture (the slowest "
                  "rank; load, BVH, upl.: its parts, each the slowest rank's: BVH is the build, or on a rank that "
                  "receives rank 0's tree the wait for it); render: the slowest rank's rendering; speedup and efficiency against 1 rank, on the whole job "
                  "and on rendering alone"]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    with open(os.path.join(args.out, "ranks.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "ranks.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    command = " ".join(["bench/ranks.py"] + sys.argv[1:])
    run = dict(sample_json["run"], command=command)  # the ranks' own command names a temporary folder
    with open(os.path.join(args.out, "ranks.json"), "w") as f:
        json.dump({"command": command, "device": device, "scene": args.scene,
                   "backend": args.backend, "threads": args.threads, "cpu_ranks": args.cpu_ranks,
                   "cpu_threads": args.cpu_threads, "extra": extra, "note": args.note, "run": run,
                   "rows": rows, "runs": runs}, f, indent=2)


if __name__ == "__main__":
    main()
