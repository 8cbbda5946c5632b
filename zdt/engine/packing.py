"""CF-packed arrays: stored numbers that readers unpack as ``stored * scale_factor +
add_offset`` (netCDF, radar and satellite products; CF conventions, section 8.1). A bound is in
the unpacked (physical) units; the engine works on the stored numbers, so the bound is turned
into stored units here, exactly, and errors are reported back in physical units.

The bound holds as a reader computes it: ``numpy.abs(new - old) <= E`` on the values xarray
(and netCDF4-python) unpack, each side in its own arithmetic. A zarr array's attributes are
JSON numbers, so its values unpack in float64: ``fl(fl(stored x scale) + offset)``. A netCDF
file whose scale_factor and add_offset are float32 unpacks 8- and 16-bit integers in float32
(xarray's rule, `reads_as`); its zarr copy then unpacks in float64, and the user's difference
is taken in float64. So the stored bound k (a whole number for integers) is the largest for
which every stored x of the data's range, unpacked as the source is read, and x +- k, unpacked
as the output is read, differ by at most E (500 steps of 1e-4 at E = 0.05 would not:
0.050000000000000044 in float64; 499 do). Nearer pairs then keep E too, as long as the step
is at least twice the roundings; where it is not, or the range is wider than SCAN, the
roundings are bounded instead: ``(k |scale| + (u_s + u)(T + P)(1 + u_s))(1 + u) <= E``, u and
u_s the unit roundoffs of the output's and the source's arithmetic, T and P the largest
|stored x scale| and |physical| the data (and its errors) reach; computed in rationals. A
relative bound R applies to the physical value, add_offset included: it is kept by the absolute
bound R min |physical| over the data, less the same roundings and those of the reader's
division (so an array whose physical values reach zero is kept exact). The output keeps the
stored type and the attributes, so every CF reader unpacks it as before; _FillValue,
missing_value and the valid range are in stored units and stay exact
(zdt.engine.arrays.sentinels_of).
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
    # the float type readers unpack the array into: float64 for zarr (JSON attributes), float32
    # for a netCDF variable whose float32 attributes make xarray unpack it so (decoded_type)
    reads_as: str = "float64"

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
        # a netCDF variable (or a Dataset's): its attributes' own types, as xarray reads them
        encoding = getattr(arr, "source_encoding", None)
        reads_as = decoded_type(np.dtype(arr.dtype), encoding) if encoding else "float64"
        return cls(scale, offset, reads_as)

    def unpack(self, stored: np.ndarray) -> np.ndarray:
        """The values a reader unpacks (xarray's steps: a copy in `reads_as`, times the scale,
        plus the offset, each rounded there), as float64."""
        t = np.dtype(self.reads_as)
        v = np.asarray(stored).astype(t)
        with np.errstate(over="ignore", invalid="ignore"):
            v *= t.type(self.scale)
            v += t.type(self.offset)
        return v.astype(np.float64, copy=False)

    @property
    def written(self) -> Packing:
        """The packing of the zarr array written from this one: the same attributes, as JSON
        numbers, so readers unpack it in float64."""
        return Packing(self.scale, self.offset)

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
        u_s = Fraction(1, 2 ** (np.finfo(self.reads_as).nmant + 1))     # the source's roundoff
        p_lo = Fraction(lo) * Fraction(self.scale) + Fraction(self.offset)
        p_hi = Fraction(hi) * Fraction(self.scale) + Fraction(self.offset)
        if bound.relative:
            if p_lo <= 0 <= p_hi or p_hi <= 0 <= p_lo:
                return exact
            # (the reader divides by its own |physical|, rounded: R less 4u_s of itself)
            limit = Fraction(bound.value) * min(abs(p_lo), abs(p_hi)) * (1 - 4 * u_s)
        else:
            limit = Fraction(bound.value)
        integers = np.dtype(dtype).kind in "iu"
        # the readers' roundings, over the data's range widened by the error itself
        reach = limit + s
        t_max = max(abs(Fraction(lo)), abs(Fraction(hi))) * s + reach
        p_max = max(abs(p_lo), abs(p_hi)) + reach
        rounding = (u_s + u) * (t_max + p_max) * (1 + u_s)
        if integers and hi - lo <= SCAN and s >= 2 * rounding * (1 + u) + 2 * u * limit:
            # every pair k steps apart decoded as the readers decode it: k as large as it
            # holds (and no pair nearer can break it: a step is more than the roundings)
            k = math.floor(limit / s)
            while k >= 1 and not self._reads_within(bound, k, int(lo), int(hi)):
                k -= 1
            return Bound("abs", float(k)) if k >= 1 else exact
        limit = limit / (1 + u) - rounding
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
        """Whether every stored x in [lo, hi], unpacked as the source is read, and x +- k (and
        x itself), unpacked as the output is read (float64), differ by at most the bound
        (relative: to x's own unpacked value), the difference and quotient rounded as NumPy
        rounds them."""
        x = np.arange(lo - k, hi + k + 1, dtype=np.float64)
        p = self.written.unpack(x)
        mid = self.unpack(x[k:len(x) - k])
        for other in (p[:len(p) - 2 * k], p[2 * k:], p[k:len(p) - k]):
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


def decoded_type(stored: np.dtype, encoding: Any) -> str:
    """The float type xarray unpacks a variable into, from the types of its scale_factor and
    add_offset (xarray.coding.variables._choose_float_dtype): both of one float type, that
    type (but float64 for 32-bit integers); add_offset alone, float64; scale_factor alone, its
    type. NumPy floats keep their type; Python numbers (JSON attributes) are float64."""
    def kind(v: Any) -> str | None:
        if v is None:
            return None
        if isinstance(v, np.ndarray) and v.size == 1:
            v = v.reshape(-1)[0]
        return "float32" if isinstance(v, np.float32) else "float64"

    scale, offset = kind(encoding.get("scale_factor")), kind(encoding.get("add_offset"))
    if scale is not None and offset is not None and scale == offset:
        return "float64" if stored.kind in "iu" and stored.itemsize == 4 else scale
    if offset is not None:
        return "float64"
    return scale or "float64"
