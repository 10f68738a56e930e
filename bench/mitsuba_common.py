"""What bench/mitsuba_compare.py's probe and asset comparisons share: the environment (as it is,
clamped, or with its texels repeated for Mitsuba's bilinear lookup), Mitsuba's sensor and integrator,
and the statistics that compare two renderers' images (image means and a per-block z-test)."""
import json
import math
import os
import subprocess

import numpy as np

ENV = 0.5  # constant environment radiance


def toml_value(v):
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return repr(float(v)) if isinstance(v, float) else str(v)


MAP_REPEAT = 8
OUT = [""]  # --out, where the repeated map is written
_maps = {}


def clamped_map(mi, path, clamp):
    """The map itself, or (clamp > 0) a copy clamped to clamp per channel written beside the
    report: both renderers then read the same map without its sun, whose glints and caustics
    (one texel of 1060 in the project's sky) would take far more samples to converge."""
    if not path or clamp <= 0:
        return path
    a = np.minimum(np.array(mi.Bitmap(path), dtype=np.float32)[..., :3], clamp)
    out = os.path.join(OUT[0], "env-clamped.exr")
    mi.Bitmap(np.ascontiguousarray(a)).write(out)
    return out


def nearest_map(mi, path):
    """The map each of whose texels is repeated MAP_REPEAT x MAP_REPEAT times (written beside the
    report): sieve's environment is piecewise constant over the texels, Mitsuba's envmap bilinear;
    on the repeated map they differ only within 1 / (2 MAP_REPEAT) of a texel from its edges."""
    if path not in _maps:
        a = np.array(mi.Bitmap(path), dtype=np.float32)[..., :3]
        a = np.repeat(np.repeat(a, MAP_REPEAT, axis=0), MAP_REPEAT, axis=1)
        _maps[path] = os.path.join(OUT[0], "env-nearest.exr")
        mi.Bitmap(np.ascontiguousarray(a)).write(_maps[path])
    return _maps[path]


def mitsuba_base(mi, camera, size, spp, depth, seed, env, integrator="path"):
    """The scene dict's sensor, integrator and environment. size: width (square) or (width, height);
    env: (a map's path, scale), an RGB radiance, or None for the constant ENV."""
    c = camera
    width, height = (size, size) if isinstance(size, int) else size
    if isinstance(env, tuple):
        # The map's longitude atan2(x, -z) and colatitude acos(y), as sieve's (core/environment.hpp).
        emitter = {"type": "envmap", "filename": nearest_map(mi, env[0]), "scale": env[1]}
    else:
        emitter = {"type": "constant", "radiance": {"type": "rgb", "value": list(env) if env else [ENV, ENV, ENV]}}
    return {
        "type": "scene",
        "integrator": {"type": integrator, "max_depth": depth + 1},
        "sensor": {"type": "perspective", "fov": c["vfov"], "fov_axis": "y",
                   "to_world": mi.ScalarTransform4f().look_at(origin=c["position"], target=c["look_at"],
                                                              up=c.get("up", [0.0, 1.0, 0.0])),
                   "sampler": {"type": "independent", "sample_count": spp, "seed": seed},
                   "film": {"type": "hdrfilm", "width": width, "height": height, "rfilter": {"type": "box"},
                            "pixel_format": "rgb"}},
        "env": emitter,
    }


def load(mi, d):
    """Mitsuba's scene of dict d, without the loader's merging of meshes (newer versions; the
    merged shape's plugin may be left out of a trimmed install)."""
    try:
        return mi.load_dict(d, optimize=False)
    except TypeError:  # versions before the option
        return mi.load_dict(d)

