"""Error bounds: what a user asks for (``abs:E``, ``rel:R``) and the exact check of a decoded
chunk against it.

* absolute ``E``: ``|decoded - x| <= E`` for every finite x;
* relative ``R``: ``|decoded - x| <= R |x|`` (a zero stays a zero);

and for both: a NaN stays a NaN, +-Infinity stays itself, and every sentinel value the store
declares (fill value, CF ``_FillValue`` / ``missing_value``) comes back bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from zdt.command.errors import CommandError

KINDS = {"abs": "absolute", "rel": "relative"}


@dataclass(frozen=True)
class Bound:
    kind: str       # "abs" or "rel"
    value: float

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise CommandError(f"a bound is abs:E or rel:R, not {self.kind}:{self.value}")
        if not (isinstance(self.value, float) and math.isfinite(self.value) and self.value > 0):
            raise CommandError(f"{'--abs-error' if self.kind == 'abs' else '--rel-error'} must "
                               f"be a positive finite number, not {self.value!r}")

    @property
    def relative(self) -> bool:
        return self.kind == "rel"

    @classmethod
    def parse(cls, text: str, what: str = "bound") -> Bound:
        """``abs:0.01`` or ``rel:1e-3``."""
        kind, sep, value = text.partition(":")
        if not sep or kind not in KINDS:
            raise CommandError(f"{what} {text!r}: write abs:E or rel:R (e.g. abs:0.05, rel:1e-3)")
        try:
            number = float(value)
        except ValueError:
            raise CommandError(f"{what} {text!r}: {value!r} is not a number") from None
        return cls(kind, number)

    def __str__(self) -> str:
        return f"{self.kind}:{self.value:g}"

    def describe(self) -> str:
        return f"{KINDS[self.kind]} error <= {self.value:g}"

    def to_json(self) -> dict:
        return {self.kind: self.value}

    @classmethod
    def from_json(cls, data: object) -> Bound:
        if not (isinstance(data, dict) and len(data) == 1):
            raise CommandError(f"a bound in a plan is {{\"abs\": E}} or {{\"rel\": R}}, not {data!r}")
        (kind, value), = data.items()
        return cls(kind, float(value) if isinstance(value, (int, float)) else value)


def sentinel_mask(x: np.ndarray, sentinels: Sequence[float]) -> np.ndarray:
    """Where x holds one of the declared sentinel values (finite ones; NaN is a special)."""
    mask = np.zeros(x.shape, dtype=bool)
    for s in sentinels:
        mask |= x == s
    return mask


def error_of(x: np.ndarray, y: np.ndarray, bound: Bound,
             sentinels: Sequence[float] = ()) -> float:
    """The largest error of y against x, in the bound's terms; inf when a NaN, an infinity, a
    zero (relative bounds) or a sentinel did not come back as it was.

    Computed in long double; the elements within a hair of the bound are re-checked in exact
    rational arithmetic, so ``error_of(...) <= bound.value`` is exactly whether every element
    keeps the bound (an excess too small for a float to show is reported as the next float
    above the bound)."""
    x = np.asarray(x).reshape(-1)
    y = np.asarray(y).reshape(-1)
    if sentinels:
        at = sentinel_mask(x, sentinels)
        if at.any():
            # bit for bit (y holds the same type as x: what reading the array gives)
            if x[at].tobytes() != np.asarray(y[at], dtype=x.dtype).tobytes():
                return math.inf
            x, y = x[~at], y[~at]
    if x.dtype.kind in "iu" and y.dtype.kind in "iu":
        return _int_error(x, y, bound)
    xf = x.astype(np.float64) if x.dtype.kind != "f" else x
    yf = y.astype(np.float64) if y.dtype.kind != "f" else y
    nan = np.isnan(xf)
    if not np.array_equal(nan, np.isnan(yf)):
        return math.inf
    inf = np.isinf(xf)
    if not np.array_equal(xf[inf], yf[inf]):
        return math.inf
    finite = ~(nan | inf)
    xs, ys = xf[finite], yf[finite]
    if not np.isfinite(ys).all():
        return math.inf
    if not xs.size:
        return 0.0
    wide = np.longdouble if max(xs.dtype.itemsize, ys.dtype.itemsize) >= 8 else np.float64
    diff = np.abs(ys.astype(wide) - xs.astype(wide))
    if bound.relative:
        zero = xs == 0
        if (ys[zero] != 0).any():
            return math.inf
        xs, ys = xs[~zero], ys[~zero]
        diff = diff[~zero] / np.abs(xs.astype(wide))
    worst = float(diff.max(initial=0))
    limit = bound.value
    if worst < limit * (1 - 1e-9):
        return worst
    exact = Fraction(limit)
    near = np.nonzero(diff >= limit * (1 - 1e-9))[0]
    for a, b in zip(xs[near].tolist(), ys[near].tolist(), strict=True):
        e = abs(Fraction(b) - Fraction(a))
        if bound.relative:
            e /= abs(Fraction(a))
        if e > exact:
            return max(float(e), float(np.nextafter(limit, math.inf)))
    return min(worst, limit)


def _int_error(x: np.ndarray, y: np.ndarray, bound: Bound) -> float:
    """Integers of up to 64 bits, exactly (through Python integers only beyond 2**53)."""
    if np.array_equal(x, y):
        return 0.0
    small = max(abs(int(v.min())) for v in (x, y)) < 2 ** 53 and max(abs(int(v.max())) for v in (x, y)) < 2 ** 53
    if small:
        diff = np.abs(x.astype(np.float64) - y.astype(np.float64))    # exact below 2**53
        if bound.relative:
            nz = x != 0
            if (y[~nz] != 0).any():
                return math.inf
            return float((diff[nz] / np.abs(x[nz].astype(np.float64))).max(initial=0))
        return float(diff.max(initial=0))
    worst = Fraction(0)
    for a, b in zip(x.tolist(), y.tolist(), strict=True):
        e = Fraction(abs(int(b) - int(a)))
        if bound.relative:
            if a == 0:
                if b != 0:
                    return math.inf
                continue
            e /= abs(a)
        worst = max(worst, e)
    return float(worst)
