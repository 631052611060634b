#!/usr/bin/env python3
# @file make_terrain.py: writes a big benchmark scene of exactly --triangles triangles: a displaced terrain on a
# grid of uneven spacing, scattered deformed copies of an icosphere (rocks, sizes spread over two orders of
# magnitude), emissive lamps floating above the ground and an emissive panel overhead (MTL Ke), with a camera file.
# Deterministic for a given --seed and --triangles; written as it is generated, so memory stays small at any size.
#   usage: python3 src/scripts/make_terrain.py --triangles 10000000 [--seed 1] [--out DIR] [--name terrain]
#   writes DIR/NAME.obj, DIR/NAME.mtl and DIR/NAME.camera (DIR defaults to .benchscenes/)
import argparse
import math
import os
import random
import sys
import time

SIZE = 1000.0            # the terrain spans [0, SIZE] in x and z
ROCK_SHARE = 0.25        # of the triangles, roughly; the terrain takes what the others leave
LAMP_LEVEL = 1           # icosphere subdivision of a lamp (80 triangles)
MAX_ROCK_LEVEL = 4       # finest rock: 20 * 4^4 = 5120 triangles
CHUNK = 1 << 20          # characters gathered before each write

MTL = """# @file {name}.mtl: materials of the generated terrain scene (src/scripts/make_terrain.py).
newmtl ground
Kd 0.42 0.38 0.32
newmtl rock
Kd 0.30 0.29 0.28
newmtl rock_light
Kd 0.55 0.52 0.47
newmtl rock_glossy
Kd 0.20 0.20 0.22
Ks 0.30 0.30 0.30
Ns 200
newmtl lamp
Kd 0.8 0.8 0.8
Ke 60 40 18
newmtl sky_panel
Kd 0 0 0
Ke 12 12 11
"""
ROCK_MATERIALS = ("rock", "rock_light", "rock_glossy")


class Writer:
    """Buffers lines into large writes and counts vertices, so that faces can name them by absolute index."""

    def __init__(self, f):
        self.f, self.parts, self.size, self.vertices, self.triangles = f, [], 0, 0, 0

    def put(self, text):
        self.parts.append(text)
        self.size += len(text)
        if self.size >= CHUNK:
            self.flush()

    def flush(self):
        self.f.write("".join(self.parts))
        self.parts, self.size = [], 0


class Height:
    """A sum of separable octaves, a * sin(fx x + px) * sin(fz z + pz), the finer ones folded (abs) into ridges."""

    def __init__(self, rng):
        self.octaves = []
        amplitude, wavelength = 0.14 * SIZE, 0.7 * SIZE
        for k in range(8):
            fx = 2 * math.pi / (wavelength * rng.uniform(0.7, 1.3))
            fz = 2 * math.pi / (wavelength * rng.uniform(0.7, 1.3))
            self.octaves.append((amplitude, fx, rng.uniform(0, 2 * math.pi), fz, rng.uniform(0, 2 * math.pi), k >= 3))
            amplitude *= 0.48
            wavelength *= 0.5

    def columns(self, xs):
        """Per octave, its x factor at each x."""
        return [[math.sin(fx * x + px) for x in xs] for (_, fx, px, _, _, _) in self.octaves]

    def row(self, cols, z):
        """Heights of one grid row at depth z, given columns() of the row's x positions."""
        heights = [0.0] * len(cols[0])
        for (a, _, _, fz, pz, ridged), col in zip(self.octaves, cols):
            s = a * math.sin(fz * z + pz)
            if ridged:
                heights = [h + abs(s * c) for h, c in zip(heights, col)]
            else:
                heights = [h + s * c for h, c in zip(heights, col)]
        return heights

    def at(self, x, z):
        return self.row(self.columns([x]), z)[0]


def warped_grid(n, rng):
    """n + 1 positions over [0, SIZE], spaced unevenly (spacing varies 7x between the finest and the coarsest)."""
    phase = rng.uniform(0, 2 * math.pi)
    amp = 0.75 / (2 * math.pi)
    lo, hi = amp * math.sin(phase), 1 + amp * math.sin(2 * math.pi + phase)
    return [SIZE * ((u + amp * math.sin(2 * math.pi * u + phase)) - lo) / (hi - lo)
            for u in (i / n for i in range(n + 1))]


