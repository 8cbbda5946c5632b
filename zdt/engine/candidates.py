"""The encodings that may keep a bound, generated from an array's survey.

Each candidate is a codec chain (zarr v3 JSON) and says whether the survey alone proves the
bound (`proven`: from the range, the smallest magnitude, the specials, the grids, and a
margin for the float arithmetic of the codecs) or only a measurement over all the data can
(`proven=False`: the step of a one-line FixedScaleOffset recipe, exactly 2E; such a candidate
is eligible only when every chunk was measured). Which one wins is decided by the bytes each
writes under the back ends measured with it (zdt.engine.measure), never here.

* absolute bound E, float data: quantization ``[scale_offset(offset, scale), cast_value(uintN)]``
  with the coarsest step the bound allows (2 (E - margin)), a round decimal step and a power
  of two, each under 2E; a decimal grid step when the data lie on that grid (exact whatever
  E), and the grid the survey found the data on (or every m-th point of it); ``bitround``
  with the fewest bits whose rounding stays within E at the largest magnitude; casts to a
  narrower float whose rounding stays within E over the range.
* relative bound R, float data: casts to every narrower float format whose precision and
  range keep R (IEEE-style and the float8 / float6 / float4 formats), ``bitround`` with the
  fewest mantissa bits that keep R, and a cast followed by ``bitround``; the codes of the grid
  the data lie on (each value back on its own grid point: proven by decoding every grid point
  of the range in the spec's arithmetic, else measured).
* float32 / float64 (absolute or relative bound) and 8- to 32-bit integers (absolute bound),
  readers that all have zdt (``--readers zdt``), zarr format 3: ``zdt.predict`` (prediction
  from reconstructed neighbours, its own entropy stage: an array -> bytes codec; relative
  bounds through the values' logarithms; docs/codecs/predict.md), proven by the codec itself
  (its encoder checks every element in the decoder's own arithmetic); and the codes of the
  data's own grid (above) coded exactly by ``zdt.predict``, where the grid is coarser than 2E
  (zdt.predict on the values would quantize finer than the grid and lose it).
* integers: absolute bound: a shift into the narrowest unsigned type (exact), and, for bounds
  of 1 and more, an odd whole step (2 floor(E) + 1) and the quantization above, through
  float64, into an unsigned type no wider than the data; relative bound: none (copied).
* codes of a byte or less also as uint16, measured only under pcodec (which takes 16- to
  64-bit types).

NaN / +-Infinity (in the data or the fill value) get codes or values of their own through
``scalar_map``; so do the sentinels the store declares (fill value, CF ``_FillValue`` /
``missing_value``): they never widen the range and come back bit for bit.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np

from zdt.codecs import predict as predict_codec
from zdt.engine.bounds import Bound
from zdt.engine.readers import Readers
from zdt.engine.survey import Survey
from zdt.formats import FORMATS, NAN_NONE, NumberFormat

UNSIGNED = ("uint2", "uint4", "uint8", "uint16", "uint32", "uint64")
V2_UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
# float formats a cast may target, narrowest first (same width: more mantissa first)
FLOATS = ("float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3",
          "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz", "float8_e5m2",
          "float8_e5m2fnuz", "bfloat16", "float16", "float32")
V2_FLOATS = ("float16", "float32")          # format 2: no ml_dtypes through its compressors
SPECIALS = ("NaN", "Infinity", "-Infinity")
# decimal grids (10**-d) a quantization may follow when the data lie on them
GRID_DIGITS = range(0, 7)


@dataclass(frozen=True)
class Encoding:
    """A candidate encoding: its array -> array codecs and the serializer it needs, if any
    (the back ends that may follow, a serializer and compressors, are measured with it:
    zdt.engine.measure)."""

    label: str
    filters: tuple          # zarr v3 JSON of the array -> array codecs
    # zarr v3 JSON of the array -> bytes codec it needs (packbits for sub-byte codes,
    # zdt.predict), or None
    serializer: Any
    stored: str             # the data type the chunks hold
    proven: bool            # the survey proves the bound (else it must be measured everywhere)
    preference: int = 0     # between equal sizes: lower first (rounder numbers, simpler chains)
    # readers that decode no lossy filter: these array -> array codecs are applied and undone
    # in memory before writing (the values rounded as a reader of them would see them), and the
    # array stores the rounded values in its own type, with no filter
    rounding: tuple = ()
    for_pcodec: bool = False    # wider codes than needed: only worth measuring under pcodec

    @property
    def codecs(self) -> list:
        return [*self.filters, *([self.serializer] if self.serializer else [])]

    def rounded_in_memory(self, dtype: np.dtype) -> Encoding:
        """The same rounding for readers that decode no lossy filter: applied in memory, the
        array stored in its own type."""
        return Encoding(f"{self.label}, rounded in memory", (), None, dtype.name, self.proven,
                        self.preference, rounding=self.filters)


@dataclass(frozen=True)
class Context:
    dtype: np.dtype
    survey: Survey
    bound: Bound
    sentinels: tuple        # the declared finite sentinel values, in the array's type
    fill_special: str | None   # "NaN" / "Infinity" / "-Infinity" when the fill value is one
    zarr_format: int
    masking: tuple = ()     # the sentinels readers take for "missing" (no data may become one)
    valid: tuple | None = None  # CF valid range (lo, hi): a value inside must stay inside
    whole: bool = False     # what decodes here is then rounded to a whole number (integers)
    readers: Readers = Readers(("zdt",))
    in_memory: bool = False     # the filters only round values in memory (any type will do)
    fill_value: Any = None      # the output array's fill value
    # the array's first slice along its leading dimensions, where its chunks span the last two
    # and more than one lies along the others (zdt.predict's reference mask: _reference)
    first_slice: Any = None
    asked: Bound | None = None  # the bound as the user gave it, where `bound` is the stored one
    effort: str = "default"     # zdt.predict's `effort` (written only when not the default)
    sharded: bool = False       # the output is sharded (the filters are a shard's inner codecs)

    @property
    def zero_through_shards(self) -> bool:
        """Whether 0 must go through the filters without an error, though the data hold none: a
        reader validates a shard's inner codecs with it (zarr-python 3.4: Reader.shard_zero_fill)."""
        return (self.sharded and not self.in_memory
                and any(r.shard_zero_fill for r in self.readers.readers))

    @property
    def specials(self) -> list[str]:
        found = set(self.survey.specials) | ({self.fill_special} if self.fill_special else set())
        return [s for s in SPECIALS if s in found]

    def holds_specials(self, fmt: NumberFormat) -> bool:
        """Whether a float format has a value for each special (NaN, +-Infinity) the data or
        the fill value hold."""
        return all((fmt.nan_bits if s == "NaN" else fmt.inf_bits) is not None for s in self.specials)

    @property
    def unsigned(self) -> tuple:
        return tuple(t for t in (V2_UNSIGNED if self.zarr_format == 2 else UNSIGNED) if self.type_ok(t))

    @property
    def floats(self) -> tuple:
        return tuple(t for t in (V2_FLOATS if self.zarr_format == 2 else FLOATS) if self.type_ok(t))

    def type_ok(self, data_type: str) -> bool:
        """Whether a filter may produce this type: every reader reads it (or it only lives in
        memory); a sub-byte type needs packbits."""
        if self.in_memory:
            return True
        if FORMATS[data_type].bits < 8 and not self.readers.decodes("packbits"):
            return False
        return self.readers.type_ok(data_type)

    @property
    def bitround(self) -> str:
        """The name a bitround filter is written under (in memory: zdt's own)."""
        return "bitround" if self.in_memory else (self.readers.bitround_name or "")


