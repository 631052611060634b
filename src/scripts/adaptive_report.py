#!/usr/bin/env python3
"""Samples that adaptive sampling spends against a uniform render of equal error (--adaptive).

For one scene: a reference (uniform, --ref-spp, its own seed), adaptive renders at each threshold, and uniform renders
at 16, 32, ... up to --spp (seed 1, as the adaptive ones). The error of an image is its relative mean squared error
against the reference, mean over pixels of (a - r)^2 / (r^2 + 0.01) on the channels' average (the metric of Rousselle,
Knaus and Zwicker 2011 and most adaptive-sampling papers); the plain MSE is printed too. The uniform spp of equal error
is interpolated on a log-log line between the two uniform renders around it (MC error falls as 1 / spp). Prints one
Markdown row per threshold; --map PNG writes the sample map of the first threshold as a grey PNG (black = the
minimum, white = --spp). Pure Python (no numpy): run it where the tracer runs.

  src/scripts/adaptive_report.py --tracer build/tracer --scene scenes/cornell.obj --spp 1024 --adaptive 0.05,0.02 \\
      --ref-spp 16384 --out /tmp/adaptive --map cornell_samples.png [-- extra tracer flags]
"""
import argparse
import array
import math
import os
import re
import struct
import subprocess
import sys
import zlib


def read_pfm(path):
    with open(path, "rb") as f:
        kind = f.readline().strip()
        w, h = map(int, f.readline().split())
        scale = float(f.readline())
        n = 3 if kind == b"PF" else 1
        a = array.array("f")
        a.frombytes(f.read(4 * w * h * n))
    if (scale < 0) != (sys.byteorder == "little"):
        a.byteswap()
    return w, h, n, a


def luminance(path):
    w, h, n, a = read_pfm(path)
    if n == 1:
        return w, h, list(a)
    return w, h, [(a[i] + a[i + 1] + a[i + 2]) / 3.0 for i in range(0, len(a), 3)]


def errors(image, ref):
    rel = sum((x - r) ** 2 / (r * r + 0.01) for x, r in zip(image, ref)) / len(ref)
    mse = sum((x - r) ** 2 for x, r in zip(image, ref)) / len(ref)
    return rel, mse


def equal_error_spp(points, target):
    """points: [(spp, error)] ascending in spp; the spp at which the error would be `target` (log-log)."""
    for (s0, e0), (s1, e1) in zip(points, points[1:]):
        if e1 <= target <= e0 and e0 > e1:
            t = (math.log(e0) - math.log(target)) / (math.log(e0) - math.log(e1))
            return math.exp(math.log(s0) + t * (math.log(s1) - math.log(s0)))
    # Outside the measured range: extrapolate from the nearest end at error ~ 1 / spp.
    s, e = points[0] if target > points[0][1] else points[-1]
    return s * e / target


def write_grey_png(path, w, h, values, lo, hi):
    """values in PFM order (the bottom row first), written top row first."""
    rows = bytearray()
    for y in reversed(range(h)):
        rows.append(0)
        for x in range(w):
            v = (values[y * w + x] - lo) / max(hi - lo, 1e-9)
            rows.append(max(0, min(255, int(round(255 * v)))))

    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(bytes(rows), 9)) + chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(png)


def render(args, extra, out, spp, seed, more=()):
    cmd = [args.tracer, args.scene, "--spp", str(spp), "--seed", str(seed), "-o", out] + list(more) + extra
    if args.width:
        cmd += ["--width", str(args.width), "--height", str(args.height)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit("tracer failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stdout))
    seconds = re.search(r"spp in ([0-9.]+)s", p.stdout)
    return p.stdout, float(seconds.group(1)) if seconds else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tracer", required=True)
    ap.add_argument("--scene", required=True)
    ap.add_argument("--name", help="the scene's name in the table (default: the file's)")
    ap.add_argument("--width", type=int, default=0)
    ap.add_argument("--height", type=int, default=0)
    ap.add_argument("--spp", type=int, default=1024, help="adaptive renders' --spp, and the largest uniform one")
    ap.add_argument("--adaptive", default="0.05", help="comma-separated thresholds")
    ap.add_argument("--ref-spp", type=int, default=16384)
    ap.add_argument("--out", required=True, help="folder for the images")
    ap.add_argument("--map", help="write the first threshold's sample map to this PNG")
    args, extra = ap.parse_known_args()
    extra = [e for e in extra if e != "--"]
    os.makedirs(args.out, exist_ok=True)
    name = args.name or os.path.splitext(os.path.basename(args.scene))[0]

    ref_path = os.path.join(args.out, "ref.pfm")
    render(args, extra, ref_path, args.ref_spp, 7919)
    _, _, ref = luminance(ref_path)

    uniform = []
    spp = 16
    while spp <= args.spp:
        path = os.path.join(args.out, "uniform_%d.pfm" % spp)
        _, seconds = render(args, extra, path, spp, 1)
        uniform.append((spp, errors(luminance(path)[2], ref), seconds))
        spp *= 2
    for s, (rel, mse), seconds in uniform:
        print("uniform %5d spp: relMSE %.4g, MSE %.4g, %.3f s" % (s, rel, mse, seconds), file=sys.stderr)

    print("| scene | threshold | adaptive spp (mean, min-max) | relMSE | uniform spp at equal relMSE | samples saved "
          "| uniform spp at equal MSE | render s (adaptive / uniform %d spp) |" % args.spp)
    print("|---|---|---|---|---|---|---|---|")
    for k, t in enumerate(args.adaptive.split(",")):
        path = os.path.join(args.out, "adaptive_%s.pfm" % t)
        log, seconds = render(args, extra, path, args.spp, 1, ["--adaptive", t, "--aov", "samples"])
        w, h, counts = luminance(os.path.join(args.out, "adaptive_%s.samples.pfm" % t))
        mean = sum(counts) / len(counts)
        rel, mse = errors(luminance(path)[2], ref)
        equal_rel = equal_error_spp([(s, e[0]) for s, e, _ in uniform], rel)
        equal_mse = equal_error_spp([(s, e[1]) for s, e, _ in uniform], mse)
        print("| %s | %s | %.1f (%d-%d) | %.4g | %.0f | %.2fx | %.0f | %.2f / %.2f |" %
              (name, t, mean, min(counts), max(counts), rel, equal_rel, equal_rel / mean, equal_mse, seconds,
               uniform[-1][2]))
        if k == 0 and args.map:
            write_grey_png(args.map, w, h, counts, min(counts), args.spp)


if __name__ == "__main__":
    main()
