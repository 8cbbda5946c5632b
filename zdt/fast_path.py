"""How the fast loops of zdt/_cast.pxi see a cast, and the range where they are never unsure.

A fast loop converts a whole block and raises one flag when some element may be wrong (NaN
into an integer, a value out of range, a float overflow); the block is then masked and only the
elements outside the *safe range* go through the exact path. So the safe range must lie inside
the set of values the loop never flags, or a flagged block would keep a wrong result for an
element the mask skipped. zdt makes it that set exactly (the largest interval around zero in
it), computed here from the loops' flag conditions, which are:

  loop          flags an element x (r = x rounded to an integer in the rounding mode)
  f2i  error    unless  min(target) <= r <= max(target)            (so NaN and +-Inf too)
  f2i  clamp    unless  x is finite
  f2i  wrap     unless  x is finite, and for a 64-bit target also |r| < 2**63
  i2i  error    unless  min(target) <= x <= max(target);  clamp / wrap: never
  i2f           never
  f2f           float64 -> float32 only: when a finite x rounds to nearest beyond float32's
                range, or rounds (in the mode) away from zero past float32's max; never under
                nearest-even with clamp (+-inf is then the result); same-size or widening
                casts never flag
  f2h           when a finite x rounds (in the mode, at float16 precision, exponent capped
                at 2**16) beyond 65504

tests/test_safe_range.py runs both ends of every safe range, and the next value beyond each,
through the loops alone (the kernels' `fast_flags`): it fails the moment either side moves.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from zdt import json_scalar
from zdt._types import Widen
from zdt.formats import FORMATS, NumberFormat


@dataclass(frozen=True)
class FastView:
    """The fast loops' view of a cast (read field by field by zdt._types.CastKernelSpec)."""

    widen: Widen                 # how the source is read (float16 as float32, ints as float64)
    source: NumberFormat         # the source format the loops see (after widening)
    map_entries: tuple           # scalar_map entries with keys in that format
    force_exact_map: bool        # map hits are only candidates: the exact path decides them
    safe_lo: int                 # the safe range, bit patterns of `source`
    safe_hi: int


def fast_view(source: NumberFormat, target: NumberFormat, rounding: str,
              out_of_range: str | None, entries: list) -> FastView | None:
    """How the fast loops see a cast, or None when there is no fast loop for it. float16
    sources are read as float32 and integers going to float16 as float64 (both exact where it
    matters), so scalar_map keys and the safe range are given in that type; keys the widening
    cannot hold exactly make every candidate take the exact path."""
    widen, fast_source = Widen.WIDEN_NONE, source
    if source.name == "float16":
        widen, fast_source = Widen.WIDEN_HALF, FORMATS["float32"]
    elif target.name == "float16" and source.is_int:
        widen, fast_source = Widen.WIDEN_INT, FORMATS["float64"]
    if fast_source.type_code < 0 or target.type_code < 0:
        return None
    # 64-bit integers read as float64 are rounded: an element could compare equal to a key it
    # is not, so map hits are only candidates, decided by the exact path
    force = widen == Widen.WIDEN_INT and source.itemsize == 8 and bool(entries)
    fast_entries = []
    for e in entries:
        if widen != Widen.WIDEN_NONE:
            key = source.value_of(e.key_bits)
            wide = np.array(key, dtype=object if source.is_int else source.dtype).astype(fast_source.dtype)
            e = e._replace(key_bits=json_scalar.value_to_bits(wide[()], fast_source))
        fast_entries.append(e)
    lo, hi = safe_range(fast_source, target, rounding, out_of_range)
    return FastView(widen, fast_source, tuple(fast_entries), force,
                    fast_source.bits_of(lo), fast_source.bits_of(hi))


# --- the safe range ---------------------------------------------------------------------------------

def _float_below(bound: Fraction, dt: np.dtype, inclusive: bool) -> np.generic:
    """The largest finite value of the float dtype `dt` that is <= bound (< bound if not
    `inclusive`)."""
    def ok(v: np.generic) -> bool:
        f = Fraction(float(v))
        return f < bound or (inclusive and f == bound)

    with np.errstate(over="ignore"):
        x = dt.type(float(bound))
    if not np.isfinite(x):
        x = np.finfo(dt).max * np.sign(x)
    while not ok(x):
        x = np.nextafter(x, dt.type(-np.inf))
    while True:
        up = np.nextafter(x, dt.type(np.inf))
        if not np.isfinite(up) or not ok(up):
            return x
        x = up


def _float_above(bound: Fraction, dt: np.dtype, inclusive: bool) -> np.generic:
    return -_float_below(-bound, dt, inclusive)


