"""cast_value semantics above the kernels: the configuration, scalar_map, plans and errors.

* `CastValueConfig`: one cast_value configuration, read strictly once and shared by both codec
  faces (the zarr v3 codec in zdt.codecs.zarr, the numcodecs codec in zdt.codecs.numcodecs):
  parsing, the JSON it writes (non-default keys only), the plans of each direction, repr.
* `CastPlan`: one direction of a cast (source format -> target format) compiled once into a
  `zdt.kernels._types.CastKernelSpec` that every kernel build runs; `CastPlan.cast` runs it on any
  NumPy array and turns a failing element into a `CastError`.
* `cast_array`: the same on NumPy arrays.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from zdt import kernels
from zdt.codecs import layout, steps
from zdt.codecs.config_json import check_keys
from zdt.errors import CastError, ConfigError, FillValueError
from zdt.formats import NumberFormat, data_type_name, format_for, format_for_dtype, json_scalar
from zdt.formats.fast_path import fast_view
from zdt.kernels._types import CastKernelSpec, CastStatus, KeyKind, OutOfRange, Rounding

CODEC = "cast_value"

ROUNDING_MODES: dict[str, Rounding] = {
    "nearest-even": Rounding.NEAREST_EVEN,
    "towards-zero": Rounding.TOWARDS_ZERO,
    "towards-positive": Rounding.TOWARDS_POSITIVE,
    "towards-negative": Rounding.TOWARDS_NEGATIVE,
    "nearest-away": Rounding.NEAREST_AWAY,
}
OUT_OF_RANGE_MODES: dict[str | None, OutOfRange] = {
    None: OutOfRange.OOR_ERROR, "clamp": OutOfRange.OOR_CLAMP, "wrap": OutOfRange.OOR_WRAP,
}

ScalarMapJSON = dict[str, list[list[object]]]


# --- configuration pieces ----------------------------------------------------------------------------

def parse_rounding(value: object) -> str:
    if not isinstance(value, str) or value not in ROUNDING_MODES:
        raise ConfigError(
            f"{CODEC}: rounding {value!r} is not one of {', '.join(map(repr, ROUNDING_MODES))}",
            config_key="rounding",
        )
    return value


def parse_out_of_range(value: object) -> str | None:
    """From Python; None means absent (out-of-range values are an error)."""
    if not (value is None or isinstance(value, str)) or value not in OUT_OF_RANGE_MODES:
        raise ConfigError(
            f"{CODEC}: out_of_range {value!r} is not one of 'clamp', 'wrap' (or absent, "
            f"which makes out-of-range values an error)",
            config_key="out_of_range",
        )
    return value  # type: ignore[return-value]


def check_wrap_target(target: NumberFormat, out_of_range: str | None) -> None:
    """The spec allows 'wrap' only when the target data_type is an integer type."""
    if out_of_range == "wrap" and not target.is_int:
        raise ConfigError(
            f"{CODEC}: out_of_range='wrap' needs an integer data_type, got {target.name!r}; use "
            f"'clamp' or leave out_of_range unset",
            config_key="out_of_range",
        )


def parse_scalar_map(value: object, *, from_json: bool = False) -> ScalarMapJSON | None:
    """Check the structure of a scalar_map and normalise it to {direction: [[key, value], ...]}.

    `from_json=True` (codec metadata) takes exactly the spec's form: an object whose "encode"
    and "decode" are arrays of [input, output] arrays. From Python, a direction may also be a
    Mapping {key: value}. Non-finite Python floats become "NaN" / "Infinity" / "-Infinity"
    (float('nan') means any NaN), "+Infinity" becomes "Infinity". Empty directions are dropped.
    """
    if value is None and not from_json:
        return None
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"{CODEC}: scalar_map must be an object with 'encode' and/or 'decode' arrays, "
            f"got {value!r}",
            config_key="scalar_map",
        )
    unknown = sorted(map(str, set(value) - {"encode", "decode"}))
    if unknown:
        raise ConfigError(
            f"{CODEC}: scalar_map has unknown key(s) {', '.join(map(repr, unknown))}; "
            f"allowed: 'encode', 'decode'",
            config_key="scalar_map",
        )
    result: ScalarMapJSON = {}
    for direction in ("encode", "decode"):
        if direction not in value:
            continue
        entries = value[direction]
        if isinstance(entries, Mapping) and not from_json:
            entries = [[k, v] for k, v in entries.items()]
        if isinstance(entries, (str, bytes, Mapping)) or not isinstance(entries, Sequence):
            raise ConfigError(
                f"{CODEC}: scalar_map.{direction} must be an array of [input, output] pairs, "
                f"got {entries!r}",
                config_key=f"scalar_map.{direction}",
            )
        pairs = []
        for i, entry in enumerate(entries):
            if isinstance(entry, (str, bytes, Mapping)) or not isinstance(entry, Sequence) or len(entry) != 2:
                raise ConfigError(
                    f"{CODEC}: scalar_map.{direction}[{i}] must be an [input, output] pair, "
                    f"got {entry!r}",
                    config_key=f"scalar_map.{direction}",
                )
            pairs.append([_normalise_json_scalar(entry[0]), _normalise_json_scalar(entry[1])])
        if pairs:
            result[direction] = pairs
    return result or None


def _normalise_json_scalar(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, np.generic):
        return _normalise_json_scalar(value.item())
    return "Infinity" if value == "+Infinity" else value


class ScalarMap(Mapping):
    """An immutable, hashable scalar_map: {"encode": [[in, out], ...], "decode": [...]}.
    (Codecs and configurations are frozen values; a dict field would make them unhashable.)"""

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

    def to_json(self) -> ScalarMapJSON:
        return {d: self[d] for d in self}


class MapEntry(NamedTuple):
    """One compiled scalar_map entry (read by name into the kernels' MapEntry struct)."""

    kind: KeyKind
    key_bits: int       # the key as a bit pattern of the source format
    out_bits: int       # the value as a bit pattern of the target format


def compile_scalar_map(
    pairs: Sequence[Sequence[object]], key_format: NumberFormat, value_format: NumberFormat,
    direction: str,
) -> list[MapEntry]:
    """One MapEntry per [input, output] pair, in order (the kernels let the first match win)."""
    entries = []
    for i, (key, value) in enumerate(pairs):
        where = f"{CODEC}: scalar_map.{direction}[{i}]"
        try:
            k = json_scalar.decode(key, key_format, what=f"{where} input", exact=True)
            v = json_scalar.decode(value, value_format, what=f"{where} output", exact=True)
        except ValueError as e:
            raise ConfigError(str(e), config_key=f"scalar_map.{direction}") from None
        if k.any_nan:
            kind = KeyKind.KEY_ANY_NAN
        elif key_format.is_nan_bits(k.bits):
            kind = KeyKind.KEY_NAN_BITS
        else:
            kind = KeyKind.KEY_VALUE
        entries.append(MapEntry(kind, k.bits, v.bits))
    return entries


# --- the configuration, shared by both codec faces ----------------------------------------------------

CONFIG_KEYS = ("data_type", "rounding", "out_of_range", "scalar_map")


@dataclass(frozen=True)
class CastValueConfig:
    """A cast_value configuration, checked: `data_type` (the target's zarr v3 name),
    `rounding`, `out_of_range` (None: absent) and `scalar_map` (None: absent)."""

    data_type: str
    rounding: str = "nearest-even"
    out_of_range: str | None = None
    scalar_map: ScalarMap | None = None

    @classmethod
    def create(cls, *, data_type: object, rounding: str = "nearest-even",
               out_of_range: str | None = None, scalar_map: object = None) -> CastValueConfig:
        """From Python values: `data_type` as a name, {"name": ...}, a ZDType or a NumPy
        dtype; None for an optional key means absent; scalar_map directions may be Mappings."""
        name = data_type_name(data_type, codec=CODEC)
        target = format_for(name, role="target data_type")
        parsed = parse_scalar_map(scalar_map)
        config = cls(target.name, parse_rounding(rounding), parse_out_of_range(out_of_range),
                     ScalarMap(parsed) if parsed else None)
        check_wrap_target(target, config.out_of_range)
        # the target side of scalar_map can be checked now; the source side needs the array's
        # data type (check_source)
        for direction, side in (("encode", 1), ("decode", 0)):
            for i, pair in enumerate(config.pairs(direction)):
                try:
                    json_scalar.decode(pair[side], target, exact=True,
                                       what=f"{CODEC}: scalar_map.{direction}[{i}] "
                                            f"{'output' if side else 'input'}")
                except ValueError as e:
                    raise ConfigError(str(e), config_key=f"scalar_map.{direction}") from None
        return config

    @classmethod
    def from_json(cls, config: Mapping[str, Any]) -> CastValueConfig:
        """From a JSON configuration, strictly (unknown keys, nulls, and a scalar_map not in
        the spec's form are errors)."""
        config = check_keys(config, CONFIG_KEYS, CODEC, required=("data_type",))
        if "scalar_map" in config:
            parse_scalar_map(config["scalar_map"], from_json=True)
        return cls.create(**config)

    def to_json(self) -> dict[str, Any]:
        """The configuration as JSON, with only the keys that differ from the defaults."""
        config: dict[str, Any] = {"data_type": self.data_type}
        if self.rounding != "nearest-even":
            config["rounding"] = self.rounding
        if self.out_of_range is not None:
            config["out_of_range"] = self.out_of_range
        if self.scalar_map:
            config["scalar_map"] = self.scalar_map.to_json()
        return config

    def repr_args(self) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in self.to_json().items())

    @property
    def target(self) -> NumberFormat:
        return format_for(self.data_type)

    def pairs(self, direction: str) -> list[list[object]]:
        return self.scalar_map[direction] if self.scalar_map and direction in self.scalar_map else []

    def encode_plan(self, source: str) -> CastPlan:
        return cached_plan(source, self.data_type, rounding=self.rounding,
                           out_of_range=self.out_of_range, pairs=self.pairs("encode"),
                           direction="encode")

    def decode_plan(self, source: str) -> CastPlan:
        return cached_plan(self.data_type, source, rounding=self.rounding,
                           out_of_range=self.out_of_range, pairs=self.pairs("decode"),
                           direction="decode")

    def stages(self, source: str) -> steps.Stages:
        """Both directions as stages for an array of `source` (None where nothing happens: the
        same type, no map; a sub-byte type still canonicalises its high bits)."""
        encode = self.encode_plan(source)
        if encode.identity:
            return steps.Stages(None, None)
        return steps.Stages(encode.stage, self.decode_plan(source).stage)

    def check_source(self, source: str) -> None:
        """Everything that depends on the source data type (the array's): it must be a
        supported number format and both scalar_map directions must fit it."""
        format_for(source, role="source data type (the array's)")
        self.encode_plan(source)
        self.decode_plan(source)

    def checked_fill(self, source: str, fill_value: object) -> np.generic:
        """The encoded fill value; FillValueError if it does not survive encode then decode."""
        src = format_for(source)
        return _checked_fill(self.encode_plan(source), self.decode_plan(source),
                             src.bits_of(fill_value))


