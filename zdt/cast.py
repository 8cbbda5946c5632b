"""cast_value semantics above the kernels: configuration, scalar_map, layouts, errors.

`CastPlan` holds one direction of a cast (source format -> target format) with everything
compiled for the kernel; `CastPlan.cast` runs it on any NumPy array. The zarr v3 codec, the
numcodecs codec and `zdt.cast_array` are thin wrappers around it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import lru_cache

import numpy as np

from zdt import _kernels, _layout, json_scalar
from zdt.errors import CastError, ConfigError, FillValueError
from zdt.formats import NumberFormat, format_for, format_for_dtype

CODEC = "cast_value"

ROUNDING_MODES: dict[str, int] = {
    "nearest-even": 0,
    "towards-zero": 1,
    "towards-positive": 2,
    "towards-negative": 3,
    "nearest-away": 4,
}
OUT_OF_RANGE_MODES: dict[str | None, int] = {None: 0, "clamp": 1, "wrap": 2}

# Status codes of zdt/_types.pxd.
ST_NAN, ST_INF, ST_RANGE, ST_RANGE_WRAP = 1, 2, 3, 4
# Map key kinds of zdt/_types.pxd.
KEY_VALUE, KEY_ANY_NAN, KEY_NAN_BITS = 0, 1, 2

ScalarMapJSON = dict[str, list[list[object]]]


# --- configuration --------------------------------------------------------------------------------

def parse_rounding(value: object) -> str:
    if not isinstance(value, str) or value not in ROUNDING_MODES:
        raise ConfigError(
            f"{CODEC}: rounding {value!r} is not one of {', '.join(map(repr, ROUNDING_MODES))}",
            config_key="rounding",
        )
    return value  # type: ignore[return-value]


def parse_out_of_range(value: object) -> str | None:
    if not (value is None or isinstance(value, str)) or value not in OUT_OF_RANGE_MODES:
        raise ConfigError(
            f"{CODEC}: out_of_range {value!r} is not one of 'clamp', 'wrap' (or absent, "
            f"which makes out-of-range values an error)",
            config_key="out_of_range",
        )
    return value  # type: ignore[return-value]


def data_type_name(data_type: object, *, config_key: str = "data_type") -> str:
    """The zarr v3 name of a data type given as a name, {"name": ...} (no configuration), a
    ZDType or a NumPy dtype / scalar type."""
    if isinstance(data_type, str):
        return data_type
    if isinstance(data_type, Mapping):
        extra = set(data_type) - {"name", "configuration"}
        name = data_type.get("name")
        if not isinstance(name, str) or extra or data_type.get("configuration", {}) != {}:
            raise ConfigError(
                f"{CODEC}: {config_key} {dict(data_type)!r} is not a data type without "
                f"configuration (expected {{'name': '<data type>'}})",
                config_key=config_key,
            )
        return name
    to_json = getattr(data_type, "to_json", None)
    if callable(to_json):
        return data_type_name(to_json(zarr_format=3), config_key=config_key)
    if isinstance(data_type, np.dtype) or (isinstance(data_type, type) and issubclass(data_type, np.generic)):
        return np.dtype(data_type).name
    raise ConfigError(
        f"{CODEC}: {config_key} must be a zarr v3 data type name, got {data_type!r}",
        config_key=config_key,
    )


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


def compile_scalar_map(
    pairs: Sequence[Sequence[object]], key_format: NumberFormat, value_format: NumberFormat,
    direction: str,
) -> list[tuple[int, int, int]]:
    """(kind, key_bits, out_bits) per entry, in order (the kernels let the first match win)."""
    entries = []
    for i, (key, value) in enumerate(pairs):
        where = f"{CODEC}: scalar_map.{direction}[{i}]"
        try:
            k = json_scalar.decode(key, key_format, what=f"{where} input", exact=True)
            v = json_scalar.decode(value, value_format, what=f"{where} output", exact=True)
        except ValueError as e:
            raise ConfigError(str(e), config_key=f"scalar_map.{direction}") from None
        if k.any_nan:
            kind = KEY_ANY_NAN
        elif key_format.is_float and _is_nan_bits(k.bits, key_format):
            kind = KEY_NAN_BITS
        else:
            kind = KEY_VALUE
        entries.append((kind, k.bits, v.bits))
    return entries


def _is_nan_bits(bits: int, fmt: NumberFormat) -> bool:
    return bool(np.isnan(np.array(bits, dtype=fmt.bits_dtype).view(fmt.dtype)))


# --- the cast ---------------------------------------------------------------------------------------

WIDEN_NONE, WIDEN_HALF, WIDEN_INT = 0, 1, 2


def fast_config(source: NumberFormat, target: NumberFormat, out_of_range: str | None,
                entries: list[tuple[int, int, int]]) -> tuple | None:
    """How the fast loops see a cast (the `fast` argument of the kernels' cast_flat), or None
    when there is no fast loop for it. float16 sources are read as float32 and integers going
    to float16 as float64 (both exact where it matters), so scalar_map keys and the safe range
    are given in that type; keys the widening cannot hold exactly force the exact path for
    every candidate."""
    from zdt.formats import FORMATS

    widen, fast_source = WIDEN_NONE, source
    if source.name == "float16":
        widen, fast_source = WIDEN_HALF, FORMATS["float32"]
    elif target.name == "float16" and source.is_int:
        widen, fast_source = WIDEN_INT, FORMATS["float64"]
    if fast_source.type_code < 0 or target.type_code < 0:
        return None
    # 64-bit integers read as float64 are rounded: an element could compare equal to a key it
    # is not, so map hits are only candidates, decided by the exact path
    force_mark = widen == WIDEN_INT and source.itemsize == 8 and bool(entries)
    fast_entries = []
    for kind, key_bits, out_bits in entries:
        if widen != WIDEN_NONE:
            key = np.array(key_bits, dtype=source.bits_dtype).view(source.dtype)[()]
            wide = np.array(key, dtype=object if source.is_int else source.dtype).astype(fast_source.dtype)
            key_bits = json_scalar.value_to_bits(wide[()], fast_source)
        fast_entries.append((kind, key_bits, out_bits))
    lo, hi = safe_range(fast_source, target, out_of_range)
    return (widen, source.type_code, fast_source.type_code, target.type_code, fast_entries,
            force_mark, lo, hi)


def _nearest_inside(value: int, dtype: np.dtype, towards: float) -> np.generic:
    """The float of `dtype` closest to the integer `value` without passing it."""
    with np.errstate(over="ignore"):
        v = np.array(value, dtype=object).astype(np.float64).astype(dtype)[()]
    while (int(v) > value) if towards < 0 else (int(v) < value):
        v = np.nextafter(v, dtype.type(towards))
    return v


def safe_range(source: NumberFormat, target: NumberFormat, out_of_range: str | None) -> tuple[int, int]:
    """Bit patterns (in the source format) of [lo, hi]: source values the fast loops convert
    right without flagging. When a block is flagged, only the elements outside this range go
    through the exact path, so it must never be wider than the fast loops' own guarantee (see
    the flags in zdt/_cast.pxi); it may be narrower at the cost of speed only."""
    dt = source.dtype
    if source.is_int:
        lo, hi = source.min_value, source.max_value
        if target.is_int and out_of_range is None:
            lo, hi = max(lo, target.min_value), min(hi, target.max_value)
        lo_v, hi_v = dt.type(lo), dt.type(hi)
    else:
        hi_v = np.finfo(dt).max
        if target.is_int and out_of_range is None:
            # x inside the target's range rounds inside it (the bounds are integers)
            lo_v = _nearest_inside(target.min_value, dt, np.inf)
            hi_v = _nearest_inside(target.max_value, dt, -np.inf)
        elif target.is_int and out_of_range == "wrap" and target.bits == 64:
            hi_v = np.nextafter(dt.type(2.0**63), dt.type(0))     # |r| < 2**63
        elif target.is_float and target.itemsize < source.itemsize:
            hi_v = dt.type(np.finfo(target.dtype).max)          # no overflow
        if not (target.is_int and out_of_range is None):
            lo_v = -hi_v
    return (json_scalar.value_to_bits(lo_v, source), json_scalar.value_to_bits(hi_v, source))


class CastPlan:
    """One direction of a cast_value configuration, compiled for the kernels."""

    __slots__ = ("source", "target", "rounding", "out_of_range", "direction", "entries",
                 "_params", "_fast")

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
        self._params = (
            source.kernel_params(), target.kernel_params(),
            ROUNDING_MODES[self.rounding], OUT_OF_RANGE_MODES[self.out_of_range],
        )
        self._fast = fast_config(source, target, self.out_of_range, self.entries)

    def cast(self, arr: np.ndarray, *, out: np.ndarray | None = None, fast: bool = True,
             where: str = "element") -> np.ndarray:
        """Cast every element of `arr` (any layout, any byte order); shape and element order are
        kept, the result is native-order, C- or F-ordered like the input (see zdt._layout).
        `out`, if given, receives the result (its contents are unspecified if the cast fails).
        `where` names an element in errors ("chunk element" from the codecs, which only see
        one chunk). `fast=False` sends every element through the exact path (tests use it)."""
        walk = _layout.prepare(arr, self.source.dtype, self.target.dtype, out, CODEC)
        if self.source is self.target and not self.entries and fast:
            np.copyto(walk.out, walk.arr)       # the identity cast (NaN payloads, -0.0 kept)
            return walk.finish()
        index, status = _kernels.module().cast_flat(walk.flat_in, walk.flat_out, *self._params,
                                                    self.entries, self._fast if fast else None)
        if index >= 0:
            raise self._element_error(walk, index, status, where)
        return walk.finish()

    # --- messages ---
    def _element_error(self, walk: _layout.Walk, flat: int, status: int, where: str) -> CastError:
        nd = walk.nd_index(flat)
        value = walk.value_at(flat)
        src, tgt = self.source.name, self.target.name
        map_key = f"scalar_map.{self.direction}"
        if status == ST_NAN:
            reason, key = "nan", map_key
            detail = f"NaN has no value in {tgt}; map it with {map_key} (e.g. [\"NaN\", 0])"
        elif status == ST_INF:
            reason, key = "inf", map_key
            detail = (f"an infinity has no value in {tgt} (even with out_of_range='clamp'); "
                      f"map it with {map_key}")
        elif status == ST_RANGE_WRAP:
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
               f"{describe_value(value, self.source)} ({src}) as {tgt}: {detail}")
        return CastError(msg, index=nd, value=value, source=src, target=tgt, reason=reason,
                         config_key=key, detail=detail)


def describe_value(value: np.generic, fmt: NumberFormat) -> str:
    """The exact value, shown so it identifies the element (NaN payloads as hex)."""
    if fmt.is_int:
        return str(int(value))
    f = float(value)
    if math.isnan(f):
        bits = json_scalar.value_to_bits(value, fmt)
        canonical = json_scalar.value_to_bits(fmt.dtype.type("nan"), fmt)
        return "nan" if bits == canonical else f"nan (0x{bits:0{2 * fmt.itemsize}x})"
    return repr(f)      # float16/32 values are float64 values: this is exact and unambiguous


@lru_cache(maxsize=256)
def _cached_plan(source: str, target: str, rounding: str, out_of_range: str | None,
                 entries: tuple, direction: str) -> CastPlan:
    return CastPlan(format_for(source, role="source data type"),
                    format_for(target, role="target data type"),
                    rounding=rounding, out_of_range=out_of_range,
                    scalar_map=[list(e) for e in entries], direction=direction)


def plan_for(source: str, target: str, *, rounding: str, out_of_range: str | None,
             pairs: Sequence[Sequence[object]] | None, direction: str) -> CastPlan:
    """A cached CastPlan (plans are immutable; compiling one costs a few microseconds)."""
    frozen = tuple(tuple(p) for p in pairs or ())
    try:
        return _cached_plan(source, target, rounding, out_of_range, frozen, direction)
    except TypeError:   # an unhashable key/value in the map: build it uncached (it will fail)
        return CastPlan(format_for(source), format_for(target), rounding=rounding,
                        out_of_range=out_of_range, scalar_map=pairs or (), direction=direction)


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
    target = format_for(np.dtype(data_type).name if not isinstance(data_type, str) else data_type,
                        role="target data type")
    pairs = parse_scalar_map({"encode": scalar_map}).get("encode") if scalar_map is not None else None
    out_of_range = parse_out_of_range(out_of_range)
    check_wrap_target(target, out_of_range)
    plan = plan_for(source.name, target.name, rounding=parse_rounding(rounding),
                    out_of_range=out_of_range, pairs=pairs, direction="encode")
    return plan.cast(arr)


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
    shown = f"{describe_value(src[()], encode.source)} ({encode.source.name})"
    try:
        enc = encode.cast(src)
    except CastError as e:
        raise FillValueError(
            f"{CODEC}: fill value {shown} cannot be encoded as {encode.target.name}: "
            f"{e.detail}", config_key=e.config_key) from None
    enc_shown = f"{describe_value(enc[()], encode.target)} ({encode.target.name})"
    try:
        dec = decode.cast(enc)
    except CastError as e:
        raise FillValueError(
            f"{CODEC}: fill value {shown} encodes to {enc_shown}, which cannot be decoded back: "
            f"{e.detail}", config_key=e.config_key) from None
    if not same_scalar(src[()], dec[()]):
        raise FillValueError(
            f"{CODEC}: fill value {shown} does not survive the round trip: it encodes to "
            f"{enc_shown} and decodes to {describe_value(dec[()], decode.target)}; use a fill "
            f"value that {encode.target.name} represents exactly, or map it both ways with "
            f"scalar_map", config_key="fill_value")
    return enc[()]
