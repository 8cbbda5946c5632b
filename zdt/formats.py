"""Number formats: one descriptor per zarr data type that cast_value can read or write.

A format is data, not code: the kernels take the descriptor (`NumberFormat.kernel_params`) and
the exact path in `_exact.pxd` handles any format it describes. Formats with a C type also get
the fast loops (`type_code`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from zdt.errors import ConfigError

# Mirrors of the C enums in zdt/_types.pxd.
FMT_INT, FMT_FLOAT = 0, 1
NAN_NONE, NAN_IEEE, NAN_ALL_ONES, NAN_NEG_ZERO, NAN_EXP_ONLY = 0, 1, 2, 3, 4
T_NONE = -1
_TYPE_CODES = {
    "int8": 0, "uint8": 1, "int16": 2, "uint16": 3, "int32": 4, "uint32": 5,
    "int64": 6, "uint64": 7, "float32": 8, "float64": 9,
    "float16": 10,   # no C type: widened to float32 when read, written by the f2h loop
}


@dataclass(frozen=True)
class NumberFormat:
    """How one number format stores its values."""

    name: str                 # zarr v3 data type name
    kind: int                 # FMT_INT or FMT_FLOAT
    bits: int                 # logical width
    itemsize: int             # bytes per element in memory
    signed: bool              # integers: signed; floats: has a sign bit
    exp_bits: int = 0
    man_bits: int = 0
    bias: int = 0
    nan_style: int = NAN_NONE
    has_inf: bool = False
    has_neg_zero: bool = True
    has_zero: bool = True
    has_subnormal: bool = True

    @property
    def is_int(self) -> bool:
        return self.kind == FMT_INT

    @property
    def is_float(self) -> bool:
        return self.kind == FMT_FLOAT

    @cached_property
    def dtype(self) -> np.dtype:
        """The native-order NumPy dtype holding this format in memory."""
        return np.dtype(self.name)

    @property
    def type_code(self) -> int:
        return _TYPE_CODES.get(self.name, T_NONE)

    @cached_property
    def bits_dtype(self) -> np.dtype:
        """Unsigned integer dtype of the same item size, to read bit patterns."""
        return np.dtype(f"u{self.itemsize}")

    @cached_property
    def max_exp_field(self) -> int:
        all_ones = (1 << self.exp_bits) - 1
        if self.nan_style == NAN_IEEE or self.has_inf:
            return all_ones - 1
        if self.nan_style == NAN_EXP_ONLY:
            return all_ones - 1
        return all_ones

    @cached_property
    def max_man(self) -> int:
        all_ones = (1 << self.man_bits) - 1
        if self.nan_style == NAN_ALL_ONES:
            return all_ones - 1
        return all_ones

    def kernel_params(self) -> tuple:
        """The `Format` struct of zdt/_types.pxd, field by field."""
        return (
            self.kind, self.itemsize, self.bits, self.signed, self.man_bits, self.exp_bits,
            self.bias, self.max_exp_field, self.max_man, self.nan_style, self.has_inf,
            self.has_neg_zero, self.has_zero, self.has_subnormal,
        )

    # exact range, for messages and range proofs
    @cached_property
    def min_value(self) -> int | Fraction:
        if self.is_int:
            return -(1 << (self.bits - 1)) if self.signed else 0
        return -self.max_value if self.signed else Fraction(0)

    @cached_property
    def max_value(self) -> int | Fraction:
        if self.is_int:
            return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1
        significand = (1 << self.man_bits) | self.max_man
        return Fraction(significand) * Fraction(2) ** (self.max_exp_field - self.bias - self.man_bits)

    def range_text(self) -> str:
        if self.is_int:
            return f"[{self.min_value}, {self.max_value}]"
        hi = float(self.max_value)
        return f"[{-hi!r}, {hi!r}]" if self.signed else f"[0, {hi!r}]"


def _int(name: str, bits: int, signed: bool) -> NumberFormat:
    return NumberFormat(name, FMT_INT, bits, max(1, bits // 8), signed)


def _ieee(name: str, exp_bits: int, man_bits: int) -> NumberFormat:
    bits = 1 + exp_bits + man_bits
    return NumberFormat(
        name, FMT_FLOAT, bits, bits // 8, True, exp_bits, man_bits,
        (1 << (exp_bits - 1)) - 1, NAN_IEEE, has_inf=True,
    )


FORMATS: dict[str, NumberFormat] = {
    f.name: f
    for f in [
        _int("int8", 8, True), _int("uint8", 8, False),
        _int("int16", 16, True), _int("uint16", 16, False),
        _int("int32", 32, True), _int("uint32", 32, False),
        _int("int64", 64, True), _int("uint64", 64, False),
        _ieee("float16", 5, 10), _ieee("float32", 8, 23), _ieee("float64", 11, 52),
    ]
}

# Data types the cast_value spec defines that zdt cannot hold yet (they need ml_dtypes-backed
# ZDTypes). Named here so the error can say "not yet" instead of "unknown".
PLANNED = (
    "int2", "int4", "uint2", "uint4", "bfloat16", "float4_e2m1fn", "float6_e2m3fn",
    "float6_e3m2fn", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fnuz",
    "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
)


def format_for(name: str, *, role: str = "data type", config_key: str = "data_type",
               codec: str = "cast_value") -> NumberFormat:
    """The NumberFormat of a zarr v3 data type name, or a ConfigError that says why not."""
    try:
        return FORMATS[name]
    except (KeyError, TypeError):
        pass
    if name in PLANNED:
        raise ConfigError(
            f"{codec}: {role} {name!r} is defined by the {codec} spec but zdt does not "
            f"support it yet (supported: {', '.join(FORMATS)})", config_key=config_key,
        )
    raise ConfigError(
        f"{codec}: {role} {name!r} is not an integer or floating-point data type; {codec} "
        f"supports {', '.join(FORMATS)}", config_key=config_key,
    )


def format_for_dtype(dtype: np.dtype, *, role: str = "data type",
                     config_key: str = "data_type", codec: str = "cast_value") -> NumberFormat:
    dtype = np.dtype(dtype)
    return format_for(dtype.name if dtype.kind in "iuf" else str(dtype), role=role,
                      config_key=config_key, codec=codec)
