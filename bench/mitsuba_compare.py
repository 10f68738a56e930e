#!/usr/bin/env python3
"""bench/mitsuba_compare.py: renders the same scenes with sieve and with Mitsuba 3 and compares them:
the image means (within --mean-bound, 2 % by default) and a per-block z-test (blocks of --block
pixels, the standard error of each renderer's block mean taken from --seeds independent renders; a
block fails where |z| > --z-bound and its means differ by more than --block-tolerance), or times both.

    python3 bench/mitsuba_compare.py --sieve sieve --out /tmp/mts [--variant llvm_ad_rgb] [--backend cpu]
        [--spp 256] [--size 256] [--seeds 4] [--only conductor_r0.3,...] [--shape sphere,quad]
        [--env-map scenes/sky/sky.exr [--env-clamp 8]]
    python3 bench/mitsuba_compare.py ... --asset scenes/helmet/helmet.toml [--timing --repeats 5]

Probes: a sphere (a UV sphere with vertex normals) or a quad facing the camera (a closed slab of
0.1 for the dielectrics) of one material on a grey diffuse floor, lit by a quad light above and a
constant environment or --env-map. The scenes are mirror-symmetric about the camera's vertical
plane, so the renderers' opposite conventions for the image's x axis cannot matter. Opaque BSDFs
are two-sided in Mitsuba (`twosided`), as sieve's are. Materials, and the Mitsuba plugin that
models each the same way:

    diffuse                 diffuse
    mirror, glass           conductor (material none), dielectric
    conductor_rX (white)    roughconductor ggx, material none (Schlick with f0 = 1 is 1 exactly)
    tinted_metal_rX         principled (metallic 1): Schlick with f0 = base colour
    dielectric_rX           roughdielectric ggx, ior 1.5 (closed shapes: the eta^2 that Mitsuba
                            applies at each crossing and sieve at none cancels over two)
    gltf_layer_rX           the glTF dielectric with a black base, its specular layer alone:
                            principled (metallic 1, base colour 0.04), Schlick with f0 0.04
    gltf_plastic_rX         roughplastic ggx: a different model (PLASTIC below), reported apart

Mitsuba's Smith term is the separable G1 G1, sieve's the height-correlated G2: the rows at
roughness 1 are reported apart (SMITH below); below it the lobes differ by <= 1.3 %.

--env-map: Mitsuba reads the map with every texel repeated MAP_REPEAT times (sieve's map is
piecewise constant, Mitsuba's envmap bilinear); --env-clamp clamps it for both (the sun's glints
and caustics converge slowly). --asset: a TOML scene placing one glTF model (opaque materials, no
extensions): the same triangles, texels and camera for both, the glTF model as principled (exact
for metal, Disney's diffuse for the dielectric part), compared as it is and with every metallic
texel set to 1 (where the models coincide); --timing times Mitsuba (its first render, JIT
compilation included, apart) and `sieve bench render` on it instead.
Exits 1 when a case whose models coincide fails either check. Needs numpy and mitsuba.
"""
import argparse
import json
import math
import os
import shutil
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


QUAD_TILT = math.radians(30)  # the probe quad faces the camera (-z), turned up towards the light


def faces_obj(path, faces):
    """faces: (centre, normal, u, v) rectangles (u, v: half-edge vectors), each with its own flat
    normal, wound counter-clockwise seen from the side the normal points to."""
    lines, k = [], 1
    for c, n, u, v in faces:
        c, n, u, v = (np.asarray(x, dtype=float) for x in (c, n, u, v))
        corners = [c - u - v, c + u - v, c + u + v, c - u + v]
        if np.dot(np.cross(corners[1] - corners[0], corners[2] - corners[0]), n) < 0:
            corners.reverse()
        lines += ["v %.7f %.7f %.7f" % tuple(p) for p in corners]
        lines += ["vn %.7f %.7f %.7f" % tuple(n)] * 4
        lines += ["f %d//%d %d//%d %d//%d" % (k, k, k + 1, k + 1, k + 2, k + 2),
                  "f %d//%d %d//%d %d//%d" % (k, k, k + 2, k + 2, k + 3, k + 3)]
        k += 4
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")