@lru_cache(maxsize=256)
def _checked_fill(encode: CastPlan, decode: CastPlan, bits: int) -> np.generic:
    return check_fill_round_trip(encode, decode, encode.source.value_of(bits))


# --- the cast ---------------------------------------------------------------------------------------

class CastPlan:
    """One direction of a cast_value configuration, compiled for the kernels."""

    __slots__ = ("source", "target", "rounding", "out_of_range", "direction", "entries", "kernel",
                 "stage")

    def __init__(
        self,
        source: NumberFormat,
        target: NumberFormat,
        *,
        rounding: str = "nearest-even",
        out_of_range: str | None = None,
        scalar_map: Sequence[Sequence[object]] = (),
        direction: str = "encode",
    ) -> None:
        self.source = source
        self.target = target
        self.rounding = parse_rounding(rounding)
        self.out_of_range = parse_out_of_range(out_of_range)
        self.direction = direction
        self.entries = compile_scalar_map(scalar_map, source, target, direction)
        self.kernel = CastKernelSpec(
            source=source, target=target, rounding=ROUNDING_MODES[self.rounding],
            out_of_range=OUT_OF_RANGE_MODES[self.out_of_range], map_entries=self.entries,
            fast=fast_view(source, target, self.rounding, self.out_of_range, self.entries),
        )
        kernel = self.kernel
        self.stage = steps.Stage(source.dtype, target.dtype,
                                 lambda: kernels.module().cast_step(kernel), self.element_error,
                                 CODEC, fmt=source)

    @property
    def identity(self) -> bool:
        """Every value comes out as it went in (bits included): the same type, no map, and not a
        sub-byte type (whose high bits the kernels canonicalise)."""
        return self.source is self.target and not self.entries and not self.source.is_sub_byte

    def cast(self, arr: np.ndarray, *, out: np.ndarray | None = None, fast: bool = True,
             where: str = "element") -> np.ndarray:
        """Cast every element of `arr` (any layout, any byte order); shape and element order are
        kept, the result is native-order, C- or F-ordered like the input (see zdt.codecs.layout).
        `out`, if given, receives the result (its contents are unspecified if the cast fails).
        `where` names an element in errors ("chunk element" from the codecs, which only see
        one chunk). `fast=False` sends every element through the exact path (tests use it).
        A failing element is the first one in the order the array is stored."""
        if self.identity and fast:
            walk = layout.prepare(arr, self.source.dtype, self.target.dtype, out, CODEC)
            np.copyto(walk.out, walk.arr)       # NaN payloads and -0.0 kept, as a cast keeps them
            return walk.finish()
        step = None if fast else kernels.module().cast_step(self.kernel, True)
        return steps.apply(self.stage, arr, out=out, where=where, step=step)

    def element_error(self, nd: tuple[int, ...], value: np.generic, status: int,
                      where: str) -> CastError:
        """The error for an element the kernels could not cast (status: a CastStatus)."""
        src, tgt = self.source.name, self.target.name
        map_key = f"scalar_map.{self.direction}"
        if status == CastStatus.ST_NAN:
            reason, key = "nan", map_key
            detail = f"NaN has no value in {tgt}; map it with {map_key} (e.g. [\"NaN\", 0])"
        elif status == CastStatus.ST_INF:
            reason, key = "inf", map_key
            detail = (f"an infinity has no value in {tgt} (even with out_of_range='clamp'); "
                      f"map it with {map_key}")
        elif status == CastStatus.ST_RANGE_WRAP:
            reason, key = "out_of_range", "out_of_range"
            detail = (f"out of range for {tgt} {self.target.range_text()}, and "
                      f"out_of_range='wrap' does not apply to a floating-point data type; "
                      f"use out_of_range='clamp' or map the value with {map_key}")
        else:
            reason, key = "out_of_range", "out_of_range"
            fix = ("set out_of_range='clamp' or 'wrap'" if self.target.is_int
                   else "set out_of_range='clamp'")
            rounded = "" if self.source.is_int and self.target.is_int else f" after {self.rounding} rounding"
            detail = (f"out of range for {tgt} {self.target.range_text()}{rounded}; {fix}, or "
                      f"map the value with {map_key}")
        msg = (f"{CODEC}: cannot {self.direction} {where} {nd} = "
               f"{self.source.describe(value)} ({src}) as {tgt}: {detail}")
        return CastError(msg, index=nd, value=value, source=src, target=tgt, reason=reason,
                         config_key=key, detail=detail)


