#!/usr/bin/env python3
"""Builds the textured Crytek Sponza (sponza-textured.glb and textures/) from the Godot demo it was had
from (LICENSE.md): the scene `models/sponza.scn` and the textures `sponza/textures/*.tga` of
github.com/Calinou/godot-sponza at commit 0003588.

    make_sponza_textured.py SOURCE.scn TEXTURES_DIR OUT_DIR      # needs zstd and cjpeg (Debian: zstd,
                                                                 # libjpeg-turbo-progs)

The geometry is make_sponza.py's (the same positions, normals, winding and node matrix); this adds
each vertex's texture coordinates (Godot's half floats, widened exactly) and tangent (Godot's signed
bytes, x y z and the bitangent's sign, kept as glTF's normalized BYTE tangents), and the material
each surface had in the demo (its `sponza/*.material`: MATERIALS below): the colour map, the normal
map where it had one, and the colour map's alpha as a cut-out (glTF alphaMode MASK at 0.5) for the
chains and the plants' leaves. Textures are halved to at most 512 texels a side (a 2 x 2 box in
8-bit sRGB values, the files' own), written as JPEG (quality 90, colour and normal maps alike) or,
where the alpha is a cut-out, PNG with its alpha: about 4 MB for the 25 maps instead of 75 MB of TGA.
Four colour maps the demo names are not in its repository (the three curtains, the plant in the
vases): those surfaces keep a constant colour (MISSING below). Written the same, byte for byte, from
the same sources.
"""
import hashlib
import json
import os
import struct
import subprocess
import sys
import zlib

import make_sponza as geometry

# The demo's materials (sponza/<surface>.material at 0003588): colour map, normal map.
MATERIALS = {
    "Material__25": ("lion.tga", "lion_ddn.tga"),
    "Material__298": ("background.tga", "background_ddn.tga"),
    "Material__47": (None, None),
    "Material__57": ("vase_plant.tga", None),
    "arch": ("sponza_arch_diff.tga", None),
    "bricks": ("spnza_bricks_a_diff.tga", None),
    "ceiling": ("sponza_ceiling_a_diff.tga", None),
    "chain": ("chain_texture.tga", "chain_texture_ddn.tga"),
    "column_a": ("sponza_column_a_diff.tga", "sponza_column_a_ddn.tga"),
    "column_b": ("sponza_column_b_diff.tga", "sponza_column_b_ddn.tga"),
    "column_c": ("sponza_column_c_diff.tga", "sponza_column_c_ddn.tga"),
    "details": ("sponza_details_diff.tga", None),
    "fabric_a": ("sponza_fabric_diff.tga", None),
    "fabric_c": ("sponza_curtain_diff.tga", None),
    "fabric_d": ("sponza_fabric_blue_diff.tga", None),
    "fabric_e": ("sponza_fabric_green_diff.tga", None),
    "fabric_f": ("sponza_curtain_green_diff.tga", None),
    "fabric_g": ("sponza_curtain_blue_diff.tga", None),
    "flagpole": ("sponza_flagpole_diff.tga", None),
    "floor": ("sponza_floor_a_diff.tga", None),
    "leaf": ("sponza_thorn_diff.tga", "sponza_thorn_ddn.tga"),
    "roof": ("sponza_roof_diff.tga", None),
    "vase": ("vase_dif.tga", None),
    "vase_hanging": ("vase_hanging.tga", None),
    "vase_round": ("vase_round.tga", "vase_round_ddn.tga"),
}
# Colour maps absent from the demo's repository: a constant colour (linear) in their place.
MISSING = {"vase_plant.tga": [0.10, 0.20, 0.05], "sponza_curtain_diff.tga": [0.45, 0.06, 0.05],
           "sponza_curtain_green_diff.tga": [0.08, 0.25, 0.07], "sponza_curtain_blue_diff.tga": [0.06, 0.09, 0.30]}
CUTOUTS = {"chain", "leaf"}  # the colour map's alpha cuts the surface
MAX_SIDE = 512