_HALF = Fraction(1, 2)


def _f2i_bounds(lo_int: int, hi_int: int, rounding: str, dt: np.dtype) -> tuple[np.generic, np.generic]:
    """[lo, hi]: the floats of `dt` whose rounding lands in [lo_int, hi_int]. hi_int is odd
    (2**k - 1) and lo_int even (0 or -2**k), which decides the nearest-even ties."""
    if rounding in ("towards-zero", "towards-negative"):
        hi = _float_below(Fraction(hi_int + 1), dt, inclusive=False)
    elif rounding == "towards-positive":
        hi = _float_below(Fraction(hi_int), dt, inclusive=True)
    else:   # nearest-even (the tie goes to the even hi_int + 1) and nearest-away
        hi = _float_below(hi_int + _HALF, dt, inclusive=False)
    if rounding in ("towards-zero", "towards-positive"):
        lo = _float_above(Fraction(lo_int - 1), dt, inclusive=False)
    elif rounding == "towards-negative":
        lo = _float_above(Fraction(lo_int), dt, inclusive=True)
    elif rounding == "nearest-even":
        lo = _float_above(lo_int - _HALF, dt, inclusive=True)     # the tie goes to lo_int
    else:
        lo = _float_above(lo_int - _HALF, dt, inclusive=False)    # the tie goes away from it
    return lo, hi


def _f2h_bounds(rounding: str, dt: np.dtype) -> tuple[np.generic, np.generic]:
    """[lo, hi] for the float16 loop: the floats of `dt` whose rounding at float16 precision
    stays within +-65504. Beyond 65504 the next multiple of the last float16 bit (32) is 65536;
    the loop caps the exponent it rounds at, so from 65536 on every value is beyond, in every
    mode, even where the correct result (directed rounding towards zero) is 65504."""
    top, step = Fraction(65504), Fraction(32)
    if rounding in ("nearest-even", "nearest-away"):
        # the midpoint 65520 rounds up in both (65504 has an odd significand)
        hi = _float_below(top + step / 2, dt, inclusive=False)
        return -hi, hi
    if rounding == "towards-zero":
        hi = _float_below(top + step, dt, inclusive=False)
        return -hi, hi
    if rounding == "towards-positive":
        return _float_above(-(top + step), dt, inclusive=False), _float_below(top, dt, inclusive=True)
    return _float_above(-top, dt, inclusive=True), _float_below(top + step, dt, inclusive=False)


def _f2f_bounds(rounding: str, dt: np.dtype) -> tuple[np.generic, np.generic]:
    """[lo, hi] for float64 -> float32: the loop rounds in hardware (nearest-even) and then
    moves one ulp where the mode disagrees. It flags the hardware result beyond float32's range
    (|x| >= 2**128 - 2**103, the midpoint between max and 2**128) in every mode, and a
    corrected result beyond it (a value past max rounding away from zero)."""
    top = Fraction(float(np.finfo(np.float32).max))
    hw = _float_below(top + Fraction(2) ** 103, dt, inclusive=False)
    if rounding == "towards-positive":
        return -hw, _float_below(top, dt, inclusive=True)
    if rounding == "towards-negative":
        return _float_above(-top, dt, inclusive=True), hw
    return -hw, hw


def safe_range(source: NumberFormat, target: NumberFormat, rounding: str,
               out_of_range: str | None) -> tuple[np.generic, np.generic]:
    """[lo, hi] (values of `source`, the fast loops' source type): the largest interval around
    zero of source values the fast loop for (source -> target, rounding, out_of_range) never
    flags, with no scalar_map. See the module docstring for the loops' conditions."""
    dt = source.dtype
    if source.is_int:
        lo, hi = source.min_value, source.max_value
        if target.is_int and out_of_range is None:
            lo, hi = max(lo, target.min_value), min(hi, target.max_value)
        return dt.type(lo), dt.type(hi)
    fmax = np.finfo(dt).max
    everything = dt.type(-np.inf), dt.type(np.inf)
    if target.is_int:
        if out_of_range is None:
            return _f2i_bounds(target.min_value, target.max_value, rounding, dt)
        if out_of_range == "wrap" and target.bits == 64:
            # |r| < 2**63; a float this large is an integer already, so r = x
            hi = _float_below(Fraction(2**63), dt, inclusive=False)
            return -hi, hi
        return -fmax, fmax
    if target.name == "float16":
        return _f2h_bounds(rounding, dt)
    if target.itemsize >= source.itemsize:
        return everything                  # exact: never flags
    # float64 -> float32
    if rounding == "nearest-even" and out_of_range == "clamp":
        return everything
    return _f2f_bounds(rounding, dt)
