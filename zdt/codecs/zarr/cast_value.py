"""The zarr v3 ``cast_value`` codec (array -> array), backed by zdt's kernels.

Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/cast_value, with the
rulings in docs/spec-rulings.md. The configuration and every semantic live in `zdt.codecs.cast`
(`CastValueConfig`, shared with the numcodecs face); this class connects them to zarr's codec
pipeline: validation at array creation, the fill value, chunk encode / decode.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
from zarr.abc.codec import ArrayArrayCodec

from zdt import zarr_compat
from zdt.codecs.cast import CODEC, CastValueConfig
from zdt.codecs.config_json import parse_envelope
from zdt.formats import data_type_name, format_for
from zdt.codecs import steps
from zdt.dtypes import zdtype_for
from zdt.codecs.zarr._base import ElementwiseCodec

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.array_spec import ArraySpec
    from zarr.core.common import JSON


@dataclass(frozen=True, repr=False)
class CastValueCodec(ElementwiseCodec, ArrayArrayCodec):
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

    Notes
    -----
    Errors from data name the element's index within the chunk the codec was given.
    """

    is_fixed_size = True

    config: CastValueConfig

    def __init__(self, *, data_type: object, rounding: str = "nearest-even",
                 out_of_range: str | None = None, scalar_map: object = None) -> None:
        object.__setattr__(self, "config", CastValueConfig.create(
            data_type=data_type, rounding=rounding, out_of_range=out_of_range,
            scalar_map=scalar_map))

    @classmethod
    def from_checked_config(cls, config: CastValueConfig) -> Self:
        codec = cls.__new__(cls)
        object.__setattr__(codec, "config", config)
        return codec

    # --- the configuration ---
    @property
    def rounding(self) -> str:
        return self.config.rounding

    @property
    def out_of_range(self) -> str | None:
        return self.config.out_of_range

    @property
    def scalar_map(self) -> Any:
        return self.config.scalar_map

    @cached_property
    def dtype(self) -> Any:
        """The target data type as a ZDType (no byte order: equal configurations, equal codecs)."""
        return zdtype_for(self.config.data_type)

    @classmethod
    def from_dict(cls, data: dict[str, JSON]) -> Self:
        return cls.from_checked_config(CastValueConfig.from_json(
            parse_envelope(data, CODEC, require_configuration=True)))

    def to_dict(self) -> dict[str, JSON]:
        return {"name": CODEC, "configuration": self.config.to_json()}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.config.repr_args()})"

    # --- zarr hooks ---
    def validate(self, *, shape: tuple[int, ...], dtype: Any, chunk_grid: Any) -> None:
        """Nothing here depends on the data type: zarr calls validate with the array's own data
        type for every codec, a codec behind a type-changing one too (zarr 3.4's
        ArrayV3Metadata._validate_metadata, and the pipelines' validate), so the checks of the
        type this codec really sees run in evolve_from_array_spec (docs/upstream/zarr-validate-dtype)."""

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Self:
        spec = array_spec if zarr_compat.zarr_threads_array_spec() else zarr_compat.array_spec_before(self, array_spec)
        if spec is not None:
            source = data_type_name(spec.dtype, codec=CODEC)
            self.config.check_source(source)
            self.config.checked_fill(source, spec.fill_value)
        return self

    def resolve_metadata(self, chunk_spec: ArraySpec) -> ArraySpec:
        source = data_type_name(chunk_spec.dtype, codec=CODEC)
        if zarr_compat.zarr_threads_array_spec():
            fill = self.config.encode_plan(source).cast(
                np.asarray(chunk_spec.fill_value, dtype=format_for(source).dtype))[()]
        else:
            # older zarr may have handed us the wrong spec at creation: check here (cached)
            self.config.check_source(source)
            fill = self.config.checked_fill(source, chunk_spec.fill_value)
        return replace(chunk_spec, dtype=self.dtype, fill_value=self.dtype.cast_scalar(fill))

    def stages(self, chunk_spec: ArraySpec) -> steps.Stages:
        return self.config.stages(data_type_name(chunk_spec.dtype, codec=CODEC))

    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        source = format_for(data_type_name(chunk_spec.dtype, codec=CODEC))
        return input_byte_length // source.itemsize * self.config.target.itemsize
