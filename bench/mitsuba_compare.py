#!/usr/bin/env python3
"""bench/mitsuba_compare.py: renders the same scenes with sieve and with Mitsuba 3 and compares them:
the image means (within --mean-bound, 2 % by default) and a per-block z-test (blocks of --block
pixels, the standard error of each renderer's block mean taken from --seeds independent renders; a
block fails where |z| > --z-bound and its means differ by more than --block-tolerance; reported
beside it, the blocks significant under Welch's t with a Bonferroni bound, as few seeds make z
Student's t), or times both.

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
and caustics converge slowly). --asset: a TOML scene placing one glTF model (.gltf or .glb; opaque and cut-out materials,
KHR_mesh_quantization): the same triangles, texels and camera for both, the glTF model as principled
(exact for metal, Disney's diffuse for the dielectric part), compared as it is and with every
metallic value set to 1 and roughness capped at --metal-roughness-cap (where the models coincide);
sieve then reads its textures at level 0 (Mitsuba's bitmap has no mipmaps; --sieve-mipmaps for the
ray cones' levels) and takes Mitsuba's conventions (--sieve-sides, --sieve-tangents: a surface's
side by its interpolated normal, normal maps in the triangle's dp/du frame), and Mitsuba reads the
normal maps' blue channel rebuilt from red and green as sieve does; --emission-probe (with --depth
0) shows the texture lookups alone. --timing times
Mitsuba (its first render, JIT compilation included, apart) and `sieve bench render` on it instead.
Exits 1 when a case whose models coincide fails either check. Needs numpy and mitsuba.

Phases, one module each beside this one: mitsuba_probes (the probe scenes), mitsuba_asset (a glTF
asset; mitsuba_gltf reads it), mitsuba_common (the environment, Mitsuba's base scene, the statistics).
"""
import argparse
import json
import os
import subprocess
import sys

from mitsuba_asset import METAL_ROUGHNESS_CAP, asset_cases, asset_timing
from mitsuba_common import ENV, OUT
from mitsuba_probes import probe_cases


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
    ap.add_argument("--size", type=int, default=256, help="the image's width (an asset's height follows its "
                    "film's aspect)")
    ap.add_argument("--spp", type=int, default=256)
    ap.add_argument("--depth", type=int, default=8, help="sieve's max_bounces (Mitsuba's max_depth is one more)")
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--block", type=int, default=16)
    ap.add_argument("--mean-bound", type=float, default=0.02)
    ap.add_argument("--z-bound", type=float, default=4.0, help="|z| above which a block fails")
    ap.add_argument("--only", default="", help="comma-separated material names (with --asset: asset, "
                    "metal: its cases)")
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
    ap.add_argument("--opaque-cutouts", action="store_true", help="with --asset: cut-out (MASK) materials drawn "
                    "opaque by both renderers (for a Mitsuba without the mask plugin)")
    ap.add_argument("--emission-probe", action="store_true", help="with --asset: every material emits its base "
                    "colour (use --depth 0: the images are then the texture lookups seen from the camera)")
    ap.add_argument("--sieve-mipmaps", action="store_true", help="with --asset: sieve reads its textures at the "
                    "ray cones' mipmap levels (default: at level 0 alone, as Mitsuba's bitmap texture does)")
    ap.add_argument("--sieve-sides", default="shading", choices=["shading", "geometric"], help="with --asset: "
                    "sieve's film.sides (default shading: a surface's side by its interpolated normal, as Mitsuba's "
                    "two-sided BSDFs and area lights take it)")
    ap.add_argument("--sieve-tangents", default="uv", choices=["uv", "vertex"], help="with --asset: sieve's "
                    "film.tangents (default uv: normal maps in each triangle's dp/du frame, bitangent n x t, as "
                    "Mitsuba's normalmap builds it)")
    ap.add_argument("--metal-roughness-cap", type=float, default=METAL_ROUGHNESS_CAP, help="with --asset: the metal variant's "
                    "largest roughness (where the renderers' Smith terms differ little)")
    ap.add_argument("--mitsuba-only", action="store_true", help="render Mitsuba's images alone (kept in --out) "
                    "and compare nothing")
    ap.add_argument("--timing", action="store_true", help="with --asset: time both renderers instead of comparing")
    ap.add_argument("--mitsuba-integrator", default="auto", choices=["auto", "path", "volpath"],
                    help="with --asset: Mitsuba's integrator (auto: volpath where cut-outs must let shadow rays "
                    "through, path otherwise)")
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
        if args.mitsuba_only:
            return
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
                      f"{r['blocks_failed']:3d}/{r['blocks']} blocks failed ({r['blocks_significant_welch_bonferroni']} significant "
                      f"by Welch + Bonferroni)  "
                      f"{('ok' if r['pass'] else 'FAIL') if r['models_coincide'] else 'model differs: ' + ('agrees' if r['pass'] else 'differs')}\n")
    if rows:
        print("agreement " + report["agreement"])
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
