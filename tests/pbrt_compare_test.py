#!/usr/bin/env python3
# @file pbrt_compare_test.py: tests of src/scripts/pbrt-compare (CTest PbrtCompareImages and PbrtCompareRun).
#
#   python3 tests/pbrt_compare_test.py images            # statistics on synthetic PFMs of known differences
#   python3 tests/pbrt_compare_test.py run --tracer BIN  # both renders, with a stand-in for pbrt that runs BIN
#
# `images`: two images whose differences are set by construction (a channel gain, a brighter 48x16 strip at the
# top, a black 32x16 corner in the reference); every statistic is checked against its value computed here by hand
# to 1e-6 (float32 pixels, double sums); the worst region must be the strip's (at the top: a reader that forgot
# PFM's bottom-up rows finds it at the bottom), not the black corner's (which an eps-less relative difference would
# make the worst). `run`: the stand-in renders with the tracer at the file's settings (no flags but --spp),
# so the images are byte-identical, and every difference exactly 0, only if pbrt-compare passed the tracer the
# file's resolution and depth, or, with --width/--height/--max-depth, fed pbrt the rewritten file. Exits 77
# (CTest: skipped) when numpy is missing.
import json
import os
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "src", "scripts", "pbrt-compare")
sys.path.insert(0, os.path.join(ROOT, "src", "scripts", "lib"))  # images.py, to read the renders
FAILED = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        FAILED.append(what)


def close(a, b, what, tol=1e-6):
    check(a is not None and abs(a - b) <= tol * max(1.0, abs(b)), f"{what}: {a!r} against {b!r}")


def write_pfm(path, pixels, w, h, big_endian=False):
    """pixels[y][x] = (r, g, b), row 0 at the top; written bottom row first, as PFM stores it."""
    fmt = ">" if big_endian else "<"
    with open(path, "wb") as f:
        f.write(b"PF\n%d %d\n%s\n" % (w, h, b"1.0" if big_endian else b"-1.0"))
        for y in reversed(range(h)):
            f.write(b"".join(struct.pack(fmt + "3f", *pixels[y][x]) for x in range(w)))


def pbrt_compare(*args, cwd=None):
    p = subprocess.run([sys.executable, SCRIPT] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def lum(c):
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]


W, H = 128, 96
BASE, GAIN, DARK = (0.5, 0.25, 0.125), (1.02, 1.0, 0.97), 0.001
STRIP = (80, 0, 48, 16)  # x, y, w, h: the last three blocks of block row 0, the test 1.5x the reference
CORNER = (0, 80, 32, 16)  # two blocks of block row 5: black in the reference, DARK in the test


def inside(x, y, r):
    return r[0] <= x < r[0] + r[2] and r[1] <= y < r[1] + r[3]


def synthetic():
    ref, test = [], []
    for y in range(H):
        ref.append([]), test.append([])
        for x in range(W):
            if inside(x, y, CORNER):
                ref[y].append((0.0, 0.0, 0.0)), test[y].append((DARK,) * 3)
            elif inside(x, y, STRIP):
                ref[y].append(BASE), test[y].append(tuple(1.5 * c for c in BASE))
            else:
                ref[y].append(BASE), test[y].append(tuple(c * g for c, g in zip(BASE, GAIN)))
    return test, ref


def expected():
    """The statistics by hand: pixel counts of each part times its (float32) value."""
    f32 = lambda v: struct.unpack("f", struct.pack("f", v))[0]  # noqa: E731
    n = W * H
    n_corner, n_strip = CORNER[2] * CORNER[3], STRIP[2] * STRIP[3]
    n_rest = n - n_corner - n_strip
    ref_mean = [f32(c) * (n - n_corner) / n for c in BASE]
    test_mean = [(f32(c * g) * n_rest + f32(1.5 * c) * n_strip + f32(DARK) * n_corner) / n
                 for c, g in zip(BASE, GAIN)]
    eps = 0.01 * lum(ref_mean)
    rest = abs(lum([f32(c * g) for c, g in zip(BASE, GAIN)]) - lum([f32(c) for c in BASE])) / lum(
        [f32(c) for c in BASE])
    black = lum([f32(DARK)] * 3) / eps
    # 48 blocks: 43 of `rest`, 2 of `black`, 3 of 0.5. numpy's 95th percentile lies at rank 0.95 x 47 = 44.65.
    return {"lum": lum(test_mean) / lum(ref_mean) - 1, "rgb": [t / r - 1 for t, r in zip(test_mean, ref_mean)],
            "eps": eps, "median": rest, "p95": black + 0.65 * (0.5 - black)}


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


