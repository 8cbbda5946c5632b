"""The zarr v3 ``scale_offset`` codec (array -> array), backed by zdt's checked kernels.

Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/scale_offset, with
the rulings in docs/spec-rulings.md. The configuration and every semantic live in
`zdt.codecs.scale_offset` (`ScaleOffsetConfig`, shared with the numcodecs face).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from zarr.abc.codec import ArrayArrayCodec

from zdt import zarr_compat
from zdt.codecs.config_json import parse_envelope
from zdt.formats import data_type_name
from zdt.codecs.scale_offset import CODEC, ScaleOffsetConfig, ScaleOffsetPlan
from zdt.codecs import steps
from zdt.codecs.zarr._base import ElementwiseCodec

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.array_spec import ArraySpec
    from zarr.core.common import JSON


@dataclass(frozen=True, repr=False)
class ScaleOffsetCodec(ElementwiseCodec, ArrayArrayCodec):
    """Encode ``(x - offset) * scale``, decode ``x / scale + offset``, in the array's data type.

    ``offset`` and ``scale`` are JSON scalars in the fill-value encoding of the array's data
    type (numbers, or "NaN"/"Infinity"/hex strings for floats). Integer arithmetic is checked
    (overflow and inexact division are errors); for floats a finite value must stay finite.
    """

    is_fixed_size = True

    config: ScaleOffsetConfig

    def __init__(self, *, offset: object = 0, scale: object = 1) -> None:
        object.__setattr__(self, "config", ScaleOffsetConfig.create(offset=offset, scale=scale))

    @property
    def offset(self) -> int | float | str:
        return self.config.offset

    @property
    def scale(self) -> int | float | str:
        return self.config.scale

    @classmethod
    def from_dict(cls, data: dict[str, JSON]) -> Self:
        config = ScaleOffsetConfig.from_json(parse_envelope(data, CODEC, require_configuration=False))
        return cls(offset=config.offset, scale=config.scale)

    def to_dict(self) -> dict[str, JSON]:
        config = self.config.to_json()
        return {"name": CODEC, "configuration": config} if config else {"name": CODEC}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.config.repr_args()})"

    def plan(self, dtype: Any) -> ScaleOffsetPlan:
        return self.config.plan(data_type_name(dtype, codec=CODEC))

    # --- zarr hooks ---
    def validate(self, *, shape: tuple[int, ...], dtype: Any, chunk_grid: Any) -> None:
        """Nothing here depends on the data type: zarr calls validate with the array's own data
        type for every codec, a codec behind a type-changing one too (zarr 3.4's
        ArrayV3Metadata._validate_metadata, and the pipelines' validate), so the checks of the
        type this codec really sees run in evolve_from_array_spec (docs/upstream/zarr-validate-dtype)."""

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Self:
        spec = array_spec if zarr_compat.zarr_threads_array_spec() else zarr_compat.array_spec_before(self, array_spec)
        if spec is not None:
            self.config.encoded_fill(data_type_name(spec.dtype, codec=CODEC), spec.fill_value)
        return self

    def resolve_metadata(self, chunk_spec: ArraySpec) -> ArraySpec:
        fill = self.config.encoded_fill(data_type_name(chunk_spec.dtype, codec=CODEC),
                                        chunk_spec.fill_value)
        return replace(chunk_spec, fill_value=chunk_spec.dtype.cast_scalar(fill))

    def stages(self, chunk_spec: ArraySpec) -> steps.Stages:
        return self.config.stages(data_type_name(chunk_spec.dtype, codec=CODEC))

    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        return input_byte_length
