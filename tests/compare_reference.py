"""A slow, independent computation of zdt.compare's figures (tests/engine/test_compare.py):
element by element in Python, sums in exact rationals, DSSIM with the 2-d Gaussian window
evaluated per pixel (not separably), and the power spectrum as the DFT's own double sum. It
follows docs/compare.md's definitions, not zdt/engine/compare.py's code."""

from __future__ import annotations

import cmath
import math
from fractions import Fraction


def pointwise(xs: list[float], ys: list[float]) -> dict:
    """The pointwise figures of values xs (source) and ys (copy), no specials among them."""
    n = len(xs)
    if n == 0:
        return {}
    d = [Fraction(y) - Fraction(x) for x, y in zip(xs, ys)]
    ad = [abs(v) for v in d]
    rel = []
    for x, v in zip(xs, d):
        if v == 0:
            rel.append(0.0)
        elif x == 0:
            rel.append(math.inf)
        else:
            rel.append(float(abs(v) / abs(Fraction(x))))
    sse = sum(v * v for v in d)
    mean = sum(Fraction(x) for x in xs) / n
    sst = sum((Fraction(x) - mean) ** 2 for x in xs)
    mse = sse / n
    rng = Fraction(max(xs)) - Fraction(min(xs))
    if mse == 0:
        psnr = math.inf
    elif rng > 0:
        psnr = 20 * math.log10(rng) - 10 * math.log10(mse)
    else:
        psnr = None
    if sst > 0:
        r2 = float(1 - sse / sst)
    else:
        r2 = 1.0 if sse == 0 else None
    return {"max_abs_error": float(max(ad)), "max_rel_error": max(rel),
            "mean_abs_error": float(sum(ad) / n), "rmse": math.sqrt(mse), "psnr": psnr, "r2": r2,
            "bias": float(sum(d) / n), "rel_error_share": sum(r > 1e-4 for r in rel) / n}


def bound_error(xs: list[float], ys: list[float], kind: str) -> Fraction:
    """The largest error in a bound's terms, exactly (relative: infinite at x = 0 != y)."""
    worst = Fraction(0)
    for x, y in zip(xs, ys):
        e = abs(Fraction(y) - Fraction(x))
        if kind == "rel":
            if e == 0:
                continue
            if x == 0:
                return Fraction(10) ** 400
            e = e / abs(Fraction(x))
        worst = max(worst, e)
    return worst


def dssim(a: list[list[float]], b: list[list[float]]) -> float | None:
    """Data SSIM of two 2-d slices (lists of rows, NaN where no value)."""
    m, n = len(a), len(a[0])
    r = 5
    if m < 2 * r + 1 or n < 2 * r + 1:
        return None
    vals = [v for row in a for v in row if not math.isnan(v)] + \
           [v for row in b for v in row if not math.isnan(v)]
    lo, hi = min(vals), max(vals)

    def scale(v: float) -> float:
        if math.isnan(v):
            return v
        if hi > lo:
            s = (v - lo) / (hi - lo)
        elif hi != 0:
            s = v / hi
        else:
            s = v
        return round(s * 255) / 255      # (Python's round: halves to even, as NumPy's)

    sa = [[scale(v) for v in row] for row in a]
    sb = [[scale(v) for v in row] for row in b]
    weight = {(di, dj): math.exp(-(di * di + dj * dj) / (2 * 1.5 ** 2))
              for di in range(-r, r + 1) for dj in range(-r, r + 1)}
    total = sum(weight.values())
    c = 1e-8
    ssims = []
    for i in range(r, m - r):
        for j in range(r, n - r):
            if math.isnan(sa[i][j]):
                continue
            acc = [0.0] * 6
            for (di, dj), w in weight.items():
                p, q = sa[i + di][j + dj], sb[i + di][j + dj]
                if math.isnan(p):
                    continue
                w /= total
                for k, v in enumerate((1.0, p, q, p * p, q * q, p * q)):
                    acc[k] += w * v
            norm = acc[0]
            mu1, mu2 = acc[1] / norm, acc[2] / norm
            s11, s22 = acc[3] / norm - mu1 * mu1, acc[4] / norm - mu2 * mu2
            s12 = acc[5] / norm - mu1 * mu2
            ssims.append((2 * mu1 * mu2 + c) / (mu1 * mu1 + mu2 * mu2 + c)
                         * (2 * s12 + c) / (s11 + s22 + c))
    return sum(ssims) / len(ssims) if ssims else None


def radial_spectrum(a: list[list[float]]) -> list[float]:
    """ClimateBenchPress's RAPSD: the centred spectrum's pixel (cy, cx) at radius
    round(sqrt(cy^2 + cx^2)), bins 0 .. L/2 - 1 (L = max(m, n) even) or 0 .. (L - 1)/2 (odd)."""
    m, n = len(a), len(a[0])
    length = max(m, n)
    bins = length // 2 if length % 2 == 0 else (length - 1) // 2 + 1
    sums = [0.0] * bins
    counts = [0] * bins
    for cy in range(-(m // 2), m - m // 2):
        for cx in range(-(n // 2), n - n // 2):
            k, l = cy % m, cx % n
            z = sum(a[p][q] * cmath.exp(-2j * math.pi * (k * p / m + l * q / n))
                    for p in range(m) for q in range(n))
            radius = round(math.sqrt(cy * cy + cx * cx))
            if radius < bins:
                sums[radius] += abs(z) ** 2 / (m * n)
                counts[radius] += 1
    return [s / c for s, c in zip(sums, counts)]


def spectral_error(a: list[list[float]], b: list[list[float]]) -> float | None:
    if any(math.isnan(v) for row in a + b for v in row):
        return None
    pa, pb = radial_spectrum(a), radial_spectrum(b)
    return sum((u - v) ** 2 for u, v in zip(pa, pb)) / len(pa)