def candidates(ctx: Context) -> list[Encoding]:
    """Every encoding worth measuring (possibly none), without duplicates."""
    kind = ctx.dtype.kind
    out: list[Encoding] = []
    if kind == "f" and ctx.dtype.itemsize >= 4:
        if ctx.bound.relative:
            out += _relative_float(ctx)
            out += _own_grid_relative(ctx)
            out += _predict(ctx)
        else:
            out += _absolute_float(ctx)
            out += _predict(ctx)
    elif kind in "iu" and not ctx.bound.relative:
        out += _integer_shift(ctx)
        if ctx.bound.value >= 1:
            out += _integer_quantized(ctx)
            out += _integer_fixedscaleoffset(ctx)
        out += _predict(ctx)
    out += [w for e in out if (w := _wider_codes(e, ctx)) is not None]
    seen, unique = set(), []
    for e in out:
        key = repr(e.codecs)
        if key not in seen:
            seen.add(key)
            unique.append(e)
    return unique


def _wider_codes(e: Encoding, ctx: Context) -> Encoding | None:
    """Byte-wide (or narrower) integer codes as uint16, for pcodec (which takes 16- to 64-bit
    types): the same values, one more encoding to measure under it."""
    if e.stored not in ("uint2", "uint4", "uint8") or ctx.zarr_format == 2 or not ctx.type_ok("uint16"):
        return None
    last = e.filters[-1] if e.filters else None
    if not last or last["name"] != "cast_value":
        return None
    cast = {"name": "cast_value", "configuration": {**last["configuration"], "data_type": "uint16"}}
    label = e.label.replace(f"cast_value {e.stored}", "cast_value uint16")
    return Encoding(label, (*e.filters[:-1], cast), None, "uint16", e.proven, e.preference + 1,
                    for_pcodec=True)


# --- JSON scalars of a type --------------------------------------------------------------------

def json_number(value: Any, dtype: np.dtype) -> Any:
    """A value of `dtype` as a JSON number that reads back as exactly it."""
    if dtype.kind in "iu":
        return int(value)
    v = float(dtype.type(value))
    return int(v) if v.is_integer() and abs(v) < 2 ** 53 else v


def _spare_nans(fmt_name: str, count: int) -> list[str] | None:
    """`count` NaN bit patterns of a float format other than its canonical NaN (for sentinels),
    as "0x.." strings; None when it has not enough."""
    f = FORMATS[fmt_name]
    if count == 0:
        return []
    if f.nan_style == NAN_NONE or f.nan_bits is None:
        return None
    digits = 2 * f.itemsize
    out = []
    if f.inf_bits is not None:          # IEEE-style: exponent all ones, any non-zero mantissa
        base = f.nan_bits
        # patterns whose low bits are zero first (the negative NaN, then one payload bit from
        # the top): pcodec codes a float chunk with a NaN of low bits set in a fifth more bytes
        # (OSTIA's SST under bitround: 253,195 vs 208,912), and a bitround keeps them
        first = [base | (1 << (f.bits - 1))] + [base | (1 << b) for b in range(f.man_bits - 2, -1, -1)]
        for bits in itertools.chain(first, (base | i for i in range(1, 1 << f.man_bits))):
            if bits != f.nan_bits and f.is_nan_bits(bits) and f"0x{bits:0{digits}x}" not in out:
                out.append(f"0x{bits:0{digits}x}")
            if len(out) == count:
                return out
        return None
    other = f.nan_bits | (1 << (f.bits - 1))      # all-ones NaNs: the negative one
    if other != f.nan_bits and f.is_nan_bits(other) and count == 1:
        return [f"0x{other:0{digits}x}"]
    return None


def sentinel_map(ctx: Context, target: str, keepbits: int | None = None) -> tuple[list, list] | None:
    """scalar_map entries that keep the specials and sentinels through a cast from the array's
    type to a float `target` and, with `keepbits`, a bitround after it: a sentinel the two
    keep exactly needs nothing, the others become spare NaN patterns (and every other NaN the
    canonical one); None when the target cannot hold them. One sentinel becomes +Infinity
    instead where the data has none and the target has it: a decimal spelling, which every
    reader parses (zarr-python 3.2-3.4 cannot read "0x.." patterns), and a bitround keeps it."""
    f = FORMATS[target]
    encode, decode = [], []
    lost = [v for v in ctx.sentinels if not _survives(v, ctx.dtype, target, keepbits)]
    if len(lost) == 1 and f.inf_bits is not None and "Infinity" not in ctx.specials \
            and ctx.holds_specials(f):
        value = json_number(lost[0], ctx.dtype)
        return [[value, "Infinity"]], [["Infinity", value]]
    spare = _spare_nans(target, len(lost))
    if spare is None:
        return None
    for value, bits in zip(lost, spare, strict=True):
        encode.append([json_number(value, ctx.dtype), bits])
        decode.append([bits, json_number(value, ctx.dtype)])
    if not ctx.holds_specials(f):
        return None
    if lost:
        encode.append(["NaN", "NaN"])     # (no data NaN may come out as a sentinel's pattern)
    return encode, decode


