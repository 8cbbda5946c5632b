"""Numeric scalars in the zarr v3 fill-value JSON encoding, read strictly and exactly.

Integers are JSON integers (an integral JSON float such as 3.0 is accepted: JSON does not tell
them apart). Floats are JSON numbers or the strings "NaN" (the format's canonical NaN),
"Infinity", "-Infinity" (only where the format has them; "+Infinity", which the cast_value
spec's own example uses, reads as "Infinity") or "0x" followed by the bit pattern in exactly
2 * itemsize hex digits (high bits a sub-byte format does not use must be 0). Anything else,
including numeric strings like "5", is an error. Values are returned as bit patterns of the
format, never through float64 for 64-bit integers, and a JSON number is rounded to a narrower
float format exactly once (nearest, ties to even), by zdt's exact conversion, whatever the
installed ml_dtypes does (before 0.7.0 its float64 -> float8 went through float32: twice).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from zdt import kernels
from zdt.kernels._types import CastKernelSpec, CastStatus, OutOfRange, Rounding
from zdt.formats import FORMATS, NumberFormat

_INF_STRINGS = {"Infinity": False, "+Infinity": False, "-Infinity": True}


@dataclass(frozen=True)
class Scalar:
    """A decoded scalar: its bit pattern in the format (as zdt stores it), and whether it was
    the generic "NaN"."""

    bits: int
    any_nan: bool = False


def _describe(value: object) -> str:
    return f"{value!r} ({type(value).__name__})"


@lru_cache(maxsize=64)
def _from_float64(fmt: NumberFormat) -> CastKernelSpec:
    """float64 -> fmt, nearest-even, exact path (out-of-range values fail)."""
    return CastKernelSpec(source=FORMATS["float64"], target=fmt, rounding=Rounding.NEAREST_EVEN,
                          out_of_range=OutOfRange.OOR_ERROR, map_entries=(), fast=None)


def round_float64(value: float, fmt: NumberFormat) -> tuple[int | None, int]:
    """value rounded once to the float format (nearest, ties to even): (bits, CastStatus);
    bits is None when the status is not ST_OK (beyond the range, no zero, ...)."""
    src = np.array([value], dtype=np.float64)
    dst = np.zeros(1, dtype=fmt.bits_dtype)
    step = kernels.module().cast_step(_from_float64(fmt), True)
    index, _, status, _ = kernels.run_steps([step], src, dst)
    if index >= 0:
        return None, status
    return int(dst[0]), CastStatus.ST_OK


def decode(value: object, fmt: NumberFormat, *, what: str, exact: bool = False) -> Scalar:
    """Decode one JSON scalar into `fmt`; `what` names it in errors ("scalar_map encode key").

    A JSON number is read as the nearest float64 (what JSON parsers do). With `exact=False`
    (offset, scale, fill values) it then takes the nearest value of a narrower float format,
    as the fill-value encoding reads "0.1" for float32; beyond the finite range, underflow to
    zero, and a value a format cannot hold at all (0 or a negative number in float8_e8m0fnu)
    are errors. With `exact=True` (scalar_map entries, which must match or produce values of
    the type) the float64 reading must itself be a value of the format."""
    if fmt.is_int:
        return _decode_int(value, fmt, what)
    if isinstance(value, str):
        return _decode_string(value, fmt, what)
    return _decode_number(value, fmt, what, exact)


def _decode_int(value: object, fmt: NumberFormat, what: str) -> Scalar:
    """A JSON integer (or a float with an integral value) in an integer format's range."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{what} must be a JSON integer for {fmt.name}, got {_describe(value)}")
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"{what} {value!r} is not an integer, so not representable in {fmt.name}")
        value = int(value)
    if not fmt.min_value <= value <= fmt.max_value:
        raise ValueError(f"{what} {value} is out of range for {fmt.name} {fmt.range_text()}")
    return Scalar(fmt.storage_bits(value & ((1 << (8 * fmt.itemsize)) - 1)))


