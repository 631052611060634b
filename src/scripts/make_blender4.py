#!/usr/bin/env python3
# @file make_blender4.py: writes scenes/blender4.{obj,mtl,camera} and its three tiny textures: two rows of spheres on
# a floor, each material written as Blender 4's OBJ exporter writes a Principled BSDF with its PBR extension (Pr, Pm,
# Ps, Pc, Pcr, aniso, anisor, and map_Pr, map_Pm, map_Ps), one feature per sphere, under an area light (Ke). Render
# it with the procedural sky (src/scripts/make_sky_hdr.py) as the environment, or --env.
#   back row, left to right: a red plastic (Pm 0), gold (Pm 1), velvet (Ps 1), car paint (Pc 4 over a rough red
#   plastic), copper under a rough coat (Pm 1, Pc 4, Pcr 0.3);
#   front row: brushed steel (aniso 1; the uvs run around the vertical axis), the same turned a quarter (anisor 0.25),
#   bands of metal and plastic (map_Pm), bands of smooth and rough steel (map_Pr), bands of sheen (map_Ps).
#   usage: python3 src/scripts/make_blender4.py [output-folder]
import math
import os
import struct
import sys
import zlib

out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "scenes")
SEG_U, SEG_V = 20, 10  # a sphere's segments around and from pole to pole
RADIUS = 0.45