@lru_cache(maxsize=256)
def _cached_plan(source: str, target: str, rounding: str, out_of_range: str | None,
                 entries: tuple, direction: str) -> CastPlan:
    return CastPlan(format_for(source, role="source data type"),
                    format_for(target, role="target data type"),
                    rounding=rounding, out_of_range=out_of_range,
                    scalar_map=[list(e) for e in entries], direction=direction)


def cached_plan(source: str, target: str, *, rounding: str, out_of_range: str | None,
                pairs: Sequence[Sequence[object]] | None, direction: str) -> CastPlan:
    """A cached CastPlan (plans are immutable; compiling one costs tens of microseconds)."""
    frozen = tuple(tuple(p) for p in pairs or ())
    try:
        return _cached_plan(source, target, rounding, out_of_range, frozen, direction)
    except TypeError:   # an unhashable key/value in the map: build it uncached (it will fail)
        return CastPlan(format_for(source), format_for(target), rounding=rounding,
                        out_of_range=out_of_range, scalar_map=pairs or (), direction=direction)


def canonical_stage(fmt: NumberFormat) -> steps.Stage:
    """A sub-byte format onto itself: the value from the low bits, the unused high bits
    written as zdt writes them (the sign extension for signed integers, else zero)."""
    return cached_plan(fmt.name, fmt.name, rounding="nearest-even", out_of_range=None, pairs=(),
                       direction="encode").stage


