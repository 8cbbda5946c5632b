"""The zarr v3 ``scale_offset`` codec (array -> array), backed by zdt's checked kernels.

Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/scale_offset, with
the rulings of zdt's SPEC_NOTES. Semantics live in `zdt.scale_offset`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from zarr.abc.codec import ArrayArrayCodec

from zdt import _compat
from zdt.cast import data_type_name, describe_value
from zdt.codecs._common import SyncCodec, parse_codec_json
from zdt.errors import FillValueError
from zdt.scale_offset import CODEC, ScaleOffsetError, ScaleOffsetPlan, parse_scalar_config, plan_for

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import NDBuffer
    from zarr.core.common import JSON


def _is_default(value: object, default: int) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == default


@dataclass(frozen=True)
class ScaleOffsetCodec(SyncCodec, ArrayArrayCodec):
    """Encode ``(x - offset) * scale``, decode ``x / scale + offset``, in the array's data type.

    ``offset`` and ``scale`` are JSON scalars in the fill-value encoding of the array's data
    type (numbers, or "NaN"/"Infinity"/hex strings for floats). Integer arithmetic is checked
    (overflow and inexact division are errors); for floats a finite value must stay finite.
    """

    is_fixed_size = True

    offset: int | float | str
    scale: int | float | str

    def __init__(self, *, offset: object = 0, scale: object = 1) -> None:
        object.__setattr__(self, "offset", parse_scalar_config(offset, "offset"))
        object.__setattr__(self, "scale", parse_scalar_config(scale, "scale"))

    @classmethod
    def from_dict(cls, data: dict[str, JSON]) -> Self:
        config = parse_codec_json(data, CODEC, allowed={"offset", "scale"},
                                  require_configuration=False)
        return cls(**config)  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, JSON]:
        config: dict[str, JSON] = {}
        if not _is_default(self.offset, 0):
            config["offset"] = self.offset
        if not _is_default(self.scale, 1):
            config["scale"] = self.scale
        return {"name": CODEC, "configuration": config} if config else {"name": CODEC}

    def plan(self, dtype: Any) -> ScaleOffsetPlan:
        return plan_for(data_type_name(dtype), self.offset, self.scale)

    def _encode_fill(self, spec: ArraySpec) -> object:
        plan = self.plan(spec.dtype)
        fill = np.asarray(spec.fill_value, dtype=plan.fmt.dtype).reshape(())
        try:
            return plan.encode(fill)[()]
        except ScaleOffsetError as e:
            raise FillValueError(
                f"{CODEC}: the fill value {describe_value(e.value, plan.fmt)} ({e.dtype}) "
                f"cannot be encoded: {e.detail}", config_key=e.config_key) from None

    # --- zarr hooks ---
    def validate(self, *, shape: tuple[int, ...], dtype: Any, chunk_grid: Any) -> None:
        if _compat.zarr_threads_array_spec():
            self.plan(dtype)

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Self:
        spec = array_spec if _compat.zarr_threads_array_spec() else _compat.array_spec_before(self, array_spec)
        if spec is not None:
            self._encode_fill(spec)
        return self

    def resolve_metadata(self, chunk_spec: ArraySpec) -> ArraySpec:
        fill = self._encode_fill(chunk_spec)
        return replace(chunk_spec, fill_value=chunk_spec.dtype.cast_scalar(fill))

    def _encode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer | None:
        out = self.plan(chunk_spec.dtype).encode(np.asarray(chunk_array.as_ndarray_like()),
                                                 where="chunk element")
        return chunk_spec.prototype.nd_buffer.from_ndarray_like(out)

    def _decode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer:
        # Always into a new array: the input may be held by the caller. (Decoding in place when
        # the input looked private saved an allocation, but a reference count cannot see who
        # holds the buffer object around the array.)
        out = self.plan(chunk_spec.dtype).decode(np.asarray(chunk_array.as_ndarray_like()),
                                                 where="chunk element")
        return chunk_spec.prototype.nd_buffer.from_ndarray_like(out)



    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        return input_byte_length
