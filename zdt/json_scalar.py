"""Numeric scalars in the zarr v3 fill-value JSON encoding, read strictly and exactly.

Integers are JSON integers (an integral JSON float such as 3.0 is accepted: JSON does not tell
them apart). Floats are JSON numbers or the strings "NaN", "Infinity", "-Infinity" (and
"+Infinity", which the cast_value spec's own example uses) or "0x" followed by the bit pattern
in exactly 2 * itemsize hex digits. Anything else, including numeric strings like "5", is an
error. Values are returned as bit patterns of the format, never through float64 for 64-bit
integers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from zdt.formats import NumberFormat

_INF_STRINGS = {"Infinity": math.inf, "+Infinity": math.inf, "-Infinity": -math.inf}


@dataclass(frozen=True)
class Scalar:
    """A decoded scalar: its bit pattern in the format, and whether it was the generic "NaN"."""

    bits: int
    any_nan: bool = False


def _describe(value: object) -> str:
    return f"{value!r} ({type(value).__name__})"


def _float_bits(value: float, fmt: NumberFormat) -> int:
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        arr = np.array(value, dtype=np.float64).astype(fmt.dtype)
    return int(arr.view(fmt.bits_dtype))


def decode(value: object, fmt: NumberFormat, *, what: str, exact: bool = False) -> Scalar:
    """Decode one JSON scalar into `fmt`; `what` names it in errors ("scalar_map encode key").

    A JSON number is read as the nearest float64 (what JSON parsers do). With `exact=False`
    (offset, scale, fill values) it then takes the nearest value of a narrower float format,
    as the fill-value encoding reads "0.1" for float32; overflow or underflow to zero is an
    error. With `exact=True` (scalar_map entries, which must match or produce values of the
    type) the float64 reading must itself be a value of the format."""
    if fmt.is_int:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{what} must be a JSON integer for {fmt.name}, got {_describe(value)}")
        if isinstance(value, float):
            if not value.is_integer():
                raise ValueError(f"{what} {value!r} is not an integer, so not representable in {fmt.name}")
            value = int(value)
        if not fmt.min_value <= value <= fmt.max_value:
            raise ValueError(f"{what} {value} is out of range for {fmt.name} {fmt.range_text()}")
        return Scalar(value & ((1 << (8 * fmt.itemsize)) - 1))

    if isinstance(value, str):
        if value == "NaN":
            return Scalar(_float_bits(math.nan, fmt), any_nan=True)
        if value in _INF_STRINGS:
            return Scalar(_float_bits(_INF_STRINGS[value], fmt))
        if value.startswith("0x"):
            digits = value[2:]
            if len(digits) != 2 * fmt.itemsize or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise ValueError(
                    f"{what} {value!r} is not a hex bit pattern of {fmt.name} "
                    f"('0x' and {2 * fmt.itemsize} hex digits)"
                )
            return Scalar(int(digits, 16))
        raise ValueError(
            f"{what} {value!r} is not a valid {fmt.name} scalar: use a JSON number, 'NaN', "
            f"'Infinity', '-Infinity' or a '0x' hex bit pattern"
        )
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
        return Scalar(_float_bits(value, fmt))
    bits = _float_bits(value, fmt)
    back = np.array(bits, dtype=fmt.bits_dtype).view(fmt.dtype).item()
    if not math.isfinite(back):
        raise ValueError(f"{what} {value!r} is beyond the range of {fmt.name} {fmt.range_text()}")
    if exact and back != value:
        raise ValueError(f"{what} {value!r} is not exactly representable in {fmt.name} "
                         f"(nearest: {back!r})")
    if back == 0 and value != 0:
        raise ValueError(f"{what} {value!r} underflows to zero in {fmt.name}")
    return Scalar(bits)


def encode(bits: int, fmt: NumberFormat) -> int | float | str:
    """The JSON form of a bit pattern (NaNs with a payload keep it as hex)."""
    value = np.array(bits, dtype=fmt.bits_dtype).view(fmt.dtype)[()]
    if fmt.is_int:
        return int(value)
    f = float(value)
    if math.isnan(f):
        if bits == _float_bits(math.nan, fmt):
            return "NaN"
        return "0x" + format(bits, f"0{2 * fmt.itemsize}x")
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    return f


def value_to_bits(value: np.generic | float | int, fmt: NumberFormat) -> int:
    """Bit pattern of a value that is already of the format's dtype (a fill value)."""
    return int(np.asarray(value, dtype=fmt.dtype).reshape(()).view(fmt.bits_dtype))