def cast_array(
    arr: np.ndarray,
    data_type: str | np.dtype,
    *,
    rounding: str = "nearest-even",
    out_of_range: str | None = None,
    scalar_map: Sequence[Sequence[object]] | Mapping[object, object] | None = None,
) -> np.ndarray:
    """Cast `arr` to `data_type` with cast_value semantics.

    `scalar_map` is one direction's list of [input, output] pairs (JSON scalars of the source
    and target types), e.g. ``[["NaN", 0]]``.
    """
    arr = np.asarray(arr)
    source = format_for_dtype(arr.dtype, role="source data type")
    config = CastValueConfig.create(
        data_type=data_type, rounding=rounding, out_of_range=out_of_range,
        scalar_map={"encode": scalar_map} if scalar_map is not None else None)
    return config.encode_plan(source.name).cast(arr)


# --- fill values ------------------------------------------------------------------------------------

def same_scalar(a: np.generic, b: np.generic) -> bool:
    """Equal as the spec's fill-value round trip means it: NaN matches NaN, zeros keep sign."""
    fa, fb = a.item(), b.item()
    if isinstance(fa, float) and math.isnan(fa):
        return isinstance(fb, float) and math.isnan(fb)
    if fa != fb:
        return False
    if isinstance(fa, float) and fa == 0:
        return math.copysign(1.0, fa) == math.copysign(1.0, fb)
    return True