def test_images(tmp):
    test, ref = synthetic()
    write_pfm(os.path.join(tmp, "t.pfm"), test, W, H)
    write_pfm(os.path.join(tmp, "r.pfm"), ref, W, H)
    write_pfm(os.path.join(tmp, "r-be.pfm"), ref, W, H, big_endian=True)
    out = os.path.join(tmp, "out")
    rc, stdout, stderr = pbrt_compare("images", os.path.join(tmp, "t.pfm"), os.path.join(tmp, "r-be.pfm"),
                                      "--out", out, "--name", "synthetic")
    check(rc == 0, "images exits 0" + ("" if rc == 0 else f" (got {rc}: {stderr.strip()})"))
    if rc != 0:
        return
    c = json.load(open(os.path.join(out, "synthetic.json")))["scenes"][0]["compare"]
    e = expected()
    close(c["luminance_diff"], e["lum"], "mean luminance difference")
    for i, ch in enumerate("RGB"):
        close(c["rgb_diff"][i], e["rgb"][i], f"{ch} mean difference")
    close(c["block_eps"], e["eps"], "block eps: 1% of the reference's mean luminance")
    close(c["block_median"], e["median"], "block median")
    close(c["block_p95"], e["p95"], "block 95th percentile (between the black corner's blocks and the strip's)")
    check(c["blocks"] == 48, f"48 blocks of 16x16 (got {c['blocks']})")
    # the one 4x4-block window that holds the whole strip
    check(c["worst_region"] == [64, 0, 64, 64], f"the worst 64x64 region {c['worst_region']} is the strip's "
          "[64, 0, 64, 64]")
    check(f"| synthetic | {W}x{H} |" in stdout and f"{100 * e['lum']:+.2f}" in stdout,
          "the table's row names the image, its size and the luminance difference")
    check(png_size(os.path.join(out, "synthetic.crop.png")) == (2 * (3 * 64 + 4), 128),
          "the crop PNG is tracer | pbrt | difference, 64x64 each, 2x")
    rc, stdout, stderr = pbrt_compare("images", os.path.join(tmp, "r.pfm"), os.path.join(tmp, "r-be.pfm"),
                                      "--out", out, "--name", "same")
    c = json.load(open(os.path.join(out, "same.json")))["scenes"][0]["compare"] if rc == 0 else None
    check(c is not None and c["luminance_diff"] == 0 and c["rgb_diff"] == [0, 0, 0] and c["block_p95"] == 0,
          "an image against itself stored big-endian: every difference 0")
    write_pfm(os.path.join(tmp, "small.pfm"), [row[:64] for row in ref[:48]], 64, 48)
    rc, _, stderr = pbrt_compare("images", os.path.join(tmp, "t.pfm"), os.path.join(tmp, "small.pfm"), "--out", out)
    check(rc != 0 and "differ in size: 128x96 against 64x48" in stderr, "images of other sizes: an error")
    with open(os.path.join(tmp, "bad.pfm"), "wb") as f:
        f.write(b"P6\n1 1\n255\n\0\0\0")
    rc, _, stderr = pbrt_compare("images", os.path.join(tmp, "t.pfm"), os.path.join(tmp, "bad.pfm"), "--out", out)
    check(rc != 0 and "bad.pfm: not a PFM file" in stderr, "a file that is not a PFM: an error naming it")
    write_pfm(os.path.join(tmp, "black.pfm"), [[(0.0, 0.0, 0.0)] * W] * H, W, H)
    rc, _, stderr = pbrt_compare("images", os.path.join(tmp, "t.pfm"), os.path.join(tmp, "black.pfm"), "--out", out)
    check(rc != 0 and "reference image is black" in stderr, "a black reference: an error")


