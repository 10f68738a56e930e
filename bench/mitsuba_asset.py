"""The asset comparison of bench/mitsuba_compare.py: a TOML scene placing one glTF model (a .gltf or
a .glb; opaque and cut-out materials, KHR_mesh_quantization's integer attributes) rendered by both
renderers from the same triangles, texels and camera, and its timing.

sieve reads a copy of the glTF whose images are PNGs decoded once by Mitsuba's reader (the same 8-bit
texels for both; RGBA where a cut-out reads the alpha) and whose buffers are files beside it;
Mitsuba gets a PLY per primitive in world space (quantized attributes dequantized as glTF says) and
a principled BSDF per material, two-sided as sieve's are, under a `mask` whose opacity is the
cut-out (alpha times the factor at or above alphaCutoff, read nearest) for alphaMode MASK."""
import json
import os
import subprocess
import sys
import time

import numpy as np

from mitsuba_common import ENV, clamped_map, compare, load, mitsuba_base, toml_value
from mitsuba_gltf import gltf_accessor, node_matrix, read_gltf, srgb_to_linear, view_bytes, write_ply

# The metal variant (every metallic value 1, where the two models coincide) caps roughness
# (--metal-roughness-cap, this by default): at 1 the renderers' Smith terms (Mitsuba's separable
# G1 G1, sieve's height-correlated G2) differ by 5 .. 14 % (mitsuba_probes.SMITH), at 0.6 by up to
# 1.3 % on the probes and by more at the grazing views a large scene has (their ratio is
# 1 + L_o L_i / (1 + L_o + L_i), the Smith Lambdas growing with roughness and tan theta); at 0.3 by
# well under the block test's tolerance.
METAL_ROUGHNESS_CAP = 0.3


def used_images(g):
    """image index -> the roles its textures play ('base', 'mr', 'normal', 'emissive')."""
    roles = {}
    for m in g.get("materials", []):
        pbr = m.get("pbrMetallicRoughness", {})
        for role, t in (("base", pbr.get("baseColorTexture")), ("mr", pbr.get("metallicRoughnessTexture")),
                        ("normal", m.get("normalTexture")), ("emissive", m.get("emissiveTexture"))):
            if isinstance(t, dict) and "index" in t:
                roles.setdefault(g["textures"][t["index"]]["source"], set()).add(role)
    return roles


def check_materials(g, normal_maps, opaque_cutouts=False, emission_probe=False):
    for m in g.get("materials", []):
        m.pop("occlusionTexture", None)  # never read by sieve; its image may be absent
        if emission_probe:
            # Each material emits its base colour (texture times factor), which a render of depth 0
            # shows as it is read: the texture lookups alone (coordinates, filtering, sRGB, wrap).
            pbr = m.get("pbrMetallicRoughness", {})
            m["emissiveFactor"] = list(pbr.get("baseColorFactor", [1, 1, 1, 1]))[:3]
            m.pop("emissiveTexture", None)
            if "baseColorTexture" in pbr:
                m["emissiveTexture"] = dict(pbr["baseColorTexture"])
        if not normal_maps:
            m.pop("normalTexture", None)
        if opaque_cutouts and m.get("alphaMode") == "MASK":
            m["alphaMode"] = "OPAQUE"  # for both renderers
        if m.get("alphaMode", "OPAQUE") not in ("OPAQUE", "MASK") or "extensions" in m or \
                "KHR_texture_transform" in json.dumps(m):
            sys.exit("mitsuba_compare: the asset comparison supports opaque and cut-out (MASK) glTF materials "
                     "without extensions")


def decode_image(mi, g, buffers, folder, out, i):
    """Image i's 8-bit texels (height, width, channels 3 or 4) by Mitsuba's reader."""
    img = g["images"][i]
    if "uri" in img:
        path = os.path.join(folder, img["uri"])
    else:
        path = os.path.join(out, f"source{i}")
        with open(path, "wb") as f:
            f.write(view_bytes(g, buffers, img["bufferView"]))
    a = np.array(mi.Bitmap(path), dtype=np.uint8)
    a = a[..., None] if a.ndim == 2 else a
    if a.shape[2] <= 2:  # grey, grey + alpha
        a = np.concatenate([np.repeat(a[..., :1], 3, axis=2), a[..., 1:]], axis=2)
    return a


