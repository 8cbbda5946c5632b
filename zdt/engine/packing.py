"""CF-packed arrays: stored numbers that readers unpack as ``stored * scale_factor +
add_offset`` (netCDF, radar and satellite products; CF conventions, section 8.1). A bound is in
the unpacked (physical) units; the engine works on the stored numbers, so the bound is turned
into stored units here, exactly, and errors are reported back in physical units.

The bound holds as a reader computes it: physical values ``fl(fl(stored x scale) + offset)``
in float64, each operation rounded (xarray, netCDF-C), their difference rounded too, at most E.
So the stored bound k (a whole number for integers) is the largest with
``(k |scale| + 2u (T + P)(1 + u))(1 + u) <= E``, u = 2**-53, T and P the largest |stored x
scale| and |physical| the data (and its errors) reach: the two readers' roundings and the
difference's cannot then carry the error past E (500 steps of 1e-4 at E = 0.05 would:
0.050000000000000044 in float64; 499 cannot). Computed in rationals. A relative bound R
applies to the physical value, add_offset included: it is kept by the absolute bound R min
|physical| over the data, less the same roundings and those of the reader's division (so an
array whose physical values reach zero is kept exact). The output keeps the stored type and the
attributes, so every CF reader unpacks it as before; _FillValue, missing_value and the valid
range are in stored units and stay exact (zdt.engine.arrays.sentinels_of).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from zdt.engine.bounds import Bound


# integer ranges up to this span have every pair of stored values k apart checked as a reader
# decodes them (stored_bound); wider ones get the rounding analysis
SCAN = 1 << 22


@dataclass(frozen=True)
class Packing:
    scale: float
    offset: float

    @classmethod
    def of(cls, arr: Any) -> Packing | None:
        """The array's CF packing (scale_factor and / or add_offset on numeric data), or None."""
        attrs = arr.attrs
        if "scale_factor" not in attrs and "add_offset" not in attrs:
            return None
        if np.dtype(arr.dtype).kind not in "iuf":
            return None

        def number(key: str, default: float) -> float | None:
            v = attrs.get(key, default)
            if isinstance(v, list) and len(v) == 1:
                v = v[0]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                return None
            return float(v)

        scale, offset = number("scale_factor", 1.0), number("add_offset", 0.0)
        if scale is None or offset is None or scale == 0:
            return None
        return cls(scale, offset)

    def describe(self) -> str:
        return f"CF-packed: physical = stored x {self.scale:g} + {self.offset:g}"

    def stored_bound(self, bound: Bound, dtype: np.dtype, lo: float, hi: float) -> Bound | None:
        """The bound on the stored numbers that keeps `bound` on the physical ones (lo, hi:
        the stored data's range). For integers whose bound allows no change, 0.5: only exact
        encodings keep it (the stored numbers can still be packed losslessly); for floats,
        None then."""
        s = abs(Fraction(self.scale))
        exact = Bound("abs", 0.5) if np.dtype(dtype).kind in "iu" else None
        u = Fraction(1, 2 ** 53)
        p_lo = Fraction(lo) * Fraction(self.scale) + Fraction(self.offset)
        p_hi = Fraction(hi) * Fraction(self.scale) + Fraction(self.offset)
        if bound.relative:
            if p_lo <= 0 <= p_hi or p_hi <= 0 <= p_lo:
                return exact
            # (the reader divides by its own |physical|, rounded: R less 4u of itself)
            limit = Fraction(bound.value) * min(abs(p_lo), abs(p_hi)) * (1 - 4 * u)
        else:
            limit = Fraction(bound.value)
        integers = np.dtype(dtype).kind in "iu"
        if integers and hi - lo <= SCAN:
            # every pair k steps apart decoded as a reader decodes it: k as large as it holds
            k = math.floor(limit / s)
            while k >= 1 and not self._reads_within(bound, k, int(lo), int(hi)):
                k -= 1
            return Bound("abs", float(k)) if k >= 1 else exact
        # the reader's roundings, over the data's range widened by the error itself
        reach = limit + s
        t_max = max(abs(Fraction(lo)), abs(Fraction(hi))) * s + reach
        p_max = max(abs(p_lo), abs(p_hi)) + reach
        limit = limit / (1 + u) - 2 * u * (t_max + p_max) * (1 + u)
        if limit <= 0:
            return exact
        if integers:
            k = math.floor(limit / s)
            return Bound("abs", float(k)) if k >= 1 else exact
        # floats: the largest float E' with E' |scale| <= limit
        e = float(limit / s)
        while Fraction(e) * s > limit:
            e = float(np.nextafter(e, 0.0))
        return Bound("abs", e) if e > 0 else None

    def _reads_within(self, bound: Bound, k: int, lo: int, hi: int) -> bool:
        """Whether every stored x in [lo, hi] and x +- k, unpacked in float64 as a reader does
        (x * scale, then + offset, each rounded), differ by at most the bound (relative: to
        x's own unpacked value), the difference and quotient rounded as NumPy rounds them.
        (Fewer steps apart are s below: no rounding of these magnitudes makes up a step.)"""
        x = np.arange(lo - k, hi + k + 1, dtype=np.float64)
        p = x * self.scale
        p += self.offset
        mid = p[k:len(p) - k]
        for other in (p[:len(p) - 2 * k], p[2 * k:]):
            d = np.abs(other - mid)
            if bound.relative:
                with np.errstate(divide="ignore", invalid="ignore"):
                    if not (d / np.abs(mid) <= bound.value).all():
                        return False
            elif not (d <= bound.value).all():
                return False
        return True

    def physical_error(self, stored_error: float) -> float:
        return stored_error * abs(self.scale)