def _survives(value: Any, dtype: np.dtype, target: str, keepbits: int | None) -> bool:
    """Whether a cast to `target` (then a bitround) gives `value` back exactly."""
    from zdt.codecs.bitround import bitround
    from zdt.codecs.cast import cast_array
    from zdt.errors import ZdtError

    x = np.asarray([value], dtype=dtype)
    try:
        y = cast_array(x, target) if target != dtype.name else x.copy()
        if keepbits is not None:
            y = bitround(y, keepbits)
        back = cast_array(y, dtype.name)
    except ZdtError:
        return False
    return bool(back.tobytes() == x.tobytes())


def _map_config(encode: list, decode: list) -> dict:
    if not encode and not decode:
        return {}
    return {"scalar_map": {k: v for k, v in (("encode", encode), ("decode", decode)) if v}}


# --- absolute bounds on float data -----------------------------------------------------------

def _margin(ctx: Context, offset: float, step: float) -> float:
    """An upper bound of what the float arithmetic of scale_offset ((x - o) * s, then
    q / s + o, each rounded once in the array's type) adds to the rounding error q/2."""
    eps = float(np.finfo(ctx.dtype).eps)
    span = abs(ctx.survey.hi - offset) + abs(ctx.survey.lo - offset)
    return 3 * eps * (ctx.survey.max_abs + abs(offset) + span + step)


def _absolute_float(ctx: Context) -> list[Encoding]:
    s, E, dt = ctx.survey, ctx.bound.value, ctx.dtype
    out: list[Encoding] = []
    if s.empty:
        return _only_specials(ctx)
    lo = float(s.lo)
    # the data's floor reads better and costs at most one code; the smallest value itself
    offsets = [(float(dt.type(math.floor(lo))), 0), (lo, 1)]
    offsets = [(o, p) for i, (o, p) in enumerate(offsets)
               if math.isfinite(o) and o <= lo and all(o != q for q, _ in offsets[:i])]
    for o, offset_pref in offsets:
        margin = _margin(ctx, o, 2 * E)
        if E > 2 * margin:
            least = 1 / (2 * (E - margin))      # scales at least this keep E (steps at most 2E')
            steps = [(_round_up(least, 4, dt), "the coarsest step the bound allows", 2)]
            k = math.ceil(math.log10(least) - 1e-12)
            nice = min(float(m * 10.0 ** e) for e in (k - 1, k) for m in (1, 2, 5)
                       if m * 10.0 ** e >= least)
            steps.append((_scale_at_least(nice, dt), "a round decimal step", 0))
            steps.append((_scale_at_least(2.0 ** math.ceil(math.log2(least)), dt),
                          "a power-of-two step", 1))
            for scale, why, pref in steps:
                enc = _quantized(ctx, o, scale, proven=True, why=why, preference=2 * pref + offset_pref)
                if enc:
                    out.append(enc)
        # the one-line FixedScaleOffset recipe's step, exactly 2E: proven only by measurement
        enc = _quantized(ctx, o, float(dt.type(1 / (2 * E))), proven=False,
                         why="step 2E exactly (measured)", preference=6 + offset_pref)
        if enc:
            out.append(enc)
    # decimal grids the data lie on, coarser than 2E: exact (up to the grid's rounding)
    for d, miss in sorted(s.grid_error.items()):
        step = 10.0 ** -d
        if step <= 2 * E:
            continue
        o = float(dt.type(round(lo, d)))
        if abs(o - lo) > 1e-3 * step:
            continue
        if miss + _margin(ctx, o, step) <= E:
            enc = _quantized(ctx, o, float(dt.type(10.0 ** d)), proven=True,
                             why=f"the data's own 10^-{d} grid", preference=0)
            if enc:
                out.append(enc)
    out += _own_grid(ctx)
    out += _bitround_absolute(ctx)
    out += _casts(ctx)
    out += _through_float64(ctx)
    out += _sentinel_as_infinity(ctx)
    return out


def _through_float64(ctx: Context) -> list[Encoding]:
    """float32 data with a sentinel that scale_offset's float32 arithmetic cannot carry
    ((v - o) s overflows: netCDF's default fill 9.97e36, or 1e20, times a fine scale): the
    quantizations in float64 behind [cast_value float64], the bound less half a float32 unit
    at the largest magnitude (the way back rounds to float32 once more)."""
    s, E = ctx.survey, ctx.bound.value
    if ctx.dtype != np.dtype("float32") or s.empty or ctx.whole:
        return []
    scale = 1 / (2 * E)
    with np.errstate(over="ignore"):
        overflows = [v for v in ctx.sentinels
                     if not np.isfinite((np.float32(v) - np.float32(s.lo)) * np.float32(scale))]
    if not overflows:
        return []
    rounding = 2.0 ** -24 * 2 * (s.max_abs + E)
    if E <= 2 * rounding:
        return []
    wide = replace(ctx, dtype=np.dtype("float64"), bound=Bound("abs", E - rounding))
    first = {"name": "cast_value", "configuration": {"data_type": "float64"}}
    found = [e for e in _absolute_float(wide)
             if e.filters and e.filters[0]["name"] == "scale_offset" and FORMATS[e.stored].bits <= 32]
    # the one-line recipe's step, exactly 2E, in float64 too: proven only by measurement (the
    # way back to float32 may round a value at E from its code past E)
    exact = replace(wide, bound=ctx.bound)
    for o in sorted({float(math.floor(float(s.lo))), float(s.lo)}):
        enc = _quantized(exact, o, 1 / (2 * E), proven=False, why="step 2E exactly (measured)",
                         preference=6)
        if enc and FORMATS[enc.stored].bits <= 32:
            found.append(enc)
    return [Encoding(f"cast_value float64 + {e.label}", (first, *e.filters), e.serializer,
                     e.stored, e.proven, e.preference + 1) for e in found]


