#!/usr/bin/env python3
# @file make_skyhall.py: writes scenes/skyhall.{obj,mtl,camera}: a closed hall (40 x 15 x 20 units inside) with
# walls, floor and roof 1 unit thick, window openings through the long walls and skylights through the roof, two
# rows of pillars, diffuse materials and no emitters: an interior lit only by the sky (--env or --env-map) through
# its openings, about 3% of the inside area. Every slab is a closed box whose faces leave real gaps at the openings,
# lined by reveal quads, and the slabs overlap at the corners, so light enters only through the openings. Each opening
# has an environment portal: a quad in the plane of the slab's outer face covering the hole, written as an object
# named portal_... (the tracer samples the sky through it and renders it not at all).
# Deterministic: the same files on every run.
#   usage: python3 src/scripts/make_skyhall.py [output-folder]
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from obj_writer import write_faces  # noqa: E402

LX, LY, LZ = 40.0, 15.0, 20.0  # inside: x along the hall, y up, z across
T = 1.0                        # wall, floor and roof thickness
WIN_W, WIN_Y0, WIN_Y1 = 2.0, 6.0, 10.0
WIN_X = [5.0, 11.0, 17.0, 23.0, 29.0, 35.0]  # window centres along x, in both long walls
SKY = [(10.0, 10.0), (20.0, 10.0), (30.0, 10.0)]  # skylight centres (x, z) in the roof
SKY_W = 2.0
PILLAR_X = [8.0, 16.0, 24.0, 32.0]
PILLAR_Z = [6.0, 14.0]
PILLAR_W = 1.0

verts, faces = [], []  # faces: (material, [1-based vertex indices])
portals = []  # (object name, [1-based vertex indices]): one quad per opening


def point(axis, c, u, v):
    """The point with coordinate c on `axis` and (u, v) on the two others, in cyclic order (axis+1, axis+2)."""
    p = [0.0, 0.0, 0.0]
    p[axis], p[(axis + 1) % 3], p[(axis + 2) % 3] = c, u, v
    return tuple(p)


def rect(mat, axis, c, u0, u1, v0, v1, sign):
    """An axis-aligned rectangle in the plane `axis` = c, facing `sign` along the axis (counter-clockwise seen from
    that side: (u, v) cyclic after axis gives the normal +axis)."""
    corners = [(u0, v0), (u1, v0), (u1, v1), (u0, v1)]
    if sign < 0:
        corners.reverse()
    base = len(verts) + 1
    verts.extend(point(axis, c, u, v) for u, v in corners)
    faces.append((mat, [base, base + 1, base + 2, base + 3]))


def holed_rect(mat, axis, c, u0, u1, v0, v1, sign, holes):
    """rect() with rectangular holes (u0, u1, v0, v1): the face split on the holes' edges, the cells inside a hole
    left out."""
    us = sorted({u0, u1, *[h[0] for h in holes], *[h[1] for h in holes]})
    vs = sorted({v0, v1, *[h[2] for h in holes], *[h[3] for h in holes]})
    for a, b in zip(us, us[1:]):
        for e, f in zip(vs, vs[1:]):
            cu, cv = 0.5 * (a + b), 0.5 * (e + f)
            if not any(h[0] < cu < h[1] and h[2] < cv < h[3] for h in holes):
                rect(mat, axis, c, a, b, e, f, sign)


def slab(mat, lo, hi, axis, holes=()):
    """A closed box from lo to hi, pierced along `axis` by rectangular holes given as (u0, u1, v0, v1) on the two
    other axes (cyclic order); each hole is lined by four reveal quads facing into it."""
    ua, va = (axis + 1) % 3, (axis + 2) % 3
    holes = list(holes)
    for c, sign in ((lo[axis], -1), (hi[axis], 1)):
        holed_rect(mat, axis, c, lo[ua], hi[ua], lo[va], hi[va], sign, holes)
    for side in (ua, va):  # the box's four other faces
        s1, s2 = (side + 1) % 3, (side + 2) % 3
        for c, sign in ((lo[side], -1), (hi[side], 1)):
            rect(mat, side, c, lo[s1], hi[s1], lo[s2], hi[s2], sign)
    for u0, u1, v0, v1 in holes:  # reveals: the hole's sides, facing its inside
        b = {ua: (u0, u1), va: (v0, v1), axis: (lo[axis], hi[axis])}
        for side in (ua, va):
            s1, s2 = (side + 1) % 3, (side + 2) % 3
            rect(mat, side, b[side][0], *b[s1], *b[s2], 1)
            rect(mat, side, b[side][1], *b[s1], *b[s2], -1)


