"""Number formats: one descriptor per zarr data type that cast_value can read or write.

A format is data, not code: the kernels read the descriptor field by field into their `Format`
struct (zdt/_types.pyx, `fill_format`) and the exact path in `_exact.pxd` handles any format it
describes. Formats with a C type also get the fast loops (`type_code`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import math
from collections.abc import Mapping

import numpy as np

from zdt._types import FormatKind, NanStyle, TypeCode
from zdt.errors import ConfigError

FMT_INT, FMT_FLOAT = FormatKind.FMT_INT, FormatKind.FMT_FLOAT
NAN_NONE, NAN_IEEE, NAN_ALL_ONES = NanStyle.NAN_NONE, NanStyle.NAN_IEEE, NanStyle.NAN_ALL_ONES
NAN_NEG_ZERO, NAN_EXP_ONLY = NanStyle.NAN_NEG_ZERO, NanStyle.NAN_EXP_ONLY
_TYPE_CODES = {
    "int8": TypeCode.T_I8, "uint8": TypeCode.T_U8, "int16": TypeCode.T_I16,
    "uint16": TypeCode.T_U16, "int32": TypeCode.T_I32, "uint32": TypeCode.T_U32,
    "int64": TypeCode.T_I64, "uint64": TypeCode.T_U64, "float32": TypeCode.T_F32,
    "float64": TypeCode.T_F64,
    "float16": TypeCode.T_F16,   # no C type: widened to float32 when read, written by f2h
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
    def type_code(self) -> TypeCode:
        return _TYPE_CODES.get(self.name, TypeCode.T_NONE)

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

    def bits_of(self, value: object) -> int:
        """The bit pattern of a value that is already of this format's dtype."""
        return int(np.asarray(value, dtype=self.dtype).reshape(()).view(self.bits_dtype))

    def value_of(self, bits: int) -> np.generic:
        """The scalar whose bit pattern is `bits`."""
        return np.array(bits, dtype=self.bits_dtype).view(self.dtype)[()]

    def describe(self, value: object) -> str:
        """The exact value, shown so it identifies the element (NaN payloads as hex)."""
        if self.is_int:
            return str(int(value))
        f = float(value)
        if math.isnan(f):
            bits = self.bits_of(value)
            canonical = self.bits_of(self.dtype.type("nan"))
            return "nan" if bits == canonical else f"nan (0x{bits:0{2 * self.itemsize}x})"
        return repr(f)      # float16/32 values are float64 values: exact and unambiguous

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


def data_type_name(data_type: object, *, codec: str, config_key: str = "data_type") -> str:
    """The zarr v3 name of a data type given as a name, {"name": ...} (no configuration), a
    ZDType or a NumPy dtype / scalar type; a ConfigError from `codec` otherwise."""
    if isinstance(data_type, str):
        return data_type
    if isinstance(data_type, Mapping):
        extra = set(data_type) - {"name", "configuration"}
        name = data_type.get("name")
        if not isinstance(name, str) or extra or data_type.get("configuration", {}) != {}:
            raise ConfigError(
                f"{codec}: {config_key} {dict(data_type)!r} is not a data type without "
                f"configuration (expected {{'name': '<data type>'}})",
                config_key=config_key,
            )
        return name
    to_json = getattr(data_type, "to_json", None)
    if callable(to_json):
        return data_type_name(to_json(zarr_format=3), codec=codec, config_key=config_key)
    if isinstance(data_type, np.dtype) or (isinstance(data_type, type) and issubclass(data_type, np.generic)):
        return np.dtype(data_type).name
    raise ConfigError(
        f"{codec}: {config_key} must be a zarr v3 data type name, got {data_type!r}",
        config_key=config_key,
    )


def format_for_dtype(dtype: np.dtype, *, role: str = "data type",
                     config_key: str = "data_type", codec: str = "cast_value") -> NumberFormat:
    dtype = np.dtype(dtype)
    return format_for(dtype.name if dtype.kind in "iuf" else str(dtype), role=role,
                      config_key=config_key, codec=codec)
