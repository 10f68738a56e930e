#!/usr/bin/env python3
"""Rebuilds sponza.glb (the Crytek Sponza's geometry) from the one copy that could be had: the Godot
scene `models/sponza.scn` of github.com/Calinou/godot-sponza at commit 0003588 (LICENSE.md here).

    make_sponza.py SOURCE.scn OUT.glb

The source is Godot 3's compressed binary resource ("RSCC": zstd blocks, decompressed by the `zstd`
command) holding one ArrayMesh of 25 surfaces (262,267 triangles) and the MeshInstance's transform.
Only what the glb needs is read: per surface the interleaved vertex array (positions as Godot's
importer stored them, half floats, widened exactly to float; normals as signed bytes, kept as
glTF's normalized BYTE under KHR_mesh_quantization), the 16-bit indices, the surface's name; the
instance's transform becomes the glTF node's matrix, and each triangle's winding turns from Godot's
clockwise front faces to glTF's counter-clockwise ones. Textures and materials' maps are left out
(every surface gets a grey material of its own name). The glb is written the same, byte for byte,
from the same source.
"""
import hashlib
import json
import struct
import subprocess
import sys

SOURCE_SHA256 = "63a7fe25eb95e6256c0dce06e1ac6055bcf20a01f06cd2389ea4da19d13ddc84"

# Godot 3 mesh format bits (servers/visual_server.h).
VERTEX, NORMAL, TANGENT, COLOR, TEX_UV, TEX_UV2, BONES, WEIGHTS, INDEX = (1 << i for i in range(9))
COMPRESS_VERTEX, COMPRESS_NORMAL, COMPRESS_TANGENT, COMPRESS_COLOR, COMPRESS_UV, COMPRESS_UV2 = (1 << i for i in range(9, 15))
COMPRESS_BONES, COMPRESS_WEIGHTS = 1 << 15, 1 << 16


def decompress(data):
    """An RSCC file's content: its zstd blocks decompressed in turn."""
    if data[:4] != b"RSCC":
        sys.exit("make_sponza.py: not a compressed Godot resource (no RSCC)")
    mode, block, total = struct.unpack_from("<III", data, 4)
    if mode != 2:
        sys.exit(f"make_sponza.py: compression mode {mode}, expected 2 (zstd)")
    count = (total + block - 1) // block
    sizes = struct.unpack_from(f"<{count}I", data, 16)
    at, out = 16 + 4 * count, bytearray()
    for size in sizes:
        out += subprocess.run(["zstd", "-d", "-c", "-q"], input=data[at:at + size], capture_output=True, check=True).stdout
        at += size
    if len(out) != total:
        sys.exit(f"make_sponza.py: {len(out)} bytes decompressed, the header says {total}")
    return bytes(out)


class Reader:
    def __init__(self, data):
        self.d, self.o = data, 0

    def take(self, fmt):
        v = struct.unpack_from("<" + fmt, self.d, self.o)
        self.o += struct.calcsize("<" + fmt)
        return v if len(v) > 1 else v[0]

    def string(self):
        n = self.take("I")
        s = self.d[self.o:self.o + n]
        self.o += n
        return s.rstrip(b"\0").decode()

    def padded(self, n):
        b = self.d[self.o:self.o + n]
        self.o += n + (4 - n % 4) % 4
        return b


