"""The zarr v3 ``packbits`` codec (array -> bytes): elements at their real bit width.

Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/packbits; the
configuration, the bit order zdt uses and the data types are described in zdt.codecs.packbits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from zarr.abc.codec import ArrayBytesCodec

from zdt.codecs.config_json import parse_envelope
from zdt.codecs.packbits import CODEC, PackBitsConfig, layout_for
from zdt.codecs.zarr._base import SyncCodec

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import Buffer, NDBuffer
    from zarr.core.common import JSON


@dataclass(frozen=True, repr=False)
class PackBitsCodec(SyncCodec, ArrayBytesCodec):
    """packbits: ``padding_encoding`` ("none", "first_byte", "last_byte"), ``first_bit``,
    ``last_bit`` (the bits of each element kept; default all)."""

    is_fixed_size = True

    config: PackBitsConfig

    def __init__(self, *, padding_encoding: str = "none", first_bit: int | None = None,
                 last_bit: int | None = None) -> None:
        object.__setattr__(self, "config", PackBitsConfig.create(
            padding_encoding=padding_encoding, first_bit=first_bit, last_bit=last_bit))

    @classmethod
    def from_dict(cls, data: dict[str, JSON]) -> Self:
        config = PackBitsConfig.from_json(parse_envelope(data, CODEC, require_configuration=False))
        return cls(padding_encoding=config.padding_encoding, first_bit=config.first_bit,
                   last_bit=config.last_bit)

    def to_dict(self) -> dict[str, JSON]:
        config = self.config.to_json()
        return {"name": CODEC, "configuration": config} if config else {"name": CODEC}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.config.to_json().items())
        return f"{type(self).__name__}({args})"

    def validate(self, *, shape: tuple[int, ...], dtype: Any, chunk_grid: Any) -> None:
        self.config.bit_range(layout_for(dtype.to_native_dtype()))

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Self:
        return self

    def _encode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> Buffer | None:
        arr = np.asarray(chunk_array.as_ndarray_like())
        if arr.dtype != chunk_spec.dtype.to_native_dtype():
            arr = arr.astype(chunk_spec.dtype.to_native_dtype())
        return chunk_spec.prototype.buffer.from_array_like(self.config.encode(arr))

    def _decode_sync(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        out = self.config.decode(chunk_bytes.as_array_like(), chunk_spec.dtype.to_native_dtype(),
                                 tuple(chunk_spec.shape))
        return chunk_spec.prototype.nd_buffer.from_ndarray_like(out)

    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        dtype = chunk_spec.dtype.to_native_dtype()
        return self.config.encoded_size(dtype, input_byte_length // dtype.itemsize)
