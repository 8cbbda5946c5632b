"""How the fast loops of zdt/kernels/_cast.pxi see a cast, and the range where they are never unsure.

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
  mini          (float16, bfloat16, float8 / float6 / float4: the bit-pattern loops; float64
                rounded to odd into float32 first) when a finite x rounds (in the mode, at the
                format's precision) beyond its largest finite value, except under clamp (the
                loops write the format's infinity, or its largest value where it has none); an
                infinity or NaN the format cannot hold; from float64, a finite x of 2**128
                or more, in every mode
  narrow        (int2 / int4 / uint2 / uint4 written as int8 / uint8) in error mode, unless
                the int8 result lies in the logical range
  WIDEN_INT     a 64-bit integer of magnitude 2**53 or more (float64 may have rounded it)

tests/kernels/test_safe_range.py runs both ends of every safe range, and the next value beyond each,
through the loops alone (the kernels' `fast_flags`): it fails the moment either side moves.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from zdt.formats import json_scalar
from zdt.kernels._types import TypeCode, Widen
from zdt.formats import FORMATS, NumberFormat


@dataclass(frozen=True)
class FastView:
    """The fast loops' view of a cast (read field by field by zdt.kernels._types.CastKernelSpec)."""

    widen: Widen                 # how the source is read (small floats as float32, ...)
    source: NumberFormat         # the source format the loops see (after widening)
    target_code: TypeCode        # the C type the loops write, or T_MINI (a small float)
    narrow_bits: int             # a sub-byte integer target written as int8 / uint8: its width
    map_entries: tuple           # scalar_map entries with keys in that format
    force_exact_map: bool        # map hits are only candidates: the exact path decides them
    safe_lo: int                 # the safe range, bit patterns of `source`
    safe_hi: int


def fast_view(source: NumberFormat, target: NumberFormat, rounding: str,
              out_of_range: str | None, entries: list) -> FastView | None:
    """How the fast loops see a cast, or None when there is no fast loop for it (a target only
    the exact path writes: float8_e8m0fnu). Sources without a loop of their own are read into
    a wider type (exact): the small floats as float32, sub-byte integers as int8 / uint8 (as
    float32 when they go to a small float), integers going to a small float as float64;
    scalar_map keys and the safe range are then given in that type, and keys the widening
    cannot hold exactly make every candidate take the exact path."""
    small_float_target = target.type_code == TypeCode.T_MINI
    if source.type_code == TypeCode.T_MINI:
        widen, fast_source = Widen.WIDEN_MINI, FORMATS["float32"]
    elif source.is_float and source.itemsize == 1:                  # float8_e8m0fnu
        widen, fast_source = Widen.WIDEN_TABLE, FORMATS["float32"]
    elif source.is_sub_byte and small_float_target:
        widen, fast_source = Widen.WIDEN_TABLE, FORMATS["float32"]
    elif source.is_sub_byte:
        widen, fast_source = Widen.WIDEN_SUBINT, FORMATS["int8" if source.signed else "uint8"]
    elif source.is_int and small_float_target:
        widen, fast_source = Widen.WIDEN_INT, FORMATS["float64"]
    else:
        widen, fast_source = Widen.WIDEN_NONE, source
    if target.type_code == TypeCode.T_NONE:
        return None
    # 64-bit integers read as float64 are rounded: an element could compare equal to a key it
    # is not, so map hits are only candidates, decided by the exact path
    force = widen == Widen.WIDEN_INT and source.itemsize == 8 and bool(entries)
    fast_entries = []
    for e in entries:
        if widen != Widen.WIDEN_NONE:
            key = source.value_of(e.key_bits)
            with np.errstate(invalid="ignore"):     # a signalling NaN key
                wide = np.array(key, dtype=object if source.dtype.kind in "iu" else source.dtype).astype(fast_source.dtype)
            e = e._replace(key_bits=json_scalar.value_to_bits(wide[()], fast_source))
        fast_entries.append(e)
    lo, hi = safe_range(fast_source, target, rounding, out_of_range)
    if widen == Widen.WIDEN_INT and source.itemsize == 8:
        # the widening flags a block holding a value of 2**53 or more (see _cast.pxi)
        limit = np.nextafter(np.float64(2.0**53), 0.0)
        lo, hi = max(lo, -limit), min(hi, limit)
    return FastView(widen, fast_source, target.type_code,
                    target.bits if target.is_int and target.is_sub_byte else 0,
                    tuple(fast_entries), force, fast_source.bits_of(lo), fast_source.bits_of(hi))


# --- the safe range ---------------------------------------------------------------------------------

def _float_below(bound: Fraction, dt: np.dtype, inclusive: bool) -> np.generic:
    """The largest finite value of the float dtype `dt` that is <= bound (< bound if not
    `inclusive`)."""
    def ok(v: np.generic) -> bool:
        f = Fraction(float(v))
        return f < bound or (inclusive and f == bound)

    with np.errstate(over="ignore"):       # a bound past the type's range: its max
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


def _mini_bounds(target: NumberFormat, rounding: str, dt: np.dtype) -> tuple[np.generic, np.generic]:
    """[lo, hi] for the small-float loops: the floats of `dt` whose rounding at the target's
    precision stays within its largest finite value. Past max the next multiple of the top
    binade's spacing (max + step: 2**(emax+1) for IEEE-like formats, 480 for float8_e4m3fn,
    whose top mantissa is taken by NaN) is beyond; the loops round in the binade of the
    input, whose result there is a pattern past max, so from there on every value is beyond,
    in every mode, even where the correct result (directed rounding towards zero) is max.
    An infinity passes through unflagged into a format that has one: where a bound is `dt`'s
    largest finite value (bfloat16 from float32), the range takes the infinity in."""
    top = Fraction(target.max_value)
    step = Fraction(2) ** (target.max_exp_field - target.bias - target.man_bits)
    if rounding in ("nearest-even", "nearest-away"):
        # the midpoint max + step/2: nearest-away goes up; nearest-even goes to the even
        # significand, which is max's own when its last mantissa bit is 0 (float8_e4m3fn)
        tie_down = rounding == "nearest-even" and target.max_man % 2 == 0
        hi = _float_below(top + step / 2, dt, inclusive=tie_down)
        lo = -hi
    elif rounding == "towards-zero":
        hi = _float_below(top + step, dt, inclusive=False)
        lo = -hi
    elif rounding == "towards-positive":
        lo, hi = _float_above(-(top + step), dt, inclusive=False), _float_below(top, dt, inclusive=True)
    else:
        lo, hi = _float_above(-top, dt, inclusive=True), _float_below(top + step, dt, inclusive=False)
    if target.has_inf:
        fmax = np.finfo(dt).max
        lo = dt.type(-np.inf) if lo == -fmax else lo
        hi = dt.type(np.inf) if hi == fmax else hi
    return lo, hi


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
    if target.type_code == TypeCode.T_MINI:
        if out_of_range == "clamp":
            if dt == np.float64:
                # a finite float64 of 2**128 or more is flagged (f64_to_f32_odd)
                hi = _float_below(Fraction(2) ** 128, dt, inclusive=False)
                return -hi, hi
            return everything if target.has_inf else (-fmax, fmax)
        return _mini_bounds(target, rounding, dt)
    if target.itemsize >= source.itemsize:
        return everything                  # exact: never flags
    # float64 -> float32
    if rounding == "nearest-even" and out_of_range == "clamp":
        return everything
    return _f2f_bounds(rounding, dt)