def _sentinel_as_infinity(ctx: Context) -> list[Encoding]:
    """float32 data with one sentinel scale_offset's float32 arithmetic cannot carry, and no
    +Infinity: the quantizations in float32 behind [cast_value float32] that maps the sentinel
    to +Infinity and back (which scale_offset carries and the codes' scalar_map names in
    decimal: readers that validate every codec as the array's type, or cannot parse "0x.."
    patterns, read it; zarr-python's fill value NaN passes through untouched)."""
    s, E = ctx.survey, ctx.bound.value
    if ctx.dtype != np.dtype("float32") or s.empty or ctx.whole or "Infinity" in ctx.specials:
        return []
    with np.errstate(over="ignore"):
        overflows = [v for v in ctx.sentinels
                     if not np.isfinite((np.float32(v) - np.float32(s.lo)) * np.float32(1 / (2 * E)))]
    if len(overflows) != 1:
        return []
    v = overflows[0]
    others = tuple(x for x in ctx.sentinels if np.float32(x).tobytes() != np.float32(v).tobytes())
    inner = replace(ctx, sentinels=others, survey=replace(s, specials={*s.specials, "Infinity"}),
                    masking=tuple(x for x in ctx.masking if np.float32(x).tobytes() != np.float32(v).tobytes()))
    value = json_number(v, ctx.dtype)
    first = {"name": "cast_value", "configuration": {"data_type": "float32", "scalar_map": {
        "encode": [[value, "Infinity"]], "decode": [["Infinity", value]]}}}
    found = [e for e in _absolute_float(inner)
             if e.filters and e.filters[0]["name"] == "scale_offset" and FORMATS[e.stored].bits <= 32]
    return [Encoding(f"its sentinel as +Infinity first + {e.label}", (first, *e.filters), e.serializer,
                     e.stored, e.proven, e.preference + 1) for e in found]


# (integers: their values as float64, rounded back: within the whole steps of the bound, so a
# CF-packed array's stored bound, a whole number k or 0.5 for exact, is kept)
PREDICT_TYPES = (*predict_codec.DTYPES, *predict_codec.INTEGERS)


def _predict(ctx: Context) -> list[Encoding]:
    """zdt.predict with the bound, where every reader has zdt and the codec keeps what must
    come back exactly. Floats: it keeps NaN, the infinities and the fill value bit for bit, and
    would predict any other declared sentinel like data, so none may occur, but for one the
    data hold where the fill value is NaN (a CF _FillValue xarray wrote): that one becomes the
    codec's `fill`, kept exactly and predicted around. Integers: it keeps
    the fill value and every declared sentinel (`keep`), and no other value decodes to one
    (the codec sees to it), within the bound's whole steps (CF-packed data: the stored bound,
    a whole number, or 0.5 for exact). A masking sentinel (other than a float's fill value,
    which the codec never reconstructs a value to) must lie outside what the values may read
    back as (within E of the range), and so must the edges of a CF valid range."""
    s, E = ctx.survey, ctx.bound.value
    if (ctx.zarr_format != 3 or ctx.in_memory or ctx.whole or ctx.dtype not in PREDICT_TYPES
            or not ctx.readers.decodes("zdt.predict") or s.empty):
        return []
    integers = ctx.dtype.kind in "iu"
    fill = np.asarray(ctx.fill_value if ctx.fill_value is not None else
                      (0 if integers else np.nan), dtype=ctx.dtype)
    keep = sorted({int(v) for v in ctx.sentinels if int(v) != int(fill)}) if integers else []
    if ctx.bound.relative and integers:
        return []           # (the codec's relative bound is for floats)
    # (what the values may read back as: within E, or within R of the largest magnitude)
    reach = E * float(s.max_abs) if ctx.bound.relative else E
    lo, hi = float(s.lo) - reach, float(s.hi) + reach
    # floats: a missing-data value the data hold other than a NaN fill value (xarray writes a
    # CF _FillValue into the data, the zarr fill value NaN) becomes the codec's `fill`: kept
    # exactly, predicted around, never decoded to
    held = [v for v in s.sentinels_seen if np.asarray(v, dtype=ctx.dtype).tobytes() != fill.tobytes()]
    marker = None
    if not integers and len(held) == 1 and np.isnan(fill) and math.isfinite(float(held[0])):
        marker = float(np.asarray(held[0], dtype=ctx.dtype))
        held = []
    kept = float(fill) if marker is None else marker
    if not integers and (held or any(lo <= float(v) <= hi and float(v) != kept for v in ctx.masking)):
        return []
    valid = ctx.valid
    if valid is not None and not (valid[0] <= lo and hi <= valid[1]):
        return []
    bound = {"rel_error": E} if ctx.bound.relative else {"abs_error": E}
    reference = None if ctx.bound.relative else _reference(ctx, kept)
    config = {**bound, "predictor": "auto", "level": 3, "entropy": "auto",
              **({"effort": ctx.effort} if ctx.effort != "default" else {}),
              **({"keep": keep} if keep else {}), **({"fill": marker} if marker is not None else {}),
              **({"mask": reference} if reference is not None else {})}
    # (in the user's units: a CF-packed array's stored bound is a number of stored steps)
    shown = ctx.asked or ctx.bound
    within = f"within {shown.value:g}" + (" of each magnitude" if shown.relative else "")
    return [Encoding(f"zdt.predict {within} (prediction from decoded neighbours)", (),
                     {"name": "zdt.predict", "configuration": config}, ctx.dtype.name, True,
                     preference=3)]


def _reference(ctx: Context, kept: float) -> dict | None:
    """zdt.predict's reference mask (its `mask` key): where the array's first slice holds the
    value the codec masks (`kept`: the fill value, or the CF _FillValue the data hold), the
    mask of that slice, which every chunk's first slice along the leading dimensions then
    looks back at (a land mask repeated along time, chunks of a few time steps each). None
    without a first slice (decide_array's), or where it masks nothing."""
    first = ctx.first_slice
    if first is None or first.ndim != 2 or min(first.shape) < 2:
        return None
    kept_array = np.asarray(kept, dtype=ctx.dtype)
    bits = np.dtype(f"u{ctx.dtype.itemsize}")
    mask = np.ascontiguousarray(first, dtype=ctx.dtype).view(bits) == kept_array.view(bits)
    if not mask.any():
        return None
    return predict_codec.ReferenceMask.of(mask).to_json()


