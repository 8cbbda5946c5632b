"""scale_offset semantics above the kernels: configuration, layouts, errors.

Encode ``out = (in - offset) * scale``, decode ``out = in / scale + offset``, in the array's own
data type (spec: zarr-extensions codecs/scale_offset, rulings in SPEC_NOTES):

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
from functools import lru_cache

import numpy as np

from zdt import _kernels, _layout, json_scalar
from zdt.errors import ConfigError, ZdtError
from zdt.formats import NumberFormat, format_for

CODEC = "scale_offset"

# Status codes of zdt/_scale_offset.pxi.
SO_SUB, SO_MUL, SO_REM, SO_DIV, SO_ADD = 1, 2, 3, 4, 5


class ScaleOffsetError(ZdtError):
    """An element scale_offset cannot transform: its n-d ``index``, ``value``, the ``dtype``,
    the ``operation`` that failed and the ``config_key`` (offset or scale) involved."""

    def __init__(self, message: str, *, index: tuple[int, ...], value: object, dtype: str,
                 operation: str, config_key: str, detail: str) -> None:
        super().__init__(message)
        self.detail = detail
        self.index = index
        self.value = value
        self.dtype = dtype
        self.operation = operation
        self.config_key = config_key


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


def _value(bits: int, fmt: NumberFormat) -> np.generic:
    return np.array(bits, dtype=fmt.bits_dtype).view(fmt.dtype)[()]


class ScaleOffsetPlan:
    """scale_offset for one data type, compiled for the kernels."""

    __slots__ = ("fmt", "offset", "scale", "identity", "_enc_offset", "_dec_offset", "_scale_bits")

    def __init__(self, fmt: NumberFormat, offset: object = 0, scale: object = 1) -> None:
        if fmt.type_code < 0:
            raise ConfigError(f"{CODEC}: data type {fmt.name!r} is not supported", config_key="dtype")
        self.fmt = fmt
        bits = {}
        for key, value in (("offset", offset), ("scale", scale)):
            try:
                bits[key] = json_scalar.decode(parse_scalar_config(value, key), fmt,
                                               what=f"{CODEC}: {key}").bits
            except ValueError as e:
                raise ConfigError(str(e), config_key=key) from None
        self.offset = _value(bits["offset"], fmt)
        self.scale = _value(bits["scale"], fmt)
        if self.scale == 0:
            raise ConfigError(f"{CODEC}: scale must not be zero (decoding divides by it)",
                              config_key="scale")
        offset_zero = self.offset == 0
        self.identity = bool(offset_zero and self.scale == 1)
        self._scale_bits = bits["scale"]
        if offset_zero and fmt.is_float:
            # x - (+0.0) and x + (-0.0) are exact identities for every x, -0.0 included
            self._enc_offset = json_scalar.value_to_bits(fmt.dtype.type(0.0), fmt)
            self._dec_offset = json_scalar.value_to_bits(fmt.dtype.type(-0.0), fmt)
        else:
            self._enc_offset = self._dec_offset = bits["offset"]

    def encode(self, arr: np.ndarray, *, out: np.ndarray | None = None,
               where: str = "element") -> np.ndarray:
        return self._run(arr, out, False, where)

    def decode(self, arr: np.ndarray, *, out: np.ndarray | None = None,
               where: str = "element") -> np.ndarray:
        return self._run(arr, out, True, where)

    def _run(self, arr: np.ndarray, out: np.ndarray | None, decode: bool, where: str) -> np.ndarray:
        walk = _layout.prepare(arr, self.fmt.dtype, self.fmt.dtype, out, CODEC, in_place_ok=True)
        if self.identity:
            np.copyto(walk.out, walk.arr)
            return walk.finish()
        index, status = _kernels.module().scale_offset_flat(
            walk.flat_in, walk.flat_out, self.fmt.type_code,
            self._dec_offset if decode else self._enc_offset, self._scale_bits, decode)
        if index >= 0:
            raise self._element_error(walk, index, status, decode, where)
        return walk.finish()

    def _element_error(self, walk: _layout.Walk, flat: int, status: int, decode: bool,
                       where: str) -> ScaleOffsetError:
        from zdt.cast import describe_value

        x = walk.value_at(flat)
        nd = walk.nd_index(flat)
        name = self.fmt.name
        xs = describe_value(x, self.fmt)
        o, s = describe_value(self.offset, self.fmt), describe_value(self.scale, self.fmt)
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
            detail = {
                SO_SUB: (f"{xs} - {o} is not finite in {name}", "subtraction", "offset"),
                SO_MUL: (f"({xs} - {o}) * {s} is not finite in {name}", "multiplication", "scale"),
                SO_DIV: (f"{xs} / {s} is not finite in {name}", "division", "scale"),
                SO_ADD: (f"{xs} / {s} + {o} is not finite in {name}", "addition", "offset"),
            }[status]
        text, operation, key = detail
        text = f"{operation} fails: {text}"
        if self.fmt.is_float:
            text += " (a finite value must stay finite)"
        direction = "decode" if decode else "encode"
        msg = f"{CODEC}: cannot {direction} {where} {nd} = {xs} ({name}): {text}"
        return ScaleOffsetError(msg, index=nd, value=x, dtype=name, operation=operation,
                                config_key=key, detail=text)


@lru_cache(maxsize=256, typed=True)
def _cached_plan(dtype: str, offset: object, scale: object) -> ScaleOffsetPlan:
    return ScaleOffsetPlan(format_for(dtype, role="data type", codec=CODEC), offset, scale)


def plan_for(dtype: str, offset: object = 0, scale: object = 1) -> ScaleOffsetPlan:
    """A cached plan (typed: True, 1 and 1.0 are different configurations)."""
    try:
        return _cached_plan(dtype, offset, scale)
    except TypeError:      # unhashable: build it uncached (it will raise a ConfigError)
        return ScaleOffsetPlan(format_for(dtype, role="data type", codec=CODEC), offset, scale)


def scale_offset_encode(arr: np.ndarray, *, offset: object = 0, scale: object = 1) -> np.ndarray:
    """(arr - offset) * scale in arr's data type, checked."""
    arr = np.asarray(arr)
    return plan_for(arr.dtype.name, offset, scale).encode(arr)


def scale_offset_decode(arr: np.ndarray, *, offset: object = 0, scale: object = 1) -> np.ndarray:
    """arr / scale + offset in arr's data type, checked (integer division must be exact)."""
    arr = np.asarray(arr)
    return plan_for(arr.dtype.name, offset, scale).decode(arr)
