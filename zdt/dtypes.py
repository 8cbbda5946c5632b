"""zarr data types (ZDType) for the low-precision formats zarr-python does not ship.

The zarr-extensions data types int2, int4, uint2, uint4, bfloat16, float4_e2m1fn,
float6_e2m3fn, float6_e3m2fn, float8_e3m4, float8_e4m3, float8_e4m3b11fnuz, float8_e4m3fnuz,
float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu, and float8_e4m3fn (finite-only E4M3, max 448:
PyTorch's and TensorStore's FP8 E4M3; zarr-extensions' float8_e4m3 is the IEEE-like format with
infinities and max 240). In memory they are ml_dtypes arrays.

* Names: the zarr v3 ``data_type`` is the type's name; zarr format 2 (which defines none of
  them) stores the same name as ``.zarray`` ``dtype``, as TensorStore does. ml_dtypes'
  ``dtype.str`` (``<V1``, ``<V2``) is never written or claimed: it means raw bytes to zarr.
* Fill values (zarr v3 fill-value encoding, rulings in docs/spec-rulings.md): integers as JSON
  integers in range; floats as JSON numbers (rounded once to the nearest value, ties to even;
  beyond the finite range is an error), "NaN" (the type's canonical NaN, where it has one),
  "Infinity" / "-Infinity" (where it has them) and "0x.." bit patterns (2 hex digits per byte).
* One behaviour, driven by class attributes: each class names its type; the format
  descriptor (zdt.formats) and the ml_dtypes dtype follow from the name.

Importing this module registers nothing: zarr >= 3.2 loads these classes through zdt's
``zarr.data_type`` entry points; on zarr 3.1, which does not, `register` (``zdt.register()``)
does it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import ml_dtypes
import numpy as np
from zarr.core.dtype import ZDType, data_type_registry
from zarr.core.dtype.common import HasEndianness, HasItemSize, check_dtype_spec_v2

from zdt.formats import json_scalar
from zdt.formats import FORMATS, LOW_PRECISION, NumberFormat

try:
    from zarr.errors import DataTypeValidationError
except ImportError:     # zarr 3.1.x
    from zarr.core.dtype.common import DataTypeValidationError


@dataclass(frozen=True, kw_only=True)
class LowPrecisionDType(ZDType[Any, Any], HasItemSize):
    """Base of zdt's data types: everything follows from `_zarr_v3_name`."""

    _zarr_v3_name: ClassVar[str]
    dtype_cls: ClassVar[type]
    format: ClassVar[NumberFormat]
    # write finite fill values as "0x.." bit patterns rather than JSON numbers (the fill-value
    # encoding allows both for floats)
    _hex_fill_values: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("_zarr_v3_name")
        if name is not None:
            cls.format = FORMATS[name]
            cls.dtype_cls = type(np.dtype(getattr(ml_dtypes, name)))

    # --- the data type ---
    @classmethod
    def from_native_dtype(cls, dtype: Any) -> LowPrecisionDType:
        if cls._check_native_dtype(dtype):
            return cls._from_native(dtype)
        raise DataTypeValidationError(
            f"Invalid data type: {dtype}. Expected an instance of {cls.dtype_cls}")

    @classmethod
    def _from_native(cls, dtype: np.dtype) -> LowPrecisionDType:
        return cls()

    def to_native_dtype(self) -> np.dtype:
        return np.dtype(getattr(ml_dtypes, self._zarr_v3_name))

    @property
    def item_size(self) -> int:
        return self.format.itemsize

    @classmethod
    def _v2_names(cls) -> tuple[str, ...]:
        """The ``.zarray`` dtype strings this type reads (zarr format 2 defines none of them:
        the type's name, as TensorStore writes it)."""
        return (cls._zarr_v3_name,)

    def _v2_name(self) -> str:
        return self._zarr_v3_name

    @classmethod
    def _check_json_v2(cls, data: object) -> bool:
        return (check_dtype_spec_v2(data) and data["name"] in cls._v2_names()  # type: ignore[index]
                and data["object_codec_id"] is None)  # type: ignore[index]

    @classmethod
    def _check_json_v3(cls, data: object) -> bool:
        if isinstance(data, str):
            return data == cls._zarr_v3_name
        return (isinstance(data, dict) and data.get("name") == cls._zarr_v3_name
                and set(data) <= {"name", "configuration"} and data.get("configuration", {}) == {})

    @classmethod
    def _from_json_v2(cls, data: object) -> LowPrecisionDType:
        if cls._check_json_v2(data):
            return cls._from_v2(data["name"])  # type: ignore[index]
        raise DataTypeValidationError(
            f"Invalid JSON representation of {cls.__name__}: {data!r}; expected "
            f"{{'name': {cls._zarr_v3_name!r}, 'object_codec_id': None}}")

    @classmethod
    def _from_v2(cls, name: str) -> LowPrecisionDType:
        return cls()

    @classmethod
    def _from_json_v3(cls, data: object) -> LowPrecisionDType:
        if cls._check_json_v3(data):
            return cls()
        raise DataTypeValidationError(
            f"Invalid JSON representation of {cls.__name__}: {data!r}; expected "
            f"{cls._zarr_v3_name!r}")

    def to_json(self, zarr_format: Literal[2, 3]) -> Any:  # type: ignore[override]
        if zarr_format == 2:
            return {"name": self._v2_name(), "object_codec_id": None}
        if zarr_format == 3:
            return self._zarr_v3_name
        raise ValueError(f"zarr_format must be 2 or 3, got {zarr_format}")

    # --- scalars ---
    def _check_scalar(self, data: object) -> bool:
        if isinstance(data, bool):
            return False
        return isinstance(data, (int, float, str, np.generic))

    def cast_scalar(self, data: object) -> np.generic:
        """A value of this type: its own scalars as they are; numbers exactly as the fill-value
        encoding reads them (nearest value, ties to even; out of range is an error)."""
        if isinstance(data, self.dtype_cls.type):
            return data
        if not self._check_scalar(data):
            raise TypeError(f"Cannot convert {data!r} ({type(data).__name__}) to a scalar of {self}")
        if isinstance(data, np.generic):
            if np.asarray(data).dtype.name in FORMATS and not isinstance(data, (np.integer, np.floating)):
                data = float(data)          # another ml_dtypes type: its exact value
            else:
                data = data.item()
        return self.format.value_of(self._bits(data, what="value"))

    def _bits(self, value: object, *, what: str) -> int:
        try:
            return json_scalar.decode(value, self.format, what=f"{self._zarr_v3_name} {what}").bits
        except ValueError as e:
            raise ValueError(str(e)) from None

    def default_scalar(self) -> np.generic:
        """0, or for float8_e8m0fnu (which has no zero) the all-zero bit pattern, 2**-127."""
        return self.format.value_of(0)

    def from_json_scalar(self, data: object, *, zarr_format: Literal[2, 3]) -> np.generic:
        if isinstance(data, float) and not math.isfinite(data):
            raise TypeError(f"Invalid fill value {data!r} for {self._zarr_v3_name}")
        return self.format.value_of(self._bits(data, what="fill value"))

    def to_json_scalar(self, data: object, *, zarr_format: Literal[2, 3]) -> Any:
        bits = self.format.bits_of(self.cast_scalar(data))
        value = json_scalar.encode(bits, self.format)
        if self._hex_fill_values and isinstance(value, float):
            return json_scalar.hex_bits(bits, self.format)
        return value