def quad_faces(closed, centre=(0.0, 1.0, 0.0), half=1.0, thickness=0.1):
    """The probe quad (2 x 2, normal (0, sin t, -cos t)); closed: a slab of that front face and
    the given thickness (six faces), so that light through a dielectric crosses two boundaries."""
    n = np.array([0.0, math.sin(QUAD_TILT), -math.cos(QUAD_TILT)])
    x, b = np.array([1.0, 0.0, 0.0]), np.array([0.0, math.cos(QUAD_TILT), math.sin(QUAD_TILT)])
    c = np.array(centre)
    if not closed:
        return [(c, n, half * x, half * b)]
    h = 0.5 * thickness
    return [(c + h * n, n, half * x, half * b), (c - h * n, -n, half * x, half * b),
            (c + half * x, x, h * n, half * b), (c - half * x, -x, h * n, half * b),
            (c + half * b, b, half * x, h * n), (c - half * b, -b, half * x, h * n)]


LIGHT = {"corner": [-1.0, 4.0, -1.0], "edge1": [2.0, 0.0, 0.0], "edge2": [0.0, 0.0, 2.0], "emission": [6.0, 6.0, 6.0]}
CAMERA = {"position": [0.0, 2.0, -6.0], "look_at": [0.0, 0.9, 0.0], "up": [0.0, 1.0, 0.0], "vfov": 35.0}
ENV = 0.5  # constant environment radiance


# Where the two renderers' models differ, the row says how; such rows are reported and left out of
# the verdict (the models coincide on every other row).
SMITH = ("Smith masking: Mitsuba's separable G1(wo) G1(wi), sieve's height-correlated "
         "1 / (1 + Lambda(wo) + Lambda(wi)); equal at normal incidence, the lobe's albedo 5 % (cos 0.7) "
         "to 14 % (cos 0.4) higher in sieve at alpha 1, <= 1.3 % at alpha 0.36")
PLASTIC = ("roughplastic: diffuse (1 - F(wi)) (1 - F(wo)) R / (1 - R Fdr) with the exact Fresnel term and "
           "the internal reflections; glTF: (1 - F_Schlick(wo.h)) R / pi, no internal reflection")


def materials():
    """name -> (sieve [[materials]] keys, Mitsuba BSDF dict, transmissive, model difference or None)."""
    rgb = lambda c: {"type": "rgb", "value": c}
    out = {
        "diffuse": ({"type": "diffuse", "albedo": [0.7, 0.4, 0.2]},
                    {"type": "diffuse", "reflectance": rgb([0.7, 0.4, 0.2])}, False, None),
        "mirror": ({"type": "mirror", "albedo": [0.9, 0.9, 0.9]},
                   {"type": "conductor", "material": "none", "specular_reflectance": rgb([0.9, 0.9, 0.9])}, False, None),
        "glass": ({"type": "dielectric", "albedo": [1, 1, 1], "ior": 1.5},
                  {"type": "dielectric", "int_ior": 1.5, "ext_ior": 1.0}, True, None),
    }
    for r in (0.1, 0.3, 0.6, 1.0):
        a = r * r
        smith = SMITH if r == 1.0 else None
        out[f"conductor_r{r}"] = ({"type": "conductor", "albedo": [1, 1, 1], "roughness": r},
                                  {"type": "roughconductor", "distribution": "ggx", "alpha": a, "material": "none"},
                                  False, smith)
        out[f"tinted_metal_r{r}"] = ({"type": "gltf", "albedo": [0.95, 0.64, 0.54], "metallic": 1, "roughness": r},
                                     {"type": "principled", "base_color": rgb([0.95, 0.64, 0.54]),
                                      "metallic": 1.0, "roughness": r, "specular": 0.5, "spec_tint": 0.0},
                                     False, smith)
        out[f"dielectric_r{r}"] = ({"type": "rough_dielectric", "albedo": [1, 1, 1], "ior": 1.5, "roughness": r},
                                   {"type": "roughdielectric", "distribution": "ggx", "alpha": a, "int_ior": 1.5,
                                    "ext_ior": 1.0}, True, smith)
        # The glTF dielectric's specular layer alone (a black base): Schlick with f0 0.04 over GGX, as
        # principled's metallic lobe with base colour 0.04.
        out[f"gltf_layer_r{r}"] = ({"type": "gltf", "albedo": [0, 0, 0], "metallic": 0, "roughness": r},
                                   {"type": "principled", "base_color": rgb([0.04, 0.04, 0.04]), "metallic": 1.0,
                                    "roughness": r, "specular": 0.5, "spec_tint": 0.0}, False, smith)
        out[f"gltf_plastic_r{r}"] = ({"type": "gltf", "albedo": [0.2, 0.4, 0.8], "metallic": 0, "roughness": r},
                                     {"type": "roughplastic", "distribution": "ggx", "alpha": a, "int_ior": 1.5,
                                      "nonlinear": False, "diffuse_reflectance": rgb([0.2, 0.4, 0.8])},
                                     False, PLASTIC)
    return out