class Grid(NamedTuple):
    """A grid the data lie on: the points (n0 + g k) 10**-digits, k = 0, 1, ..."""

    offset: float           # its first point in the array's type (n0 10**-digits rounded)
    step: float             # g 10**-digits
    miss: float             # the data's largest miss from it (the survey's, in the array's type)
    n0: int
    g: int
    digits: int


def _grid(ctx: Context) -> Grid | None:
    """The grid the survey found the data on; None without one a quantization can follow."""
    s, dt = ctx.survey, ctx.dtype
    if s.empty or not s.grid_gcd:
        return None
    d = min(s.grid_gcd)
    n0, g = s.grid_gcd[d]
    if g <= 0:
        return None
    step = g / 10.0 ** d
    o = float(dt.type(n0 / 10.0 ** d))
    if not math.isfinite(o) or abs(o - s.lo) > 1e-3 * step or (s.hi - o) / step >= 2.0 ** 40:
        return None
    return Grid(o, step, s.grid_error.get(d, math.inf), n0, g, d)


def _own_grid(ctx: Context) -> list[Encoding]:
    """The grid the survey found the data on (_grid: a DEM in 28 m steps, temperatures in half
    degrees, a decoded CF-packed field with a decimal step): codes k themselves (exact up to
    the grid's miss, whatever E), and, where E allows (m - 1)/2 grid steps, every m-th grid
    point (m odd: a value k/m is at least 1/(2m) from a rounding boundary, so the float
    arithmetic rounds to the nearest such point)."""
    E, dt = ctx.bound.value, ctx.dtype
    grid = _grid(ctx)
    if grid is None:
        return []
    o, step, miss = grid.offset, grid.step, grid.miss
    out = []
    wide = 2 * math.floor(E / step) + 1
    for m in sorted({1, wide, max(1, wide - 2)}):
        slack = miss + _margin(ctx, o, m * step)
        if (m - 1) / 2 * step + slack > E:
            continue
        why = f"the data's own grid of {step:.6g}" + (f", one point in {m}" if m > 1 else "")
        enc = _quantized(ctx, o, float(dt.type(1 / (m * step))), proven=True, why=why,
                         preference=0 if m == 1 else 1)
        if enc:
            out.append(enc)
            # (codes one grid step apart coarser than 2E: zdt.predict on the data itself
            # quantizes in steps of 2E and its codes no longer see the grid)
            if m == 1 and step > 2 * E:
                out += _codes_predicted(ctx, enc)
    return out


def _codes_predicted(ctx: Context, enc: Encoding) -> list[Encoding]:
    """`enc` (a quantization to the data's own grid points, exact up to the grid's miss) with
    zdt.predict coding its integer codes exactly (abs_error 0.5) in place of the bytes-and-
    compressor back ends: prediction from neighbours on the grid's codes (a DEM in 28 m
    steps), where every reader has zdt."""
    if (ctx.zarr_format != 3 or ctx.in_memory or ctx.whole or enc.serializer is not None
            or np.dtype(enc.stored) not in predict_codec.INTEGERS
            or not ctx.readers.decodes("zdt.predict")):
        return []
    config = {"abs_error": 0.5, "predictor": "auto", "level": 3, "entropy": "auto"}
    return [Encoding(f"{enc.label}; zdt.predict, the codes exactly", enc.filters,
                     {"name": "zdt.predict", "configuration": config}, enc.stored, enc.proven,
                     enc.preference + 3)]


def _own_grid_relative(ctx: Context) -> list[Encoding]:
    """Relative bound R: the codes of the grid the survey found the data on (_own_grid's
    first), each value back on its own grid point: proven where _grid_keeps says every grid
    point in the range reads back within R of the values near it (a DEM in 28 m steps: every
    value back exactly), else measured."""
    grid = _grid(ctx)
    if grid is None:
        return []
    scale = float(ctx.dtype.type(1 / grid.step))
    proven = _grid_keeps(ctx, grid, scale)
    enc = _quantized(ctx, grid.offset, scale, proven=proven,
                     why=f"the data's own grid of {grid.step:.6g}" + ("" if proven else " (measured)"),
                     preference=0 if proven else 1)
    return [enc, *_codes_predicted(ctx, enc)] if enc else []


GRID_POINTS = 1 << 20       # (a relative bound's grid is checked point by point up to this many)


def _grid_keeps(ctx: Context, grid: Grid, scale: float) -> bool:
    """Whether [scale_offset(offset, scale), cast_value(uint)] keeps the relative bound R for
    data on `grid`: a value there is the array type's nearest to its grid point p, x_k, up to
    the grid's miss (the survey's round trip through the grid, in that type) and an ulp (p
    reaches the type through float64): m = miss + an ulp. Each x_k must encode to its own code
    k (values within the miss of it too: the miss and the arithmetic's margin are far below
    half a step), and the decoder's y_k = k / scale + offset (each operation rounded in the
    array's type, as the spec has it, so every reader's) must keep |y_k - x_k| + m <=
    R (|x_k| - m); a zero point must read back as zero exactly (and the values there be zero
    exactly: miss 0). Checked point by point, up to GRID_POINTS points."""
    s, R, dt = ctx.survey, ctx.bound.value, ctx.dtype
    D, o, miss = dt.type, grid.offset, grid.miss
    top = math.floor((s.hi - o) / grid.step + 0.5)
    if not 0 <= top < GRID_POINTS or (miss + _margin(ctx, o, grid.step)) / grid.step >= 0.25:
        return False
    k = np.arange(top + 1, dtype=np.float64)
    with np.errstate(all="ignore"):
        x = ((grid.n0 + grid.g * k) / 10.0 ** grid.digits).astype(dt)
        codes = np.rint((x - D(o)) * D(scale))
        y = (k.astype(dt) / D(scale) + D(o)).astype(np.float64)
    if not np.array_equal(codes, k):
        return False
    xs = x.astype(np.float64)
    zero = xs == 0
    if zero.any() and (miss > 0 or not (y[zero] == 0).all()):
        return False
    near = ~zero
    m = miss + np.spacing(np.abs(x[near])).astype(np.float64)
    return bool((np.abs(y[near] - xs[near]) + m
                 <= R * (np.abs(xs[near]) - m) * (1 - 2.0 ** -40)).all())


