"""The zarr v3 ``bitround`` codec (array -> array), backed by zdt's kernel.

Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/bitround, rulings in
docs/spec-rulings.md; semantics in `zdt.codecs.bitround`. Reads the deprecated alias
``numcodecs.bitround`` too, and writes ``bitround`` unless made under the alias name
(``name="numcodecs.bitround"``, what zdt's encodings write for readers that know only that
name: the decoding is the identity, so the name is all a reader needs).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from zarr.abc.codec import ArrayArrayCodec

from zdt import zarr_compat
from zdt.codecs import steps
from zdt.codecs.bitround import ALIASES, CODEC, BitroundConfig
from zdt.codecs.config_json import parse_envelope
from zdt.codecs.zarr._base import ElementwiseCodec
from zdt.errors import ConfigError

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.array_spec import ArraySpec
    from zarr.core.common import JSON


@dataclass(frozen=True, repr=False)
class BitroundCodec(ElementwiseCodec, ArrayArrayCodec):
    """Keep ``keepbits`` significant bits of every value (floats: mantissa bits; integers:
    bits from the most significant set one), rounding to nearest with ties to even. Decoding
    is the identity."""

    is_fixed_size = True

    config: BitroundConfig
    name: str = CODEC

    def __init__(self, *, keepbits: int, name: str = CODEC) -> None:
        if name not in (CODEC, *ALIASES):
            raise ConfigError(f"{CODEC}: codec name must be {CODEC!r} (or {ALIASES[0]!r}), got "
                              f"{name!r}", config_key="name")
        object.__setattr__(self, "config", BitroundConfig.create(keepbits=keepbits))
        object.__setattr__(self, "name", name)

    @property
    def keepbits(self) -> int:
        return self.config.keepbits

    @classmethod
    def from_dict(cls, data: dict[str, JSON]) -> Self:
        name = data.get("name") if isinstance(data, dict) else None
        if name not in (CODEC, *ALIASES):
            raise ConfigError(f"{CODEC}: codec name must be {CODEC!r} (or {ALIASES[0]!r}), got "
                              f"{name!r}", config_key="name")
        config = BitroundConfig.from_json(parse_envelope(data, name, require_configuration=True))
        return cls(keepbits=config.keepbits)

    def to_dict(self) -> dict[str, JSON]:
        return {"name": self.name, "configuration": self.config.to_json()}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.config.repr_args()})"

    def stages(self, chunk_spec: ArraySpec) -> steps.Stages:
        return self.config.plan(chunk_spec.dtype.to_native_dtype()).stages

    # --- zarr hooks ---
    def validate(self, *, shape: tuple[int, ...], dtype: Any, chunk_grid: Any) -> None:
        """Nothing here depends on the data type: zarr calls validate with the array's own data
        type for every codec, a codec behind a type-changing one too (zarr 3.4's
        ArrayV3Metadata._validate_metadata, and the pipelines' validate), so the checks of the
        type this codec really sees run in evolve_from_array_spec (docs/upstream/zarr-validate-dtype)."""

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Self:
        spec = (array_spec if zarr_compat.zarr_threads_array_spec()
                else zarr_compat.array_spec_before(self, array_spec))
        if spec is not None:
            self.config.plan(spec.dtype.to_native_dtype())
        return self

    def resolve_metadata(self, chunk_spec: ArraySpec) -> ArraySpec:
        """The fill value as the chunks store it (rounded like the data)."""
        plan = self.config.plan(chunk_spec.dtype.to_native_dtype())
        fill = np.asarray(chunk_spec.fill_value, dtype=plan.dtype).reshape(())
        return replace(chunk_spec, fill_value=chunk_spec.dtype.cast_scalar(plan.round(fill)[()]))

    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        return input_byte_length
