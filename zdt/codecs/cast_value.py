"""The zarr v3 ``cast_value`` codec (array -> array), backed by zdt's kernels.

Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/cast_value, with the
rulings of zdt's SPEC_NOTES (see README). All semantics live in `zdt.cast`; this class parses
and validates the configuration and connects it to zarr's codec pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
from zarr.abc.codec import ArrayArrayCodec
from zarr.core.common import parse_named_configuration
from zarr.core.dtype import get_data_type_from_json

from zdt import _compat, json_scalar
from zdt.cast import (
    CODEC,
    CastPlan,
    ScalarMapJSON,
    check_fill_round_trip,
    check_wrap_target,
    parse_out_of_range,
    parse_rounding,
    parse_scalar_map,
    plan_for,
)
from zdt.errors import ConfigError
from zdt.formats import NumberFormat, format_for

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import NDBuffer
    from zarr.core.common import JSON

_CONFIG_KEYS = {"data_type", "rounding", "out_of_range", "scalar_map"}


def _data_type_name(data_type: object) -> str:
    """The zarr v3 name of a data type given as a name, {"name": ...}, a ZDType or a dtype."""
    if isinstance(data_type, str):
        return data_type
    if isinstance(data_type, dict):
        extra = set(data_type) - {"name", "configuration"}
        if "name" not in data_type or extra or data_type.get("configuration") not in (None, {}):
            raise ConfigError(
                f"{CODEC}: data_type {data_type!r} is not a data type without configuration "
                f"(expected {{'name': ...}})",
                config_key="data_type",
            )
        return _data_type_name(data_type["name"])
    to_json = getattr(data_type, "to_json", None)
    if to_json is not None:
        return _data_type_name(to_json(zarr_format=3))
    try:
        return np.dtype(data_type).name  # type: ignore[arg-type]
    except TypeError:
        raise ConfigError(
            f"{CODEC}: data_type must be a zarr v3 data type name, got {data_type!r}",
            config_key="data_type",
        ) from None


@dataclass(frozen=True)
class CastValueCodec(ArrayArrayCodec):
    """Value-converting cast to another integer or floating-point data type.

    Parameters
    ----------
    data_type
        Target data type: a zarr v3 name (``"uint8"``), ``{"name": "uint8"}``, a ZDType or a
        NumPy dtype.
    rounding
        ``"nearest-even"`` (default), ``"towards-zero"``, ``"towards-positive"``,
        ``"towards-negative"`` or ``"nearest-away"``; applies to every inexact cast.
    out_of_range
        ``None`` (default: out-of-range values are an error), ``"clamp"`` or ``"wrap"``
        (integer targets only).
    scalar_map
        ``{"encode": [[input, output], ...], "decode": [...]}``; each scalar in the fill-value
        JSON encoding of its side's data type. Checked before rounding and range handling.
    """

    is_fixed_size = True

    dtype: Any                 # the target ZDType
    rounding: str
    out_of_range: str | None
    scalar_map: ScalarMapJSON | None

    def __init__(
        self,
        *,
        data_type: object,
        rounding: str = "nearest-even",
        out_of_range: str | None = None,
        scalar_map: object = None,
    ) -> None:
        name = _data_type_name(data_type)
        format_for(name, role="target data_type")
        zdtype = data_type if hasattr(data_type, "to_native_dtype") else get_data_type_from_json(name, zarr_format=3)
        object.__setattr__(self, "dtype", zdtype)
        object.__setattr__(self, "rounding", parse_rounding(rounding))
        object.__setattr__(self, "out_of_range", parse_out_of_range(out_of_range))
        object.__setattr__(self, "scalar_map", parse_scalar_map(scalar_map))
        check_wrap_target(self.target, self.out_of_range)
        # the target-side scalars of scalar_map can be checked now; the source side needs the
        # array's data type (validate / resolve_metadata)
        for direction, side in (("encode", 1), ("decode", 0)):
            for i, pair in enumerate(self._pairs(direction) or ()):
                try:
                    json_scalar.decode(pair[side], self.target,
                                       what=f"{CODEC}: scalar_map.{direction}[{i}] "
                                            f"{'output' if side else 'input'}")
                except ValueError as e:
                    raise ConfigError(str(e), config_key=f"scalar_map.{direction}") from None

    # --- (de)serialisation ---
    @classmethod
    def from_dict(cls, data: dict[str, JSON]) -> Self:
        _, configuration = parse_named_configuration(data, CODEC, require_configuration=True)
        unknown = sorted(set(configuration) - _CONFIG_KEYS)
        if unknown:
            raise ConfigError(
                f"{CODEC}: unknown configuration key(s) {', '.join(map(repr, unknown))}; "
                f"allowed: {', '.join(sorted(_CONFIG_KEYS))}",
                config_key=unknown[0],
            )
        if "data_type" not in configuration:
            raise ConfigError(f"{CODEC}: configuration needs 'data_type'", config_key="data_type")
        return cls(**configuration)  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, JSON]:
        config: dict[str, JSON] = {"data_type": self.target.name}
        if self.rounding != "nearest-even":
            config["rounding"] = self.rounding
        if self.out_of_range is not None:
            config["out_of_range"] = self.out_of_range
        if self.scalar_map:
            config["scalar_map"] = {d: [list(p) for p in pairs] for d, pairs in self.scalar_map.items()}
        return {"name": CODEC, "configuration": config}

    # --- plans ---
    @property
    def target(self) -> NumberFormat:
        return format_for(self.dtype.to_json(zarr_format=3))

    def _pairs(self, direction: str) -> list | None:
        return (self.scalar_map or {}).get(direction)

    def encode_plan(self, source: str) -> CastPlan:
        return plan_for(source, self.target.name, rounding=self.rounding,
                        out_of_range=self.out_of_range, pairs=self._pairs("encode"),
                        direction="encode")

    def decode_plan(self, source: str) -> CastPlan:
        return plan_for(self.target.name, source, rounding=self.rounding,
                        out_of_range=self.out_of_range, pairs=self._pairs("decode"),
                        direction="decode")

    def _check_source(self, dtype: Any) -> str:
        """Validate everything that depends on the source data type; returns its name."""
        name = _data_type_name(dtype)
        format_for(name, role="source data type (the array's)")
        self.encode_plan(name)   # compiles (so validates) both scalar_map directions
        self.decode_plan(name)
        return name

    # --- zarr hooks ---
    def validate(self, *, shape: tuple[int, ...], dtype: Any, chunk_grid: Any) -> None:
        if _compat.zarr_threads_array_spec():
            self._check_source(dtype)

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Self:
        if _compat.zarr_threads_array_spec():
            self._check_fill(self._check_source(array_spec.dtype), array_spec.fill_value)
        return self

    def resolve_metadata(self, chunk_spec: ArraySpec) -> ArraySpec:
        source = _data_type_name(chunk_spec.dtype)
        if _compat.zarr_threads_array_spec():
            fill = self.encode_plan(source).cast(np.asarray(chunk_spec.fill_value, dtype=format_for(source).dtype))[()]
        else:
            # older zarr handed us the wrong spec at creation: check here, once per fill value
            self._check_source(source)
            fill = self._check_fill(source, chunk_spec.fill_value)
        return replace(chunk_spec, dtype=self.dtype, fill_value=self.dtype.cast_scalar(fill))

    def _check_fill(self, source: str, fill_value: object) -> np.generic:
        src = format_for(source)
        bits = np.asarray(fill_value, dtype=src.dtype).reshape(()).view(src.bits_dtype).item()
        return _checked_fill(self.encode_plan(source), self.decode_plan(source), bits)

    def _encode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer | None:
        arr = np.asarray(chunk_array.as_ndarray_like())
        out = self.encode_plan(_data_type_name(chunk_spec.dtype)).cast(arr)
        return chunk_spec.prototype.nd_buffer.from_ndarray_like(out)

    def _decode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer:
        arr = np.asarray(chunk_array.as_ndarray_like())
        out = self.decode_plan(_data_type_name(chunk_spec.dtype)).cast(arr)
        return chunk_spec.prototype.nd_buffer.from_ndarray_like(out)

    async def _encode_single(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer | None:
        return self._encode_sync(chunk_array, chunk_spec)

    async def _decode_single(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer:
        return self._decode_sync(chunk_array, chunk_spec)

    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        source = format_for(_data_type_name(chunk_spec.dtype))
        return input_byte_length // source.itemsize * self.target.itemsize


@lru_cache(maxsize=256)
def _checked_fill(encode: CastPlan, decode: CastPlan, bits: int) -> np.generic:
    fill = np.array(bits, dtype=encode.source.bits_dtype).view(encode.source.dtype)[()]
    return check_fill_round_trip(encode, decode, fill)
