"""The probe scenes of bench/mitsuba_compare.py: a sphere or a quad of one material on a grey floor
under a quad light, written for sieve (TOML + OBJ) and for Mitsuba (a scene dict), and the rows of
every shape x material."""
import json
import math
import os
import sys

import numpy as np

from mitsuba_common import ENV, clamped_map, compare, load, mitsuba_base, toml_value

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
