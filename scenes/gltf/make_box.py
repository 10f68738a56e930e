#!/usr/bin/env python3
"""Writes the glTF box scene and the same geometry as OBJ/MTL: box.gltf (JSON with its buffer as a
base64 data URI, the floor's texture the file checker.png beside it), box.glb (the same model,
binary, the texture inside it) and box.obj + box.mtl (map_Kd checker.png), and checker.png.

The two formats must give the renderer the same triangles bit for bit, in the same order, with the
same materials (tests/gltf_test.cpp renders both and compares the images). So every coordinate and
colour is a short binary fraction (exact in float and in decimal), the glTF's node transforms are
translations, scales and a 90-degree rotation (exact in double), and the OBJ lists the triangles in
the order the glTF loader walks them: nodes depth first, primitives in order, triangles in order.

The glTF uses what the loader reads: a node tree (TRS and a matrix, a parent with a child), one mesh
of several primitives with a material each, two meshes sharing accessors, u8 and u16 indices,
TEXCOORD_0 (glTF's v runs down the image: written as 1 - v of the OBJ's vt), a base colour texture
(an external image in box.gltf, one in a buffer view in box.glb), KHR_materials_emissive_strength,
KHR_materials_transmission and KHR_materials_ior.

Run from anywhere: python3 scenes/gltf/make_box.py (writes beside itself).
"""
import base64
import json
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))

# Room, open towards -z: quads (counter-clockwise seen from inside), split (0,1,2) (0,2,3).
ROOM = {
    "floor": [[(0, 0, 0), (0, 0, 4), (4, 0, 4), (4, 0, 0)]],  # facing +y, textured
    "white": [
        [(0, 4, 0), (4, 4, 0), (4, 4, 4), (0, 4, 4)],  # ceiling, facing -y
        [(0, 0, 4), (0, 4, 4), (4, 4, 4), (4, 0, 4)],  # back wall, facing -z
    ],
    "red": [[(0, 0, 0), (0, 4, 0), (0, 4, 4), (0, 0, 4)]],  # x = 0 wall (on the right as the camera sees it), facing +x
    "green": [[(4, 0, 0), (4, 0, 4), (4, 4, 4), (4, 4, 0)]],  # x = 4 wall (on the left), facing -x
    "light": [[(1.5, 3.875, 1.5), (2.5, 3.875, 1.5), (2.5, 3.875, 2.5), (1.5, 3.875, 2.5)]],  # facing -y
}

# glTF materials and the MTL that maps to the same sieve material (scenes/README.md).
# The floor's texture coordinates (OBJ convention, v up): the checker repeated twice each way.
FLOOR_UV = [(0, 0), (0, 2), (2, 2), (2, 0)]

MATERIALS = [
    ("floor", {"pbrMetallicRoughness": {"baseColorFactor": [1, 1, 1, 1], "metallicFactor": 0,
                                        "baseColorTexture": {"index": 0}}},
     "Kd 1 1 1\nmap_Kd checker.png\nillum 1"),
    ("white", {"pbrMetallicRoughness": {"baseColorFactor": [0.75, 0.75, 0.75, 1], "metallicFactor": 0}},
     "Kd 0.75 0.75 0.75\nillum 1"),
    ("red", {"pbrMetallicRoughness": {"baseColorFactor": [0.75, 0.125, 0.125, 1], "metallicFactor": 0}},
     "Kd 0.75 0.125 0.125\nillum 1"),
    ("green", {"pbrMetallicRoughness": {"baseColorFactor": [0.125, 0.75, 0.125, 1], "metallicFactor": 0}},
     "Kd 0.125 0.75 0.125\nillum 1"),
    ("light", {"pbrMetallicRoughness": {"baseColorFactor": [0.75, 0.75, 0.75, 1], "metallicFactor": 0},
               "emissiveFactor": [1, 0.5, 0.25],
               "extensions": {"KHR_materials_emissive_strength": {"emissiveStrength": 16}}},
     "Kd 0.75 0.75 0.75\nKe 16 8 4\nillum 1"),
    ("mirror", {"pbrMetallicRoughness": {"baseColorFactor": [0.875, 0.875, 0.875, 1], "metallicFactor": 1,
                                         "roughnessFactor": 0}},
     "Kd 0 0 0\nKs 0.875 0.875 0.875\nillum 3"),
    ("glass", {"pbrMetallicRoughness": {"baseColorFactor": [1, 1, 1, 1], "metallicFactor": 0, "roughnessFactor": 0},
               "extensions": {"KHR_materials_transmission": {"transmissionFactor": 1},
                              "KHR_materials_ior": {"ior": 1.5}}},
     "Kd 0 0 0\nTf 1 1 1\nNi 1.5\nillum 7"),
]
MAT_INDEX = {name: i for i, (name, _, _) in enumerate(MATERIALS)}