def asset_textures(mi, g, buffers, folder, out, metal, normal_maps=True, opaque_cutouts=False,
                   emission_probe=False, cap=METAL_ROUGHNESS_CAP):
    """Every image of the glTF decoded once (Mitsuba's reader) and written as PNG into out (sieve
    reads those: the same 8-bit texels, and no JPEG reader needed); the glTF's copy points at them.
    The alpha channel stays where a base colour map has one (a cut-out reads it). metal: every
    metallic value 1 (the factors, and the B channel of every metallic-roughness map) and roughness
    at most `cap` (the factors of materials without a map, the maps' G channel);
    normal_maps False: the materials' normal maps dropped, opaque_cutouts: cut-outs drawn opaque
    (both renderers); emission_probe: every material emits its base colour (check_materials).
    Returns image index -> float array in 0 .. 1."""
    check_materials(g, normal_maps, opaque_cutouts, emission_probe)
    roles = used_images(g)
    pixels = {}
    for i in sorted(roles):
        a = decode_image(mi, g, buffers, folder, out, i)
        if a.shape[2] == 4 and "base" not in roles[i]:
            a = a[..., :3]
        if metal and "mr" in roles[i]:
            a = a.copy()
            a[..., 2] = 255
            a[..., 1] = np.minimum(a[..., 1], round(cap * 255))
        img = g["images"][i]
        img.pop("bufferView", None)
        img.pop("mimeType", None)
        img["uri"] = f"image{i}.png"
        fmt = mi.Bitmap.PixelFormat.RGBA if a.shape[2] == 4 else mi.Bitmap.PixelFormat.RGB
        mi.Bitmap(np.ascontiguousarray(a), pixel_format=fmt).write(os.path.join(out, img["uri"]))
        pixels[i] = a.astype(np.float64) / 255.0
    if metal:
        for m in g.get("materials", []):
            pbr = m.setdefault("pbrMetallicRoughness", {})
            pbr["metallicFactor"] = 1.0
            if "metallicRoughnessTexture" not in pbr:
                pbr["roughnessFactor"] = min(pbr.get("roughnessFactor", 1.0), cap)
    return pixels


def mitsuba_material(mi, g, mat, pixels, out, key, metal):
    """Mitsuba's principled BSDF (and area emitter) of a glTF material: metal is the glTF metal
    exactly (Schlick, f0 = base colour); the dielectric part differs (principled's diffuse and
    Fresnel), hence the metal variant. Two-sided (sieve's opaque BSDFs are), under a mask for a
    cut-out."""
    pbr = mat.get("pbrMetallicRoughness", {})
    tex = lambda t: pixels[g["textures"][t["index"]]["source"]]

    def bitmap(name, arr, raw=True, filter_type="bilinear"):
        path = os.path.join(out, f"{key}-{name}.exr")
        mi.Bitmap(np.ascontiguousarray(arr.astype(np.float32))).write(path)
        return {"type": "bitmap", "filename": path, "raw": raw, "filter_type": filter_type, "wrap_mode": "repeat"}

    factor = np.array(pbr.get("baseColorFactor", [1, 1, 1, 1]), dtype=float)
    bc = pbr.get("baseColorTexture")
    mr = pbr.get("metallicRoughnessTexture")
    metallic, rough = pbr.get("metallicFactor", 1.0), pbr.get("roughnessFactor", 1.0)
    bsdf = {"type": "principled", "specular": 0.5, "spec_tint": 0.0,
            "base_color": bitmap("base", srgb_to_linear(tex(bc)[..., :3]) * factor[:3]) if bc else
            {"type": "rgb", "value": factor[:3].tolist()},
            "metallic": 1.0 if metal else (bitmap("metallic", tex(mr)[..., 2] * metallic) if mr else metallic),
            "roughness": bitmap("roughness", tex(mr)[..., 1] * rough) if mr else rough}
    if "normalTexture" in mat:
        # The map as sieve reads it: red and green, blue rebuilt as sqrt(1 - x^2 - y^2) (its normal
        # maps are stored in two channels).
        nt = tex(mat["normalTexture"])[..., :3].copy()
        xy = 2 * nt[..., :2] - 1
        nt[..., 2] = 0.5 * np.sqrt(np.maximum(1 - (xy ** 2).sum(axis=-1), 0)) + 0.5
        bsdf = {"type": "normalmap", "normalmap": bitmap("normal", nt), "bsdf": bsdf}
    bsdf = {"type": "twosided", "bsdf": bsdf}
    if mat.get("alphaMode") == "MASK":
        alpha = tex(bc)[..., 3] if bc and tex(bc).shape[2] == 4 else np.ones((1, 1))
        keep = (alpha * factor[3] >= mat.get("alphaCutoff", 0.5)).astype(np.float32)
        bsdf = {"type": "mask", "opacity": bitmap("opacity", keep, filter_type="nearest"), "bsdf": bsdf}
    emission = np.array(mat.get("emissiveFactor", [0, 0, 0]))
    emitter = None
    if emission.any():
        et = mat.get("emissiveTexture")
        emitter = {"type": "area", "radiance": bitmap("emission", srgb_to_linear(tex(et)[..., :3]) * emission) if et
                   else {"type": "rgb", "value": emission.tolist()}}
    return bsdf, emitter


