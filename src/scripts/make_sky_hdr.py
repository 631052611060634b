#!/usr/bin/env python3
# @file make_sky_hdr.py: writes a procedural lat-long sky with a small bright sun as a Radiance .hdr (flat RGBE
# scanlines, which stb_image reads), for --env-map. The map follows the tracer's convention: row 0 is the zenith
# (+y), the centre column looks along -z and u = 0.75 along +x. No downloaded data: a blue gradient over the upper
# half (brighter at the horizon), a grey-brown ground, and a sun disk of --sun-size degrees at --sun-elevation
# degrees above the horizon and --sun-azimuth degrees from -z toward +x, --sun-radiance times the zenith's radiance.
#   usage: python3 src/scripts/make_sky_hdr.py [--width 512] [--sun-elevation 35] [--sun-azimuth 135]
#          [--sun-size 2] [--sun-radiance 20000] output/sky.hdr
import argparse
import math
import struct


def rgbe(r, g, b):
    # Ward's shared-exponent encoding (Graphics Gems II, 1991): the largest component's exponent for all three.
    m = max(r, g, b)
    if m < 1e-32:
        return b"\0\0\0\0"
    mant, exp = math.frexp(m)  # m = mant * 2^exp, mant in [0.5, 1)
    scale = mant * 256.0 / m
    return struct.pack("BBBB", int(r * scale), int(g * scale), int(b * scale), exp + 128)


def sky(theta, phi, args):
    # Direction of (theta, phi) in the tracer's convention, and the sun's.
    d = (math.sin(theta) * math.sin(phi), math.cos(theta), -math.sin(theta) * math.cos(phi))
    el, az = math.radians(args.sun_elevation), math.radians(args.sun_azimuth)
    s = (math.cos(el) * math.sin(az), math.sin(el), -math.cos(el) * math.cos(az))
    if sum(a * b for a, b in zip(d, s)) > math.cos(math.radians(args.sun_size / 2)):
        return (args.sun_radiance, args.sun_radiance * 0.93, args.sun_radiance * 0.82)
    if d[1] < 0:  # ground: dim, warm
        return (0.18, 0.15, 0.12)
    t = 1.0 - d[1]  # 0 at the zenith, 1 at the horizon
    return (0.25 + 0.55 * t * t, 0.45 + 0.45 * t * t, 0.95 + 0.15 * t)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("output")
    ap.add_argument("--width", type=int, default=512)
    ap.add_argument("--sun-elevation", type=float, default=35.0)
    ap.add_argument("--sun-azimuth", type=float, default=135.0)
    ap.add_argument("--sun-size", type=float, default=2.0)
    ap.add_argument("--sun-radiance", type=float, default=20000.0)
    args = ap.parse_args()
    w, h = args.width, args.width // 2
    with open(args.output, "wb") as f:
        f.write(b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n" + ("-Y %d +X %d\n" % (h, w)).encode())
        for y in range(h):
            theta = math.pi * (y + 0.5) / h
            row = bytearray()
            for x in range(w):
                row += rgbe(*sky(theta, 2 * math.pi * ((x + 0.5) / w - 0.5), args))
            f.write(row)


if __name__ == "__main__":
    main()