@dataclass(frozen=True, kw_only=True)
class BFloat16(LowPrecisionDType, HasEndianness):
    """bfloat16: the only multi-byte one, so it has a byte order. In zarr v3 the bytes codec's
    ``endian`` says how chunks store it. In zarr format 2 the dtype string carries it:
    "bfloat16" is little-endian (what TensorStore writes and reads, its only spelling) and
    ">bfloat16" big-endian; "<bfloat16" is read too."""

    _zarr_v3_name: ClassVar[Literal["bfloat16"]] = "bfloat16"

    @classmethod
    def _from_native(cls, dtype: np.dtype) -> BFloat16:
        order = dtype.byteorder
        if order == "=":
            order = "<" if np.little_endian else ">"
        return cls(endianness="big" if order == ">" else "little")

    def to_native_dtype(self) -> np.dtype:
        return np.dtype(ml_dtypes.bfloat16).newbyteorder("<" if self.endianness == "little" else ">")

    @classmethod
    def _v2_names(cls) -> tuple[str, ...]:
        return ("bfloat16", "<bfloat16", ">bfloat16")

    def _v2_name(self) -> str:
        return "bfloat16" if self.endianness == "little" else ">bfloat16"

    @classmethod
    def _from_v2(cls, name: str) -> BFloat16:
        return cls(endianness="big" if name.startswith(">") else "little")


