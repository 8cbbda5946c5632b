"""zarr's ``bytes`` codec with zdt's rule for the sub-byte data types.

zarr-extensions stores int2, int4, uint2, uint4, float4_e2m1fn and float6_* one per byte, the
value in the low bits. Readers must ignore the high bits (other writers leave them as they
like: TensorStore sign-extends int4, ml_dtypes writes zeros) and writers should set them
consistently; zdt writes the sign extension for signed integers and zeros otherwise. zarr's own
codec passes bytes through unchanged, and ml_dtypes reads a float4 byte with a high bit set as
a negative number. This subclass applies the rule on both sides and is otherwise zarr's codec:
zdt makes it the configured ``bytes`` implementation and the serializer of new arrays of these
types (`serializer_rule`), and any other data type goes through zarr's code untouched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from zarr.codecs import BytesCodec as ZarrBytesCodec

from zdt.formats import NumberFormat

if TYPE_CHECKING:
    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import Buffer, NDBuffer


def sub_byte_format(dtype: Any) -> NumberFormat | None:
    """The format of one of zdt's sub-byte data types, else None."""
    fmt = getattr(type(dtype), "format", None)
    return fmt if isinstance(fmt, NumberFormat) and fmt.is_sub_byte else None


def canonical(raw: np.ndarray, fmt: NumberFormat) -> np.ndarray:
    """Bytes of a sub-byte format with the high bits as zdt writes them (a new array)."""
    if fmt.is_int and fmt.signed:
        shift = 8 - fmt.bits
        return ((raw << np.uint8(shift)).view(np.int8) >> np.int8(shift)).view(np.uint8)
    return raw & np.uint8((1 << fmt.bits) - 1)


class BytesCodec(ZarrBytesCodec):   # zarr's dataclass fields, __init__ and (de)serialisation
    """zarr's ``bytes`` codec; for zdt's sub-byte data types, the high bits of each byte are
    ignored on read and written as the sign extension (signed integers) or zero."""

    def _decode_sync(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        decoded = super()._decode_sync(chunk_bytes, chunk_spec)
        fmt = sub_byte_format(chunk_spec.dtype)
        if fmt is None:
            return decoded
        arr = np.asarray(decoded.as_ndarray_like())
        fixed = canonical(arr.view(np.uint8), fmt).view(arr.dtype)
        return chunk_spec.prototype.nd_buffer.from_ndarray_like(fixed)

    def _encode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> Buffer | None:
        fmt = sub_byte_format(chunk_spec.dtype)
        if fmt is not None:
            arr = np.asarray(chunk_array.as_ndarray_like())
            fixed = canonical(arr.view(np.uint8), fmt).view(arr.dtype)
            chunk_array = chunk_spec.prototype.nd_buffer.from_ndarray_like(fixed)
        return super()._encode_sync(chunk_array, chunk_spec)


def serializer_rule(dtype: Any, serializer: Any) -> Any:
    """zdt's bytes codec for new arrays of sub-byte types (see zdt.zarr_compat)."""
    if sub_byte_format(dtype) is not None and type(serializer) is ZarrBytesCodec:
        return BytesCodec(endian=serializer.endian)
    return None
