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

from zdt.errors import UsageError

KINDS = {"abs": "absolute", "rel": "relative"}


@dataclass(frozen=True)
class Bound:
    kind: str       # "abs" or "rel"
    value: float

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise UsageError(f"a bound is abs:E or rel:R, not {self.kind}:{self.value}")
        if not (isinstance(self.value, float) and math.isfinite(self.value) and self.value > 0):
            raise UsageError(f"{self.kind}_error= must be a positive finite number, not "
                             f"{self.value!r}")

    @property
    def relative(self) -> bool:
        return self.kind == "rel"

    @classmethod
    def parse(cls, text: str, what: str = "bound") -> Bound:
        """``abs:0.01`` or ``rel:1e-3``."""
        kind, sep, value = text.partition(":")
        if not sep or kind not in KINDS:
            raise UsageError(f"{what} {text!r}: write abs:E or rel:R (e.g. abs:0.05, rel:1e-3)")
        try:
            number = float(value)
        except ValueError:
            raise UsageError(f"{what} {text!r}: {value!r} is not a number") from None
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
            raise UsageError(f"a bound in a plan is {{\"abs\": E}} or {{\"rel\": R}}, not {data!r}")
        (kind, value), = data.items()
        return cls(kind, float(value) if isinstance(value, (int, float)) else value)


def sentinel_mask(x: np.ndarray, sentinels: Sequence[float]) -> np.ndarray:
    """Where x holds one of the declared sentinel values (finite ones; NaN is a special). A
    zero is matched with its sign: -0.0 is data, not a fill value of 0.0 (their bits differ,
    and a sentinel must come back bit for bit)."""
    mask = np.zeros(x.shape, dtype=bool)
    signed = x.dtype.kind == "f"
    for s in sentinels:
        hit = x == s
        if signed and s == 0:
            hit &= np.signbit(x) == np.signbit(np.asarray(s, dtype=x.dtype))
        mask |= hit
    return mask


def error_of(x: np.ndarray, y: np.ndarray, bound: Bound,
             sentinels: Sequence[float] = (), masking: Sequence[float] = (),
             valid: tuple | None = None) -> float:
    """The largest error of y against x, in the bound's terms; inf when a NaN, an infinity, a
    zero (relative bounds) or a sentinel did not come back as it was, when a value that was
    not a sentinel reads back as one of `masking` (the sentinels readers take for "missing",
    such as CF's _FillValue: xarray would hide that value), or when a value inside the CF valid
    range `valid` (lo, hi) reads back outside it (netCDF readers would hide it).

    ``error_of(...) <= bound.value`` is exactly whether every element keeps the bound (an
    excess too small for a float to show is reported as the next float above the bound): the
    differences are taken in float64 and the elements where rounding could hide an excess are
    settled exactly (see _abs_error, _rel_error)."""
    x = np.asarray(x).reshape(-1)
    y = np.asarray(y).reshape(-1)
    if masking and (sentinel_mask(y, masking) & ~sentinel_mask(x, sentinels or masking)).any():
        return math.inf
    if valid is not None and _leaves_valid_range(x, y, valid).any():
        return math.inf
    if sentinels:
        at = sentinel_mask(x, sentinels)
        if at.any():
            # bit for bit (y holds the same type as x: what reading the array gives)
            if x[at].tobytes() != np.asarray(y[at], dtype=x.dtype).tobytes():
                return math.inf
            x, y = x[~at], y[~at]
    if x.dtype.kind in "iu" and y.dtype.kind in "iu":
        return _int_error(x, y, bound)
    # every float type zdt reads (float16/32/64, bfloat16, the float8s) is exact in float64
    xf = x.astype(np.float64) if x.dtype != np.float64 else x
    yf = y.astype(np.float64) if y.dtype != np.float64 else y
    with np.errstate(over="ignore", invalid="ignore"):
        s = yf - xf
    a = np.abs(s)
    special = ~np.isfinite(a)        # a NaN or an infinity on either side, or an overflow
    if special.any():
        xs, ys = xf[special], yf[special]
        both_finite = np.isfinite(xs) & np.isfinite(ys)       # y - x overflowed
        same = (np.isnan(xs) & np.isnan(ys)) | (xs == ys)     # a NaN, or the same infinity
        if not (same | both_finite).all():
            return math.inf
        if both_finite.any():         # a difference beyond the largest float: over any
            if not bound.relative:    # absolute bound; a relative one is settled exactly
                return math.inf
            e = max(abs(Fraction(v) - Fraction(u)) / abs(Fraction(u))
                    for u, v in zip(xs[both_finite].tolist(), ys[both_finite].tolist(), strict=True))
            if e > Fraction(bound.value):
                return max(_to_float(e), float(np.nextafter(bound.value, math.inf)))
        a[special] = 0.0
    if bound.relative:
        return _rel_error(xf, yf, a, special, bound.value)
    return _abs_error(xf, yf, s, a, bound.value)


# beyond this magnitude TwoSum's steps could overflow: such elements are settled exactly
_HUGE = 2.0 ** 1000


