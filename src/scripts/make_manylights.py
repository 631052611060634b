#!/usr/bin/env python3
# @file make_manylights.py: writes scenes/manylights.{obj,mtl,camera}: a grid of rooms joined by doorways,
# each lit by its own ceiling lights, so that most lights are hidden from most pixels. With --courtyards it writes
# scenes/courtyards.{obj,mtl,camera} instead: the same grid with every other room (a checkerboard) open to the sky,
# without ceiling or lights, for an environment light (--env or --env-map) that half the pixels see and half do not.
#   usage: python3 src/scripts/make_manylights.py [--courtyards] [output-folder]
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from obj_writer import write_faces  # noqa: E402

COURTYARDS = "--courtyards" in sys.argv[1:]
args = [a for a in sys.argv[1:] if a != "--courtyards"]
NAME = "courtyards" if COURTYARDS else "manylights"

NX, NZ = 8, 4          # rooms along x and z
W, H = 4.0, 3.0        # room width/depth and height
DOOR_W, DOOR_H = 1.0, 2.2
out_dir = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "..", "scenes")

verts, faces = [], []  # faces: (material, [vertex indices])


def quad(mat, a, b, c, d):
    base = len(verts) + 1
    verts.extend([a, b, c, d])
    faces.append((mat, [base, base + 1, base + 2, base + 3]))


def wall_x(x, z0, z1, door):
    """A wall in the plane x = const from z0 to z1, with a centred doorway if door."""
    if not door:
        quad("wall", (x, 0, z0), (x, 0, z1), (x, H, z1), (x, H, z0))
        return
    zc = 0.5 * (z0 + z1)
    a, b = zc - DOOR_W / 2, zc + DOOR_W / 2
    quad("wall", (x, 0, z0), (x, 0, a), (x, H, a), (x, H, z0))
    quad("wall", (x, 0, b), (x, 0, z1), (x, H, z1), (x, H, b))
    quad("wall", (x, DOOR_H, a), (x, DOOR_H, b), (x, H, b), (x, H, a))


def wall_z(z, x0, x1, door):
    if not door:
        quad("wall", (x0, 0, z), (x1, 0, z), (x1, H, z), (x0, H, z))
        return
    xc = 0.5 * (x0 + x1)
    a, b = xc - DOOR_W / 2, xc + DOOR_W / 2
    quad("wall", (x0, 0, z), (a, 0, z), (a, H, z), (x0, H, z))
    quad("wall", (b, 0, z), (x1, 0, z), (x1, H, z), (b, H, z))
    quad("wall", (a, DOOR_H, z), (b, DOOR_H, z), (b, H, z), (a, H, z))


for i in range(NX):
    for j in range(NZ):
        x0, z0 = i * W, j * W
        x1, z1 = x0 + W, z0 + W
        quad("floor", (x0, 0, z0), (x1, 0, z0), (x1, 0, z1), (x0, 0, z1))
        if COURTYARDS and (i + j) % 2 == 1:
            continue  # open to the sky
        quad("wall", (x0, H, z0), (x0, H, z1), (x1, H, z1), (x1, H, z0))
        # two ceiling lights per room, wound to face down (-y)
        for k, (lx, lz) in enumerate(((0.3, 0.3), (0.6, 0.65))):
            cx, cz = x0 + lx * W, z0 + lz * W
            s = 0.25
            y = H - 0.01
            quad("light%d" % ((i + 2 * j + k) % 4), (cx - s, y, cz - s), (cx + s, y, cz - s), (cx + s, y, cz + s),
                 (cx - s, y, cz + s))
# walls: outer ones closed, inner ones with doorways
for i in range(NX + 1):
    for j in range(NZ):
        wall_x(i * W, j * W, (j + 1) * W, door=0 < i < NX)
for j in range(NZ + 1):
    for i in range(NX):
        wall_z(j * W, i * W, (i + 1) * W, door=0 < j < NZ)

lights = sum(1 for mat, _ in faces if mat.startswith("light")) * 2
with open(os.path.join(out_dir, NAME + ".obj"), "w") as f:
    f.write("# @file %s.obj: made by src/scripts/make_manylights.py for the tracer project.\n" % NAME)
    if COURTYARDS:
        f.write("# %d x %d rooms joined by doorways, every other one open to the sky, the others with two ceiling lights "
                "(%d emitter triangles).\n" % (NX, NZ, lights))
    else:
        f.write("# %d x %d rooms joined by doorways, two ceiling lights each (%d emitter triangles).\n" % (NX, NZ, lights))
    f.write("mtllib %s.mtl\n" % NAME)
    for v in verts:
        f.write("v %g %g %g\n" % v)
    write_faces(f, faces)
with open(os.path.join(out_dir, NAME + ".mtl"), "w") as f:
    f.write("# @file %s.mtl: materials of the %s scene.\n" % (NAME, "courtyard" if COURTYARDS else "many-light"))
    f.write("newmtl wall\nKd 0.7 0.7 0.7\nnewmtl floor\nKd 0.5 0.45 0.4\n")
    for k, c in enumerate(((12, 11, 9), (9, 11, 12), (12, 9, 8), (10, 12, 9))):
        f.write("newmtl light%d\nKd 0.8 0.8 0.8\nKe %g %g %g\n" % ((k,) + c))
with open(os.path.join(out_dir, NAME + ".camera"), "w") as f:
    f.write("# @file %s.camera: from a corner of the first room, along the row of doorways.\n" % NAME)
    f.write("eye 0.3 1.5 2.0\nlook_at 30 1.2 2.0\nup 0 1 0\nfov 60\n")