def variant(r, strings):
    """One value of Godot 3's binary resource format (core/io/resource_format_binary.cpp): the kinds
    this file holds."""
    t = r.take("I")
    floats = {4: 1, 10: 2, 11: 4, 12: 3, 13: 4, 14: 4, 15: 6, 16: 9, 17: 12, 18: 6, 20: 4}
    if t == 1:
        return None
    if t in (2, 3):
        return r.take("i")
    if t in floats:
        return r.take(f"{floats[t]}f")
    if t == 5:
        return r.string()
    if t == 22:  # node path: names by string index or inline
        names, subnames = r.take("HH")
        out = []
        for _ in range(names + (subnames & 0x7FFF)):
            i = r.take("I")
            out.append(r.padded(i & 0x7FFFFFFF).decode() if i & 0x80000000 else strings[i])
        return out
    if t == 24:  # object: empty, external (type, path), internal (index), external by index
        kind = r.take("I")
        return None if kind == 0 else (r.string(), r.string()) if kind == 1 else ("resource", r.take("I"))
    if t == 26:
        return {variant(r, strings): variant(r, strings) for _ in range(r.take("I") & 0x7FFFFFFF)}
    if t == 30:
        return [variant(r, strings) for _ in range(r.take("I") & 0x7FFFFFFF)]
    if t == 31:
        return r.padded(r.take("I"))
    if t in (32, 33):
        n = r.take("I")
        values = struct.unpack_from(f"<{n}{'i' if t == 32 else 'f'}", r.d, r.o)
        r.o += 4 * n
        return values
    if t == 34:
        return [r.string() for _ in range(r.take("I"))]
    if t in (35, 36, 37):
        n = r.take("I")
        r.o += n * {35: 12, 36: 16, 37: 8}[t]
        return n
    sys.exit(f"make_sponza.py: a value of kind {t} at byte {r.o}, which this reader does not know")


def resources(data):
    """The internal resources: (type, {property: value})."""
    r = Reader(data)
    r.take("5I")  # endianness, 64-bit reals, version
    r.string()  # the resource's type
    r.take("Q14I")  # import metadata offset, reserved
    strings = [r.string() for _ in range(r.take("I"))]
    for _ in range(r.take("I")):
        r.string(), r.string()  # external resources (the textures)
    offsets = [(r.string(), r.take("Q"))[1] for _ in range(r.take("I"))]
    out = []
    for at in offsets:
        r.o = at
        kind = r.string()
        out.append((kind, {strings[r.take("I")]: variant(r, strings) for _ in range(r.take("I"))}))
    return out


def surface_arrays(s):
    """Positions (float32 x3), normals (int8 x4) and indices (uint16) of one surface."""
    fmt, n = s["format"], s["vertex_count"]
    sizes = [(VERTEX, 8 if fmt & COMPRESS_VERTEX else 12), (NORMAL, 4 if fmt & COMPRESS_NORMAL else 12),
             (TANGENT, 4 if fmt & COMPRESS_TANGENT else 16), (COLOR, 4 if fmt & COMPRESS_COLOR else 16),
             (TEX_UV, 4 if fmt & COMPRESS_UV else 8), (TEX_UV2, 4 if fmt & COMPRESS_UV2 else 8),
             (BONES, 4), (WEIGHTS, 8 if fmt & COMPRESS_WEIGHTS else 16)]
    offset, stride = {}, 0
    for bit, size in sizes:
        if fmt & bit:
            offset[bit], stride = stride, stride + size
    data = s["array_data"]
    if not (fmt & COMPRESS_VERTEX and fmt & NORMAL and fmt & COMPRESS_NORMAL) or len(data) != n * stride:
        sys.exit(f"make_sponza.py: surface {s['name']}: format {fmt} with {len(data)} bytes for {n} vertices is not this file's")
    positions, normals = bytearray(), bytearray()
    for v in range(n):
        positions += struct.pack("<3f", *struct.unpack_from("<3e", data, v * stride + offset[VERTEX]))
        normals += data[v * stride + offset[NORMAL]:v * stride + offset[NORMAL] + 4]
    data = s["array_index_data"]
    if n > 65536 or len(data) != 2 * s["index_count"] or s["index_count"] % 3 or s["primitive"] != 4:
        sys.exit(f"make_sponza.py: surface {s['name']}: not 16-bit indexed triangles")
    # Godot's front faces run clockwise, glTF's counter-clockwise: each triangle's last two corners swap.
    indices = bytearray(data)
    for t in range(0, len(data), 6):
        indices[t + 2:t + 4], indices[t + 4:t + 6] = data[t + 4:t + 6], data[t + 2:t + 4]
    return bytes(positions), bytes(normals), bytes(indices)