class Int2(LowPrecisionDType): _zarr_v3_name = "int2"                          # noqa: E701
class Int4(LowPrecisionDType): _zarr_v3_name = "int4"                          # noqa: E701
class UInt2(LowPrecisionDType): _zarr_v3_name = "uint2"                        # noqa: E701
class UInt4(LowPrecisionDType): _zarr_v3_name = "uint4"                        # noqa: E701
class Float4E2M1FN(LowPrecisionDType): _zarr_v3_name = "float4_e2m1fn"         # noqa: E701
class Float6E2M3FN(LowPrecisionDType): _zarr_v3_name = "float6_e2m3fn"         # noqa: E701
class Float6E3M2FN(LowPrecisionDType): _zarr_v3_name = "float6_e3m2fn"         # noqa: E701
class Float8E3M4(LowPrecisionDType): _zarr_v3_name = "float8_e3m4"             # noqa: E701
class Float8E4M3(LowPrecisionDType): _zarr_v3_name = "float8_e4m3"             # noqa: E701
class Float8E4M3FN(LowPrecisionDType): _zarr_v3_name = "float8_e4m3fn"         # noqa: E701
class Float8E4M3FNUZ(LowPrecisionDType): _zarr_v3_name = "float8_e4m3fnuz"     # noqa: E701
class Float8E4M3B11FNUZ(LowPrecisionDType): _zarr_v3_name = "float8_e4m3b11fnuz"  # noqa: E701
class Float8E5M2(LowPrecisionDType): _zarr_v3_name = "float8_e5m2"             # noqa: E701
class Float8E5M2FNUZ(LowPrecisionDType): _zarr_v3_name = "float8_e5m2fnuz"     # noqa: E701


class Float8E8M0FNU(LowPrecisionDType):
    """float8_e8m0fnu: finite fill values are written as "0x.." bit patterns, which every
    reader takes exactly (TensorStore 0.1.86 reads a JSON number fill value of this type wrong:
    2.0 as 2**-63)."""

    _zarr_v3_name = "float8_e8m0fnu"
    _hex_fill_values = True


DATA_TYPES: dict[str, type[LowPrecisionDType]] = {
    cls._zarr_v3_name: cls
    for cls in (Int2, Int4, UInt2, UInt4, BFloat16, Float4E2M1FN, Float6E2M3FN, Float6E3M2FN,
                Float8E3M4, Float8E4M3, Float8E4M3FN, Float8E4M3FNUZ, Float8E4M3B11FNUZ,
                Float8E5M2, Float8E5M2FNUZ, Float8E8M0FNU)
}
assert set(DATA_TYPES) == set(LOW_PRECISION)


def register() -> None:
    """Register zdt's data types with zarr's data-type registry (idempotent; adds, never
    replaces another class under these names). zarr >= 3.2 loads them by itself through
    zdt's ``zarr.data_type`` entry points; zarr 3.1 never loads that group, so there
    ``zdt.register()`` is the one call that makes ``dtype="bfloat16"`` etc. known."""
    for name, cls in DATA_TYPES.items():
        if name not in data_type_registry.contents:
            data_type_registry.register(name, cls)


def zdtype_for(name: str) -> ZDType[Any, Any]:
    """The ZDType of a zarr v3 data type name without configuration: zdt's own types
    directly (registered or not), anything else through zarr's registry."""
    cls = DATA_TYPES.get(name)
    if cls is not None:
        return cls()
    from zarr.core.dtype import get_data_type_from_json

    return get_data_type_from_json(name, zarr_format=3)