def _decode_string(value: str, fmt: NumberFormat, what: str) -> Scalar:
    """"NaN", "Infinity" / "-Infinity" (and "+Infinity") or a "0x" bit pattern of a float."""
    if value == "NaN":
        if fmt.nan_bits is None:
            raise ValueError(f"{what} 'NaN' is not a value of {fmt.name}, which has no NaN")
        return Scalar(fmt.nan_bits, any_nan=True)
    if value in _INF_STRINGS:
        if fmt.inf_bits is None:
            raise ValueError(f"{what} {value!r} is not a value of {fmt.name}, which has no "
                             f"infinities")
        return Scalar(fmt.inf_bits | ((1 << (fmt.bits - 1)) if _INF_STRINGS[value] else 0))
    if value.startswith("0x"):
        digits = value[2:]
        if len(digits) != 2 * fmt.itemsize or not all(c in "0123456789abcdefABCDEF" for c in digits):
            raise ValueError(
                f"{what} {value!r} is not a hex bit pattern of {fmt.name} "
                f"('0x' and {2 * fmt.itemsize} hex digits)"
            )
        bits = int(digits, 16)
        if fmt.logical_bits(bits) != bits:
            raise ValueError(f"{what} {value!r} sets bits above the {fmt.bits} bits of {fmt.name}")
        return Scalar(bits)
    raise ValueError(
        f"{what} {value!r} is not a valid {fmt.name} scalar: use a JSON number, 'NaN', "
        f"'Infinity', '-Infinity' or a '0x' hex bit pattern"
    )


def _decode_number(value: object, fmt: NumberFormat, what: str, exact: bool) -> Scalar:
    """A JSON number into a float format: the nearest value (exactly the value if `exact`)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{what} must be a JSON number or string for {fmt.name}, got {_describe(value)}")
    if isinstance(value, int):
        try:
            as_float = float(value)
        except OverflowError:
            raise ValueError(f"{what} {value} is beyond the range of {fmt.name} {fmt.range_text()}") from None
        if exact and as_float != value:
            raise ValueError(f"{what} {value} is not exactly representable in {fmt.name}")
        value = as_float
    if not math.isfinite(value):
        # only from Python (JSON has no such numbers): the same as the strings
        return decode("NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity"),
                      fmt, what=what, exact=exact)
    bits, _ = round_float64(value, fmt)
    if bits is None:
        if value <= 0 and not fmt.has_zero:
            raise ValueError(f"{what} {value!r} is not a value of {fmt.name}, whose values are "
                             f"all positive {fmt.range_text()}")
        if abs(value) < float(fmt.max_value):
            raise ValueError(f"{what} {value!r} underflows {fmt.name} {fmt.range_text()}")
        raise ValueError(f"{what} {value!r} is beyond the range of {fmt.name} {fmt.range_text()}")
    back = float(fmt.value_of(bits))
    if exact and back != value:
        raise ValueError(f"{what} {value!r} is not exactly representable in {fmt.name} "
                         f"(nearest: {back!r})")
    if back == 0 and value != 0:
        raise ValueError(f"{what} {value!r} underflows to zero in {fmt.name}")
    return Scalar(bits)


def hex_bits(bits: int, fmt: NumberFormat) -> str:
    """A bit pattern as the fill-value encoding's "0x.." string."""
    return "0x" + format(fmt.logical_bits(bits), f"0{2 * fmt.itemsize}x")


def encode(bits: int, fmt: NumberFormat) -> int | float | str:
    """The JSON form of a bit pattern (NaNs other than the canonical one keep it as hex)."""
    value = fmt.value_of(bits)
    if fmt.is_int:
        return int(value)
    bits = fmt.logical_bits(bits)
    if fmt.is_nan_bits(bits):
        return "NaN" if bits == fmt.nan_bits else hex_bits(bits, fmt)
    f = float(value)
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    return f


def value_to_bits(value: np.generic | float | int, fmt: NumberFormat) -> int:
    """Bit pattern of a value that is already of the format's dtype (a fill value)."""
    return fmt.bits_of(value)
