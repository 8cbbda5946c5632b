"""The zarr v3 ``cast_value`` codec (array -> array), backed by zdt's kernels.

Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/cast_value, with the
rulings of zdt's SPEC_NOTES (see README). All semantics live in `zdt.cast`; this class parses
and validates the configuration and connects it to zarr's codec pipeline.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
from zarr.abc.codec import ArrayArrayCodec
from zarr.core.dtype import get_data_type_from_json

from zdt import _compat, json_scalar
from zdt.cast import (
    CODEC,
    CastPlan,
    check_fill_round_trip,
    check_wrap_target,
    data_type_name,
    parse_out_of_range,
    parse_rounding,
    parse_scalar_map,
    plan_for,
)
from zdt.codecs._common import SyncCodec, parse_codec_json
from zdt.errors import ConfigError
from zdt.formats import NumberFormat, format_for

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import NDBuffer
    from zarr.core.common import JSON

_CONFIG_KEYS = {"data_type", "rounding", "out_of_range", "scalar_map"}


class ScalarMap(Mapping):
    """An immutable, hashable scalar_map: {"encode": [[in, out], ...], "decode": [...]}.
    (Codecs are frozen values; a dict field would make them unhashable.)"""

    __slots__ = ("_items",)

    def __init__(self, parsed: Mapping[str, list]) -> None:
        self._items = tuple((d, tuple(tuple(p) for p in parsed[d])) for d in ("encode", "decode")
                            if d in parsed)

    def __getitem__(self, direction: str) -> list[list[object]]:
        for d, pairs in self._items:
            if d == direction:
                return [list(p) for p in pairs]
        raise KeyError(direction)

    def __iter__(self) -> Iterator[str]:
        return (d for d, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(self._items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and dict(self) == dict(other)

    def __repr__(self) -> str:
        return repr(dict(self))


@dataclass(frozen=True)
class CastValueCodec(SyncCodec, ArrayArrayCodec):
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

    Errors from data name the element's index within the chunk the codec was given.
    """

    is_fixed_size = True

    dtype: Any                 # the target ZDType
    rounding: str
    out_of_range: str | None
    scalar_map: ScalarMap | None

    def __init__(
        self,
        *,
        data_type: object,
        rounding: str = "nearest-even",
        out_of_range: str | None = None,
        scalar_map: object = None,
    ) -> None:
        name = data_type_name(data_type)
        target = format_for(name, role="target data_type")
        parsed = parse_scalar_map(scalar_map)
        # a canonical ZDType (no byte order): equal configurations give equal codecs
        object.__setattr__(self, "dtype", get_data_type_from_json(name, zarr_format=3))
        object.__setattr__(self, "rounding", parse_rounding(rounding))
        object.__setattr__(self, "out_of_range", parse_out_of_range(out_of_range))
        object.__setattr__(self, "scalar_map", ScalarMap(parsed) if parsed else None)
        check_wrap_target(target, self.out_of_range)
        # the target-side scalars of scalar_map can be checked now; the source side needs the
        # array's data type (validate / resolve_metadata)
        for direction, side in (("encode", 1), ("decode", 0)):
            for i, pair in enumerate(self._pairs(direction) or ()):
                try:
                    json_scalar.decode(pair[side], target, exact=True,
                                       what=f"{CODEC}: scalar_map.{direction}[{i}] "
                                            f"{'output' if side else 'input'}")
                except ValueError as e:
                    raise ConfigError(str(e), config_key=f"scalar_map.{direction}") from None

    # --- (de)serialisation ---
    @classmethod
    def from_dict(cls, data: dict[str, JSON]) -> Self:
        config = parse_codec_json(data, CODEC, allowed=_CONFIG_KEYS, require_configuration=True)
        if "data_type" not in config:
            raise ConfigError(f"{CODEC}: configuration needs 'data_type'", config_key="data_type")
        if "scalar_map" in config:
            parse_scalar_map(config["scalar_map"], from_json=True)   # the spec's form only
        return cls(**config)  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, JSON]:
        config: dict[str, JSON] = {"data_type": self.target.name}
        if self.rounding != "nearest-even":
            config["rounding"] = self.rounding
        if self.out_of_range is not None:
            config["out_of_range"] = self.out_of_range
        if self.scalar_map:
            config["scalar_map"] = {d: self.scalar_map[d] for d in self.scalar_map}
        return {"name": CODEC, "configuration": config}

    # --- plans ---
    @property
    def target(self) -> NumberFormat:
        return format_for(self.dtype.to_json(zarr_format=3))

    def _pairs(self, direction: str) -> list | None:
        return self.scalar_map[direction] if self.scalar_map and direction in self.scalar_map else None

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
        name = data_type_name(dtype)
        format_for(name, role="source data type (the array's)")
        self.encode_plan(name)   # compiles (so validates) both scalar_map directions
        self.decode_plan(name)
        return name

    def _check_fill(self, source: str, fill_value: object) -> np.generic:
        src = format_for(source)
        bits = np.asarray(fill_value, dtype=src.dtype).reshape(()).view(src.bits_dtype).item()
        return _checked_fill(self.encode_plan(source), self.decode_plan(source), bits)

    # --- zarr hooks ---
    def validate(self, *, shape: tuple[int, ...], dtype: Any, chunk_grid: Any) -> None:
        if _compat.zarr_threads_array_spec():
            self._check_source(dtype)

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Self:
        spec = array_spec if _compat.zarr_threads_array_spec() else _compat.array_spec_before(self, array_spec)
        if spec is not None:
            self._check_fill(self._check_source(spec.dtype), spec.fill_value)
        return self

    def resolve_metadata(self, chunk_spec: ArraySpec) -> ArraySpec:
        source = data_type_name(chunk_spec.dtype)
        if _compat.zarr_threads_array_spec():
            fill = self.encode_plan(source).cast(
                np.asarray(chunk_spec.fill_value, dtype=format_for(source).dtype))[()]
        else:
            # older zarr may have handed us the wrong spec at creation: check here (cached)
            self._check_source(source)
            fill = self._check_fill(source, chunk_spec.fill_value)
        return replace(chunk_spec, dtype=self.dtype, fill_value=self.dtype.cast_scalar(fill))

    def _encode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer | None:
        arr = np.asarray(chunk_array.as_ndarray_like())
        out = self.encode_plan(data_type_name(chunk_spec.dtype)).cast(arr, where="chunk element")
        return chunk_spec.prototype.nd_buffer.from_ndarray_like(out)

    def _decode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer:
        arr = np.asarray(chunk_array.as_ndarray_like())
        out = self.decode_plan(data_type_name(chunk_spec.dtype)).cast(arr, where="chunk element")
        return chunk_spec.prototype.nd_buffer.from_ndarray_like(out)



    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        source = format_for(data_type_name(chunk_spec.dtype))
        return input_byte_length // source.itemsize * self.target.itemsize


@lru_cache(maxsize=256)
def _checked_fill(encode: CastPlan, decode: CastPlan, bits: int) -> np.generic:
    fill = np.array(bits, dtype=encode.source.bits_dtype).view(encode.source.dtype)[()]
    return check_fill_round_trip(encode, decode, fill)