# A unit cube centred on the origin: 8 corners, 12 triangles facing outwards.
CUBE_POSITIONS = [(x, y, z) for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)]
CUBE_INDICES = [
    0, 1, 3, 0, 3, 2,  # x = -0.5
    4, 6, 7, 4, 7, 5,  # x = +0.5
    0, 4, 5, 0, 5, 1,  # y = -0.5
    2, 3, 7, 2, 7, 6,  # y = +0.5
    0, 2, 6, 0, 6, 4,  # z = -0.5
    1, 5, 7, 1, 7, 3,  # z = +0.5
]

def checker_png():
    """16 x 16 RGB, 8-bit: 4 x 4 squares of two warm greys."""
    rows = b""
    for y in range(16):
        row = b"\0"  # filter: none
        for x in range(16):
            row += bytes((200, 190, 170)) if (x // 4 + y // 4) % 2 == 0 else bytes((90, 80, 70))
        rows += row

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 16, 16, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


IDENTITY = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]


def mul(a, b):  # column-major 4x4
    return [sum(a[k * 4 + r] * b[c * 4 + k] for k in range(4)) for c in range(4) for r in range(4)]


def trs(t=(0, 0, 0), s=(1, 1, 1)):
    return [s[0], 0, 0, 0, 0, s[1], 0, 0, 0, 0, s[2], 0, t[0], t[1], t[2], 1]


def apply(m, p):
    return tuple(m[r] * p[0] + m[4 + r] * p[1] + m[8 + r] * p[2] + m[12 + r] for r in range(3))


# Nodes: the room; the tall block (TRS: scale then translate); a parent translating a child whose
# matrix turns the short block 90 degrees about +y and lifts it.
TURN_Y = [0, 0, -1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0.5, 1.5, 1]
NODES = [
    {"name": "room", "mesh": 0},
    {"name": "tall-block", "mesh": 1, "translation": [1.25, 1.25, 2.75], "scale": [1, 2.5, 1]},
    {"name": "short-block-parent", "translation": [2.75, 0, 0], "children": [3]},
    {"name": "short-block", "mesh": 2, "matrix": TURN_Y},
]
# The world transform of each mesh, in the order the loader meets them (depth first).
WORLD = [(0, IDENTITY), (1, trs((1.25, 1.25, 2.75), (1, 2.5, 1))), (2, mul(trs((2.75, 0, 0)), TURN_Y))]