FAKE_PBRT = r'''#!/usr/bin/env python3
# stands in for pbrt --gpu: the tracer on the CPU at the file's settings (only --spp given), then pbrt's log line
import os, subprocess, sys, tempfile
args, opts, files, i = sys.argv[1:], {}, [], 0
while i < len(args):
    if args[i] in ("--spp", "--outfile", "--log-level"):
        opts[args[i]] = args[i + 1]
        i += 2
    elif args[i].startswith("-"):
        i += 1
    else:
        files.append(args[i])
        i += 1
if os.environ.get("FAKE_PBRT_FAIL"):
    sys.exit("Error: scene.pbrt:3: the stand-in failed on purpose")
text = None
if not files:  # the scene's text on stdin, read from the scene's folder as pbrt does
    fd, text = tempfile.mkstemp(suffix=".pbrt", dir=".")
    os.write(fd, sys.stdin.buffer.read())
    os.close(fd)
    files = [text]
p = subprocess.run([os.environ["FAKE_PBRT_TRACER"], files[0], "--backend", "cpu", "--spp", opts["--spp"], "-o",
                    opts["--outfile"], "-q"])
if text:
    os.remove(text)
print("[ 1 wavefront/wavefront.cpp:45 ] Total rendering time: 0.250 s", file=sys.stderr)
sys.exit(p.returncode)
'''

SCENE = '''LookAt 0 2 6  0 0.5 0  0 1 0
Camera "perspective" "float fov" [40]
Film "rgb" "integer xresolution" [48] "integer yresolution" [32]  # a comment "with quotes"
  "string filename" "room.exr"
Sampler "independent" "integer pixelsamples" [4]
Integrator "path" "integer maxdepth" [ 2 ]
WorldBegin
AttributeBegin
  AreaLightSource "diffuse" "rgb L" [4 4 4]
  Shape "trianglemesh" "point3 P" [-1 3 -1  1 3 -1  1 3 1  -1 3 1] "integer indices" [0 1 2 0 2 3]
AttributeEnd
Include "geometry/floor.pbrt"
'''
FLOOR = '''Material "diffuse" "rgb reflectance" [0.5 0.4 0.3]
Shape "trianglemesh" "point3 P" [-5 0 -5  5 0 -5  5 0 5  -5 0 5] "integer indices" [0 1 2 0 2 3]
Shape "sphere" "float radius" 0.7
'''


def failed(p):
    return "" if p.returncode == 0 else f" (got {p.returncode}: {p.stderr.strip()[-800:]})"