def check_fill_round_trip(encode: CastPlan, decode: CastPlan, fill: object) -> np.generic:
    """Encode the fill value, decode it back, and require the original. Returns the encoded
    fill value; raises FillValueError naming the value and what went wrong."""
    src = np.asarray(fill, dtype=encode.source.dtype).reshape(())
    shown = f"{encode.source.describe(src[()])} ({encode.source.name})"
    try:
        enc = encode.cast(src)
    except CastError as e:
        raise FillValueError(
            f"{CODEC}: fill value {shown} cannot be encoded as {encode.target.name}: "
            f"{e.detail}", config_key=e.config_key) from None
    enc_shown = f"{encode.target.describe(enc[()])} ({encode.target.name})"
    try:
        dec = decode.cast(enc)
    except CastError as e:
        raise FillValueError(
            f"{CODEC}: fill value {shown} encodes to {enc_shown}, which cannot be decoded back: "
            f"{e.detail}", config_key=e.config_key) from None
    if not same_scalar(src[()], dec[()]):
        raise FillValueError(
            f"{CODEC}: fill value {shown} does not survive the round trip: it encodes to "
            f"{enc_shown} and decodes to {decode.target.describe(dec[()])}; use a fill "
            f"value that {encode.target.name} represents exactly, or map it both ways with "
            f"scalar_map", config_key="fill_value")
    return enc[()]