def build(png, embed_png):
    blob = bytearray()

    def add(data):
        while len(blob) % 4:
            blob.append(0)
        offset = len(blob)
        blob.extend(data)
        return offset, len(data)

    views, accessors = [], []

    def accessor(data, component, type_, count, target, minmax=None):
        offset, length = add(data)
        views.append({"buffer": 0, "byteOffset": offset, "byteLength": length, "target": target})
        a = {"bufferView": len(views) - 1, "componentType": component, "count": count, "type": type_}
        if minmax:
            a["min"], a["max"] = minmax
        accessors.append(a)
        return len(accessors) - 1

    def positions(points):
        data = b"".join(struct.pack("<3f", *p) for p in points)
        lo = [min(p[i] for p in points) for i in range(3)]
        hi = [max(p[i] for p in points) for i in range(3)]
        return accessor(data, 5126, "VEC3", len(points), 34962, (lo, hi))

    # The room: one POSITION accessor for all its quads, u8 indices per material.
    room_points, room_uvs, room_prims, room_tris = [], [], [], []
    for name, quads in ROOM.items():
        idx = []
        for q in quads:
            base = len(room_points)
            room_points.extend(q)
            uv = FLOOR_UV if name == "floor" else None
            room_uvs.extend(uv or [(0, 0)] * 4)
            idx += [base, base + 1, base + 2, base, base + 2, base + 3]
            room_tris += [(name, (q[0], q[1], q[2]), uv and (uv[0], uv[1], uv[2])),
                          (name, (q[0], q[2], q[3]), uv and (uv[0], uv[2], uv[3]))]
        room_prims.append((name, idx))
    room_pos = positions(room_points)
    room_tex = accessor(b"".join(struct.pack("<2f", u, 1 - v) for u, v in room_uvs), 5126, "VEC2",
                        len(room_uvs), 34962)
    meshes = [{"name": "room", "primitives": []}]
    for name, idx in room_prims:
        a = accessor(bytes(idx), 5121, "SCALAR", len(idx), 34963)
        meshes[0]["primitives"].append({"attributes": {"POSITION": room_pos, "TEXCOORD_0": room_tex}, "indices": a,
                                        "material": MAT_INDEX[name], "mode": 4})
    # The blocks: two meshes sharing the cube's accessors (u16 indices), with different materials.
    cube_pos = positions(CUBE_POSITIONS)
    cube_idx = accessor(struct.pack("<%dH" % len(CUBE_INDICES), *CUBE_INDICES), 5123, "SCALAR",
                        len(CUBE_INDICES), 34963)
    for name, material in (("tall-block", "mirror"), ("short-block", "glass")):
        meshes.append({"name": name, "primitives": [{"attributes": {"POSITION": cube_pos}, "indices": cube_idx,
                                                      "material": MAT_INDEX[material]}]})

    # The OBJ: the same triangles, world space, in the loader's order.
    triangles = []
    for mesh, m in WORLD:
        if mesh == 0:
            triangles += room_tris
            continue
        material = "mirror" if mesh == 1 else "glass"
        for t in range(0, len(CUBE_INDICES), 3):
            triangles.append((material, tuple(apply(m, CUBE_POSITIONS[i]) for i in CUBE_INDICES[t:t + 3]), None))

    gltf = {
        "asset": {"version": "2.0", "generator": "sieve scenes/gltf/make_box.py"},
        "extensionsUsed": ["KHR_materials_emissive_strength", "KHR_materials_ior", "KHR_materials_transmission"],
        "scene": 0,
        "scenes": [{"nodes": [0, 1, 2]}],
        "nodes": NODES,
        "meshes": meshes,
        "materials": [dict(name=name, **g) for name, g, _ in MATERIALS],
        "accessors": accessors,
        "bufferViews": views,
        "textures": [{"source": 0, "sampler": 0}],
        "samplers": [{"wrapS": 10497, "wrapT": 10497}],
        "images": [{"uri": "checker.png"}],
    }
    if embed_png:
        offset, length = add(png)
        views.append({"buffer": 0, "byteOffset": offset, "byteLength": length})
        gltf["images"] = [{"bufferView": len(views) - 1, "mimeType": "image/png"}]
    gltf["buffers"] = [{"byteLength": len(blob)}]
    return gltf, bytes(blob), triangles


def fmt(v):
    return repr(float(v)).rstrip("0").rstrip(".") if v != int(v) else str(int(v))


def main():
    png = checker_png()
    with open(os.path.join(HERE, "checker.png"), "wb") as f:
        f.write(png)
    gltf, blob, triangles = build(png, embed_png=False)
    header = "made by make_box.py (sieve); the same model as box.gltf and box.obj"

    text = dict(gltf)
    text["buffers"] = [{"byteLength": len(blob),
                        "uri": "data:application/octet-stream;base64," + base64.b64encode(blob).decode()}]
    with open(os.path.join(HERE, "box.gltf"), "w") as f:
        json.dump(text, f, indent=1)
        f.write("\n")

    gltf, blob, _ = build(png, embed_png=True)
    js = json.dumps(gltf, separators=(",", ":")).encode()
    js += b" " * (-len(js) % 4)
    bin_ = blob + b"\0" * (-len(blob) % 4)
    body = struct.pack("<I4s", len(js), b"JSON") + js + struct.pack("<I4s", len(bin_), b"BIN\0") + bin_
    with open(os.path.join(HERE, "box.glb"), "wb") as f:
        f.write(struct.pack("<4sII", b"glTF", 2, 12 + len(body)) + body)

    with open(os.path.join(HERE, "box.mtl"), "w") as f:
        f.write("# " + header + "\n")
        for name, _, mtl in MATERIALS:
            f.write("\nnewmtl %s\n%s\n" % (name, mtl))
    with open(os.path.join(HERE, "box.obj"), "w") as f:
        f.write("# " + header + "\nmtllib box.mtl\n")
        current = None
        vt = 0
        for n, (material, tri, uv) in enumerate(triangles):
            if material != current:
                f.write("usemtl %s\n" % material)
                current = material
            for p in tri:
                f.write("v %s\n" % " ".join(fmt(c) for c in p))
            if uv:
                for t in uv:
                    f.write("vt %s\n" % " ".join(fmt(c) for c in t))
                f.write("f %d/%d %d/%d %d/%d\n" % (3 * n + 1, vt + 1, 3 * n + 2, vt + 2, 3 * n + 3, vt + 3))
                vt += 3
            else:
                f.write("f %d %d %d\n" % (3 * n + 1, 3 * n + 2, 3 * n + 3))


if __name__ == "__main__":
    main()