def png(path, width, height, rows):
    """An 8-bit RGB PNG (zlib and crc32 from the standard library); rows[y][x] is a grey level, row 0 at the top."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\0" + bytes(v for g in row for v in (g, g, g)) for row in rows)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def bands(path, a, b, count=6):
    """Horizontal bands (along v, the sphere's latitude) alternating between grey levels a and b."""
    h = 8 * count
    png(path, 2, h, [[a if (y // 8) % 2 == 0 else b] * 2 for y in range(h)])


# Blender 4's exporter writes every key for every material; zeros where a feature is off.
def material(name, kd, pr=0.5, pm=0.0, ps=0.0, pc=0.0, pcr=0.03, aniso=0.0, anisor=0.0, maps=(), ke=None):
    lines = ["newmtl " + name, "Ns %.6f" % ((1 - pr) ** 2 * 1000),
             "Ka %.6f %.6f %.6f" % ((pm,) * 3 if pm else (1,) * 3), "Kd %.6f %.6f %.6f" % kd,
             "Ks 0.500000 0.500000 0.500000", "Ke %.6f %.6f %.6f" % (ke or (0, 0, 0)), "Ni 1.500000",
             "d 1.000000", "illum %d" % (3 if pm else 2), "Pr %.6f" % pr, "Pm %.6f" % pm, "Ps %.6f" % ps,
             "Pc %.6f" % pc, "Pcr %.6f" % pcr, "aniso %.6f" % aniso, "anisor %.6f" % anisor]
    return "\n".join(lines + list(maps)) + "\n"


SPHERES = [  # (material, x, z)
    (material("plastic", (0.8, 0.08, 0.06), pr=0.35), -2.2, -0.6),
    (material("gold", (1.0, 0.71, 0.29), pr=0.3, pm=1.0), -1.1, -0.6),
    (material("velvet", (0.04, 0.05, 0.3), pr=0.9, ps=1.0), 0.0, -0.6),
    (material("carpaint", (0.6, 0.02, 0.05), pr=0.6, pc=4.0, pcr=0.03), 1.1, -0.6),
    (material("coated_copper", (0.95, 0.64, 0.54), pr=0.55, pm=1.0, pc=4.0, pcr=0.3), 2.2, -0.6),
    (material("brushed", (0.9, 0.9, 0.92), pr=0.45, pm=1.0, aniso=1.0), -2.2, 0.6),
    (material("brushed_turned", (0.9, 0.9, 0.92), pr=0.45, pm=1.0, aniso=1.0, anisor=0.25), -1.1, 0.6),
    (material("metal_bands", (0.9, 0.7, 0.3), pr=0.25, maps=["map_Pm blender4_metal.png"]), 0.0, 0.6),
    (material("rough_bands", (0.85, 0.85, 0.9), pr=0.5, pm=1.0, maps=["map_Pr blender4_rough.png"]), 1.1, 0.6),
    (material("sheen_bands", (0.35, 0.04, 0.08), pr=0.8, maps=["map_Ps blender4_sheen.png"]), 2.2, 0.6),
]

obj = ["# @file blender4.obj: spheres of Blender 4's PBR materials on a floor (src/scripts/make_blender4.py)",
       "mtllib blender4.mtl"]
mtl = ["# @file blender4.mtl: Blender 4's Principled BSDF as its OBJ exporter writes it with the PBR extension"]
# One sphere's uvs and normals, shared by all: u = phi / (2 pi) around the vertical axis, v = 1 at the top.
ring = [(i, j) for j in range(SEG_V + 1) for i in range(SEG_U + 1)]


def num(x):
    """A coordinate in few characters: 4 decimals, trailing zeros dropped."""
    t = ("%.4f" % x).rstrip("0").rstrip(".")
    return "0" if t in ("-0", "") else t


for i, j in ring:
    obj.append("vt %s %s" % (num(i / SEG_U), num(1 - j / SEG_V)))
for i, j in ring:
    th, ph = math.pi * j / SEG_V, 2 * math.pi * i / SEG_U
    n = (math.sin(th) * math.cos(ph), math.cos(th), -math.sin(th) * math.sin(ph))
    obj.append("vn " + " ".join(num(c) for c in n))
count = 0
for m, cx, cz in SPHERES:
    mtl.append(m)
    base = count
    for i, j in ring:
        th, ph = math.pi * j / SEG_V, 2 * math.pi * i / SEG_U
        n = (math.sin(th) * math.cos(ph), math.cos(th), -math.sin(th) * math.sin(ph))
        obj.append("v " + " ".join(num(c) for c in (cx + RADIUS * n[0], RADIUS + RADIUS * n[1], cz + RADIUS * n[2])))
    count += len(ring)
    obj.append("usemtl " + m.split("\n")[0][7:])
    uvs = "map_" in m or "aniso 0.0" not in m
    for j in range(SEG_V):
        for i in range(SEG_U):
            k = [j * (SEG_U + 1) + i, (j + 1) * (SEG_U + 1) + i, (j + 1) * (SEG_U + 1) + i + 1, j * (SEG_U + 1) + i + 1]
            if j == 0:
                del k[3]  # a triangle at the poles, where two corners meet
            elif j == SEG_V - 1:
                del k[2]
            # uvs only where they are used (a texture or the anisotropy's tangent)
            obj.append("f " + " ".join(("%d/%d/%d" if uvs else "%d//%d") % ((base + a + 1, a + 1, a + 1) if uvs else
                                                                          (base + a + 1, a + 1)) for a in k))
# The floor (up to the horizon) and the light (a quad facing down), without uvs and normals.
mtl.append(material("floor", (0.45, 0.45, 0.42), pr=0.6))
mtl.append("newmtl light\nKd 0 0 0\nKe 9 9 8.5\n")
obj += ["v -40 0 -40", "v 40 0 -40", "v 40 0 8", "v -40 0 8", "usemtl floor",
        "f %d %d %d %d" % tuple(range(count + 4, count, -1))]
obj += ["v -1.5 4 -1", "v 1.5 4 -1", "v 1.5 4 1", "v -1.5 4 1", "usemtl light",
        "f %d %d %d %d" % tuple(range(count + 5, count + 9))]
with open(os.path.join(out_dir, "blender4.obj"), "w") as f:
    f.write("\n".join(obj) + "\n")
with open(os.path.join(out_dir, "blender4.mtl"), "w") as f:
    f.write("\n".join(mtl))
with open(os.path.join(out_dir, "blender4.camera"), "w") as f:
    f.write("# @file blender4.camera: the two rows of spheres from the front, a little above\n"
            "eye 0 2.1 5.2\nlook_at 0 0.35 0\nup 0 1 0\nfov 36\n")
bands(os.path.join(out_dir, "blender4_metal.png"), 255, 0)   # metal and plastic
bands(os.path.join(out_dir, "blender4_rough.png"), 40, 200)  # roughness 0.16 and 0.78
bands(os.path.join(out_dir, "blender4_sheen.png"), 255, 0)   # full sheen and none
