"""scale_offset semantics above the kernels: the configuration, plans and errors.

* `ScaleOffsetConfig`: one scale_offset configuration, shared by both codec faces (zarr v3 in
  zdt.codecs.zarr, numcodecs in zdt.codecs.numcodecs): parsing, the JSON it writes, plans.
* `ScaleOffsetPlan`: the transformation for one data type, compiled once into a
  `zdt.kernels._types.ScaleOffsetKernelSpec`; failing elements become a `ScaleOffsetError`.

Encode ``out = (in - offset) * scale``, decode ``out = in / scale + offset``, in the array's own
data type (spec: zarr-extensions codecs/scale_offset, rulings in docs/spec-rulings.md):

* integers: every intermediate and final value must be representable (never wraps), and a
  decode division must be exact; int64 and uint64 are exact (no float or object detours);
* floats: IEEE arithmetic in the type; a finite input whose result is not finite is an error,
  NaN and infinities propagate;
* offset and scale are read with the fill-value JSON encoding of the array's data type; a zero
  scale is rejected; a zero offset and a unit scale are identities (so -0.0 survives, and with
  neither configured the codec is a true no-op).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any

import numpy as np

from zdt import kernels
from zdt.codecs import layout, steps
from zdt.codecs.config_json import check_keys
from zdt.errors import ConfigError, FillValueError, ScaleOffsetError
from zdt.formats import NumberFormat, format_for, json_scalar
from zdt.kernels._types import ScaleOffsetKernelSpec, ScaleOffsetStatus

CODEC = "scale_offset"
SO_SUB, SO_MUL, SO_REM = ScaleOffsetStatus.SO_SUB, ScaleOffsetStatus.SO_MUL, ScaleOffsetStatus.SO_REM
SO_DIV, SO_ADD = ScaleOffsetStatus.SO_DIV, ScaleOffsetStatus.SO_ADD


def parse_scalar_config(value: object, key: str) -> int | float | str:
    """A JSON-able offset/scale as given (checked against the data type later)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        value = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ConfigError(f"{CODEC}: {key} must be a JSON number or string, got {value!r}",
                          config_key=key)
    return value