def icosphere(level):
    """Unit icosphere: (vertices, triangles wound outward), 20 * 4^level triangles."""
    t = (1 + math.sqrt(5)) / 2
    verts = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t), (0, -1, -t), (0, 1, -t),
             (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
    verts = [tuple(c / math.sqrt(1 + t * t) for c in v) for v in verts]
    tris = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2),
            (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5), (2, 4, 11),
            (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    for _ in range(level):
        midpoint = {}

        def mid(a, b):
            key = (min(a, b), max(a, b))
            if key not in midpoint:
                m = [(p + q) / 2 for p, q in zip(verts[a], verts[b])]
                r = math.sqrt(sum(c * c for c in m))
                verts.append(tuple(c / r for c in m))
                midpoint[key] = len(verts) - 1
            return midpoint[key]

        tris = [t for a, b, c in tris for t in (lambda ab, bc, ca: ((a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)))(
            mid(a, b), mid(b, c), mid(c, a))]
    return verts, tris


def write_mesh(w, material, verts, tris):
    """One mesh with its own vertices; faces by absolute (1-based) index."""
    base = w.vertices + 1
    w.put("usemtl %s\n" % material)
    w.put("".join("v %.4f %.4f %.4f\n" % v for v in verts))
    w.put("".join("f %d %d %d\n" % (a + base, b + base, c + base) for a, b, c in tris))
    w.vertices += len(verts)
    w.triangles += len(tris)


def blob(rng, unit, centre, radius, bumpiness):
    """A copy of the unit icosphere: randomly rotated, stretched and bumped, placed at centre."""
    verts, _ = unit
    scale = [radius * rng.uniform(0.6, 1.4) for _ in range(3)]
    yaw, tilt = rng.uniform(0, 2 * math.pi), rng.uniform(-0.5, 0.5)
    cy, sy, ct, st = math.cos(yaw), math.sin(yaw), math.cos(tilt), math.sin(tilt)
    waves = [(rng.uniform(1.5, 4.0), [rng.gauss(0, 1) for _ in range(3)], rng.uniform(0, 2 * math.pi))
             for _ in range(3)]
    out = []
    for x, y, z in verts:
        r = 1 + bumpiness * sum(math.sin(f * (d[0] * x + d[1] * y + d[2] * z) + p) for f, d, p in waves) / 3
        x, y, z = x * scale[0] * r, y * scale[1] * r, z * scale[2] * r
        y, z = ct * y - st * z, st * y + ct * z     # tilt about x
        x, z = cy * x + sy * z, -sy * x + cy * z    # then turn about y
        out.append((x + centre[0], y + centre[1], z + centre[2]))
    return out


def write_terrain(w, rng, height, triangles):
    """A grid of nx columns: full rows of 2 nx triangles, then one partial row for the remainder."""
    nx = max(1, round(math.sqrt(triangles / 2)))
    rows, rest = divmod(triangles, 2 * nx)
    nz = rows + (1 if rest else 0)
    xs, zs = warped_grid(nx, rng), warped_grid(max(nz, 1), rng)
    cols = height.columns(xs)
    w.put("usemtl ground\n")
    for z in zs[:nz + 1]:
        w.put("".join("v %.4f %.4f %.4f\n" % (x, y, z) for x, y in zip(xs, height.row(cols, z))))
    base, stride = w.vertices + 1, nx + 1
    w.vertices += (nz + 1) * stride
    for j in range(nz):
        a = base + j * stride  # vertex (0, j); (i, j + 1) is a + stride + i
        b = a + stride
        count = 2 * nx if j < rows else rest
        # Cell i: (i,j) (i,j+1) (i+1,j) and (i+1,j) (i,j+1) (i+1,j+1), both facing +y.
        faces = ["f %d %d %d\nf %d %d %d\n" % (a + i, b + i, a + i + 1, a + i + 1, b + i, b + i + 1)
                 for i in range(count // 2)]
        if count % 2:
            i = count // 2
            faces.append("f %d %d %d\n" % (a + i, b + i, a + i + 1))
        w.put("".join(faces))
    w.triangles += triangles
    return nx, nz


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--triangles", type=int, default=1000000, help="exact triangle count (at least 1000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                      ".benchscenes"))
    parser.add_argument("--name", default="terrain")
    args = parser.parse_args()
    if args.triangles < 1000:
        parser.error("--triangles must be at least 1000")
    start = time.time()
    rng = random.Random(args.seed)
    height = Height(rng)
    units = [icosphere(level) for level in range(MAX_ROCK_LEVEL + 1)]

    # The budget: emitters first, then rocks up to their share, and the terrain takes the rest exactly.
    lamps = max(2, min(256, args.triangles // 100000))
    emitter_tris = 2 + lamps * len(units[LAMP_LEVEL][1])
    rock_budget = int(ROCK_SHARE * args.triangles)
    terrain_tris = args.triangles - emitter_tris - rock_budget  # rocks give back what they leave unused below

    os.makedirs(args.out, exist_ok=True)
    obj = os.path.join(args.out, args.name + ".obj")
    with open(obj, "w", buffering=CHUNK) as f:
        w = Writer(f)
        w.put("# @file %s.obj: made by src/scripts/make_terrain.py --triangles %d --seed %d (tracer project).\n"
              % (args.name, args.triangles, args.seed))
        w.put("mtllib %s.mtl\n" % args.name)
        rocks, rock_tris = 0, 0
        w.put("o rocks\n")
        while rock_budget - rock_tris >= len(units[0][1]):
            level = rng.randint(0, MAX_ROCK_LEVEL)
            while len(units[level][1]) > rock_budget - rock_tris:
                level -= 1
            radius = math.exp(rng.uniform(math.log(0.3), math.log(30.0)))  # 0.3 to 30: edges from 0.02 to 30
            x, z = rng.uniform(0, SIZE), rng.uniform(0, SIZE)
            centre = (x, height.at(x, z) + radius * rng.uniform(-0.2, 0.5), z)
            write_mesh(w, rng.choice(ROCK_MATERIALS), blob(rng, units[level], centre, radius, 0.25), units[level][1])
            rocks += 1
            rock_tris += len(units[level][1])
        terrain_tris += rock_budget - rock_tris
        w.put("o lamps\n")
        for _ in range(lamps):
            x, z = rng.uniform(0.1 * SIZE, 0.9 * SIZE), rng.uniform(0.1 * SIZE, 0.9 * SIZE)
            radius = rng.uniform(1.5, 4.0)
            centre = (x, height.at(x, z) + rng.uniform(4, 25) + radius, z)
            write_mesh(w, "lamp", blob(rng, units[LAMP_LEVEL], centre, radius, 0.0), units[LAMP_LEVEL][1])
        w.put("o sky_panel\n")  # a square facing down (-y), over the middle of the terrain
        lo, hi, y = 0.3 * SIZE, 0.7 * SIZE, 0.8 * SIZE
        write_mesh(w, "sky_panel", [(lo, y, lo), (hi, y, lo), (hi, y, hi), (lo, y, hi)], [(0, 1, 2), (0, 2, 3)])
        w.put("o terrain\n")
        nx, nz = write_terrain(w, rng, height, terrain_tris)
        w.flush()
    assert w.triangles == args.triangles, (w.triangles, args.triangles)
    with open(os.path.join(args.out, args.name + ".mtl"), "w") as f:
        f.write(MTL.format(name=args.name))
    with open(os.path.join(args.out, args.name + ".camera"), "w") as f:
        f.write("# @file %s.camera: a view over the generated terrain from one corner\n" % args.name)
        f.write("eye %g %g %g\nlook_at %g %g %g\nup 0 1 0\nfov 50\n"
                % (-0.05 * SIZE, 0.45 * SIZE, 1.05 * SIZE, 0.55 * SIZE, 0.0, 0.45 * SIZE))
    print("wrote %s: %d triangles (terrain %d on a %dx%d grid, %d rocks %d, %d lamps and a panel %d emitter), "
          "%d vertices, %.0f MB in %.1fs" % (obj, w.triangles, terrain_tris, nx, nz, rocks, rock_tris, lamps,
                                           emitter_tris, w.vertices, os.path.getsize(obj) / 1e6, time.time() - start))


if __name__ == "__main__":
    sys.exit(main())