def _round_up(value: float, digits: int, dt: np.dtype) -> float:
    """value rounded up to `digits` significant decimal digits (a scale that reads well), as a
    value of dt not below it."""
    e = math.floor(math.log10(value)) - digits + 1
    n = math.ceil(value / 10.0 ** e)
    while float(f"{n}e{e}") < value:            # (the float arithmetic of that line)
        n += 1
    return _scale_at_least(float(f"{n}e{e}"), dt)


def _scale_at_least(value: float, dt: np.dtype) -> float:
    """The smallest value of dt not below `value` (a scale whose step 1/scale is at most
    1/value)."""
    v = dt.type(value)
    if float(v) < value:
        v = np.nextafter(v, dt.type(np.inf))
    return float(v)


def _only_specials(ctx: Context) -> list[Encoding]:
    """No finite value at all: a uint8 of codes for the specials and sentinels."""
    return [e for e in [_quantized(ctx, 0.0, 1.0, proven=True, why="no finite values")] if e]


def _quantized(ctx: Context, offset: float, scale: float, *, proven: bool, why: str,
               preference: int = 0) -> Encoding | None:
    """[scale_offset, cast_value(uintN)] with the specials and sentinels as codes above the
    data's; None when no type narrower than the data holds the codes, or a sentinel has no
    exact way back through the arithmetic."""
    dt, s = ctx.dtype, ctx.survey
    D = dt.type
    top_f = 0.0 if s.empty else float(_code(s.hi, offset, scale, dt))
    bottom_f = 0.0 if s.empty else float(_code(s.lo, offset, scale, dt))
    # (a range near the type's largest value overflows the codes: no quantization then)
    if not (math.isfinite(top_f) and math.isfinite(bottom_f)) or bottom_f < 0:
        return None
    top = int(top_f)
    # a sentinel that its own code, among the data's, gives back exactly needs no code of its
    # own (its neighbours then read back as it: they are within the bound of it), unless
    # readers take it for "missing": then its neighbours must not become it
    mapped = [v for v in ctx.sentinels
              if v in ctx.masking or not _exact_in_range(float(v), offset, scale, top, dt, ctx.whole)]
    if ctx.zero_through_shards and 0 not in mapped and not _in_range(_code(0.0, offset, scale, dt), top):
        # (a code of its own that maps back to 0: a reader that validates shards with 0 then
        # opens the array; the data never take it)
        mapped.append(D(0))
    extra = len(ctx.specials) + len(mapped)
    target = next((t for t in ctx.unsigned if top + extra <= (1 << FORMATS[t].bits) - 1
                   and FORMATS[t].bits < 8 * dt.itemsize), None)
    if target is None:
        return None
    code = top + 1
    encode, decode = [], []
    for name in ctx.specials:
        encode.append([name, code])
        decode.append([code, name])
        code += 1
    for v in mapped:
        key, back = _sentinel_through_scale_offset(float(v), offset, scale, dt, ctx.whole)
        if key is None:
            return None
        encode.append([json_number(key, dt), code])
        decode.append([code, json_number(back, dt)])
        code += 1
    shift: dict[str, Any] = {}
    if offset != 0:
        shift["offset"] = json_number(offset, dt)
    if scale != 1:
        shift["scale"] = json_number(scale, dt)
    filters = ([{"name": "scale_offset", "configuration": shift}] if shift else []) + [
        {"name": "cast_value", "configuration": {"data_type": target, **_map_config(encode, decode)}}]
    step = 1 / float(D(scale))
    label = (f"scale_offset (offset {offset:g}, step {step:.6g}: {why}) + cast_value {target}"
             if shift else f"cast_value {target}")
    return Encoding(label, tuple(filters), _packbits(target), target, proven, preference)


def _code(v: float, offset: float, scale: float, dt: np.dtype) -> Any:
    """v's code through scale_offset and cast_value's rounding, in the array's type."""
    D = dt.type
    with np.errstate(all="ignore"):
        return np.rint((D(v) - D(offset)) * D(scale))


def _in_range(code: Any, top: int) -> bool:
    return bool(np.isfinite(code) and 0 <= code <= top)


def _exact_in_range(v: float, offset: float, scale: float, top: int, dt: np.dtype,
                    whole: bool = False) -> bool:
    D = dt.type
    code = _code(v, offset, scale, dt)
    if not _in_range(code, top):
        return False
    with np.errstate(all="ignore"):
        return _gives(code / D(scale) + D(offset), D(v), whole)


def _gives(back: Any, v: Any, whole: bool) -> bool:
    """back decodes to v: exactly, or (whole) once rounded to the nearest whole number."""
    return bool(back == v) if not whole else bool(abs(back - v) < 0.5)


def _sentinel_through_scale_offset(v: float, offset: float, scale: float, dt: np.dtype,
                                   whole: bool = False) -> tuple[float | None, float | None]:
    """For a sentinel v ahead of scale_offset: the value cast_value sees when encoding
    ((v - o) * s, rounded as the codec rounds), and a value it can map its code back to that
    scale_offset decodes to exactly v (w / s + o == v; for `whole`, within 1/2 of it);
    (None, None) if there is none."""
    D = dt.type
    with np.errstate(all="ignore"):
        key = (D(v) - D(offset)) * D(scale)
        if not np.isfinite(key):
            return None, None
        w = key
        for _ in range(8):
            back = w / D(scale) + D(offset)
            if _gives(back, D(v), whole):
                return float(key), float(w)
            w = np.nextafter(w, D(np.inf) if back < D(v) else D(-np.inf))
    return None, None