def _trunc_div(a: int, b: int) -> int:
    """a / b rounded towards zero, exactly (C's integer division)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _is_default(value: object, default: int) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == default


@dataclass(frozen=True)
class ScaleOffsetConfig:
    """A scale_offset configuration: `offset` and `scale` as JSON scalars (checked against a
    data type when a plan is made)."""

    offset: int | float | str = 0
    scale: int | float | str = 1

    @classmethod
    def create(cls, *, offset: object = 0, scale: object = 1) -> ScaleOffsetConfig:
        return cls(parse_scalar_config(offset, "offset"), parse_scalar_config(scale, "scale"))

    @classmethod
    def from_json(cls, config: Mapping[str, Any]) -> ScaleOffsetConfig:
        return cls.create(**check_keys(config, ("offset", "scale"), CODEC))

    def to_json(self) -> dict[str, Any]:
        """Only the keys that differ from the defaults (0 and 1)."""
        config: dict[str, Any] = {}
        if not _is_default(self.offset, 0):
            config["offset"] = self.offset
        if not _is_default(self.scale, 1):
            config["scale"] = self.scale
        return config

    def repr_args(self) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in self.to_json().items())

    def plan(self, dtype: str) -> ScaleOffsetPlan:
        return cached_plan(dtype, self.offset, self.scale)

    def stages(self, dtype: str) -> steps.Stages:
        """Both directions as stages for an array of `dtype` (None for the identity, except on
        a sub-byte type, whose high bits the kernels canonicalise)."""
        plan = self.plan(dtype)
        if plan.identity and not plan.fmt.is_sub_byte:
            return steps.Stages(None, None)
        return steps.Stages(plan.encode_stage, plan.decode_stage)

    def encoded_fill(self, dtype: str, fill_value: object) -> np.generic:
        """The fill value through the encode transformation; FillValueError if it fails."""
        plan = self.plan(dtype)
        fill = np.asarray(fill_value, dtype=plan.fmt.dtype).reshape(())
        try:
            return plan.encode(fill)[()]
        except ScaleOffsetError as e:
            raise FillValueError(
                f"{CODEC}: the fill value {plan.fmt.describe(e.value)} ({e.dtype}) cannot be "
                f"encoded: {e.detail}", config_key=e.config_key) from None


class ScaleOffsetPlan:
    """scale_offset for one data type, compiled for the kernels."""

    __slots__ = ("fmt", "offset", "scale", "identity", "kernel", "encode_stage", "decode_stage")

    def __init__(self, fmt: NumberFormat, offset: object = 0, scale: object = 1) -> None:
        self.fmt = fmt
        bits = {}
        for key, value in (("offset", offset), ("scale", scale)):
            try:
                bits[key] = json_scalar.decode(parse_scalar_config(value, key), fmt,
                                               what=f"{CODEC}: {key}").bits
            except ValueError as e:
                raise ConfigError(str(e), config_key=key) from None
        self.offset = fmt.value_of(bits["offset"])
        self.scale = fmt.value_of(bits["scale"])
        if self.scale == 0:
            raise ConfigError(f"{CODEC}: scale must not be zero (decoding divides by it)",
                              config_key="scale")
        offset_zero = self.offset == 0
        self.identity = bool(offset_zero and self.scale == 1)
        enc_offset = dec_offset = bits["offset"]
        if offset_zero and fmt.is_float:
            # x - (+0.0) and x + (-0.0) are exact identities for every x, -0.0 included
            enc_offset, dec_offset = fmt.bits_of(0.0), fmt.bits_of(-0.0)
        self.kernel = kernel = ScaleOffsetKernelSpec(fmt=fmt, enc_offset=enc_offset,
                                                     dec_offset=dec_offset, scale=bits["scale"])
        self.encode_stage = steps.Stage(
            fmt.dtype, fmt.dtype, lambda: kernels.module().scale_offset_step(kernel, False),
            partial(self.element_error, decode=False), CODEC, in_place=True, fmt=fmt)
        self.decode_stage = steps.Stage(
            fmt.dtype, fmt.dtype, lambda: kernels.module().scale_offset_step(kernel, True),
            partial(self.element_error, decode=True), CODEC, in_place=True, fmt=fmt)

    def encode(self, arr: np.ndarray, *, out: np.ndarray | None = None,
               where: str = "element") -> np.ndarray:
        return self._run(arr, out, False, where)

    def decode(self, arr: np.ndarray, *, out: np.ndarray | None = None,
               where: str = "element") -> np.ndarray:
        return self._run(arr, out, True, where)

    def _run(self, arr: np.ndarray, out: np.ndarray | None, decode: bool, where: str) -> np.ndarray:
        if self.identity and not self.fmt.is_sub_byte:     # (sub-byte: canonical high bits)
            walk = layout.prepare(arr, self.fmt.dtype, self.fmt.dtype, out, CODEC, in_place_ok=True)
            np.copyto(walk.out, walk.arr)
            return walk.finish()
        return steps.apply(self.decode_stage if decode else self.encode_stage, arr, out=out,
                           where=where)

    def element_error(self, nd: tuple[int, ...], x: np.generic, status: int, where: str, *,
                      decode: bool) -> ScaleOffsetError:
        """The error for an element the kernels could not transform (a ScaleOffsetStatus)."""
        name = self.fmt.name
        xs = self.fmt.describe(x)
        o, s = self.fmt.describe(self.offset), self.fmt.describe(self.scale)
        rng = self.fmt.range_text()
        if self.fmt.is_int:
            xi, oi, si = int(x), int(self.offset), int(self.scale)
            detail = {
                SO_SUB: (f"{xi} - {oi} = {xi - oi} is out of range for {name} {rng}", "subtraction", "offset"),
                SO_MUL: (f"({xi} - {oi}) * {si} = {(xi - oi) * si} is out of range for {name} {rng}",
                         "multiplication", "scale"),
                SO_REM: (f"{xi} / {si} leaves the remainder {xi - si * _trunc_div(xi, si)}; "
                         f"integer decoding must divide exactly", "division", "scale"),
                SO_DIV: (f"{xi} / {si} = {-xi} is out of range for {name} {rng}", "division", "scale"),
                SO_ADD: (f"{xi} / {si} + {oi} = {_trunc_div(xi, si) + oi} is out of range for {name} {rng}",
                         "addition", "offset"),
            }[status]
        else:
            # a format without infinities fails where an IEEE one would become infinite, and
            # float8_e8m0fnu also where the result is zero or negative
            beyond = (f"is not finite in {name}" if self.fmt.has_inf
                      else f"has no value in {name} {rng}")
            detail = {
                SO_SUB: (f"{xs} - {o} {beyond}", "subtraction", "offset"),
                SO_MUL: (f"({xs} - {o}) * {s} {beyond}", "multiplication", "scale"),
                SO_DIV: (f"{xs} / {s} {beyond}", "division", "scale"),
                SO_ADD: (f"{xs} / {s} + {o} {beyond}", "addition", "offset"),
            }[status]
        text, operation, key = detail
        text = f"{operation} fails: {text}"
        if self.fmt.is_float and self.fmt.has_inf:
            text += " (a finite value must stay finite)"
        direction = "decode" if decode else "encode"
        msg = f"{CODEC}: cannot {direction} {where} {nd} = {xs} ({name}): {text}"
        return ScaleOffsetError(msg, index=nd, value=x, dtype=name, operation=operation,
                                config_key=key, detail=text)


@lru_cache(maxsize=256, typed=True)
def _cached_plan(dtype: str, offset: object, scale: object) -> ScaleOffsetPlan:
    return ScaleOffsetPlan(format_for(dtype, role="data type", codec=CODEC), offset, scale)


def cached_plan(dtype: str, offset: object = 0, scale: object = 1) -> ScaleOffsetPlan:
    """A cached plan (typed: True, 1 and 1.0 are different configurations)."""
    try:
        return _cached_plan(dtype, offset, scale)
    except TypeError:      # unhashable: build it uncached (it will raise a ConfigError)
        return ScaleOffsetPlan(format_for(dtype, role="data type", codec=CODEC), offset, scale)


def scale_offset_encode(arr: np.ndarray, *, offset: object = 0, scale: object = 1) -> np.ndarray:
    """(arr - offset) * scale in arr's data type, checked."""
    arr = np.asarray(arr)
    return cached_plan(arr.dtype.name, offset, scale).encode(arr)


def scale_offset_decode(arr: np.ndarray, *, offset: object = 0, scale: object = 1) -> np.ndarray:
    """arr / scale + offset in arr's data type, checked (integer division must be exact)."""
    arr = np.asarray(arr)
    return cached_plan(arr.dtype.name, offset, scale).decode(arr)
