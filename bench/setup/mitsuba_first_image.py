#!/usr/bin/env python3
"""bench/setup/mitsuba_first_image.py SIEVE MODEL.ply [--width W --height H --spp N --bounces B] [--repeats R] [--pause S]:
Mitsuba 3's first image of a bare PLY model next to sieve's, each from its process's start, R times each,
alternating: sieve by bench/setup/first_image.py (`sieve render MODEL --set environment.color=[1,1,1]
--set film.max_bounces=B`), Mitsuba by a fresh Python process that imports it, loads the same file
under the same camera (the one `sieve check` prints for the model), white sky, diffuse 0.5 surfaces,
and renders the same film (cuda_ad_rgb, path tracer of the same bounces, box filter) until its
image is on the host. Prints one line per run and the median ratio sieve / Mitsuba."""
import argparse, re, statistics, subprocess, sys, time, os

CHILD = r'''
import sys, time
t0 = float(sys.argv[1])
import mitsuba as mi
mi.set_variant("cuda_ad_rgb")
import drjit as dr
t_import = time.time() - t0
px, py, pz, lx, ly, lz, ux, uy, uz, fov, w, h, spp, depth = [float(a) for a in sys.argv[3:17]]
T4 = mi.ScalarTransform4f
try:
    to_world = T4().look_at(origin=[px, py, pz], target=[lx, ly, lz], up=[ux, uy, uz])
except Exception:  # Mitsuba before 3.6: a static method
    to_world = T4.look_at(origin=[px, py, pz], target=[lx, ly, lz], up=[ux, uy, uz])
scene = mi.load_dict({
    "type": "scene",
    "integrator": {"type": "path", "max_depth": int(depth)},
    "sensor": {"type": "perspective", "fov": fov, "fov_axis": "y",
               "to_world": to_world,
               "film": {"type": "hdrfilm", "width": int(w), "height": int(h), "rfilter": {"type": "box"}},
               "sampler": {"type": "independent", "sample_count": int(spp)}},
    "sky": {"type": "constant", "radiance": {"type": "rgb", "value": 1.0}},
    "model": {"type": "ply", "filename": sys.argv[2], "bsdf": {"type": "diffuse"}},
}, optimize=False)  # (one shape: nothing to merge; the trimmed build has no "merge" plugin)
t_load = time.time() - t0
img = mi.render(scene)
arr = img.numpy()  # on the host: the first image
t_first = time.time() - t0
print(f"mitsuba import_s {t_import:.3f} load_s {t_load - t_import:.3f} first_image_from_start_s {t_first:.3f} mean {arr.mean():.4f}", flush=True)
'''


def camera_of(sieve, model, bounces):
    out = subprocess.run([sieve, "check", model, "--set", "environment.color=[1,1,1]"], capture_output=True, text=True, check=True).stdout
    m = re.search(r"camera: position \(([^)]*)\), look_at \(([^)]*)\), up \(([^)]*)\), vfov ([0-9.]+)", out)
    if not m:
        sys.exit("mitsuba_first_image: no camera line in `sieve check`'s output")
    nums = [float(v) for g in m.groups()[:3] for v in g.split(",")]
    return nums + [float(m.group(4))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sieve")
    ap.add_argument("model")
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--height", type=int, default=768)
    ap.add_argument("--spp", type=int, default=16)
    ap.add_argument("--bounces", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--pause", type=float, default=0,
                    help="seconds the GPU stays idle between Mitsuba's exit and sieve's next start (0: none)")
    a = ap.parse_args()
    cam = camera_of(a.sieve, a.model, a.bounces)
    here = os.path.dirname(os.path.abspath(__file__))
    sieve_s, mts_s = [], []
    for r in range(a.repeats):
        if r and a.pause > 0:
            time.sleep(a.pause)
        out = subprocess.run([sys.executable, os.path.join(here, "first_image.py"), a.sieve, a.model, "--width", str(a.width),
                              "--height", str(a.height), "--spp", str(a.spp), "--set", "environment.color=[1,1,1]",
                              "--set", f"film.max_bounces={a.bounces}", "--out", "out/first-image-sieve.png"],
                             capture_output=True, text=True, check=True).stdout.strip()
        print(f"sieve {r + 1} {out}", flush=True)
        sieve_s.append(float(out.split()[1]))
        t0 = time.time()
        # Mitsuba's path depth counts the camera segment: B bounces are a depth of B + 1.
        args = [str(v) for v in cam] + [str(a.width), str(a.height), str(a.spp), str(a.bounces + 1)]
        out = subprocess.run([sys.executable, "-c", CHILD, repr(t0), a.model] + args, capture_output=True, text=True)
        if out.returncode != 0:
            lines = out.stderr.strip().splitlines()
            sys.exit("mitsuba_first_image: Mitsuba failed: " + (lines[-1] if lines else f"exit status {out.returncode}"))
        line = out.stdout.strip().splitlines()[-1]
        print(f"{line.split()[0]} {r + 1} {' '.join(line.split()[1:])}", flush=True)
        mts_s.append(float(line.split()[6]))
    s, m = statistics.median(sieve_s), statistics.median(mts_s)
    print(f"median first image from the process's start: sieve {s:.3f} s, Mitsuba {m:.3f} s, ratio {s / m:.2f}")


if __name__ == "__main__":
    main()