def asset_meshes(mi, g, buffers, pixels, out, metal):
    """Mitsuba shapes of every triangle primitive of the glTF's scene, in world space."""
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


def film_size(args, film):
    """--size wide, as tall as the scene's own film's aspect makes it (square without a film)."""
    w, h = film.get("width", 1), film.get("height", 1)
    return args.size, max(1, round(args.size * h / w))


def write_sieve_copy(g, buffers, out):
    """The glTF's copy for sieve: asset.gltf with its buffers as files beside it."""
    for k, b in enumerate(g.get("buffers", [])):
        b["uri"] = f"buffer{k}.bin"
        with open(os.path.join(out, b["uri"]), "wb") as f:
            f.write(buffers[k])
    with open(os.path.join(out, "asset.gltf"), "w") as f:
        json.dump(g, f)


def asset_scenes(mi, args, metal):
    """The sieve TOML (a copy of --asset's glTF with PNG textures, the environment unrotated,
    --size wide at the scene's aspect, --spp and --depth), Mitsuba's scene maker of the same asset
    and a list holding the Mitsuba integrator it uses (volpath where cut-outs must pass light to
    shadow rays and the install has it, else path)."""
    import tomllib
    with open(args.asset, "rb") as f:
        t = tomllib.load(f)
    here = os.path.dirname(os.path.abspath(args.asset))
    gltf_path = os.path.join(here, t["objects"][0]["gltf"])
    out = os.path.join(args.out, "metal" if metal else "asset")
    os.makedirs(out, exist_ok=True)
    g, buffers = read_gltf(gltf_path)
    pixels = asset_textures(mi, g, buffers, os.path.dirname(gltf_path), out, metal, not args.no_normal_maps,
                            args.opaque_cutouts, args.emission_probe, args.metal_roughness_cap)
    write_sieve_copy(g, buffers, out)
    env = t.get("environment", {})
    env_map = clamped_map(mi, os.path.join(here, env["map"]) if "map" in env else "", args.env_clamp)
    colour = [float(c) for c in env.get("color", [ENV] * 3)]
    cam = dict(t["camera"])
    size = film_size(args, t.get("film", {}))
    toml = os.path.join(out, "asset.toml")
    with open(toml, "w") as f:
        f.write("\n".join([
            f'name = "{"metal" if metal else "asset"}"', "[[objects]]", 'gltf = "asset.gltf"', "[environment]",
            f"map = {json.dumps(env_map)}\nscale = {float(env.get('scale', 1.0))}" if env_map else
            f"color = {toml_value(colour)}", "[camera]"] +
            [f"{k} = {toml_value(v)}" for k, v in cam.items()] +
            ["[film]", f"width = {size[0]}", f"height = {size[1]}", f"spp = {args.spp}",
             f"max_bounces = {args.depth}"] + ([] if args.timing else [
                 f"mipmaps = {toml_value(args.sieve_mipmaps)}", f"sides = {json.dumps(args.sieve_sides)}",
                 f"tangents = {json.dumps(args.sieve_tangents)}"])) + "\n")
    shapes = asset_meshes(mi, g, buffers, pixels, out, metal)
    env_arg = (env_map, float(env.get("scale", 1.0))) if env_map else colour
    cutouts = any(m.get("alphaMode") == "MASK" for m in g.get("materials", []))
    # used[0]: the integrator; auto: volpath where cut-outs must let shadow rays through, path where
    # the install has no volpath (its shadow rays then stop at cut-outs: the report says which).
    used = [args.mitsuba_integrator if args.mitsuba_integrator != "auto" else ("volpath" if cutouts else "path")]

    def scene_of(seed):
        d = mitsuba_base(mi, cam, size, args.spp, args.depth, seed, env_arg, used[0])
        d.update(shapes)
        try:
            return load(mi, d)
        except RuntimeError as e:
            if args.mitsuba_integrator != "auto" or used[0] != "volpath" or "volpath" not in str(e):
                raise
            print("mitsuba_compare: no volpath plugin in this Mitsuba: path (its shadow rays stop at cut-outs)")
            used[0] = d["integrator"]["type"] = "path"
            return load(mi, d)
    return toml, scene_of, used


