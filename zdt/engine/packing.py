"""CF-packed arrays: stored numbers that readers unpack as ``stored * scale_factor +
add_offset`` (netCDF, radar and satellite products; CF conventions, section 8.1). A bound is in
the unpacked (physical) units; the engine works on the stored numbers, so the bound is turned
into stored units here, exactly, and errors are reported back in physical units.

For integers the stored bound is a whole number k, the largest with k |scale_factor| <= E, so
that |stored error| <= k holds exactly when the physical error is within E (computed in
rationals: no float rounding decides it). A relative bound R applies to the physical value,
add_offset included: it is kept by the absolute bound R min |physical| over the data (so an
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
        if bound.relative:
            p_lo = Fraction(lo) * Fraction(self.scale) + Fraction(self.offset)
            p_hi = Fraction(hi) * Fraction(self.scale) + Fraction(self.offset)
            if p_lo <= 0 <= p_hi or p_hi <= 0 <= p_lo:
                return exact
            limit = Fraction(bound.value) * min(abs(p_lo), abs(p_hi))
        else:
            limit = Fraction(bound.value)
        if np.dtype(dtype).kind in "iu":
            k = math.floor(limit / s)
            return Bound("abs", float(k)) if k >= 1 else exact
        # floats: the largest float E' with E' |scale| <= limit
        e = float(limit / s)
        while Fraction(e) * s > limit:
            e = float(np.nextafter(e, 0.0))
        return Bound("abs", e) if e > 0 else None

    def physical_error(self, stored_error: float) -> float:
        return stored_error * abs(self.scale)
