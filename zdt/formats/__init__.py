"""Number formats: one descriptor per zarr data type that cast_value can read or write.

A format is data, not code: the kernels read the descriptor field by field into their `Format`
struct (zdt/kernels/_types.pyx, `fill_format`) and the exact path in `_exact.pxd` handles any format it
describes. Formats with a C type also get the fast loops (`type_code`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import math
from collections.abc import Mapping

import ml_dtypes  # noqa: F401  (makes NumPy know the low-precision dtypes by name)
import numpy as np

from zdt.kernels._types import FormatKind, FormatRules, NanStyle, TypeCode
from zdt.errors import ConfigError

FMT_INT, FMT_FLOAT = FormatKind.FMT_INT, FormatKind.FMT_FLOAT
NAN_NONE, NAN_IEEE, NAN_ALL_ONES = NanStyle.NAN_NONE, NanStyle.NAN_IEEE, NanStyle.NAN_ALL_ONES
NAN_NEG_ZERO, NAN_EXP_ONLY = NanStyle.NAN_NEG_ZERO, NanStyle.NAN_EXP_ONLY
_TYPE_CODES = {
    "int8": TypeCode.T_I8, "uint8": TypeCode.T_U8, "int16": TypeCode.T_I16,
    "uint16": TypeCode.T_U16, "int32": TypeCode.T_I32, "uint32": TypeCode.T_U32,
    "int64": TypeCode.T_I64, "uint64": TypeCode.T_U64, "float32": TypeCode.T_F32,
    "float64": TypeCode.T_F64,
    # sub-byte integers: the C type of their storage (the loops apply the logical width)
    "int2": TypeCode.T_I8, "int4": TypeCode.T_I8, "uint2": TypeCode.T_U8, "uint4": TypeCode.T_U8,
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
        """The C type the fast loops store it as; T_MINI for a small float format the bit-pattern
        loop writes (every signed one with subnormals: all but float8_e8m0fnu); T_NONE when
        only the exact path writes it."""
        if self.name in _TYPE_CODES:
            return _TYPE_CODES[self.name]
        if self.is_float and self.itemsize <= 2 and self.signed and self.has_subnormal:
            return TypeCode.T_MINI
        return TypeCode.T_NONE

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
        """The scalar whose bit pattern is `bits` (the unused high bits of a sub-byte format
        are ignored: ml_dtypes would read some of them as a sign)."""
        if self.is_sub_byte:
            bits = self.storage_bits(bits)
        return np.array(bits, dtype=self.bits_dtype).view(self.dtype)[()]

    def describe(self, value: object) -> str:
        """The exact value, shown so it identifies the element (NaN payloads as hex)."""
        if self.is_int:
            return str(int(value))
        f = float(value)
        if math.isnan(f):
            bits = self.logical_bits(self.bits_of(value))
            return "nan" if bits == self.nan_bits else f"nan (0x{bits:0{2 * self.itemsize}x})"
        return repr(f)      # float16/32 values are float64 values: exact and unambiguous

    # exact range, for messages and range proofs
    @cached_property
    def min_value(self) -> int | Fraction:
        """The smallest value (for a float without sign or zero, float8_e8m0fnu, its smallest
        positive value)."""
        if self.is_int:
            return -(1 << (self.bits - 1)) if self.signed else 0
        if self.signed:
            return -self.max_value
        if self.has_zero:
            return Fraction(0)
        exp = (1 if self.has_subnormal else 0) - self.bias - self.man_bits
        return Fraction(2) ** exp * (1 if self.has_subnormal else (1 << self.man_bits))

    @cached_property
    def max_value(self) -> int | Fraction:
        if self.is_int:
            return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1
        significand = (1 << self.man_bits) | self.max_man
        return Fraction(significand) * Fraction(2) ** (self.max_exp_field - self.bias - self.man_bits)

    def range_text(self) -> str:
        if self.is_int:
            return f"[{self.min_value}, {self.max_value}]"
        return f"[{float(self.min_value)!r}, {float(self.max_value)!r}]"

    @cached_property
    def nan_bits(self) -> int | None:
        """The bit pattern "NaN" means (the zarr-extensions canonical NaN), None without NaN."""
        exp_all = (1 << self.exp_bits) - 1
        if self.nan_style == NAN_IEEE:
            return (exp_all << self.man_bits) | (1 << (self.man_bits - 1))
        if self.nan_style == NAN_ALL_ONES:
            return (exp_all << self.man_bits) | ((1 << self.man_bits) - 1)
        if self.nan_style == NAN_NEG_ZERO:
            return 1 << (self.bits - 1)
        if self.nan_style == NAN_EXP_ONLY:
            return (1 << self.bits) - 1
        return None

    @cached_property
    def inf_bits(self) -> int | None:
        """The bit pattern of +Infinity, None without infinities."""
        return ((1 << self.exp_bits) - 1) << self.man_bits if self.has_inf else None

    @cached_property
    def _rules(self) -> FormatRules:
        return FormatRules(self)

    def is_nan_bits(self, bits: int) -> bool:
        """Whether a bit pattern is a NaN of this format, by the kernels' own rule."""
        return self._rules.is_nan(bits)

    @property
    def is_sub_byte(self) -> bool:
        """Stored one per byte with unused high bits (int4, float4_e2m1fn, ...)."""
        return self.bits < 8 * self.itemsize

    def logical_bits(self, bits: int) -> int:
        """A bit pattern without the unused high bits of a sub-byte format."""
        return bits & ((1 << self.bits) - 1)

    def storage_bits(self, bits: int) -> int:
        """The bit pattern as zdt stores it: the high bits of a sub-byte format are the sign
        extension for signed integers and zero otherwise."""
        bits = self.logical_bits(bits)
        if self.is_int and self.signed and bits >> (self.bits - 1):
            bits |= ((1 << (8 * self.itemsize)) - 1) & ~((1 << self.bits) - 1)
        return bits


