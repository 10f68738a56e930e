#!/usr/bin/env python3
"""bench/mitsuba_compare.py: renders the same material scenes with sieve and with Mitsuba 3 and
compares them: the image means (within --mean-bound, 2 % by default) and a per-block z-test (blocks
of --block pixels, the standard error of each renderer's block mean taken from --seeds independent
renders), optionally the time of each renderer at the same size, spp and depth.

    python3 bench/mitsuba_compare.py --sieve build/app/sieve --out /tmp/mts [--variant cuda_ad_rgb]
        [--spp 256] [--size 256] [--seeds 4] [--only conductor_r0.3,...] [--timing] [--env-map scenes/sky/sky.exr]

Each scene: a sphere (a UV sphere with vertex normals, scenes written here as OBJ) of one material
on a grey diffuse floor, lit by a quad light above and a constant environment. The scenes are
mirror-symmetric about the camera's vertical plane, so the renderers' opposite conventions for the
image's x axis cannot matter. Materials, and the Mitsuba plugin that models each the same way:

    diffuse                 diffuse
    mirror, glass           conductor (material none), dielectric
    conductor_rX (white)    roughconductor ggx, material none (Schlick with f0 = 1 is 1 exactly)
    tinted_metal_rX         principled (metallic 1): Schlick with f0 = base colour
    dielectric_rX           roughdielectric ggx, ior 1.5 (a closed sphere: the eta^2 of the
                            boundaries cancels, so the convention on it does not matter)
    gltf_plastic_rX         roughplastic ggx (a Fresnel layer over Lambert; it also models the
                            light the layer reflects back into the base, which the glTF model does
                            not: expect agreement within a few %, not exactly)

Mitsuba's Smith term is the separable G1 G1, sieve's the height-correlated G2: rough lobes differ by
a few tenths of a % to about 1 % at roughness 1. Exits 1 when a scene fails either check.
Needs numpy and mitsuba (which reads and writes the EXRs); sieve is run as a program.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

import numpy as np


def sphere_obj(path, radius=1.0, center=(0.0, 1.0, 0.0), rings=64, segments=128):
    v, n, f = [], [], []
    for i in range(rings + 1):
        th = math.pi * i / rings
        for j in range(segments + 1):
            ph = 2 * math.pi * j / segments
            d = (math.sin(th) * math.cos(ph), math.cos(th), math.sin(th) * math.sin(ph))
            n.append(d)
            v.append(tuple(c + radius * x for c, x in zip(center, d)))
    w = segments + 1
    for i in range(rings):
        for j in range(segments):
            a, b, c, d = i * w + j + 1, i * w + j + 2, (i + 1) * w + j + 2, (i + 1) * w + j + 1
            if i != 0:
                f.append((a, b, c))  # outward winding (counter-clockwise seen from outside)
            if i != rings - 1:
                f.append((a, c, d))
    with open(path, "w") as out:
        for p in v:
            out.write("v %.7f %.7f %.7f\n" % p)
        for p in n:
            out.write("vn %.7f %.7f %.7f\n" % p)
        for t in f:
            out.write("f %d//%d %d//%d %d//%d\n" % (t[0], t[0], t[1], t[1], t[2], t[2]))


def floor_obj(path, half=6.0):
    with open(path, "w") as out:
        out.write("v %g 0 %g\nv %g 0 %g\nv %g 0 %g\nv %g 0 %g\n" % (-half, -half, -half, half, half, half, half, -half))
        out.write("f 1 2 3\nf 1 3 4\n")  # normal +y


LIGHT = {"corner": [-1.0, 4.0, -1.0], "edge1": [2.0, 0.0, 0.0], "edge2": [0.0, 0.0, 2.0], "emission": [6.0, 6.0, 6.0]}
CAMERA = {"position": [0.0, 2.0, -6.0], "look_at": [0.0, 0.9, 0.0], "up": [0.0, 1.0, 0.0], "vfov": 35.0}
ENV = 0.5  # constant environment radiance


def materials():
    """name -> (sieve [[materials]] keys, Mitsuba BSDF dict)."""
    out = {
        "diffuse": ({"type": "diffuse", "albedo": [0.7, 0.4, 0.2]},
                    {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.7, 0.4, 0.2]}}),
        "mirror": ({"type": "mirror", "albedo": [0.9, 0.9, 0.9]},
                   {"type": "conductor", "material": "none", "specular_reflectance": {"type": "rgb", "value": [0.9, 0.9, 0.9]}}),
        "glass": ({"type": "dielectric", "albedo": [1, 1, 1], "ior": 1.5},
                  {"type": "dielectric", "int_ior": 1.5, "ext_ior": 1.0}),
    }
    for r in (0.1, 0.3, 0.6, 1.0):
        a = r * r
        out[f"conductor_r{r}"] = ({"type": "conductor", "albedo": [1, 1, 1], "roughness": r},
                                  {"type": "roughconductor", "distribution": "ggx", "alpha": a, "material": "none"})
        out[f"tinted_metal_r{r}"] = ({"type": "gltf", "albedo": [0.95, 0.64, 0.54], "metallic": 1, "roughness": r},
                                     {"type": "principled", "base_color": {"type": "rgb", "value": [0.95, 0.64, 0.54]},
                                      "metallic": 1.0, "roughness": r, "specular": 0.5, "spec_tint": 0.0})
        out[f"dielectric_r{r}"] = ({"type": "rough_dielectric", "albedo": [1, 1, 1], "ior": 1.5, "roughness": r},
                                   {"type": "roughdielectric", "distribution": "ggx", "alpha": a, "int_ior": 1.5,
                                    "ext_ior": 1.0})
        out[f"gltf_plastic_r{r}"] = ({"type": "gltf", "albedo": [0.2, 0.4, 0.8], "metallic": 0, "roughness": r},
                                     {"type": "roughplastic", "distribution": "ggx", "alpha": a, "int_ior": 1.5,
                                      "nonlinear": False,
                                      "diffuse_reflectance": {"type": "rgb", "value": [0.2, 0.4, 0.8]}})
    return out


def toml_value(v):
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return repr(float(v)) if isinstance(v, float) else str(v)


def sieve_scene(path, keys, size, spp, depth, env_map=""):
    c, l = CAMERA, LIGHT
    lines = [f'name = "{os.path.basename(path)[:-5]}"',
             "[camera]", f"position = {toml_value(c['position'])}", f"look_at = {toml_value(c['look_at'])}",
             f"up = {toml_value(c['up'])}", f"vfov = {c['vfov']}",
             "[film]", f"width = {size}", f"height = {size}", f"spp = {spp}", f"max_bounces = {depth}",
             "[environment]", f'map = {json.dumps(env_map)}' if env_map else f"color = [{ENV}, {ENV}, {ENV}]",
             "[[objects]]", 'obj = "sphere.obj"', 'material = "probe"',
             "[[objects]]", 'obj = "floor.obj"', 'material = "floor"',
             "[[materials]]", 'name = "probe"'] + [f"{k} = {toml_value(v)}" for k, v in keys.items()] + [
             "[[materials]]", 'name = "floor"', 'type = "diffuse"', "albedo = [0.5, 0.5, 0.5]",
             "[[lights]]", f"corner = {toml_value(l['corner'])}", f"edge1 = {toml_value(l['edge1'])}",
             f"edge2 = {toml_value(l['edge2'])}", f"emission = {toml_value(l['emission'])}"]
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")


def mitsuba_scene(mi, folder, bsdf, size, spp, depth, seed, env_map=""):
    c, l = CAMERA, LIGHT
    e1, e2 = np.array(l["edge1"]), np.array(l["edge2"])
    nrm = np.cross(e1, e2)
    centre = np.array(l["corner"]) + 0.5 * (e1 + e2)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = 0.5 * e1, 0.5 * e2, nrm / np.linalg.norm(nrm), centre
    return mi.load_dict({
        "type": "scene",
        "integrator": {"type": "path", "max_depth": depth + 1},
        "sensor": {"type": "perspective", "fov": c["vfov"], "fov_axis": "y",
                   "to_world": mi.ScalarTransform4f().look_at(origin=c["position"], target=c["look_at"], up=c["up"]),
                   "sampler": {"type": "independent", "sample_count": spp, "seed": seed},
                   "film": {"type": "hdrfilm", "width": size, "height": size, "rfilter": {"type": "box"},
                            "pixel_format": "rgb"}},
        # The map's longitude atan2(x, -z) and colatitude acos(y), as sieve's (core/environment.hpp).
        "env": ({"type": "envmap", "filename": env_map} if env_map else
                {"type": "constant", "radiance": {"type": "rgb", "value": [ENV, ENV, ENV]}}),
        "probe": {"type": "obj", "filename": os.path.join(folder, "sphere.obj"), "bsdf": bsdf},
        "floor": {"type": "obj", "filename": os.path.join(folder, "floor.obj"),
                  "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.5, 0.5, 0.5]}}},
        "light": {"type": "rectangle", "to_world": mi.ScalarTransform4f(m.tolist()),
                  "emitter": {"type": "area", "radiance": {"type": "rgb", "value": l["emission"]}}},
    })


def block_means(img, block):
    h, w = img.shape[0] // block * block, img.shape[1] // block * block
    y = img[:h, :w, :3].mean(axis=2)
    return y.reshape(h // block, block, w // block, block).mean(axis=(1, 3))


def ztest(a_runs, b_runs, block):
    """a_runs, b_runs: lists of images (independent seeds). Per-block z of the difference of means."""
    a = np.stack([block_means(x, block) for x in a_runs])
    b = np.stack([block_means(x, block) for x in b_runs])
    se2 = a.var(axis=0, ddof=1) / len(a_runs) + b.var(axis=0, ddof=1) / len(b_runs)
    return (a.mean(axis=0) - b.mean(axis=0)) / np.sqrt(np.maximum(se2, 1e-12))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sieve", required=True, help="the sieve program")
    ap.add_argument("--out", required=True, help="a folder for scenes, images and the report (created)")
    ap.add_argument("--variant", default="cuda_ad_rgb")
    ap.add_argument("--backend", default="auto", help="sieve's --backend")
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--spp", type=int, default=256)
    ap.add_argument("--depth", type=int, default=8, help="sieve's max_bounces (Mitsuba's max_depth is one more)")
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--block", type=int, default=16)
    ap.add_argument("--mean-bound", type=float, default=0.02)
    ap.add_argument("--z-bound", type=float, default=4.0, help="|z| above which a block fails")
    ap.add_argument("--only", default="", help="comma-separated material names")
    ap.add_argument("--timing", action="store_true", help="also time one render of each at the given spp")
    ap.add_argument("--megakernel", action="store_true", help="pass --integrator megakernel to sieve")
    ap.add_argument("--env-map", default="", help="an HDR map (.exr) around the scene instead of the constant environment")
    args = ap.parse_args()

    import mitsuba as mi
    mi.set_variant(args.variant)
    os.makedirs(args.out, exist_ok=True)
    sphere_obj(os.path.join(args.out, "sphere.obj"))
    floor_obj(os.path.join(args.out, "floor.obj"))
    mats = materials()
    names = [n for n in mats if not args.only or n in args.only.split(",")]
    if not names:
        sys.exit("mitsuba_compare: --only names no material of: " + ", ".join(mats))
    report, failed = [], []
    for name in names:
        keys, bsdf = mats[name]
        scene_path = os.path.join(args.out, f"{name}.toml")
        env_map = os.path.abspath(args.env_map) if args.env_map else ""
        sieve_scene(scene_path, keys, args.size, args.spp, args.depth, env_map)
        s_runs, m_runs, s_time, m_time = [], [], None, None
        for k in range(args.seeds):
            exr = os.path.join(args.out, f"{name}-sieve-{k}.exr")
            cmd = [args.sieve, "render", scene_path, "--out", exr, "--backend", args.backend,
                   "--set", f"film.seed={k + 1}"]
            if args.megakernel:
                cmd += ["--integrator", "megakernel"]
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            if k == 0:
                s_time = time.perf_counter() - t0
            s_runs.append(np.array(mi.Bitmap(exr), dtype=np.float64))
            scene = mitsuba_scene(mi, args.out, bsdf, args.size, args.spp, args.depth, seed=k + 1, env_map=env_map)
            t0 = time.perf_counter()
            img = mi.render(scene, spp=args.spp, seed=k + 1)
            arr = np.array(img, dtype=np.float64)  # forces evaluation
            if k == 0:
                m_time = time.perf_counter() - t0
            mi.Bitmap(img).write(os.path.join(args.out, f"{name}-mitsuba-{k}.exr"))
            m_runs.append(arr)
        s_mean = float(np.mean([x[..., :3].mean() for x in s_runs]))
        m_mean = float(np.mean([x[..., :3].mean() for x in m_runs]))
        rel = abs(s_mean - m_mean) / max(m_mean, 1e-12)
        z = ztest(s_runs, m_runs, args.block)
        bad = int((np.abs(z) > args.z_bound).sum())
        ok = rel <= args.mean_bound and bad == 0
        row = {"material": name, "sieve_mean": s_mean, "mitsuba_mean": m_mean, "relative_difference": rel,
               "blocks": int(z.size), "blocks_over_z_bound": bad, "max_abs_z": float(np.abs(z).max()), "pass": ok}
        if args.timing:
            row.update({"sieve_s_first_seed": s_time, "mitsuba_s_first_seed": m_time})
        report.append(row)
        print(f"{name:22s} sieve {s_mean:.5f} mitsuba {m_mean:.5f} rel {100 * rel:5.2f} %  "
              f"|z| max {row['max_abs_z']:.2f}, {bad}/{z.size} blocks over {args.z_bound}  {'ok' if ok else 'FAIL'}")
        if not ok:
            failed.append(name)
    with open(os.path.join(args.out, "report.json"), "w") as out:
        json.dump({"variant": args.variant, "env_map": args.env_map or f"constant {ENV}", "size": args.size, "spp": args.spp, "depth": args.depth,
                   "seeds": args.seeds, "block": args.block, "results": report}, out, indent=1)
    if failed:
        print("failed: " + ", ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