def _packbits(target: str) -> dict | None:
    if FORMATS[target].bits < 8:
        return {"name": "packbits", "configuration": {"padding_encoding": "none"}}
    return None


def _bitround_absolute(ctx: Context) -> list[Encoding]:
    """bitround whose rounding (at most half a unit in the last kept bit of the largest
    binade; a carry out of the finite range rounds toward zero: a whole unit) keeps E."""
    s, E = ctx.survey, ctx.bound.value
    if s.max_abs == 0:
        return []
    man = np.finfo(ctx.dtype).nmant
    top_exp = math.floor(math.log2(s.max_abs))
    for k in range(1, man):
        if 2.0 ** (top_exp - k) <= E:           # (a whole unit: covers the carry case too)
            return _bitround(ctx, k, f"bitround {k} bits", proven=True)
    return []


def _bitround(ctx: Context, keepbits: int, label: str, *, proven: bool) -> list[Encoding]:
    """bitround on the array's own type; sentinels first become spare NaN patterns (bitround
    leaves NaNs as they are) through a cast_value to the same type."""
    name = ctx.dtype.name
    filters: list = []
    maps = sentinel_map(ctx, name, keepbits)
    if maps is None:
        return []
    if maps[0]:
        filters.append({"name": "cast_value", "configuration": {"data_type": name, **_map_config(*maps)}})
    if not ctx.bitround:
        return []
    filters.append({"name": ctx.bitround, "configuration": {"keepbits": keepbits}})
    return [Encoding(label, tuple(filters), None, name, proven, preference=1)]


def _cast_error(fmt: str, ctx: Context) -> tuple[float, float] | None:
    """(absolute, relative) error bound of rounding the surveyed values to `fmt` (nearest,
    ties to even); None when some value does not fit it (range, zero, sign, specials)."""
    f = FORMATS[fmt]
    s = ctx.survey
    if f.bits >= 8 * ctx.dtype.itemsize:
        return None
    if not s.empty:
        if s.max_abs > float(f.max_value):
            return None
        if s.lo < 0 and not f.signed:
            return None
        if s.has_zero and not f.has_zero:
            return None
    if not ctx.holds_specials(f):
        return None
    if s.empty or s.max_abs == 0:
        return 0.0, 0.0
    p = f.man_bits + 1
    emin = 1 - f.bias if f.has_subnormal else -f.bias
    min_normal = 2.0 ** emin
    top_exp = math.floor(math.log2(s.max_abs))
    absolute = 2.0 ** (max(top_exp, emin) - p)                       # half an ulp at the top
    if s.min_abs >= min_normal:
        relative = 2.0 ** -p
    elif f.has_subnormal:
        relative = (2.0 ** (emin - f.man_bits - 1)) / s.min_abs       # half the subnormal step
    else:
        relative = math.inf
    return absolute, relative


def _casts(ctx: Context) -> list[Encoding]:
    out = []
    for fmt in ctx.floats:
        err = _cast_error(fmt, ctx)
        if err is None:
            continue
        error = err[1] if ctx.bound.relative else err[0]
        if error * (1 + 1e-12) > ctx.bound.value:
            continue
        maps = sentinel_map(ctx, fmt)
        if maps is None:
            continue
        cast = {"name": "cast_value", "configuration": {"data_type": fmt, **_map_config(*maps)}}
        out.append(Encoding(f"cast_value {fmt}", (cast,), _packbits(fmt), fmt, True, preference=0))
        # and the same cast followed by bitround, where fewer bits still keep the bound
        f = FORMATS[fmt]
        if fmt in ("float16", "bfloat16", "float32") and not (ctx.zarr_format == 2 and fmt == "bfloat16"):
            for k in range(1, f.man_bits):
                extra = 2.0 ** -(k + 1) if ctx.bound.relative else 2.0 ** (
                    math.floor(math.log2(max(ctx.survey.max_abs, 1e-300))) - k)
                if error + extra + error * extra <= ctx.bound.value * (1 - 1e-12):
                    maps_k = sentinel_map(ctx, fmt, k)
                    if maps_k is not None and ctx.bitround:
                        cast_k = {"name": "cast_value", "configuration": {"data_type": fmt, **_map_config(*maps_k)}}
                        out.append(Encoding(f"cast_value {fmt} + bitround {k} bits",
                                            (cast_k, {"name": ctx.bitround, "configuration": {"keepbits": k}}),
                                            None, fmt, True, preference=1))
                    break
    return out


# --- relative bounds on float data -----------------------------------------------------------

def _relative_float(ctx: Context) -> list[Encoding]:
    R = ctx.bound.value
    s = ctx.survey
    out = _casts(ctx)
    man = np.finfo(ctx.dtype).nmant
    tiny = float(np.finfo(ctx.dtype).smallest_normal)
    for k in range(1, man):
        # half a unit in the k-th bit, relative to the binade's smallest value; the carry out
        # of the finite range rounds toward zero (a whole unit) only near the largest value
        rel = 2.0 ** -(k + 1)
        if not s.empty and s.max_abs >= float(np.finfo(ctx.dtype).max) * (1 - 2.0 ** -(k + 1)):
            rel = 2.0 ** -k
        if not s.empty and s.min_abs < tiny:
            rel = max(rel, (tiny * 2.0 ** -(k + 1)) / s.min_abs)
        if rel <= R * (1 - 1e-12):
            out += _bitround(ctx, k, f"bitround {k} bits", proven=True)
            if k > 1:                               # one bit fewer, measured
                out += _bitround(ctx, k - 1, f"bitround {k - 1} bits (measured)", proven=False)
            break
    return out


# --- integers ------------------------------------------------------------------------------------

