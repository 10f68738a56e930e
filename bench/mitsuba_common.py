"""What bench/mitsuba_compare.py's probe and asset comparisons share: the environment (as it is,
clamped, or with its texels repeated for Mitsuba's bilinear lookup), Mitsuba's sensor and integrator,
and the statistics that compare two renderers' images (image means and a per-block z-test)."""
import json
import math
import os
import subprocess

import numpy as np

ENV = 0.5  # constant environment radiance
FAMILY_ALPHA = 0.01  # the Welch + Bonferroni count's chance of a block reported with equal renderers


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


def _beta_fraction(a, b, x):
    """The continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-13:
            break
    return h


def t_two_sided(t, df):
    """P(|T| > |t|) for Student's t with df degrees of freedom: I_x(df / 2, 1 / 2) at
    x = df / (df + t^2), the regularized incomplete beta function."""
    x = df / (df + t * t)
    if x <= 0 or not math.isfinite(x):
        return 0.0
    if x >= 1:
        return 1.0
    a, b = df / 2, 0.5
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1 - x) / b


def ztest(a_runs, b_runs, block):
    """a_runs, b_runs: lists of images (independent seeds). Per-block z of the difference of means,
    the blocks' relative differences, and each block's two-sided chance of a |z| that large with
    equal means under Welch's t (the standard errors are estimated from few seeds: z is Student's t
    with Welch's degrees of freedom, not normal)."""
    a = np.stack([block_means(x, block) for x in a_runs])
    b = np.stack([block_means(x, block) for x in b_runs])
    va, vb = a.var(axis=0, ddof=1) / len(a_runs), b.var(axis=0, ddof=1) / len(b_runs)
    se2 = va + vb
    d = a.mean(axis=0) - b.mean(axis=0)
    z = d / np.sqrt(np.maximum(se2, 1e-12))
    df = se2 ** 2 / np.maximum(va ** 2 / (len(a_runs) - 1) + vb ** 2 / (len(b_runs) - 1), 1e-300)
    p = np.array([t_two_sided(float(zi), float(ni)) if ni > 0 else float(zi == 0)
                  for zi, ni in zip(z.ravel(), df.ravel())]).reshape(z.shape)
    return z, np.abs(d) / np.maximum(np.abs(b.mean(axis=0)), 1e-6), p


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
    z, rel_blocks, p = ztest(s_runs, m_runs, args.block)
    # A block fails on a difference both significant (|z|) and material (the tolerance): a block of
    # the directly seen map has almost no noise, and there the renderers' map lookups (piecewise
    # constant against bilinear on the repeated map) differ by a few 1e-4.
    bad = int(((np.abs(z) > args.z_bound) & (rel_blocks > args.block_tolerance)).sum())
    # Reported beside it: the blocks whose difference stays significant under Welch's t with a
    # Bonferroni bound (FAMILY_ALPHA over all the blocks) and is above the tolerance. With few
    # seeds |z| > --z-bound happens by chance (|t| > 4 at 5 degrees of freedom: 1 % of the blocks).
    significant = int(((p < FAMILY_ALPHA / z.size) & (rel_blocks > args.block_tolerance)).sum())
    means = lambda runs: [x[..., :3].mean() for x in runs]
    mean_se = math.sqrt(np.var(means(s_runs), ddof=1) / len(s_runs) + np.var(means(m_runs), ddof=1) / len(m_runs))
    ok = rel <= args.mean_bound and bad == 0
    row = {"case": name, "sieve_mean": s_mean, "mitsuba_mean": m_mean, "relative_difference": rel,
           "mean_z": (s_mean - m_mean) / max(mean_se, 1e-12),
           "blocks": int(z.size), "blocks_over_z_bound": int((np.abs(z) > args.z_bound).sum()), "blocks_failed": bad, "max_abs_z": float(np.abs(z).max()), "pass": ok,
           "blocks_significant_welch_bonferroni": significant, "family_alpha": FAMILY_ALPHA,
           "models_coincide": model is None}
    if model:
        row["model_difference"] = model
    verdict = ("ok" if ok else "FAIL") if model is None else ("agrees" if ok else "differs") + " (model differs)"
    print(f"{name:34s} sieve {s_mean:.5f} mitsuba {m_mean:.5f} rel {100 * rel:5.2f} %  "
          f"(z {row['mean_z']:5.1f})  |z| max {row['max_abs_z']:6.2f}, {bad:3d}/{z.size} blocks failed "
          f"({significant} significant by Welch + Bonferroni)  {verdict}", flush=True)
    return row