def glb(surfaces, matrix):
    """The glb: one mesh of one primitive per surface, under one node with `matrix`."""
    blob, views, accessors, primitives, materials = bytearray(), [], [], [], []
    for i, s in enumerate(surfaces):
        positions, normals, indices = surface_arrays(s)
        for data, stride, acc in ((positions, 12, {"componentType": 5126, "type": "VEC3"}),
                                  (normals, 4, {"componentType": 5120, "normalized": True, "type": "VEC3"}),
                                  (indices, None, {"componentType": 5123, "type": "SCALAR"})):
            view = {"buffer": 0, "byteOffset": len(blob), "byteLength": len(data)}
            if stride:
                view["byteStride"] = stride
            blob += data + b"\0" * ((4 - len(data) % 4) % 4)
            views.append(view)
            count = s["index_count"] if acc["type"] == "SCALAR" else s["vertex_count"]
            accessors.append(dict(acc, bufferView=len(views) - 1, count=count))
        xyz = struct.unpack(f"<{3 * s['vertex_count']}f", positions)
        accessors[-3]["min"] = [min(xyz[k::3]) for k in range(3)]  # glTF wants POSITION's bounds
        accessors[-3]["max"] = [max(xyz[k::3]) for k in range(3)]
        primitives.append({"attributes": {"POSITION": len(accessors) - 3, "NORMAL": len(accessors) - 2},
                           "indices": len(accessors) - 1, "material": i})
        materials.append({"name": s["name"], "pbrMetallicRoughness": {"baseColorFactor": [0.7, 0.7, 0.7, 1],
                                                                      "metallicFactor": 0, "roughnessFactor": 1}})
    doc = {"asset": {"version": "2.0", "generator": "sieve scenes/third-party/sponza/make_sponza.py",
                     "copyright": "Crytek Sponza (c) 2010 Frank Meinl, Crytek; CC BY 3.0"},
           "extensionsUsed": ["KHR_mesh_quantization"], "extensionsRequired": ["KHR_mesh_quantization"],
           "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"name": "Sponza", "mesh": 0, "matrix": matrix}],
           "meshes": [{"name": "Sponza", "primitives": primitives}], "materials": materials,
           "accessors": accessors, "bufferViews": views, "buffers": [{"byteLength": len(blob)}]}
    text = json.dumps(doc, separators=(",", ":")).encode()
    text += b" " * ((4 - len(text) % 4) % 4)
    return (struct.pack("<III", 0x46546C67, 2, 28 + len(text) + len(blob)) + struct.pack("<II", len(text), 0x4E4F534A) + text +
            struct.pack("<II", len(blob), 0x004E4942) + bytes(blob))


def surfaces_and_matrix(source):
    """The mesh's surfaces and the instance's transform (glTF's column-major 4x4) in the .scn bytes."""
    res = resources(decompress(source))
    mesh = [p for kind, p in res if kind == "ArrayMesh"]
    scene = [p for kind, p in res if kind == "PackedScene"]
    if len(mesh) != 1 or len(scene) != 1:
        sys.exit("make_sponza.py: expected one ArrayMesh and one PackedScene")
    surfaces = [mesh[0][f"surfaces/{i}"] for i in range(len([k for k in mesh[0] if k.startswith("surfaces/")]))]
    transforms = [v for v in scene[0]["_bundled"]["variants"] if isinstance(v, tuple) and len(v) == 12]
    if len(transforms) != 1:
        sys.exit("make_sponza.py: expected the one MeshInstance's transform")
    b = transforms[0]  # Godot: the basis's rows, then the origin; glTF: column-major 4x4
    return surfaces, [b[0], b[3], b[6], 0, b[1], b[4], b[7], 0, b[2], b[5], b[8], 0, b[9], b[10], b[11], 1]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    source = open(sys.argv[1], "rb").read()
    digest = hashlib.sha256(source).hexdigest()
    if digest != SOURCE_SHA256:
        sys.exit(f"make_sponza.py: {sys.argv[1]} has SHA-256 {digest}, expected {SOURCE_SHA256}")
    surfaces, matrix = surfaces_and_matrix(source)
    open(sys.argv[2], "wb").write(glb(surfaces, matrix))


if __name__ == "__main__":
    main()