def toml_value(v):
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return repr(float(v)) if isinstance(v, float) else str(v)


def sieve_scene(path, keys, probe, size, spp, depth, env_map=""):
    c, l = CAMERA, LIGHT
    lines = [f'name = "{os.path.basename(path)[:-5]}"',
             "[camera]", f"position = {toml_value(c['position'])}", f"look_at = {toml_value(c['look_at'])}",
             f"up = {toml_value(c['up'])}", f"vfov = {c['vfov']}",
             "[film]", f"width = {size}", f"height = {size}", f"spp = {spp}", f"max_bounces = {depth}",
             "[environment]", f'map = {json.dumps(env_map)}' if env_map else f"color = [{ENV}, {ENV}, {ENV}]",
             "[[objects]]", f'obj = "{probe}"', 'material = "probe"',
             "[[objects]]", 'obj = "floor.obj"', 'material = "floor"',
             "[[materials]]", 'name = "probe"'] + [f"{k} = {toml_value(v)}" for k, v in keys.items()] + [
             "[[materials]]", 'name = "floor"', 'type = "diffuse"', "albedo = [0.5, 0.5, 0.5]",
             "[[lights]]", f"corner = {toml_value(l['corner'])}", f"edge1 = {toml_value(l['edge1'])}",
             f"edge2 = {toml_value(l['edge2'])}", f"emission = {toml_value(l['emission'])}"]
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")


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


def mitsuba_base(mi, camera, size, spp, depth, seed, env):
    """The scene dict's sensor, integrator and environment (env: a map's path and scale, or None
    for the constant one)."""
    c = camera
    return {
        "type": "scene",
        "integrator": {"type": "path", "max_depth": depth + 1},
        "sensor": {"type": "perspective", "fov": c["vfov"], "fov_axis": "y",
                   "to_world": mi.ScalarTransform4f().look_at(origin=c["position"], target=c["look_at"],
                                                              up=c.get("up", [0.0, 1.0, 0.0])),
                   "sampler": {"type": "independent", "sample_count": spp, "seed": seed},
                   "film": {"type": "hdrfilm", "width": size, "height": size, "rfilter": {"type": "box"},
                            "pixel_format": "rgb"}},
        # The map's longitude atan2(x, -z) and colatitude acos(y), as sieve's (core/environment.hpp).
        "env": ({"type": "envmap", "filename": nearest_map(mi, env[0]), "scale": env[1]} if env else
                {"type": "constant", "radiance": {"type": "rgb", "value": [ENV, ENV, ENV]}}),
    }


def load(mi, d):
    """Mitsuba's scene of dict d, without the loader's merging of meshes (newer versions; the
    merged shape's plugin may be left out of a trimmed install)."""
    try:
        return mi.load_dict(d, optimize=False)
    except TypeError:  # versions before the option
        return mi.load_dict(d)


