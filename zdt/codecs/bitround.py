"""bitround semantics above the kernel (zarr-extensions codecs/bitround, rulings in
docs/spec-rulings.md): the configuration, shared by both codec faces, and the plan for one
data type.

Keep ``keepbits`` significant bits of every value, rounding to nearest with ties to even:

* floats (float16, bfloat16, float32, float64; complex64 / complex128 part by part): the
  mantissa keeps ``keepbits`` bits and a carry may step into the exponent, bit-identical to
  numcodecs' BitRound except where it is wrong: a NaN stays that NaN, +-Infinity stays, and a
  finite value never becomes infinite (rounded toward zero where the carry would);
* integers (int8 .. uint64; datetime64 / timedelta64 as their int64): counted from the most
  significant set bit of the two's complement pattern, as zarrs does; a carry that would
  overflow the type (out of its bits, or a non-negative value into the sign) rounds toward
  zero instead.

``keepbits`` must be an integer >= 1; one at or above the type's significant bits (mantissa
bits, integer bits) leaves every value as it is. Decoding is the identity: other readers read
the stored values, so these choices cost no interoperability.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from zdt import kernels
from zdt.codecs import layout, steps
from zdt.codecs.config_json import check_keys
from zdt.errors import ConfigError
from zdt.kernels._types import BitroundKernelSpec

CODEC = "bitround"
ALIASES = ("numcodecs.bitround",)     # read (deprecated spelling); always written "bitround"

# float types: (mantissa bits, bits per value, values per element)
_FLOATS = {"float16": (10, 16, 1), "bfloat16": (7, 16, 1), "float32": (23, 32, 1),
           "float64": (52, 64, 1), "complex64": (23, 32, 2), "complex128": (52, 64, 2)}
SUPPORTED = ("float16, bfloat16, float32, float64, complex64, complex128, int8 .. int64, "
             "uint8 .. uint64, datetime64, timedelta64")


def parse_keepbits(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ConfigError(f"{CODEC}: keepbits must be an integer >= 1, got {value!r}",
                          config_key="keepbits")
    return int(value)


@dataclass(frozen=True)
class BitroundConfig:
    keepbits: int

    @classmethod
    def create(cls, *, keepbits: object) -> BitroundConfig:
        return cls(parse_keepbits(keepbits))

    @classmethod
    def from_json(cls, config: Mapping[str, Any]) -> BitroundConfig:
        return cls.create(**check_keys(config, ("keepbits",), CODEC, required=("keepbits",)))

    def to_json(self) -> dict[str, Any]:
        return {"keepbits": self.keepbits}

    def repr_args(self) -> str:
        return f"keepbits={self.keepbits}"

    def plan(self, dtype: Any) -> BitroundPlan:
        dtype = np.dtype(dtype)
        return cached_plan(dtype if dtype.isnative else dtype.newbyteorder("="), self.keepbits)


class BitroundPlan:
    """bitround on one data type (native byte order)."""

    __slots__ = ("dtype", "keepbits", "kernel", "stage")

    def __init__(self, dtype: np.dtype, keepbits: int) -> None:
        self.dtype = dtype
        self.keepbits = keepbits
        name = dtype.name
        if name in _FLOATS:
            man, width, lanes = _FLOATS[name]
            identity = keepbits >= man
            spec = dict(is_float=True, width=width, is_signed=True, man_bits=man, lanes=lanes)
        elif dtype.kind in "iu" and dtype.itemsize in (1, 2, 4, 8):
            width = 8 * dtype.itemsize
            identity = keepbits >= width
            spec = dict(is_float=False, width=width, is_signed=dtype.kind == "i", man_bits=0)
        elif dtype.kind in "mM":
            identity = keepbits >= 64
            spec = dict(is_float=False, width=64, is_signed=True, man_bits=0)
        else:
            raise ConfigError(f"{CODEC}: cannot round data type {_name(dtype)} (it rounds "
                              f"{SUPPORTED})", config_key="data_type")
        if identity:
            self.kernel = self.stage = None
            return
        self.kernel = kernel = BitroundKernelSpec(keepbits=keepbits, **spec)
        self.stage = steps.Stage(dtype, dtype, lambda: kernels.module().bitround_step(kernel),
                                 _never, CODEC, in_place=True)

    def round(self, arr: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
        """Every element of `arr` rounded (any layout and byte order; shape and element order
        kept); `out` may be `arr` itself."""
        if self.stage is None:
            walk = layout.prepare(arr, self.dtype, self.dtype, out, CODEC, in_place_ok=True)
            np.copyto(walk.out, walk.arr)
            return walk.finish()
        return steps.apply(self.stage, arr, out=out)

    @property
    def stages(self) -> steps.Stages:
        """Encoding rounds; decoding is the identity."""
        return steps.Stages(self.stage, None)


def _name(dtype: np.dtype) -> str:
    return dtype.name if dtype.kind != "V" or not dtype.fields else str(dtype)


def _never(nd: tuple, value: Any, status: int, where: str) -> Exception:
    return AssertionError(f"{CODEC}: the kernel reported element {nd} = {value!r}; it never fails")


@lru_cache(maxsize=128)
def cached_plan(dtype: np.dtype, keepbits: int) -> BitroundPlan:
    return BitroundPlan(dtype, keepbits)


def bitround(arr: np.ndarray, keepbits: int) -> np.ndarray:
    """`arr` with every value rounded to `keepbits` significant bits (see the module)."""
    arr = np.asarray(arr)
    return BitroundConfig.create(keepbits=keepbits).plan(arr.dtype).round(arr)
