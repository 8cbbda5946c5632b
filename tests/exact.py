"""Errors in exact arithmetic (Fractions), independent of the code under test: the largest error
of a decoded array (`exact_error`, the engine's and the command's tests) and the check that
every element is within a bound (`check_within`, zdt.predict's tests)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

UINT = {4: np.uint32, 8: np.uint64}


def exact_error(x: np.ndarray, y: np.ndarray, relative: bool) -> Fraction | float:
    """Largest error element by element in exact arithmetic; inf if a NaN, an infinity or (for
    a relative bound) a zero did not come back as it was."""
    worst = Fraction(0)
    for a, b in zip(x.reshape(-1).tolist(), y.reshape(-1).tolist(), strict=True):
        if math.isnan(a) or math.isnan(b):
            if not (math.isnan(a) and math.isnan(b)):
                return math.inf
            continue
        if math.isinf(a) or math.isinf(b):
            if a != b:
                return math.inf
            continue
        e = abs(Fraction(b) - Fraction(a))
        if relative:
            if a == 0:
                if b != 0:
                    return math.inf
                continue
            e /= abs(Fraction(a))
        worst = max(worst, e)
    return worst


def check_within(x: np.ndarray, y: np.ndarray, E: float, fill) -> None:
    """Every element of y within E of x, exactly; non-finite values and the fill value (bit for
    bit) unchanged."""
    bits = UINT[x.dtype.itemsize]
    xs, ys = x.reshape(-1), y.reshape(-1)
    fill_bits = None if fill is None else np.asarray(fill, dtype=x.dtype).view(bits)
    for i, (a, b) in enumerate(zip(xs.tolist(), ys.tolist())):
        if fill_bits is not None and xs[i:i + 1].view(bits)[0] == fill_bits:
            assert ys[i:i + 1].view(bits)[0] == fill_bits, (i, a, b)
        elif not np.isfinite(a):
            assert xs[i:i + 1].view(bits)[0] == ys[i:i + 1].view(bits)[0], (i, a, b)
        else:
            assert np.isfinite(b) and abs(Fraction(b) - Fraction(a)) <= Fraction(E), (i, a, b, E)