def block_means(img, block):
    h, w = img.shape[0] // block * block, img.shape[1] // block * block
    y = img[:h, :w, :3].mean(axis=2)
    return y.reshape(h // block, block, w // block, block).mean(axis=(1, 3))


def ztest(a_runs, b_runs, block):
    """a_runs, b_runs: lists of images (independent seeds). Per-block z of the difference of means
    and the blocks' relative differences."""
    a = np.stack([block_means(x, block) for x in a_runs])
    b = np.stack([block_means(x, block) for x in b_runs])
    se2 = a.var(axis=0, ddof=1) / len(a_runs) + b.var(axis=0, ddof=1) / len(b_runs)
    d = a.mean(axis=0) - b.mean(axis=0)
    return d / np.sqrt(np.maximum(se2, 1e-12)), np.abs(d) / np.maximum(np.abs(b.mean(axis=0)), 1e-6)


def compare(mi, args, name, sieve_toml, mitsuba_of_seed, model):
    """Renders sieve_toml with sieve and mitsuba_of_seed(seed)'s scene with Mitsuba, --seeds times
    each; the report's row for them."""
    s_runs, m_runs = [], []
    for k in range(args.seeds):
        exr = os.path.join(args.out, f"{name.replace('/', '-')}-sieve-{k}.exr")
        if getattr(args, "mitsuba_only", False):
            img = mi.render(mitsuba_of_seed(k + 1), seed=k + 1)
            mi.Bitmap(img).write(os.path.join(args.out, f"{name.replace('/', '-')}-mitsuba-{k}.exr"))
            m_runs.append(np.array(img, dtype=np.float64))
            continue
        cmd = [args.sieve, "render", sieve_toml, "--out", exr, "--backend", args.backend,
               "--set", f"film.seed={k + 1}", "--quiet", "--integrator", "megakernel" if args.megakernel else "wavefront"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        s_runs.append(np.array(mi.Bitmap(exr), dtype=np.float64))
        img = mi.render(mitsuba_of_seed(k + 1), seed=k + 1)
        m_runs.append(np.array(img, dtype=np.float64))
        mi.Bitmap(img).write(os.path.join(args.out, f"{name.replace('/', '-')}-mitsuba-{k}.exr"))
    if not s_runs:  # --mitsuba-only: Mitsuba's images and their block means (per seed) kept in --out
        np.save(os.path.join(args.out, f"{name.replace('/', '-')}-mitsuba-blocks.npy"),
                np.stack([block_means(x, args.block) for x in m_runs]))
        print(f"{name:34s} mitsuba {np.mean([x[..., :3].mean() for x in m_runs]):.5f} ({len(m_runs)} images)", flush=True)
        return None
    s_mean = float(np.mean([x[..., :3].mean() for x in s_runs]))
    m_mean = float(np.mean([x[..., :3].mean() for x in m_runs]))
    rel = abs(s_mean - m_mean) / max(m_mean, 1e-12)
    z, rel_blocks = ztest(s_runs, m_runs, args.block)
    # A block fails on a difference both significant (|z|) and material (the tolerance): a block of
    # the directly seen map has almost no noise, and there the renderers' map lookups (piecewise
    # constant against bilinear on the repeated map) differ by a few 1e-4.
    bad = int(((np.abs(z) > args.z_bound) & (rel_blocks > args.block_tolerance)).sum())
    means = lambda runs: [x[..., :3].mean() for x in runs]
    mean_se = math.sqrt(np.var(means(s_runs), ddof=1) / len(s_runs) + np.var(means(m_runs), ddof=1) / len(m_runs))
    ok = rel <= args.mean_bound and bad == 0
    row = {"case": name, "sieve_mean": s_mean, "mitsuba_mean": m_mean, "relative_difference": rel,
           "mean_z": (s_mean - m_mean) / max(mean_se, 1e-12),
           "blocks": int(z.size), "blocks_over_z_bound": int((np.abs(z) > args.z_bound).sum()), "blocks_failed": bad, "max_abs_z": float(np.abs(z).max()), "pass": ok,
           "models_coincide": model is None}
    if model:
        row["model_difference"] = model
    verdict = ("ok" if ok else "FAIL") if model is None else ("agrees" if ok else "differs") + " (model differs)"
    print(f"{name:34s} sieve {s_mean:.5f} mitsuba {m_mean:.5f} rel {100 * rel:5.2f} %  "
          f"(z {row['mean_z']:5.1f})  |z| max {row['max_abs_z']:6.2f}, {bad:3d}/{z.size} blocks failed  {verdict}", flush=True)
    return row