def portal(name, axis, c, u0, u1, v0, v1):
    """A portal quad in the plane `axis` = c over the opening (u0, u1) x (v0, v1), facing -axis (either side works)."""
    base = len(verts) + 1
    verts.extend(point(axis, c, u, v) for u, v in reversed([(u0, v0), (u1, v0), (u1, v1), (u0, v1)]))
    portals.append((name, [base, base + 1, base + 2, base + 3]))


def box(mat, lo, hi):
    slab(mat, lo, hi, 0)


def build():
    # Long walls (planes z = 0 and z = LZ, pierced along z; the other axes in cyclic order are x then y).
    windows = [(x - WIN_W / 2, x + WIN_W / 2, WIN_Y0, WIN_Y1) for x in WIN_X]
    slab("wall", (-T, -T, -T), (LX + T, LY + T, 0.0), 2, windows)
    slab("wall", (-T, -T, LZ), (LX + T, LY + T, LZ + T), 2, windows)
    # End walls (x = 0 and x = LX), between the long walls.
    slab("wall", (-T, -T, 0.0), (0.0, LY + T, LZ), 0)
    slab("wall", (LX, -T, 0.0), (LX + T, LY + T, LZ), 0)
    # Floor and roof (pierced along y; the other axes in cyclic order are z then x).
    slab("floor", (0.0, -T, 0.0), (LX, 0.0, LZ), 1)
    skylights = [(z - SKY_W / 2, z + SKY_W / 2, x - SKY_W / 2, x + SKY_W / 2) for x, z in SKY]
    slab("wall", (0.0, LY, 0.0), (LX, LY + T, LZ), 1, skylights)
    # The portals, on the slabs' outer faces (z = -T, z = LZ + T, y = LY + T): a ray from inside that reaches the sky
    # through an opening crosses its portal there.
    for wall, z in (("south", -T), ("north", LZ + T)):
        for i, (u0, u1, v0, v1) in enumerate(windows):
            portal("portal_%s_%d" % (wall, i), 2, z, u0, u1, v0, v1)
    for i, (u0, u1, v0, v1) in enumerate(skylights):
        portal("portal_skylight_%d" % i, 1, LY + T, u0, u1, v0, v1)
    h = PILLAR_W / 2
    for x in PILLAR_X:
        for z in PILLAR_Z:
            box("pillar", (x - h, 0.0, z - h), (x + h, LY, z + h))


def fmt(x):
    return ("%.4f" % x).rstrip("0").rstrip(".")


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "scenes")
    build()
    os.makedirs(out_dir, exist_ok=True)
    inside = 2 * (LX * LY + LZ * LY + LX * LZ)
    opening = 2 * len(WIN_X) * WIN_W * (WIN_Y1 - WIN_Y0) + len(SKY) * SKY_W * SKY_W
    with open(os.path.join(out_dir, "skyhall.mtl"), "w") as f:
        f.write("# skyhall materials: diffuse only, no emitters (light comes from the environment)\n")
        for name, kd in (("wall", "0.6 0.6 0.58"), ("floor", "0.45 0.42 0.38"), ("pillar", "0.7 0.66 0.6")):
            f.write("newmtl %s\nKd %s\nKs 0 0 0\n\n" % (name, kd))
    with open(os.path.join(out_dir, "skyhall.obj"), "w") as f:
        f.write("# skyhall: generated by make_skyhall.py; %d quads, openings %.1f%% of the inside area, %d portal quads\n"
                % (len(faces), 100.0 * opening / inside, len(portals)))
        f.write("mtllib skyhall.mtl\n")
        f.write("o hall\n")
        for v in verts:
            f.write("v %s %s %s\n" % tuple(fmt(c) for c in v))
        write_faces(f, faces)
        for name, idx in portals:
            f.write("o %s\nf %s\n" % (name, " ".join(str(i) for i in idx)))
    with open(os.path.join(out_dir, "skyhall.camera"), "w") as f:
        f.write("# inside the hall near one end, looking along it\n")
        f.write("eye 2.5 4 10\nlook_at 38 6 10\nup 0 1 0\nfov 60\n")
    print("wrote %s/skyhall.{obj,mtl,camera}: %d quads, openings %.1f%% of the inside area, %d portal quads"
          % (out_dir, len(faces), 100.0 * opening / inside, len(portals)))


if __name__ == "__main__":
    main()
