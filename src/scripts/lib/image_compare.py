# @file image_compare.py: how far a test image is from a reference one (numpy): the relative differences of the
# mean luminance and of each channel's mean, the relative differences of 16x16-pixel block luminances (median and
# 95th percentile), the worst 64x64 region, and a side-by-side crop of it (test | reference | difference).
import numpy as np

from images import luminance

BLOCK = 16
WINDOW = 64
# A block's relative difference is |test - ref| / max(ref, EPS_FRACTION x the reference's mean luminance): a block
# that is black in the reference (a shadow, the sky behind a window) then weighs in with its absolute difference
# against 1% of the image's brightness instead of dividing by nearly zero.
EPS_FRACTION = 0.01
EPS_TEXT = "eps = {frac:g} x the reference's mean luminance ({eps:.4g})"


class CompareError(Exception):
    """Images that cannot be compared (sizes differ, a black reference); the message says which."""


def finite(img):
    """img with NaN and infinite values replaced by 0, and how many there were (reported, never silently kept)."""
    bad = ~np.isfinite(img)
    count = int(bad.any(axis=2).sum())
    return (np.where(bad, 0.0, img), count) if count else (img, 0)


def block_means(y, size=BLOCK):
    """Means of size x size blocks of y; the blocks at the right and bottom edges may be smaller."""
    rows, cols = np.arange(0, y.shape[0], size), np.arange(0, y.shape[1], size)
    sums = np.add.reduceat(np.add.reduceat(y, rows, axis=0), cols, axis=1)
    counts = np.add.reduceat(np.add.reduceat(np.ones_like(y), rows, axis=0), cols, axis=1)
    return sums / counts


def worst_window(rel, size=WINDOW // BLOCK):
    """(row, col) in blocks of the size x size window of blocks (fewer at a small image) of largest mean rel; the
    first one on ties, rows then columns."""
    h, w = min(size, rel.shape[0]), min(size, rel.shape[1])
    c = np.zeros((rel.shape[0] + 1, rel.shape[1] + 1))
    c[1:, 1:] = rel.cumsum(axis=0).cumsum(axis=1)
    sums = c[h:, w:] - c[:-h, w:] - c[h:, :-w] + c[:-h, :-w]
    r, q = np.unravel_index(int(np.argmax(sums)), sums.shape)
    return int(r), int(q), h, w


def compare(test, ref, eps_fraction=EPS_FRACTION):
    """Statistics of test against ref (h x w x 3 arrays). Differences are signed (test brighter: positive) except
    the blocks' (absolute); all are fractions, not percent."""
    if test.shape != ref.shape:
        raise CompareError(f"the images differ in size: {test.shape[1]}x{test.shape[0]} against "
                           f"{ref.shape[1]}x{ref.shape[0]}")
    test, bad_test = finite(test)
    ref, bad_ref = finite(ref)
    yt, yr = luminance(test), luminance(ref)
    mean_ref = float(yr.mean())
    if not mean_ref > 0.0:
        raise CompareError("the reference image is black (mean luminance 0): relative differences are undefined")
    channels = []
    for c in range(3):
        m = float(ref[..., c].mean())
        channels.append(float(test[..., c].mean()) / m - 1.0 if m > 0.0 else None)
    eps = eps_fraction * mean_ref
    bt, br = block_means(yt), block_means(yr)
    rel = np.abs(bt - br) / np.maximum(br, eps)
    r, q, bh, bw = worst_window(rel)
    x0, y0 = q * BLOCK, r * BLOCK
    region = [x0, y0, min(bw * BLOCK, test.shape[1] - x0), min(bh * BLOCK, test.shape[0] - y0)]
    return {
        "width": test.shape[1], "height": test.shape[0],
        "mean_luminance": {"test": float(yt.mean()), "reference": mean_ref},
        "luminance_diff": float(yt.mean()) / mean_ref - 1.0,
        "rgb_diff": channels,
        "block_size": BLOCK, "blocks": int(rel.size),
        "block_eps": eps, "block_eps_rule": EPS_TEXT.format(frac=eps_fraction, eps=eps),
        "block_median": float(np.median(rel)), "block_p95": float(np.percentile(rel, 95)),
        "worst_region": region, "worst_region_mean": float(rel[r:r + bh, q:q + bw].mean()),
        "nonfinite_pixels": {"test": bad_test, "reference": bad_ref},
    }


DIFF_GAIN = 4.0
CROP_TEXT = ("test | reference | difference (red: test brighter, blue: reference brighter, {gain:g}x), exposed "
             "so that the reference's mean luminance shows at 0.18, 2x")


def crop_panels(test, ref, region, mean_ref):
    """The region of test and ref, and their signed luminance difference, side by side, for write_png."""
    x, y, w, h = region
    gain = 0.18 / mean_ref
    t, p = test[y:y + h, x:x + w] * gain, ref[y:y + h, x:x + w] * gain
    d = (luminance(t) - luminance(p)) * DIFF_GAIN
    diff = np.stack([np.maximum(d, 0.0), np.zeros_like(d), np.maximum(-d, 0.0)], axis=2)
    gap = np.ones((h, 2, 3))
    row = np.concatenate([t, gap, p, gap, diff], axis=1)
    return np.nan_to_num(row).repeat(2, axis=0).repeat(2, axis=1)