def _int(name: str, bits: int, signed: bool) -> NumberFormat:
    return NumberFormat(name, FMT_INT, bits, max(1, bits // 8), signed)


def _ieee(name: str, exp_bits: int, man_bits: int) -> NumberFormat:
    """An IEEE 754-style format: bias 2**(e-1) - 1, infinities, NaN = exponent all ones."""
    bits = 1 + exp_bits + man_bits
    return NumberFormat(
        name, FMT_FLOAT, bits, bits // 8, True, exp_bits, man_bits,
        (1 << (exp_bits - 1)) - 1, NAN_IEEE, has_inf=True,
    )


def _finite(name: str, exp_bits: int, man_bits: int, bias: int, nan_style: int) -> NumberFormat:
    """A format without infinities ("fn"): NaN as `nan_style` says (or none), and the "uz"
    ones (NaN = the pattern of -0) without a negative zero."""
    bits = 1 + exp_bits + man_bits
    return NumberFormat(name, FMT_FLOAT, bits, max(1, bits // 8), True, exp_bits, man_bits,
                        bias, nan_style, has_inf=False, has_neg_zero=nan_style != NAN_NEG_ZERO)


# Every data type cast_value reads and writes. The low-precision ones are zarr-extensions'
# data-types/<name>/README.md (plus float8_e4m3fn: finite-only E4M3, max 448, NaN 0x7f/0xff,
# PyTorch's and TensorStore's FP8 E4M3, which zarr-extensions' IEEE-like float8_e4m3 is not);
# in memory they are ml_dtypes arrays, one byte per element below 8 bits (value in the low bits).
FORMATS: dict[str, NumberFormat] = {
    f.name: f
    for f in [
        _int("int8", 8, True), _int("uint8", 8, False),
        _int("int16", 16, True), _int("uint16", 16, False),
        _int("int32", 32, True), _int("uint32", 32, False),
        _int("int64", 64, True), _int("uint64", 64, False),
        _ieee("float16", 5, 10), _ieee("float32", 8, 23), _ieee("float64", 11, 52),
        _int("int2", 2, True), _int("uint2", 2, False),
        _int("int4", 4, True), _int("uint4", 4, False),
        _ieee("bfloat16", 8, 7),
        _ieee("float8_e3m4", 3, 4), _ieee("float8_e4m3", 4, 3), _ieee("float8_e5m2", 5, 2),
        _finite("float8_e4m3fn", 4, 3, 7, NAN_ALL_ONES),
        _finite("float8_e4m3fnuz", 4, 3, 8, NAN_NEG_ZERO),
        _finite("float8_e4m3b11fnuz", 4, 3, 11, NAN_NEG_ZERO),
        _finite("float8_e5m2fnuz", 5, 2, 16, NAN_NEG_ZERO),
        NumberFormat("float8_e8m0fnu", FMT_FLOAT, 8, 1, False, 8, 0, 127, NAN_EXP_ONLY,
                     has_inf=False, has_neg_zero=False, has_zero=False, has_subnormal=False),
        _finite("float6_e2m3fn", 2, 3, 1, NAN_NONE),
        _finite("float6_e3m2fn", 3, 2, 3, NAN_NONE),
        _finite("float4_e2m1fn", 2, 1, 1, NAN_NONE),
    ]
}
# The types NumPy itself has; ml_dtypes provides the dtypes of all the others (zdt's ZDTypes).
NUMPY_TYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
               "float16", "float32", "float64")
LOW_PRECISION = tuple(name for name in FORMATS if name not in NUMPY_TYPES)


def format_for(name: str, *, role: str = "data type", config_key: str = "data_type",
               codec: str = "cast_value") -> NumberFormat:
    """The NumberFormat of a zarr v3 data type name, or a ConfigError that says why not."""
    try:
        return FORMATS[name]
    except (KeyError, TypeError):
        pass
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


def sub_byte_format(data_type: object) -> NumberFormat | None:
    """The format of a sub-byte data type (int2, int4, uint2, uint4, float4_e2m1fn, float6_*)
    given as one of zdt's ZDTypes (their class carries the format), a name or a NumPy dtype;
    None for any other data type (asked of no other object: zarr warns when some of its own
    data types are asked for their v3 name)."""
    fmt = getattr(type(data_type), "format", None)
    if not isinstance(fmt, NumberFormat):
        if isinstance(data_type, str):
            fmt = FORMATS.get(data_type)
        elif isinstance(data_type, np.dtype):
            fmt = FORMATS.get(data_type.name)
    return fmt if fmt is not None and fmt.is_sub_byte else None


def format_for_dtype(dtype: np.dtype, *, role: str = "data type",
                     config_key: str = "data_type", codec: str = "cast_value") -> NumberFormat:
    dtype = np.dtype(dtype)
    return format_for(dtype.name if dtype.name in FORMATS else str(dtype), role=role,
                      config_key=config_key, codec=codec)
