# @file images.py: the scripts' image helpers (numpy): PFM read and write, OpenEXR read through the OpenEXR Python
# module when it is installed, 8-bit TGA read, luminance, and 8-bit sRGB PNG write with zlib and struct alone.
# Images are height x width x 3 float64 arrays, row 0 at the top.
#
#   sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib")); import images
import struct
import zlib

import numpy as np

# Rec. 709 / sRGB primaries: the tracer's and pbrt-v4's RGB film (docs/RENDERING.md).
LUMINANCE_WEIGHTS = (0.2126, 0.7152, 0.0722)


class ImageError(Exception):
    """A file that is not an image this module reads; the message names the file."""


def read_pfm(path):
    with open(path, "rb") as f:
        kind = f.readline().strip()
        if kind not in (b"PF", b"Pf"):
            raise ImageError(f"{path}: not a PFM file (first line {kind[:16]!r}, expected PF or Pf)")
        try:
            w, h = map(int, f.readline().split())
            scale = float(f.readline())
        except ValueError:
            raise ImageError(f"{path}: malformed PFM header (width height, then scale)") from None
        channels = 3 if kind == b"PF" else 1
        count = w * h * channels
        data = np.frombuffer(f.read(count * 4), dtype="<f4" if scale < 0 else ">f4")
    if w <= 0 or h <= 0 or data.size != count:
        raise ImageError(f"{path}: PFM of {w}x{h} holds {data.size} of its {count} floats")
    img = data.reshape(h, w, channels).astype(np.float64)[::-1]  # PFM stores the bottom row first
    return np.repeat(img, 3, axis=2) if channels == 1 else img


def read_exr(path):
    """R, G, B of an OpenEXR file through the OpenEXR module (3.x's File, or 1.x's InputFile with Imath)."""
    try:
        import OpenEXR
    except ImportError:
        raise ImageError(f"{path}: reading .exr needs the OpenEXR Python module (pip install OpenEXR); "
                         "or convert the image to .pfm") from None
    try:
        if hasattr(OpenEXR, "File"):
            with OpenEXR.File(path, separate_channels=True) as f:
                ch = f.channels()
                return np.stack([np.asarray(ch[c].pixels, dtype=np.float64) for c in "RGB"], axis=2)
        import Imath
        f = OpenEXR.InputFile(path)
        box = f.header()["dataWindow"]
        w, h = box.max.x - box.min.x + 1, box.max.y - box.min.y + 1
        pt = Imath.PixelType(Imath.PixelType.FLOAT)
        return np.stack([np.frombuffer(f.channel(c, pt), dtype=np.float32).reshape(h, w) for c in "RGB"],
                        axis=2).astype(np.float64)
    except (KeyError, OSError, RuntimeError, TypeError, ValueError) as e:
        raise ImageError(f"{path}: cannot read R, G, B ({e})") from None


def write_pfm(path, img):
    """img: h x w x 3, row 0 at the top; written little-endian, bottom row first, as PFM stores it."""
    h, w = img.shape[:2]
    with open(path, "wb") as f:
        f.write(b"PF\n%d %d\n-1.0\n" % (w, h))
        f.write(np.ascontiguousarray(img[::-1], dtype="<f4").tobytes())


def read_tga(path):
    """An 8-bit Truevision TGA (true-colour or grey, plain or run-length coded) as its 8-bit values in [0, 1] (no
    decoding: the caller applies the encoding); colour-mapped files are refused."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 18:
        raise ImageError(f"{path}: not a TGA file (shorter than its 18-byte header)")
    id_len, cmap, kind = data[0], data[1], data[2]
    w, h, bits, desc = struct.unpack("<HHBB", data[12:18])
    if cmap or kind not in (2, 3, 10, 11) or bits not in (8, 24, 32) or w == 0 or h == 0:
        raise ImageError(f"{path}: a TGA of type {kind}, {bits} bits, colour map {cmap}: only 8-bit true-colour or "
                         "grey TGAs are read")
    n, count, pos = bits // 8, w * h, 18 + id_len
    if kind in (2, 3):
        raw = data[pos:pos + count * n]
    else:  # run-length packets: a header byte, then one pixel repeated or (header & 127) + 1 pixels
        out = bytearray()
        while len(out) < count * n and pos < len(data):
            head, pos = data[pos], pos + 1
            if head & 128:
                out += data[pos:pos + n] * ((head & 127) + 1)
                pos += n
            else:
                out += data[pos:pos + ((head & 127) + 1) * n]
                pos += ((head & 127) + 1) * n
        raw = bytes(out[:count * n])
    if len(raw) != count * n:
        raise ImageError(f"{path}: TGA of {w}x{h} ends after {len(raw) // n} of its {count} pixels")
    px = np.frombuffer(raw, dtype=np.uint8).reshape(h, w, n).astype(np.float64) / 255.0
    rgb = np.repeat(px[..., :1], 3, axis=2) if n == 1 else px[..., 2::-1]  # stored B, G, R (, A)
    if not desc & 0x20:  # origin at the bottom-left unless bit 5 says top
        rgb = rgb[::-1]
    return rgb[:, ::-1] if desc & 0x10 else rgb


def read_image(path):
    """A .pfm, or an .exr when the OpenEXR module is there. Raises ImageError naming the file."""
    lower = path.lower()
    if lower.endswith(".pfm"):
        return read_pfm(path)
    if lower.endswith(".exr"):
        return read_exr(path)
    raise ImageError(f"{path}: unknown image type (use .pfm, or .exr with the OpenEXR Python module)")


def luminance(img):
    r, g, b = LUMINANCE_WEIGHTS
    return r * img[..., 0] + g * img[..., 1] + b * img[..., 2]


def to_srgb8(img):
    """Linear values, clamped to [0, 1], through the sRGB curve, as 8-bit."""
    x = np.clip(img, 0.0, 1.0)
    x = np.where(x <= 0.0031308, 12.92 * x, 1.055 * x ** (1 / 2.4) - 0.055)
    return (x * 255.0 + 0.5).astype(np.uint8)


def write_png(path, img):
    """img: h x w x 3 linear floats; written as 8-bit sRGB."""
    rows = to_srgb8(img)
    raw = b"".join(b"\x00" + row.tobytes() for row in rows)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)

    h, w = rows.shape[:2]
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))
