#!/usr/bin/env python3
"""bench/ranks.py: `mpirun -np N sieve render` for N = 1, 2, ...: time, Mrays/s, speedup and scaling
efficiency against 1 rank, the reduction's share, and how evenly the ranks' work splits.

    bench/ranks.py SCENE [--ranks 1,2] [--repeat 5] [--threads 1] [--backend cpu] [--out DIR]
                   [--sieve build/app/sieve] [--mpirun mpirun] [-- more sieve render options]

Each run is `mpirun -np N sieve render SCENE --backend B --threads T --quiet --json ...`; the time
is the report's `seconds` (from the ranks' start to the end of the reduction: no process start, no
scene loading, no BVH build). The repetitions of every N are interleaved (1, 2, 1, 2, ...) so a
change of machine load hits every N alike; the tables show medians, with the load average before
each run. `CPU s` is the ranks' CPU time while rendering, summed, and `work` the 1-rank CPU time over
it: on a machine shared with other work (where the wall time depends on what else runs) it shows
whether splitting costs work; the wall-time speedup shows what the cores gave. Writes ranks.txt,
ranks.csv and ranks.json into --out.

--balance S: also one run of S ranks rendering S samples, one each, to weigh every sample's work by
its rays (a deterministic measure, unlike time on a shared machine); from those it prints how evenly
contiguous sample ranges (what sieve does) and interleaved ones (rank r takes r, r + N, ...) split
the rays for each N.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile


def mpirun_cmd(args, n):
    cmd = [args.mpirun, "-np", str(n)]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    if n > os.cpu_count() or args.backend == "cpu" and n * max(args.threads, 1) > os.cpu_count():
        cmd.append("--oversubscribe")
    return cmd


def render(args, n, extra, tmp):
    report = os.path.join(tmp, f"r{n}.json")
    cmd = mpirun_cmd(args, n) + [args.sieve, "render", args.scene, "--backend", args.backend, "--quiet",
                                 "--out", os.path.join(tmp, f"r{n}.png"), "--json", report]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    cmd += extra
    load = os.getloadavg()[0]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench/ranks.py: {' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
    with open(report) as f:
        j = json.load(f)
    return j, load


def imbalance(work):
    return max(work) / (sum(work) / len(work))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scene")
    p.add_argument("--ranks", default="1,2")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--threads", type=int, default=1, help="oneTBB threads per rank (0: sieve's default)")
    p.add_argument("--backend", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--sieve", default="build/app/sieve")
    p.add_argument("--mpirun", default="mpirun")
    p.add_argument("--out", default=".")
    p.add_argument("--balance", type=int, default=0, metavar="S")
    p.add_argument("--note", default="", help="a line about the conditions, kept in the outputs")
    args, extra = p.parse_known_args()
    extra = [e for e in extra if e != "--"]
    ranks = [int(r) for r in args.ranks.split(",")]
    os.makedirs(args.out, exist_ok=True)

    runs = {n: [] for n in ranks}
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.repeat):
            for n in ranks:
                j, load = render(args, n, extra, tmp)
                r = j["ranks"]
                runs[n].append({"seconds": j["seconds"], "rays": j["rays"]["extension"] + j["rays"]["shadow"],
                                "reduction_seconds": r["reduction_seconds"], "wait_seconds": r["wait_seconds"],
                                "efficiency_in_job": r["efficiency"], "load": load,
                                "rank_seconds": [x["seconds"] for x in r["per_rank"]],
                                "cpu_seconds": sum(x["cpu_seconds"] for x in r["per_rank"])})
                print(f"  {n} ranks, run {rep + 1}: {j['seconds']:.3f} s (load {load:.1f})", file=sys.stderr)
        device, sample_json = j["device"], j
        balance = None
        if args.balance:
            s = args.balance
            no_spp = [e for i, e in enumerate(extra) if e != "--spp" and (i == 0 or extra[i - 1] != "--spp")]
            j, _ = render(args, s, no_spp + ["--spp", str(s)], tmp)
            per_sample = [x["rays"] for x in sorted(j["ranks"]["per_rank"], key=lambda x: x["first_sample"])]
            balance = {"samples": s, "rays_per_sample": per_sample, "by_ranks": []}
            for n in ranks:
                if n > s:
                    continue
                contiguous = [0] * n
                for k in range(n):
                    first, count = k * (s // n) + min(k, s % n), s // n + (1 if k < s % n else 0)
                    contiguous[k] = sum(per_sample[first:first + count])
                interleaved = [sum(per_sample[k::n]) for k in range(n)]
                balance["by_ranks"].append({"ranks": n, "contiguous_max_over_mean": imbalance(contiguous),
                                            "interleaved_max_over_mean": imbalance(interleaved)})

    base = statistics.median(r["seconds"] for r in runs[ranks[0]]) * ranks[0]
    base_cpu = statistics.median(r["cpu_seconds"] for r in runs[ranks[0]])
    rows = []
    for n in ranks:
        t = statistics.median(r["seconds"] for r in runs[n])
        rays = runs[n][0]["rays"]
        red = statistics.median(r["reduction_seconds"] for r in runs[n])
        rows.append({"ranks": n, "median_seconds": t, "min_seconds": min(r["seconds"] for r in runs[n]),
                     "max_seconds": max(r["seconds"] for r in runs[n]), "mrays_per_s": rays / t / 1e6,
                     "speedup": base / t, "scaling_efficiency": base / t / n,
                     "reduction_ms": red * 1e3, "reduction_share": red / t,
                     "wait_ms": statistics.median(r["wait_seconds"] for r in runs[n]) * 1e3,
                     "cpu_seconds": statistics.median(r["cpu_seconds"] for r in runs[n]),
                     "work_efficiency": base_cpu / statistics.median(r["cpu_seconds"] for r in runs[n]),
                     "median_load": statistics.median(r["load"] for r in runs[n])})

    lines = [f"mpirun -np N sieve render {args.scene} {' '.join(extra)} --backend {args.backend}"
             f" --threads {args.threads or 'default'}: {args.repeat} runs per N, medians",
             f"device: {device}; {sample_json['width']} x {sample_json['height']}, {sample_json['spp']} spp, "
             f"{rows[0]['mrays_per_s'] * rows[0]['median_seconds']:.2f} Mrays per render; commit {sample_json['run']['commit']}",
             *([f"note: {args.note}"] if args.note else []),
             "",
             f"{'ranks':>5} {'s (median)':>10} {'min':>7} {'max':>7} {'Mrays/s':>8} {'speedup':>7} {'effic.':>6} "
             f"{'reduce ms':>9} {'share':>6} {'wait ms':>7} {'CPU s':>6} {'work':>5} {'load':>5}"]
    for r in rows:
        lines.append(f"{r['ranks']:>5} {r['median_seconds']:>10.3f} {r['min_seconds']:>7.3f} {r['max_seconds']:>7.3f} "
                     f"{r['mrays_per_s']:>8.2f} {r['speedup']:>7.2f} {r['scaling_efficiency']:>6.2f} "
                     f"{r['reduction_ms']:>9.2f} {100 * r['reduction_share']:>5.2f}% {r['wait_ms']:>7.1f} "
                     f"{r['cpu_seconds']:>6.2f} {r['work_efficiency']:>5.2f} {r['median_load']:>5.1f}")
    if balance:
        lines += ["", f"balance: rays of each of {balance['samples']} samples (one rank each), the busiest rank's "
                      "rays over the mean", f"{'ranks':>5} {'contiguous':>10} {'interleaved':>11}"]
        for b in balance["by_ranks"]:
            lines.append(f"{b['ranks']:>5} {b['contiguous_max_over_mean']:>10.5f} {b['interleaved_max_over_mean']:>11.5f}")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    with open(os.path.join(args.out, "ranks.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "ranks.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(args.out, "ranks.json"), "w") as f:
        json.dump({"command": " ".join(sys.argv), "device": device, "scene": args.scene, "backend": args.backend,
                   "threads": args.threads, "extra": extra, "note": args.note, "run": sample_json["run"], "rows": rows, "runs": runs,
                   "balance": balance}, f, indent=2)


if __name__ == "__main__":
    main()