def read_tga(path):
    """(width, height, channels, rows top first) of an uncompressed true-colour TGA, as RGB(A)."""
    data = open(path, "rb").read()
    id_len, cmap, kind = data[0], data[1], data[2]
    w, h, bpp, desc = struct.unpack_from("<HHBB", data, 12)
    if cmap or kind != 2 or bpp not in (24, 32):
        sys.exit(f"make_sponza_textured.py: {path}: not an uncompressed 24- or 32-bit TGA")
    c = bpp // 8
    at = 18 + id_len
    rows = [data[at + y * w * c:at + (y + 1) * w * c] for y in range(h)]
    if not desc & 0x20:  # bottom-left origin
        rows.reverse()
    out = []
    for r in rows:  # BGR(A) to RGB(A)
        b = bytearray(r)
        b[0::c], b[2::c] = r[2::c], r[0::c]
        out.append(bytes(b))
    return w, h, c, out


def halve(w, h, c, rows):
    """A 2 x 2 box filter (rounded to nearest) of 8-bit rows."""
    out = []
    for y in range(h // 2):
        a, b = rows[2 * y], rows[2 * y + 1]
        row = bytearray(w // 2 * c)
        for x in range(w // 2):
            p, q = 2 * x * c, (2 * x + 1) * c
            for k in range(c):
                row[x * c + k] = (a[p + k] + a[q + k] + b[p + k] + b[q + k] + 2) >> 2
        out.append(bytes(row))
    return w // 2, h // 2, out


def png(w, h, c, rows):
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    raw = b"".join(b"\0" + r for r in rows)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6 if c == 4 else 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def jpeg(w, h, rows, quality):
    ppm = b"P6\n%d %d\n255\n" % (w, h) + b"".join(rows)
    return subprocess.run(["cjpeg", "-quality", str(quality), "-optimize"], input=ppm, capture_output=True,
                          check=True).stdout


def convert(src_dir, name, out_dir, cutout):
    """Writes textures/<stem>.jpg (.png for a cut-out) and returns its path in the glTF."""
    w, h, c, rows = read_tga(os.path.join(src_dir, name))
    while max(w, h) > MAX_SIDE:
        w, h, rows = halve(w, h, c, rows)
    stem = os.path.splitext(name)[0]
    if cutout:
        uri, data = f"textures/{stem}.png", png(w, h, c, rows)
    else:
        rgb = rows if c == 3 else [bytes(b for i, b in enumerate(r) if i % 4 != 3) for r in rows]
        uri, data = f"textures/{stem}.jpg", jpeg(w, h, rgb, 90)
    open(os.path.join(out_dir, uri), "wb").write(data)
    return uri


def attributes(s):
    """Texture coordinates (float32 x2) and tangents (int8 x4) of one surface."""
    fmt, n = s["format"], s["vertex_count"]
    need = geometry.TEX_UV | geometry.COMPRESS_UV | geometry.TANGENT | geometry.COMPRESS_TANGENT
    if fmt & need != need:
        sys.exit(f"make_sponza_textured.py: surface {s['name']}: no compressed uvs and tangents")
    sizes = [(geometry.VERTEX, 8), (geometry.NORMAL, 4), (geometry.TANGENT, 4),
             (geometry.COLOR, 4 if fmt & geometry.COMPRESS_COLOR else 16), (geometry.TEX_UV, 4)]
    offset, stride = {}, 0
    for bit, size in sizes:
        if fmt & bit:
            offset[bit], stride = stride, stride + size
    for bit, size in [(geometry.TEX_UV2, 4 if fmt & geometry.COMPRESS_UV2 else 8), (geometry.BONES, 4),
                      (geometry.WEIGHTS, 8 if fmt & geometry.COMPRESS_WEIGHTS else 16)]:
        if fmt & bit:
            stride += size
    data = s["array_data"]
    uvs, tangents = bytearray(), bytearray()
    for v in range(n):
        uvs += struct.pack("<2f", *struct.unpack_from("<2e", data, v * stride + offset[geometry.TEX_UV]))
        t = bytearray(data[v * stride + offset[geometry.TANGENT]:v * stride + offset[geometry.TANGENT] + 4])
        t[3] = 127 if t[3] < 128 else 129  # the sign alone: +1 or -1 (int8 127 / -127)
        tangents += t
    return bytes(uvs), bytes(tangents)


def glb(surfaces, matrix, src_dir, out_dir):
    blob, views, accessors, primitives, materials, images = bytearray(), [], [], [], [], []

    def add(data, stride, acc, count):
        view = {"buffer": 0, "byteOffset": len(blob), "byteLength": len(data)}
        if stride:
            view["byteStride"] = stride
        blob.extend(data + b"\0" * ((4 - len(data) % 4) % 4))
        views.append(view)
        accessors.append(dict(acc, bufferView=len(views) - 1, count=count))
        return len(accessors) - 1

    def image(name, cutout):
        uri = convert(src_dir, name, out_dir, cutout)
        if uri not in images:
            images.append(uri)
        return {"index": images.index(uri)}

    for i, s in enumerate(surfaces):
        positions, normals, indices = geometry.surface_arrays(s)
        uvs, tangents = attributes(s)
        n = s["vertex_count"]
        pos = add(positions, 12, {"componentType": 5126, "type": "VEC3"}, n)
        xyz = struct.unpack(f"<{3 * n}f", positions)
        accessors[pos]["min"] = [min(xyz[k::3]) for k in range(3)]
        accessors[pos]["max"] = [max(xyz[k::3]) for k in range(3)]
        nor = add(normals, 4, {"componentType": 5120, "normalized": True, "type": "VEC3"}, n)
        tan = add(tangents, 4, {"componentType": 5120, "normalized": True, "type": "VEC4"}, n)
        uv = add(uvs, 8, {"componentType": 5126, "type": "VEC2"}, n)
        idx = add(indices, None, {"componentType": 5123, "type": "SCALAR"}, s["index_count"])
        primitives.append({"attributes": {"POSITION": pos, "NORMAL": nor, "TANGENT": tan, "TEXCOORD_0": uv},
                           "indices": idx, "material": i})
        colour, normal = MATERIALS[s["name"]]
        pbr = {"baseColorFactor": [0.7, 0.7, 0.7, 1], "metallicFactor": 0, "roughnessFactor": 1}
        m = {"name": s["name"], "pbrMetallicRoughness": pbr}
        if colour in MISSING:
            pbr["baseColorFactor"] = MISSING[colour] + [1]
        elif colour:
            pbr["baseColorFactor"] = [1, 1, 1, 1]
            pbr["baseColorTexture"] = image(colour, s["name"] in CUTOUTS)
        if normal:
            m["normalTexture"] = image(normal, False)
        if s["name"] in CUTOUTS:
            m.update(alphaMode="MASK", alphaCutoff=0.5, doubleSided=True)
        materials.append(m)
    doc = {"asset": {"version": "2.0", "generator": "sieve scenes/third-party/sponza/make_sponza_textured.py",
                     "copyright": "Crytek Sponza (c) 2010 Frank Meinl, Crytek; CC BY 3.0"},
           "extensionsUsed": ["KHR_mesh_quantization"], "extensionsRequired": ["KHR_mesh_quantization"],
           "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"name": "Sponza", "mesh": 0, "matrix": matrix}],
           "meshes": [{"name": "Sponza", "primitives": primitives}], "materials": materials,
           "images": [{"uri": u} for u in images], "samplers": [{}],
           "textures": [{"source": k, "sampler": 0} for k in range(len(images))],
           "accessors": accessors, "bufferViews": views, "buffers": [{"byteLength": len(blob)}]}
    # Texture k shows image k: a material's texture index is its image's.
    text = json.dumps(doc, separators=(",", ":")).encode()
    text += b" " * ((4 - len(text) % 4) % 4)
    return (struct.pack("<III", 0x46546C67, 2, 28 + len(text) + len(blob)) + struct.pack("<II", len(text), 0x4E4F534A) +
            text + struct.pack("<II", len(blob), 0x004E4942) + bytes(blob))


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    source = open(sys.argv[1], "rb").read()
    digest = hashlib.sha256(source).hexdigest()
    if digest != geometry.SOURCE_SHA256:
        sys.exit(f"make_sponza_textured.py: {sys.argv[1]} has SHA-256 {digest}, expected {geometry.SOURCE_SHA256}")
    surfaces, matrix = geometry.surfaces_and_matrix(source)
    os.makedirs(os.path.join(sys.argv[3], "textures"), exist_ok=True)
    data = glb(surfaces, matrix, sys.argv[2], sys.argv[3])
    open(os.path.join(sys.argv[3], "sponza-textured.glb"), "wb").write(data)


if __name__ == "__main__":
    main()