def mitsuba_scene(mi, folder, bsdf, probe, size, spp, depth, seed, env_map=""):
    l = LIGHT
    e1, e2 = np.array(l["edge1"]), np.array(l["edge2"])
    nrm = np.cross(e1, e2)
    centre = np.array(l["corner"]) + 0.5 * (e1 + e2)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = 0.5 * e1, 0.5 * e2, nrm / np.linalg.norm(nrm), centre
    d = mitsuba_base(mi, CAMERA, size, spp, depth, seed, (env_map, 1.0) if env_map else None)
    d.update({
        "probe": {"type": "obj", "filename": os.path.join(folder, probe), "bsdf": bsdf},
        "floor": {"type": "obj", "filename": os.path.join(folder, "floor.obj"),
                  "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.5, 0.5, 0.5]}}},
        "light": {"type": "rectangle", "to_world": mi.ScalarTransform4f(m.tolist()),
                  "emitter": {"type": "area", "radiance": {"type": "rgb", "value": l["emission"]}}},
    })
    return load(mi, d)


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
        cmd = [args.sieve, "render", sieve_toml, "--out", exr, "--backend", args.backend,
               "--set", f"film.seed={k + 1}", "--quiet", "--integrator", "megakernel" if args.megakernel else "wavefront"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        s_runs.append(np.array(mi.Bitmap(exr), dtype=np.float64))
        img = mi.render(mitsuba_of_seed(k + 1), seed=k + 1)
        m_runs.append(np.array(img, dtype=np.float64))
        mi.Bitmap(img).write(os.path.join(args.out, f"{name.replace('/', '-')}-mitsuba-{k}.exr"))
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


def probe_cases(mi, args):
    """Every --shape x material of --only: the report's rows."""
    mats = materials()
    names = [n for n in mats if not args.only or n in args.only.split(",")]
    if not names:
        sys.exit("mitsuba_compare: --only names no material of: " + ", ".join(mats))
    sphere_obj(os.path.join(args.out, "sphere.obj"))
    floor_obj(os.path.join(args.out, "floor.obj"))
    faces_obj(os.path.join(args.out, "quad.obj"), quad_faces(False))
    faces_obj(os.path.join(args.out, "slab.obj"), quad_faces(True))
    env_map = clamped_map(mi, os.path.abspath(args.env_map) if args.env_map else "", args.env_clamp)
    rows = []
    for shape in args.shape.split(","):
        for name in names:
            keys, bsdf, transmissive, model = mats[name]
            # A dielectric quad is a closed slab: both renderers then leave radiance unscaled by eta^2
            # (Mitsuba scales at each crossing, sieve at none; two crossings cancel).
            probe = {"sphere": "sphere.obj", "quad": "slab.obj" if transmissive else "quad.obj"}[shape]
            if not transmissive:
                bsdf = {"type": "twosided", "bsdf": bsdf}  # sieve's opaque lobes are two-sided
            toml = os.path.join(args.out, f"{shape}-{name}.toml")
            sieve_scene(toml, keys, probe, args.size, args.spp, args.depth, env_map)
            scene_of = lambda seed, b=bsdf, p=probe: mitsuba_scene(mi, args.out, b, p, args.size, args.spp,
                                                                   args.depth, seed, env_map)
            rows.append(compare(mi, args, f"{shape}/{name}", toml, scene_of, model))
    return rows


# ---- a glTF asset (the TOML scene that places it): the same triangles, texels and camera for both


def srgb_to_linear(c):
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def gltf_accessor(g, buffers, index):
    acc = g["accessors"][index]
    if "sparse" in acc or "bufferView" not in acc:
        sys.exit("mitsuba_compare: sparse or view-less accessors are not supported")
    view = g["bufferViews"][acc["bufferView"]]
    dtype = {5121: np.uint8, 5123: np.uint16, 5125: np.uint32, 5126: np.float32}[acc["componentType"]]
    width = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4}[acc["type"]]
    stride = view.get("byteStride", 0) or width * np.dtype(dtype).itemsize
    start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
    raw = np.frombuffer(buffers[view.get("buffer", 0)], dtype=np.uint8, count=stride * acc["count"], offset=start)
    rows = raw.reshape(acc["count"], stride)[:, :width * np.dtype(dtype).itemsize]
    return rows.copy().view(dtype).reshape(acc["count"], width)


def node_matrix(node):
    if "matrix" in node:
        return np.array(node["matrix"], dtype=float).reshape(4, 4).T
    x, y, z, w = node.get("rotation", [0, 0, 0, 1])
    r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                  [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                  [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    m = np.eye(4)
    m[:3, :3] = r * np.array(node.get("scale", [1, 1, 1]))
    m[:3, 3] = node.get("translation", [0, 0, 0])
    return m


def write_ply(path, p, n, uv, tris):
    """Binary PLY with positions, normals, glTF's texture coordinates (v down, as Mitsuba's bitmap
    reads them) and triangles."""
    vert = np.zeros(len(p), dtype=[(k, "<f4") for k in ("x", "y", "z", "nx", "ny", "nz", "u", "v")])
    for k, col in zip(("x", "y", "z"), p.T):
        vert[k] = col
    for k, col in zip(("nx", "ny", "nz"), n.T):
        vert[k] = col
    vert["u"], vert["v"] = uv[:, 0], uv[:, 1]
    face = np.zeros(len(tris), dtype=[("n", "u1"), ("i", "<i4", (3,))])
    face["n"], face["i"] = 3, tris
    head = ("ply\nformat binary_little_endian 1.0\nelement vertex %d\n" % len(p) +
            "".join(f"property float {k}\n" for k in vert.dtype.names) +
            "element face %d\nproperty list uchar int vertex_indices\nend_header\n" % len(tris))
    with open(path, "wb") as out:
        out.write(head.encode())
        out.write(vert.tobytes())
        out.write(face.tobytes())


def asset_textures(mi, g, folder, out, metal, normal_maps=True):
    """Every image of the glTF decoded once (Mitsuba's reader) and written as PNG into out (sieve
    reads those: the same 8-bit texels, and no JPEG reader needed); the glTF's copy points at them.
    metal: the metallic channel (B) of every metallic-roughness texture set to 1; normal_maps
    False: the materials' normal maps dropped (for both renderers). Returns
    image index -> float array in 0 .. 1."""
    mr = {g["textures"][m["pbrMetallicRoughness"]["metallicRoughnessTexture"]["index"]]["source"]
          for m in g.get("materials", []) if "metallicRoughnessTexture" in m.get("pbrMetallicRoughness", {})}
    used = {g["textures"][t["index"]]["source"] for m in g.get("materials", [])
            for t in [m.get("normalTexture"), m.get("emissiveTexture")] + list(m.get("pbrMetallicRoughness", {}).values())
            if isinstance(t, dict) and "index" in t}
    pixels = {}
    for i in sorted(used):
        img = g["images"][i]
        if "uri" not in img:
            sys.exit("mitsuba_compare: images inside a .glb are not supported (use a .gltf)")
        a = np.array(mi.Bitmap(os.path.join(folder, img["uri"])), dtype=np.uint8)
        a = a[..., None] if a.ndim == 2 else a[..., :3]
        a = np.repeat(a, 3, axis=2) if a.shape[2] == 1 else a
        if metal and i in mr:
            a = a.copy()
            a[..., 2] = 255
        img["uri"] = f"image{i}.png"
        mi.Bitmap(np.ascontiguousarray(a), pixel_format=mi.Bitmap.PixelFormat.RGB).write(os.path.join(out, img["uri"]))
        pixels[i] = a.astype(np.float64) / 255.0
    for m in g.get("materials", []):
        m.pop("occlusionTexture", None)  # never read by sieve; its image may be absent
        if not normal_maps:
            m.pop("normalTexture", None)
        if m.get("alphaMode", "OPAQUE") != "OPAQUE" or "extensions" in m or "KHR_texture_transform" in json.dumps(m):
            sys.exit("mitsuba_compare: the asset comparison supports opaque glTF materials without extensions")
    return pixels


def mitsuba_material(mi, g, mat, pixels, out, key, metal):
    """Mitsuba's principled BSDF (and area emitter) of a glTF material: metal is the glTF metal
    exactly (Schlick, f0 = base colour); the dielectric part differs (principled's diffuse and
    Fresnel), hence the metal variant."""
    pbr = mat.get("pbrMetallicRoughness", {})
    tex = lambda t: pixels[g["textures"][t["index"]]["source"]]

    def bitmap(name, arr, raw=True):
        path = os.path.join(out, f"{key}-{name}.exr")
        mi.Bitmap(np.ascontiguousarray(arr.astype(np.float32))).write(path)
        return {"type": "bitmap", "filename": path, "raw": raw, "filter_type": "bilinear", "wrap_mode": "repeat"}

    base = np.array(pbr.get("baseColorFactor", [1, 1, 1, 1])[:3])
    bc = pbr.get("baseColorTexture")
    mr = pbr.get("metallicRoughnessTexture")
    metallic, rough = pbr.get("metallicFactor", 1.0), pbr.get("roughnessFactor", 1.0)
    bsdf = {"type": "principled", "specular": 0.5, "spec_tint": 0.0,
            "base_color": bitmap("base", srgb_to_linear(tex(bc)) * base) if bc else
            {"type": "rgb", "value": base.tolist()},
            "metallic": 1.0 if metal else (bitmap("metallic", tex(mr)[..., 2] * metallic) if mr else metallic),
            "roughness": bitmap("roughness", tex(mr)[..., 1] * rough) if mr else rough}
    if "normalTexture" in mat:
        nt = tex(mat["normalTexture"]).copy()
        bsdf = {"type": "normalmap", "normalmap": bitmap("normal", nt), "bsdf": bsdf}
    if mat.get("doubleSided"):
        bsdf = {"type": "twosided", "bsdf": bsdf}
    emission = np.array(mat.get("emissiveFactor", [0, 0, 0]))
    emitter = None
    if emission.any():
        et = mat.get("emissiveTexture")
        emitter = {"type": "area", "radiance": bitmap("emission", srgb_to_linear(tex(et)) * emission) if et else
                   {"type": "rgb", "value": emission.tolist()}}
    return bsdf, emitter


def asset_meshes(mi, g, folder, pixels, out, metal):
    """Mitsuba shapes of every triangle primitive of the glTF's scene, in world space."""
    buffers = [open(os.path.join(folder, b["uri"]), "rb").read() for b in g["buffers"]]
    shapes, stack = {}, [(n, np.eye(4)) for n in g["scenes"][g.get("scene", 0)]["nodes"]]
    while stack:
        index, parent = stack.pop()
        node = g["nodes"][index]
        world = parent @ node_matrix(node)
        stack += [(c, world) for c in node.get("children", [])]
        for k, prim in enumerate(g["meshes"][node["mesh"]]["primitives"] if "mesh" in node else []):
            if prim.get("mode", 4) != 4 or "NORMAL" not in prim["attributes"]:
                sys.exit("mitsuba_compare: the asset comparison needs triangles with normals")
            at = prim["attributes"]
            p = gltf_accessor(g, buffers, at["POSITION"]).astype(np.float64)
            p = p @ world[:3, :3].T + world[:3, 3]
            n = gltf_accessor(g, buffers, at["NORMAL"]).astype(np.float64) @ np.linalg.inv(world[:3, :3])
            n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-12)
            uv = gltf_accessor(g, buffers, at["TEXCOORD_0"]) if "TEXCOORD_0" in at else np.zeros((len(p), 2))
            tris = gltf_accessor(g, buffers, prim["indices"]).reshape(-1, 3)
            key = f"n{index}p{k}"
            write_ply(os.path.join(out, key + ".ply"), p, n, uv, tris.astype(np.int32))
            bsdf, emitter = mitsuba_material(mi, g, g["materials"][prim.get("material", 0)], pixels, out, key, metal)
            shapes[key] = {"type": "ply", "filename": os.path.join(out, key + ".ply"), "bsdf": bsdf,
                           "face_normals": False}
            if emitter:
                shapes[key]["emitter"] = emitter
    return shapes


def asset_scenes(mi, args, metal):
    """The sieve TOML (a copy of --asset's glTF with PNG textures, the environment unrotated,
    --size, --spp and --depth) and Mitsuba's scene maker of the same asset."""
    import tomllib
    with open(args.asset, "rb") as f:
        t = tomllib.load(f)
    here = os.path.dirname(os.path.abspath(args.asset))
    gltf_path = os.path.join(here, t["objects"][0]["gltf"])
    folder = os.path.dirname(gltf_path)
    out = os.path.join(args.out, "metal" if metal else "asset")
    os.makedirs(out, exist_ok=True)
    with open(gltf_path) as f:
        g = json.load(f)
    pixels = asset_textures(mi, g, folder, out, metal, not args.no_normal_maps)
    for b in g["buffers"]:
        dst = os.path.join(out, b["uri"])
        if not os.path.exists(dst):
            shutil.copyfile(os.path.join(folder, b["uri"]), dst)  # sieve reads no link out of the folder
    with open(os.path.join(out, "asset.gltf"), "w") as f:
        json.dump(g, f)
    env = t.get("environment", {})
    env_map = clamped_map(mi, os.path.join(here, env["map"]) if "map" in env else "", args.env_clamp)
    cam = dict(t["camera"])
    toml = os.path.join(out, "asset.toml")
    with open(toml, "w") as f:
        f.write("\n".join([
            f'name = "{"metal" if metal else "asset"}"', "[[objects]]", 'gltf = "asset.gltf"', "[environment]",
            f"map = {json.dumps(env_map)}\nscale = {float(env.get('scale', 1.0))}" if env_map else
            f"color = [{ENV}, {ENV}, {ENV}]", "[camera]"] +
            [f"{k} = {toml_value(v)}" for k, v in cam.items()] +
            ["[film]", f"width = {args.size}", f"height = {args.size}", f"spp = {args.spp}",
             f"max_bounces = {args.depth}"]) + "\n")
    shapes = asset_meshes(mi, g, folder, pixels, out, metal)
    env_arg = (env_map, float(env.get("scale", 1.0))) if env_map else None

    def scene_of(seed):
        d = mitsuba_base(mi, cam, args.size, args.spp, args.depth, seed, env_arg)
        d.update(shapes)
        return load(mi, d)
    return toml, scene_of


def asset_cases(mi, args):
    rows = []
    for metal in (False, True):
        toml, scene_of = asset_scenes(mi, args, metal)
        name = os.path.splitext(os.path.basename(args.asset))[0] + ("_metal" if metal else "")
        model = None if metal else ("principled's dielectric part (Disney diffuse with retro-reflection, the "
                                    "exact Fresnel term) vs glTF's fresnel_mix of a Schlick layer over Lambert")
        rows.append(compare(mi, args, name, toml, scene_of, model))
    return rows


def asset_timing(mi, args):
    """Mitsuba's render of the asset, its first call (JIT compilation included) apart from
    --repeats later ones (its kernels cached), and sieve's bench render of the same TOML
    (wavefront and megakernel; the bench's checked warm-up, median of --repeats)."""
    import drjit as dr
    toml, scene_of = asset_scenes(mi, args, False)
    scene = scene_of(1)

    def once():
        t0 = time.perf_counter()
        img = mi.render(scene, seed=1)
        dr.eval(img)
        dr.sync_thread()
        return time.perf_counter() - t0, img
    first, img = once()
    mi.Bitmap(img).write(os.path.join(args.out, "asset-mitsuba.exr"))
    times = [once()[0] for _ in range(args.repeats)]
    bench_json = os.path.join(args.out, "sieve-bench.json")
    subprocess.run([args.sieve, "bench", "render", toml, "--backend", args.backend, "--integrator",
                    "wavefront,megakernel", "--strategy", "auto", "--repeats", str(args.repeats), "--json", bench_json],
                   check=True)
    with open(bench_json) as f:
        bench = json.load(f)
    med = float(np.median(times))
    print(f"mitsuba {args.variant}: first render {first:.4f} s (JIT {first - med:.4f} s), "
          f"then median {med:.4f} s of {args.repeats}: {times}")
    return {"mitsuba_first_s": first, "mitsuba_jit_s_estimate": first - med, "mitsuba_s": times,
            "mitsuba_s_median": med, "sieve_bench": bench}


def provenance(args):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    git = lambda *a: subprocess.run(["git", "-C", root] + list(a), capture_output=True, text=True).stdout.strip()
    cpu = ""
    if os.path.exists("/proc/cpuinfo"):
        cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
    version = subprocess.run([args.sieve, "--version"], capture_output=True, text=True).stdout.strip()
    import mitsuba as mi
    return {"command": "python3 bench/mitsuba_compare.py " + " ".join(
                "sieve" if a == args.sieve else a for a in sys.argv[1:]),
            "commit": git("rev-parse", "--short=12", "HEAD") + ("+local changes" if git("status", "--porcelain", "-uno") else ""),
            "cpu": cpu, "cpu_threads": os.cpu_count(), "sieve_version": version,
            "mitsuba_version": mi.__version__}


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
    ap.add_argument("--shape", default="sphere,quad", help="probe shapes: sphere, quad (comma-separated)")
    ap.add_argument("--megakernel", action="store_true", help="pass --integrator megakernel to sieve")
    ap.add_argument("--env-map", default="", help="an HDR map (.exr) around the probes instead of the constant environment")
    ap.add_argument("--env-clamp", type=float, default=0.0, help="> 0: the map (--env-map's or the asset's) "
                    "clamped to this value per channel, for both renderers")
    ap.add_argument("--block-tolerance", type=float, default=0.005, help="a block fails where |z| exceeds "
                    "--z-bound and its means differ by more than this fraction")
    ap.add_argument("--asset", default="", help="a TOML scene placing one glTF model: compare it (as it is, and "
                    "all metal) instead of the probes")
    ap.add_argument("--no-normal-maps", action="store_true", help="with --asset: drop the normal maps (both renderers)")
    ap.add_argument("--timing", action="store_true", help="with --asset: time both renderers instead of comparing")
    ap.add_argument("--repeats", type=int, default=5, help="timed renders with --timing")
    ap.add_argument("--report", default="report", help="the report's name in --out (.json and .txt)")
    args = ap.parse_args()
    if args.timing and not args.asset:
        sys.exit("mitsuba_compare: --timing needs --asset")
    if any(s not in ("sphere", "quad") for s in args.shape.split(",")):
        sys.exit("mitsuba_compare: --shape takes sphere and quad")

    import mitsuba as mi
    mi.set_variant(args.variant)
    os.makedirs(args.out, exist_ok=True)
    OUT[0] = args.out
    report = dict(provenance(args), variant=args.variant, size=args.size, spp=args.spp, depth=args.depth,
                  sieve_backend=args.backend, env_clamp=args.env_clamp or None, integrator="megakernel" if args.megakernel else "wavefront")
    if args.timing:
        report["timing"] = asset_timing(mi, args)
        rows = []
    else:
        report.update(seeds=args.seeds, block=args.block, mean_bound=args.mean_bound, z_bound=args.z_bound,
                      block_tolerance=args.block_tolerance,
                      environment=args.env_map or f"constant {ENV}")
        rows = asset_cases(mi, args) if args.asset else probe_cases(mi, args)
        report["results"] = rows
    failed = [r["case"] for r in rows if r["models_coincide"] and not r["pass"]]
    report["agreement"] = (("missed: " + ", ".join(failed)) if failed else
                           "met on every case where the models coincide") if rows else None
    with open(os.path.join(args.out, args.report + ".json"), "w") as out:
        json.dump(report, out, indent=1)
    with open(os.path.join(args.out, args.report + ".txt"), "w") as out:
        out.write("".join(f"{k}: {v}\n" for k, v in report.items() if k not in ("results", "timing")))
        for r in rows:
            out.write(f"{r['case']:34s} sieve {r['sieve_mean']:.5f} mitsuba {r['mitsuba_mean']:.5f} "
                      f"rel {100 * r['relative_difference']:5.2f} % (z {r['mean_z']:5.1f})  |z| max {r['max_abs_z']:6.2f} "
                      f"{r['blocks_failed']:3d}/{r['blocks']} blocks failed  "
                      f"{('ok' if r['pass'] else 'FAIL') if r['models_coincide'] else 'model differs: ' + ('agrees' if r['pass'] else 'differs')}\n")
    if rows:
        print("agreement " + report["agreement"])
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
