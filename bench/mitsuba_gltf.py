"""The glTF reading of bench/mitsuba_compare.py's asset comparison: a .gltf or a .glb (its binary
chunk as buffer 0), accessors (float, and the integers of KHR_mesh_quantization, normalized or not),
node matrices, and the binary PLY in which Mitsuba receives each primitive."""
import json
import os
import struct
import sys

import numpy as np

# KHR_mesh_quantization: the only extension the comparison reads (sieve reads it too).
READ_EXTENSIONS = {"KHR_mesh_quantization"}


def srgb_to_linear(c):
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def read_gltf(path):
    """(the glTF's JSON, its buffers' bytes). A .glb's JSON chunk and binary chunk (buffer 0 when
    that buffer has no uri); a .gltf's buffers read from their files beside it."""
    folder = os.path.dirname(path)
    with open(path, "rb") as f:
        data = f.read()
    binary = None
    if data[:4] == b"glTF":
        length = struct.unpack_from("<I", data, 8)[0]
        pos, g = 12, None
        while pos + 8 <= min(length, len(data)):
            size, kind = struct.unpack_from("<II", data, pos)
            chunk = data[pos + 8:pos + 8 + size]
            if kind == 0x4E4F534A:
                g = json.loads(chunk)
            elif kind == 0x004E4942 and binary is None:
                binary = chunk
            pos += 8 + size + (-size % 4)
        if g is None:
            sys.exit(f"mitsuba_compare: {path}: no JSON chunk")
    else:
        g = json.loads(data)
    unread = set(g.get("extensionsRequired", [])) - READ_EXTENSIONS
    if unread:
        sys.exit(f"mitsuba_compare: {path} requires extensions the comparison does not read: {sorted(unread)}")
    buffers = []
    for k, b in enumerate(g.get("buffers", [])):
        if "uri" in b:
            with open(os.path.join(folder, b["uri"]), "rb") as f:
                buffers.append(f.read())
        elif k == 0 and binary is not None:
            buffers.append(binary)
        else:
            sys.exit(f"mitsuba_compare: {path}: buffer {k} has no data")
    return g, buffers


def view_bytes(g, buffers, index):
    view = g["bufferViews"][index]
    start = view.get("byteOffset", 0)
    return buffers[view.get("buffer", 0)][start:start + view["byteLength"]]


# componentType -> numpy type, and the divisor of a normalized integer (glTF 2.0, 3.11).
COMPONENTS = {5120: (np.int8, 127.0), 5121: (np.uint8, 255.0), 5122: (np.int16, 32767.0),
              5123: (np.uint16, 65535.0), 5125: (np.uint32, None), 5126: (np.float32, None)}


def gltf_accessor(g, buffers, index):
    """The accessor's elements as rows; normalized integers as floats (signed ones clamped at -1)."""
    acc = g["accessors"][index]
    if "sparse" in acc or "bufferView" not in acc:
        sys.exit("mitsuba_compare: sparse or view-less accessors are not supported")
    view = g["bufferViews"][acc["bufferView"]]
    dtype, scale = COMPONENTS[acc["componentType"]]
    width = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4}[acc["type"]]
    stride = view.get("byteStride", 0) or width * np.dtype(dtype).itemsize
    start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
    count = acc["count"]
    raw = np.frombuffer(buffers[view.get("buffer", 0)], dtype=np.uint8, count=stride * (count - 1) +
                        width * np.dtype(dtype).itemsize, offset=start)
    rows = np.lib.stride_tricks.as_strided(raw, shape=(count, width * np.dtype(dtype).itemsize), strides=(stride, 1))
    out = rows.copy().view(dtype).reshape(count, width)
    if acc.get("normalized") and scale:
        out = np.maximum(out.astype(np.float64) / scale, -1.0)
    return out


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