def asset_cases(mi, args):
    rows = []
    cases = [m for m in ((False,) if args.emission_probe else (False, True))
             if not args.only or ("metal" if m else "asset") in args.only.split(",")]
    for metal in cases:
        toml, scene_of, integrator = asset_scenes(mi, args, metal)
        name = os.path.splitext(os.path.basename(args.asset))[0] + ("_metal" if metal else "") + \
            ("_emission" if args.emission_probe else "")
        # The emission probe sees no BSDF: the models coincide there.
        model = None if metal or args.emission_probe else ("principled's dielectric part (Disney diffuse with retro-reflection, the "
                                    "exact Fresnel term) vs glTF's fresnel_mix of a Schlick layer over Lambert")
        row = compare(mi, args, name, toml, scene_of, model)
        if row:  # None with --mitsuba-only
            row["mitsuba_integrator"] = integrator[0]
            rows.append(row)
    return rows


# sieve's configurations timed beside Mitsuba: the default (pass queue, branch routing) and the
# designs that are fastest on the textured scenes (append queue; multisplit routing), wavefront and
# megakernel.
SIEVE_TIMING = ["--integrator", "wavefront,megakernel", "--queue", "pass,append", "--routing", "branch,multisplit",
                "--strategy", "auto"]


def asset_timing(mi, args):
    """Mitsuba's render of the asset, its first call (JIT compilation included) apart from
    --repeats later ones (its kernels cached), and sieve's bench render of the same TOML
    (SIEVE_TIMING's configurations; the bench's checked warm-up, median of --repeats). The
    ratios: Mitsuba's median over each sieve row's."""
    import drjit as dr
    toml, scene_of, integrator = asset_scenes(mi, args, False)
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
    subprocess.run([args.sieve, "bench", "render", toml, "--backend", args.backend] + SIEVE_TIMING +
                   ["--repeats", str(args.repeats), "--json", bench_json], check=True)
    with open(bench_json) as f:
        bench = json.load(f)
    med = float(np.median(times))
    print(f"mitsuba {args.variant} ({integrator[0]}): first render {first:.4f} s (JIT {first - med:.4f} s), "
          f"then median {med:.4f} s of {args.repeats}: {times}")
    ratios = sieve_ratios(bench, med)
    for r in ratios:
        print(f"  sieve {r['configuration']:44s} {r['s_median']:.4f} s  Mitsuba / sieve {r['mitsuba_over_sieve']:.2f}x")
    return {"mitsuba_integrator": integrator[0], "mitsuba_first_s": first, "mitsuba_jit_s_estimate": first - med,
            "mitsuba_s": times, "mitsuba_s_median": med, "ratios": ratios, "sieve_bench": bench}


def sieve_ratios(bench, mitsuba_s):
    """Each bench row's median render (without stage timing), its stage times (ms) and Mitsuba's
    median over it."""
    out = []
    for r in bench.get("results", []):
        s = r.get("seconds_unprofiled") or r.get("seconds")
        if not s:
            continue
        name = " ".join(str(r[k]) for k in ("integrator", "queue", "routing", "strategy") if r.get(k))
        out.append({"configuration": name, "s_median": s, "mitsuba_over_sieve": mitsuba_s / s,
                    "stages_ms": r.get("stages", {}), "identical": r.get("identical")})
    return out