def _abs_error(x: np.ndarray, y: np.ndarray, s: np.ndarray, a: np.ndarray, limit: float) -> float:
    """max |y - x| against `limit`, exactly decided (s = fl(y - x), a = |s|, 0 where it is
    not finite). s rounds to nearest and `limit` is a float, so |s| < limit means
    |y - x| <= limit and |s| > limit means it is above; only |s| == limit needs the rounding
    error e (y - x = s + e exactly, Knuth's TwoSum): over the bound when e points away from
    zero with s."""
    worst = float(a.max(initial=0.0))
    if worst != limit:
        return worst
    at = np.nonzero(a == limit)[0]
    xs, ys, ss = x[at], y[at], s[at]
    huge = (np.abs(xs) >= _HUGE) | (np.abs(ys) >= _HUGE)
    for u, v in zip(xs[huge].tolist(), ys[huge].tolist(), strict=True):
        if abs(Fraction(v) - Fraction(u)) > Fraction(limit):
            return float(np.nextafter(limit, math.inf))
    xs, ys, ss = xs[~huge], ys[~huge], ss[~huge]
    back = ss - ys
    e = (ys - (ss - back)) + (-xs - back)
    if (np.sign(ss) * np.sign(e) > 0).any():
        return float(np.nextafter(limit, math.inf))
    return limit


def _rel_error(x: np.ndarray, y: np.ndarray, a: np.ndarray, special: np.ndarray,
               limit: float) -> float:
    """max |y - x| / |x| against `limit` (a = |fl(y - x)|, 0 where `special`); a zero stays a
    zero. In float64 the ratio is within a few units in the last place of the truth while it
    is a normal number, so only ratios within 1e-12 of the bound are settled in exact rational
    arithmetic (all of them for a bound too small for that)."""
    zero = x == 0
    if (y[zero] != 0).any():
        return math.inf
    r = np.zeros_like(a)
    with np.errstate(over="ignore", under="ignore"):
        np.divide(a, np.abs(x), out=r, where=~(zero | special))
    near = r >= limit * (1 - 1e-12) if limit > 2.0 ** -1000 else ~(zero | special)
    if not near.any():
        return float(r.max(initial=0.0))
    worst = float(r[~near].max(initial=0.0))
    exact = Fraction(limit)
    for u, v in zip(x[near].tolist(), y[near].tolist(), strict=True):
        e = abs(Fraction(v) - Fraction(u)) / abs(Fraction(u))
        if e > exact:
            return max(_to_float(e), float(np.nextafter(limit, math.inf)))
        worst = max(worst, float(e))
    return min(worst, limit)


def _to_float(e: Fraction) -> float:
    return float(e) if e < Fraction(np.finfo(np.float64).max) else math.inf


def _leaves_valid_range(x: np.ndarray, y: np.ndarray, valid: tuple) -> np.ndarray:
    lo, hi = valid
    with np.errstate(invalid="ignore"):
        return (x >= lo) & (x <= hi) & ~((y >= lo) & (y <= hi))


def worst_element(x: np.ndarray, y: np.ndarray, bound: Bound, sentinels: Sequence[float] = (),
                  masking: Sequence[float] = (), valid: tuple | None = None) -> tuple[int, str]:
    """The flat index of the element that breaks the bound (for error_of's inf: one that did
    not come back as it must; else the largest error) and what went wrong with it."""
    x, y = np.asarray(x).reshape(-1), np.asarray(y).reshape(-1)
    if valid is not None:
        bad = np.nonzero(_leaves_valid_range(x, y, valid))[0]
        if bad.size:
            return int(bad[0]), f"a value inside the CF valid range {list(valid)} reads back outside it"
    xs, ys = sentinel_mask(x, sentinels), sentinel_mask(y, masking)
    bad = np.nonzero(ys & ~sentinel_mask(x, sentinels or masking))[0]
    if bad.size:
        return int(bad[0]), "a value that is not missing reads back as the missing-value marker"
    bad = np.nonzero(xs & (x.view(f"u{x.itemsize}") != np.asarray(y, x.dtype).view(f"u{x.itemsize}"))
                     if x.dtype.kind == "f" else xs & (x != y))[0]
    if bad.size:
        return int(bad[0]), "a sentinel the store declares did not come back bit for bit"
    xf, yf = x.astype(np.float64), y.astype(np.float64)
    with np.errstate(all="ignore"):
        same_special = (np.isnan(xf) & np.isnan(yf)) | (np.isinf(xf) & (xf == yf))
        special = (~np.isfinite(xf) | ~np.isfinite(yf)) & ~same_special & ~xs
        if special.any():
            return int(np.nonzero(special)[0][0]), "a NaN or an infinity did not come back as it was"
        diff = np.abs(yf - xf)
        if bound.relative:
            diff = np.where(xf == 0, np.where(yf == 0, 0.0, np.inf), diff / np.abs(xf))
        diff = np.where(xs | same_special, 0.0, diff)
    return int(np.argmax(diff)), f"{bound.kind} error {float(diff.max()):.6g}"


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