def _integer_shift(ctx: Context) -> list[Encoding]:
    """The values minus their smallest, in the narrowest unsigned type: exact."""
    s, dt = ctx.survey, ctx.dtype
    if s.empty:
        return []
    lo, hi = int(s.lo), int(s.hi)
    extra = sum(1 for v in ctx.sentinels if not lo <= int(v) <= hi)
    target = next((t for t in ctx.unsigned if hi - lo + extra <= (1 << FORMATS[t].bits) - 1
                   and FORMATS[t].bits < 8 * dt.itemsize), None)
    if target is None:
        return []
    info = np.iinfo(dt)
    encode, decode = [], []
    code = hi - lo + 1
    for v in ctx.sentinels:
        if lo <= int(v) <= hi:
            continue                    # (inside the range: its own exact code)
        key = int(v) - lo
        if not info.min <= key <= info.max:
            return []
        encode.append([key, code])
        decode.append([code, key])
        code += 1
    filters = ([{"name": "scale_offset", "configuration": {"offset": lo}}] if lo else []) + [
        {"name": "cast_value", "configuration": {"data_type": target, **_map_config(encode, decode)}}]
    label = (f"scale_offset (offset {lo}) + " if lo else "") + f"cast_value {target} (exact)"
    return [Encoding(label, tuple(filters), _packbits(target), target, True)]


def _integer_fixedscaleoffset(ctx: Context) -> list[Encoding]:
    """Integers in an odd whole step k = 2 floor(E) + 1 through numcodecs' FixedScaleOffset
    (codes around((x - o) * s), s = 1/k, decoded as codes / s + o truncated to the type): the
    quantization of _integer_quantized in one codec that zarr-python reads without zdt (it
    rejects that chain on integer arrays: docs/upstream/zarr-validate-dtype). It maps no
    sentinel, so the offset is the one declared sentinel the data hold, below the data by more
    than half a step (code 0: it decodes to exactly itself, and no value to it), or the data's
    floor where they hold none; a masking value elsewhere must lie beyond the bound of the
    data's range. The offset is written as a float (numcodecs then computes in float64; an
    integer offset makes NumPy compute x - o in the array's type, which wraps). Proven by
    running numcodecs' own codec on every integer of the data's range (ranges up to 2**22)
    and every code, which zdt's fused chain for it (zdt.engine.measure.fused_equivalent)
    must give bit for bit."""
    s, dt, E = ctx.survey, ctx.dtype, ctx.bound.value
    k = 2 * math.floor(E) + 1
    if (ctx.zarr_format != 3 or ctx.in_memory or s.empty or k < 3 or ctx.valid is not None
            or not ctx.readers.decodes("numcodecs.fixedscaleoffset")
            or int(s.hi) - int(s.lo) > 1 << 22):
        return []
    lo, hi = int(s.lo), int(s.hi)
    present = {int(v) for v in s.sentinels_seen}
    if len(present) > 1 or any(lo - E <= int(m) <= hi + E for m in ctx.masking if int(m) not in present):
        return []
    if present:
        o = present.pop()
        if lo - o <= k // 2:                # (a value within half a step would read as it)
            return []
    else:
        o = lo
    from numcodecs import FixedScaleOffset

    scale = 1.0 / k
    x = np.arange(lo, hi + 1, dtype=np.int64).astype(dt)
    # the codes zdt's fused chain computes (x - o) / k in float64, rounded half to even
    c = np.around((x.astype(np.float64) - o) * scale)
    if c.min() < (1 if s.sentinels_seen else 0) or np.abs(o + c * k - x).max() > math.floor(E):
        return []
    out = []
    for target in ("uint8", "uint16", "uint32"):
        f = FORMATS[target]
        if c.max() > f.max_value or f.bits > 8 * dt.itemsize or not ctx.type_ok(target):
            continue
        conf = {"offset": float(o), "scale": scale, "dtype": dt.newbyteorder("<").str,
                "astype": np.dtype(target).newbyteorder("<").str}
        codec = FixedScaleOffset(**conf)
        codes = np.arange(0, int(c.max()) + 1).astype(target)
        with np.errstate(all="ignore"):
            if not (np.array_equal(codec.encode(x), c.astype(target))
                    and np.array_equal(codec.decode(codes), (o + codes.astype(np.int64) * k).astype(dt))):
                return []
        out.append(Encoding(f"numcodecs.fixedscaleoffset (offset {o}, step {k}: an odd whole step) "
                            f"to {target}", ({"name": "numcodecs.fixedscaleoffset", "configuration": conf},),
                            None, target, True, preference=1, for_pcodec=bool(out)))
        if len(out) == 2:
            break
    return out


def _integer_quantized(ctx: Context) -> list[Encoding]:
    """Integers through float64 ([cast_value float64, scale_offset, cast_value uintN], uintN
    no wider than the data): an odd whole step k = 2 floor(E) + 1 from the smallest value
    (v - lo = k c + r with |r| <= floor(E), and below 2**51 the float64 arithmetic rounds
    to exactly c and back to exactly lo + k c), and for E >= 1.5 the float steps of
    _absolute_float at E - 1/2 (the way back rounds to an integer: half a unit more)."""
    s, dt, E = ctx.survey, ctx.dtype, ctx.bound.value
    if s.empty or s.max_abs >= 2 ** 50:
        return []
    info = np.iinfo(dt)
    # the way back may round beyond the type's range (by less than E): clamped there, which
    # is nearer to every value the type holds
    clamp = s.hi + E >= info.max or s.lo - E <= info.min
    floats = tuple(float(v) for v in ctx.sentinels)
    masking = tuple(float(v) for v in ctx.masking)

    def in_float64(bound: float) -> Context:
        return Context(np.dtype("float64"), s, Bound("abs", bound), floats, None,
                       ctx.zarr_format, masking, whole=True, readers=ctx.readers,
                       in_memory=ctx.in_memory)

    found = []
    k = 2 * math.floor(E) + 1
    if k >= 3:
        found.append(_quantized(in_float64(E), float(s.lo), 1.0 / k, proven=True,
                                why="an odd whole step: integers round exactly"))
    if E >= 1.5:
        found += [e for e in _absolute_float(in_float64((E - 0.5) * (1 - 1e-12)))
                  if e.filters and e.filters[0]["name"] == "scale_offset" and e.proven]
    first = {"name": "cast_value", "configuration": {"data_type": "float64",
                                                    **({"out_of_range": "clamp"} if clamp else {})}}
    return [Encoding(f"cast_value float64 + {e.label}", (first, *e.filters), e.serializer,
                     e.stored, True, e.preference + 1)
            for e in found if e is not None and FORMATS[e.stored].bits <= 8 * dt.itemsize]
