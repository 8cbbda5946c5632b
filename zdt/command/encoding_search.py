"""The smallest encoding of numeric data that keeps an error bound, found by measuring.

``zdt suggest`` and ``zdt convert`` call this. Two kinds of bound:

* absolute error ``E``: ``[scale_offset, cast_value]`` to the narrowest unsigned integer type
  that holds the data's range. The step ``1 / scale`` is at most ``2 E`` (nearest-even rounding
  is then off by at most ``E``, plus the float rounding of the arithmetic); offsets and scales
  are round numbers. NaN, +Infinity and -Infinity, when the data or the fill value hold them,
  get the top codes of the type as sentinels, mapped both ways by ``scalar_map``. Integer data
  are only shifted (scale_offset on integers cannot scale down), so they stay exact.
* relative error ``R``: the narrowest float format (float4, float6, the float8 family,
  bfloat16, float16, float32) that keeps ``|decoded - x| <= R |x|`` for every value (zeros,
  NaN and infinities exactly).

Candidates are generated from the data's statistics, then every candidate is run through zarr
with zdt's codecs over the data (one pass, in batches of at most ``BATCH`` values); of those
whose measured error keeps the bound, one with the fewest stored bits wins (the smallest
error among them). A candidate whose encode
raises (a value out of its range, NaN into a format without NaN) is out. Nothing is suggested
on theory alone: the reported error is the one measured.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from zdt.formats import FORMATS, NAN_NONE

BATCH = 1 << 22
# the integer types an absolute bound may pick, narrowest first
UNSIGNED = ("uint2", "uint4", "uint8", "uint16", "uint32", "uint64")
# the float formats a relative bound may pick, narrowest first; same width: more mantissa first
FLOATS = ("float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn",
          "float8_e3m4", "float8_e4m3", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz",
          "float8_e5m2", "float8_e5m2fnuz", "bfloat16", "float16", "float32")
# zarr format 2 has no packbits and its compressors reject ml_dtypes buffers: NumPy types only
V2_UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
V2_FLOATS = ("float16", "float32")
SPECIALS = ("NaN", "Infinity", "-Infinity")


class SuggestError(ValueError):
    """Data or a bound that no encoding can serve (the message says why)."""


@dataclass
class Stats:
    """What one pass over the data learns: how many values, the range of the finite ones
    (lo > hi while there are none), which special values occur."""

    dtype: np.dtype
    count: int = 0
    lo: float = math.inf
    hi: float = -math.inf
    specials: set[str] = field(default_factory=set)

    def add(self, block: np.ndarray) -> None:
        flat = np.asarray(block).reshape(-1)
        self.count += flat.size
        self._observe(flat)

    def add_value(self, value: Any) -> None:
        """The fill value: it is stored through the same codecs, so it must fit too (it is
        not one of the data's values)."""
        if value is not None:
            self._observe(np.asarray([value], dtype=self.dtype))

    def _observe(self, flat: np.ndarray) -> None:
        if flat.dtype.kind == "f":
            finite = np.isfinite(flat)
            if not finite.all():
                if np.isnan(flat).any():
                    self.specials.add("NaN")
                if (flat == np.inf).any():
                    self.specials.add("Infinity")
                if (flat == -np.inf).any():
                    self.specials.add("-Infinity")
                flat = flat[finite]
        if flat.size:
            # Python ints for integer data: exact for all of int64 / uint64
            self.lo = min(self.lo, flat.min().item())
            self.hi = max(self.hi, flat.max().item())


@dataclass
class Encoding:
    """One candidate: the array -> array codecs and the serializer, as zarr v3 JSON."""

    label: str
    target: str                 # the stored data type
    filters: list[dict]
    serializer: dict | None     # None: zarr's default for the stored type ("bytes")
    scale: float | None = None

    @property
    def bits(self) -> int:
        return FORMATS[self.target].bits

    @property
    def codecs(self) -> list[dict]:
        """The chain as one JSON list (what `zdt convert --codecs` takes)."""
        return self.filters + ([self.serializer] if self.serializer else [])

    def stored_bytes(self, count: int) -> int:
        """Uncompressed bytes of `count` values (packbits: the bits, rounded up to bytes)."""
        if self.serializer and self.serializer["name"] == "packbits":
            return (count * self.bits + 7) // 8
        return count * FORMATS[self.target].itemsize


@dataclass
class Result:
    encoding: Encoding
    error: float                # measured: largest absolute or relative error


def _nice_scales(minimum: float, count: int) -> list[float]:
    """The `count` smallest numbers >= minimum of the forms {1, 2, 5} x 10**k and 2**k."""
    k10 = math.floor(math.log10(minimum))
    found = {float(f"{m}e{e}") for e in range(k10, k10 + 3) for m in (1, 2, 5)}
    k2 = math.floor(math.log2(minimum))
    found |= {2.0 ** e for e in range(k2, k2 + 6)}
    return sorted(s for s in found if s >= minimum)[:count]


def _json_number(x: float | int, dtype: np.dtype) -> float | int:
    """x as a JSON number that the data type holds exactly."""
    if dtype.kind in "iu":
        return int(x)
    value = dtype.type(x).item()
    return int(value) if float(value).is_integer() and abs(value) < 2 ** 53 else value


def _round_down(x: float, dtype: np.dtype) -> float:
    """The largest value of dtype not above x."""
    v = dtype.type(x)
    if float(v) > x:
        v = np.nextafter(v, dtype.type(-np.inf))
    return v.item()


def _largest_code(lo: float, hi: float, offset: float, scale: float) -> int:
    """The largest code that [lo, hi] encodes to (the smallest is 0 when offset <= lo). The
    codec's arithmetic may round a half-way value the other way: the next wider type is a
    candidate too, and the measurement picks."""
    return int(math.floor((hi - offset) * scale + 0.5))


def _sentinels(target: str, specials: Iterable[str]) -> dict:
    top = (1 << FORMATS[target].bits) - 1
    pairs = [(name, top - i) for i, name in enumerate(s for s in SPECIALS if s in specials)]
    if not pairs:
        return {}
    return {"scalar_map": {"encode": [[name, code] for name, code in pairs],
                           "decode": [[code, name] for name, code in pairs]}}


def _serializer(target: str) -> dict | None:
    if FORMATS[target].bits < 8:
        return {"name": "packbits", "configuration": {"padding_encoding": "none"}}
    return None


def absolute_candidates(stats: Stats, bound: float, zarr_format: int = 3) -> list[Encoding]:
    """Encodings that may keep |decoded - x| <= bound, smallest first (to be measured)."""
    dtype = stats.dtype
    if not bound > 0 or not math.isfinite(bound):
        raise SuggestError(f"--abs-error must be a positive finite number, not {bound!r}")
    lo, hi = (stats.lo, stats.hi) if stats.lo <= stats.hi else (0, 0)
    types = [t for t in (V2_UNSIGNED if zarr_format == 2 else UNSIGNED)
             if FORMATS[t].bits < dtype.itemsize * 8]
    specials = sorted(stats.specials, key=SPECIALS.index)
    out = []
    if dtype.kind in "iu":
        scales = [1]
        offsets = [lo]
    else:
        scales = _nice_scales(1 / (2 * bound), 4)
        offsets = sorted({_round_down(math.floor(lo), dtype), _round_down(lo, dtype)})
    for scale in scales:
        for offset in offsets:
            top = _largest_code(lo, hi, offset, scale) + len(specials)
            fits = [t for t in types if top <= (1 << FORMATS[t].bits) - 1]
            # the narrowest that fits, and the next one in case float rounding needs a code more
            out += [_shift_and_cast(offset, scale, target, specials, dtype) for target in fits[:2]]
    # smallest stored type first; for one type, the coarsest step first (compresses best)
    out.sort(key=lambda e: (e.bits, e.scale))
    return out


def _shift_and_cast(offset: float, scale: float, target: str, specials: list[str],
                    dtype: np.dtype) -> Encoding:
    """[scale_offset (left out when it is the identity), cast_value to target, specials as
    sentinels]."""
    shift: dict[str, Any] = {}
    if offset != 0:
        shift["offset"] = _json_number(offset, dtype)
    if scale != 1:
        shift["scale"] = _json_number(scale, dtype)
    filters = [{"name": "scale_offset", "configuration": shift}] if shift else []
    filters.append({"name": "cast_value",
                    "configuration": {"data_type": target, **_sentinels(target, specials)}})
    label = f"scale_offset (offset {offset:g}, scale {scale:g}) + " if shift else ""
    return Encoding(f"{label}cast_value {target}", target, filters, _serializer(target), float(scale))


def relative_candidates(stats: Stats, bound: float, zarr_format: int = 3) -> list[Encoding]:
    """Float formats that may keep |decoded - x| <= bound |x|, smallest first."""
    if not bound > 0 or not math.isfinite(bound):
        raise SuggestError(f"--rel-error must be a positive finite number, not {bound!r}")
    if stats.dtype.kind != "f":
        raise SuggestError(f"a relative bound needs float data; this array is {stats.dtype}")
    out = []
    for target in (V2_FLOATS if zarr_format == 2 else FLOATS):
        fmt = FORMATS[target]
        if fmt.bits >= stats.dtype.itemsize * 8:
            continue
        # cheap exclusions; the measurement decides everything else
        if "NaN" in stats.specials and fmt.nan_style == NAN_NONE:
            continue
        if stats.specials - {"NaN"} and not fmt.has_inf:
            continue
        out.append(Encoding(f"cast_value {target}", target,
                            [{"name": "cast_value", "configuration": {"data_type": target}}],
                            _serializer(target)))
    return out


def _roundtrip(block: np.ndarray, encoding: Encoding, fill_value: Any) -> np.ndarray:
    """block written to and read back from an in-memory zarr v3 array with the encoding."""
    import zarr
    from zarr.storage import MemoryStore

    import zdt.codecs.zarr  # noqa: F401  registers zdt's codecs and data types

    kwargs: dict[str, Any] = {"filters": encoding.filters, "compressors": None}
    if encoding.serializer:
        kwargs["serializer"] = encoding.serializer
    arr = zarr.create_array(MemoryStore(), shape=block.shape, chunks=block.shape, dtype=block.dtype,
                            fill_value=fill_value, **kwargs)
    arr[...] = block
    return arr[...]


def error_of(x: np.ndarray, y: np.ndarray, relative: bool, bound: float | None = None) -> float:
    """Largest error of y against x; inf when a special value or a zero did not survive.

    Computed in long double; with `bound`, the elements within a hair of it are re-checked in
    exact rational arithmetic, so `error_of(...) <= bound` is exactly whether every element
    keeps the bound (an excess too small for a float to show is reported as the next float
    above the bound)."""
    x = x.astype(np.float64) if x.dtype.kind != "f" else x
    y = y.astype(np.float64) if y.dtype.kind != "f" else y
    nan = np.isnan(x)
    if not np.array_equal(nan, np.isnan(y)):
        return math.inf
    inf = np.isinf(x)
    if not np.array_equal(x[inf], y[inf]):
        return math.inf
    finite = ~(nan | inf)
    xs, ys = x[finite], y[finite]
    if not np.isfinite(ys).all():
        return math.inf
    if not xs.size:
        return 0.0
    wide = np.longdouble if xs.dtype.itemsize >= 8 else np.float64
    diff = np.abs(ys.astype(wide) - xs.astype(wide))
    if relative:
        zero = xs == 0
        if (ys[zero] != 0).any():
            return math.inf
        xs, ys = xs[~zero], ys[~zero]
        diff = diff[~zero] / np.abs(xs.astype(wide))
    worst = float(diff.max(initial=0))
    if bound is None or not math.isfinite(bound) or worst < bound * (1 - 1e-9):
        return worst
    limit = Fraction(bound)
    near = np.nonzero(diff >= bound * (1 - 1e-9))[0]
    for a, b in zip(xs[near].tolist(), ys[near].tolist(), strict=True):
        e = abs(Fraction(b) - Fraction(a))
        if relative:
            e /= abs(Fraction(a))
        if e > limit:
            return max(float(e), float(np.nextafter(bound, math.inf)))
    return min(worst, bound)


def measure(blocks: Iterable[np.ndarray], candidates: list[Encoding], fill_value: Any,
            relative: bool, bound: float | None = None) -> tuple[list[Result], dict[str, str]]:
    """Every candidate over all blocks (batched). Returns the survivors with their measured
    errors, in candidate order, and why each other one dropped out."""
    errors = {id(c): 0.0 for c in candidates}
    failed: dict[str, str] = {}
    alive = list(candidates)
    for batch in _batches(blocks):
        for c in list(alive):
            try:
                back = _roundtrip(batch, c, fill_value)
            except Exception as exc:  # the codec's own error: out of range, NaN without a map
                failed[c.label] = str(exc).splitlines()[0]
                alive.remove(c)
                continue
            errors[id(c)] = max(errors[id(c)], error_of(batch, back, relative, bound))
    return [Result(c, errors[id(c)]) for c in alive], failed


def _batches(blocks: Iterable[np.ndarray]) -> Iterator[np.ndarray]:
    """Blocks flattened and joined into 1-d batches of at most BATCH values (the codecs work
    element by element, so the shape does not matter to the error)."""
    pending: list[np.ndarray] = []
    size = 0
    for block in blocks:
        flat = np.ascontiguousarray(block).reshape(-1)
        for start in range(0, flat.size, BATCH):
            part = flat[start:start + BATCH]
            if size + part.size > BATCH and pending:
                yield np.concatenate(pending)
                pending, size = [], 0
            pending.append(part)
            size += part.size
    if pending:
        yield np.concatenate(pending)


def best(results: list[Result], bound: float) -> Result | None:
    """Of the candidates whose measured error keeps the bound, one of the fewest bits: the
    smallest error among those (a decimal scale often makes 0.1-step data exact), the first
    in candidate order on a tie."""
    passing = [r for r in results if r.error <= bound]
    if not passing:
        return None
    bits = min(r.encoding.bits for r in passing)
    return min((r for r in passing if r.encoding.bits == bits), key=lambda r: r.error)