def run_case(tmp, pbrt, tracer, name, *flags, env=None):
    out = os.path.join(tmp, name)
    p = subprocess.run([sys.executable, SCRIPT, "--pbrt", pbrt, "--tracer", tracer, "--tracer-backend", "cpu",
                        "--out", out] + list(flags) + [os.path.join(tmp, "scene", "room.pbrt")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    doc = json.load(open(os.path.join(out, "pbrt-compare.json"))) if p.returncode == 0 else None
    return p, doc["scenes"][0] if doc else None


def test_run_grey(tmp, pbrt, tracer, env):
    """--grey: the scene, then its grey copy (room.grey.pbrt and its Include's), both rendered; the grey render
    is grey in every pixel (a colour left over would make its channels differ), the colour one is not."""
    import numpy as np
    import images
    out = os.path.join(tmp, "grey")
    p = subprocess.run([sys.executable, SCRIPT, "--pbrt", pbrt, "--tracer", tracer, "--tracer-backend", "cpu",
                        "--out", out, "--no-warmup", "--grey", "--pbrt-mode", "cpu",
                        os.path.join(tmp, "scene", "room.pbrt")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, env=env)
    check(p.returncode == 0, "run with --grey exits 0" + failed(p))
    if p.returncode != 0:
        return
    rows = json.load(open(os.path.join(out, "pbrt-compare.json")))["scenes"]
    check([r["name"] for r in rows] == ["room", "room-grey"] and
          rows[1]["scene"] == os.path.join(tmp, "scene", "room.grey.pbrt") and
          os.path.isfile(os.path.join(tmp, "scene", "geometry", "floor.grey.pbrt")),
          "two rows, room and room-grey, the second of room.grey.pbrt (and its Include's grey copy)")
    check(rows[1]["pbrt"]["command"][1] == "--log-level", "--pbrt-mode cpu: pbrt without --gpu")
    img = {n: images.read_pfm(os.path.join(out, n + ".tracer.pfm")) for n in ("room", "room-grey")}
    spread = {n: float(np.abs(i - i.mean(axis=2, keepdims=True)).max()) for n, i in img.items()}
    check(spread["room-grey"] == 0.0 and spread["room"] > 0.01 and img["room-grey"].mean() > 0,
          f"the grey render has R = G = B in every pixel, the colour one not (largest spread {spread})")


def test_run(tmp, tracer):
    os.makedirs(os.path.join(tmp, "scene", "geometry"))
    open(os.path.join(tmp, "scene", "room.pbrt"), "w").write(SCENE)
    open(os.path.join(tmp, "scene", "geometry", "floor.pbrt"), "w").write(FLOOR)
    pbrt = os.path.join(tmp, "fake-pbrt")
    open(pbrt, "w").write(FAKE_PBRT)
    os.chmod(pbrt, 0o755)
    env = dict(os.environ, FAKE_PBRT_TRACER=tracer)
    p, r = run_case(tmp, pbrt, tracer, "file", "--repeat", "2", env=env)
    check(p.returncode == 0, "run at the file's settings exits 0" + failed(p))
    if r:
        check((r["width"], r["height"], r["spp"], r["max_depth"]) == (48, 32, 4, 2),
              f"the file's Film, Sampler and Integrator settings: {r['width']}x{r['height']}, {r['spp']} spp, "
              f"depth {r['max_depth']}")
        c = r["compare"]
        check(c["luminance_diff"] == 0 and c["block_p95"] == 0 and c["mean_luminance"]["reference"] > 0,
              "the tracer at the settings passed equals the tracer at the file's: every difference 0, not black")
        check(len(r["pbrt"]["runs"]) == 2 and r["pbrt"]["render_s"] == 0.25 and r["tracer"]["render_s"] >= 0 and
              r["tracer"]["total_s"] > 0 and r["tracer"]["backend"].startswith("cpu"),
              "two runs each; pbrt's render time from its log line, the tracer's from its summary")
        check("| room | 48x32 | 4 | 2 | 0.250 / " in p.stdout, "the table's row: scene, size, spp, depth, pbrt times")
    p, r = run_case(tmp, pbrt, tracer, "override", "--width", "40", "--height", "24", "--max-depth", "1", "--spp",
                    "2", "--no-warmup", env=env)
    check(p.returncode == 0, "run with --width/--height/--max-depth exits 0" + failed(p))
    if r:
        check((r["width"], r["height"], r["spp"], r["max_depth"]) == (40, 24, 2, 1) and
              r["pbrt"]["reads_stdin_in"] == os.path.join(tmp, "scene"),
              "the settings asked for; pbrt reads the rewritten file from the scene's folder")
        check(r["compare"]["width"] == 40 and r["compare"]["luminance_diff"] == 0,
              "pbrt's rewritten file renders as the tracer's flags do: every difference 0")
    test_run_grey(tmp, pbrt, tracer, env)
    p, r = run_case(tmp, pbrt, tracer, "failed", "--no-warmup", env=dict(env, FAKE_PBRT_FAIL="1"))
    check(p.returncode != 0 and "pbrt failed (exit 1)" in p.stderr and "failed on purpose" in p.stderr,
          "a failed pbrt render: non-zero exit, its command and the tail of its output")
    p = subprocess.run([sys.executable, SCRIPT, "--pbrt", os.path.join(tmp, "missing"), "--tracer", tracer,
                        os.path.join(tmp, "scene", "room.pbrt")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    check(p.returncode != 0 and "missing: no such executable file" in p.stderr, "a missing pbrt: an error")


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode not in ("images", "run") or (mode == "run" and (len(sys.argv) != 4 or sys.argv[2] != "--tracer")):
        sys.exit("usage: pbrt_compare_test.py images | run --tracer BIN")
    try:
        import numpy  # noqa: F401
    except ImportError:
        print(f"skipped: numpy is not installed for {sys.executable} (apt-get install python3-numpy)")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp:
        if mode == "images":
            test_images(tmp)
        else:
            test_run(tmp, os.path.abspath(sys.argv[3]))
    print(f"{len(FAILED)} failed" if FAILED else "all passed")
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()
