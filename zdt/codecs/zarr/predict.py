"""The zarr v3 ``zdt.predict`` codec (array -> bytes): error-bounded prediction of float
arrays, and of 8- to 32-bit integer arrays (CF-packed data) through their values as float64.
Spec: docs/codecs/predict.md; what it computes: zdt.codecs.predict."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from zarr.abc.codec import ArrayBytesCodec

from zdt.codecs.config_json import parse_envelope
from zdt.codecs.predict_config import CODEC, PredictConfig
from zdt.codecs.zarr._base import SyncCodec

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import Buffer, NDBuffer
    from zarr.core.common import JSON


@dataclass(frozen=True, repr=False)
class PredictCodec(SyncCodec, ArrayBytesCodec):
    """zdt.predict: ``abs_error`` (every element decodes within it) or ``rel_error`` (every
    element within it times its magnitude, zeros and signs kept), ``predictor`` ("auto",
    "lorenzo", "interpolation", "interpolation_reversed", "interpolation_slices"), ``level``
    (zstd's), ``entropy`` ("auto", "ans", "zstd", "pcodec", "pcodec_levels"), ``keep``
    (integer arrays: values stored exactly, such as a CF _FillValue), ``fill`` (float arrays:
    the missing-data value the data hold, kept exactly and predicted around, when it is not
    the array's fill value), ``mask`` (a reference for the masks of chunks whose last two
    extents are its shape: {"shape": [n2, n3], "stream": base64}, or a ReferenceMask; a land
    mask repeated in every chunk along time then costs next to nothing in each), ``effort``
    (how hard `auto` looks for the smallest chunk: "fast", "default" or "max")."""

    # chunks encoded moments ago, to take instead of encoding again: take(config, arr, fill) ->
    # bytes or None, keep(config, arr, fill, data); None here (zdt.engine.writer sets its
    # convert-time memo, zdt.engine.predict_memo)
    encoded: ClassVar[Any] = None

    is_fixed_size = False

    config: PredictConfig

    def __init__(self, *, abs_error: float | None = None, predictor: str = "auto", level: int = 3,
                 entropy: str = "auto", keep: list[int] | tuple[int, ...] = (),
                 rel_error: float | None = None, fill: float | str | None = None,
                 mask: Any = None, effort: str = "default") -> None:
        object.__setattr__(self, "config", PredictConfig.create(
            abs_error=abs_error, predictor=predictor, level=level, entropy=entropy, keep=keep,
            rel_error=rel_error, fill=fill, mask=mask, effort=effort))

    @classmethod
    def from_dict(cls, data: dict[str, JSON]) -> Self:
        config = PredictConfig.from_json(parse_envelope(data, CODEC, require_configuration=True))
        return cls(**config.to_json())

    def to_dict(self) -> dict[str, JSON]:
        return {"name": CODEC, "configuration": self.config.to_json()}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.config.to_json().items())
        return f"{type(self).__name__}({args})"

    def validate(self, *, shape: tuple[int, ...], dtype: Any, chunk_grid: Any) -> None:
        self.config.check_dtype(dtype.to_native_dtype())

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Self:
        return self

    def _encode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> Buffer | None:
        arr = np.asarray(chunk_array.as_ndarray_like())
        arr = arr.astype(chunk_spec.dtype.to_native_dtype(), copy=False)
        memo = PredictCodec.encoded
        data = memo.take(self.config, arr, chunk_spec.fill_value) if memo is not None else None
        if data is None:
            data = self.config.encode(arr, chunk_spec.fill_value)
            if memo is not None:
                memo.keep(self.config, arr, chunk_spec.fill_value, data)
        return chunk_spec.prototype.buffer.from_bytes(data)

    def _decode_sync(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        out = self.config.decode(chunk_bytes.as_numpy_array(), chunk_spec.dtype.to_native_dtype(),
                                 tuple(chunk_spec.shape), chunk_spec.fill_value)
        return chunk_spec.prototype.nd_buffer.from_ndarray_like(out)

    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        raise NotImplementedError(f"{CODEC} is not of fixed size")
