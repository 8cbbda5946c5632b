"""zdt.predict under a pointwise-relative bound R (`rel_error`): every element decodes within
R |x| of its original value, zeros to zeros of the same sign, NaN bit for bit, infinities to
themselves. The spec, byte layout included, is docs/codecs/predict.md ("Pointwise-relative
bounds", format 2).

The scheme of SZ's PW_REL (Liang et al. 2018), written down exactly: the values' base-2
logarithms are coded as a float64 chunk (format 1, or a masked one: zeros) within an absolute bound `b` just below
log2(1 + R), signs in a bitmap of their own; a decoder computes 2**v by a fixed polynomial in
binary64 arithmetic (`exp2`), so every decoder gives the same bits. What the logarithm or the
polynomial would miss is caught by the encoder, which checks every element's decoded value
against R |x| (exactly, in rational arithmetic where float64 cannot settle it), the value
computed from the logarithms as its quantizer reconstructed them (the decoder's, bit for bit:
the chunk is not decoded again); an
element that misses is stored exactly (marked in a map of exact elements, its value in a stream
of exact values; its logarithm stays, so nothing else changes), and so is any element that would
read back as a finite, non-zero fill value; every NaN and every element equal to that fill value
is stored exactly with a NaN logarithm (predicted around; no map needed).
"""

from __future__ import annotations

import math
import struct
from dataclasses import replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from zdt.codecs import predict
from zdt.errors import CorruptChunkError
from zdt.kernels import _logs

if TYPE_CHECKING:
    from zdt.codecs.predict import PredictConfig

MAGIC = predict.FORMAT2_MAGIC    # format 2: a chunk of parts, its kind in byte 4
KIND_RELATIVE = 1
# magic, kind, element size, the logarithms' fill (LOG_FILLS), b (binary64), n_exact, the
# logarithms' chunk length
HEAD = struct.Struct("<4sBBHdQQ")
LENGTH = struct.Struct("<Q")
LOGS = np.dtype("float64")      # the logarithms' chunk: always float64
ZERO = -math.inf                # the logarithm of a zero
# the logarithms' chunk's fill value by the header's field: -inf (zeros masked, or one symbol
# each), or NaN (the elements stored exactly: a masked field's missing values), whichever the
# chunk holds more of (the other kind is stored raw in the logarithms' chunk)
LOG_FILLS = (ZERO, math.nan)
EXP2 = _logs.EXP2            # the spec's exp2 coefficients (zdt.kernels._logs)


def log2(a: np.ndarray) -> np.ndarray:
    """log2 of positive finite values, the same bits on every platform (zdt.kernels._logs);
    for zero, infinities and NaN some value the caller replaces."""
    out = np.empty(a.shape, dtype=np.float64)
    _logs.log2(np.ascontiguousarray(a, dtype=np.float64), out)
    return out


def exp2(v: np.ndarray) -> np.ndarray:
    """2**v for finite v, as the spec computes it (zdt.kernels._logs)."""
    out = np.empty(v.shape, dtype=np.float64)
    _logs.exp2(np.ascontiguousarray(v, dtype=np.float64), out)
    return out


def log_bound(rel_error: float, dtype: np.dtype, largest_log: float) -> float:
    """The logarithms' absolute bound b: 2**b - 1 and 1 - 2**-b below R less what the rounding
    of log2 (|log2 x| up to `largest_log`), of the polynomial and of the result to `dtype` can
    add (at least half of R is left: what still misses is escaped)."""
    final = 2.0 ** -24 if dtype.itemsize == 4 else 2.0 ** -53
    slack = final + 2.0 ** -50 + 4 * largest_log * 2.0 ** -52
    r = max(rel_error - slack * (1 + rel_error), rel_error / 2)
    return math.log1p(r) / math.log(2) * (1 - 2.0 ** -40)


def values(logs: np.ndarray, negative: np.ndarray, exact: np.ndarray, stored: np.ndarray,
           dtype: np.dtype) -> np.ndarray:
    """The decoded elements (flat): 2**v rounded to `dtype` for a finite logarithm v, 0 for
    -inf, infinity for +inf, negated where `negative`; where `exact` or v is NaN, the stored
    values in turn (zdt.kernels._logs: powers, then fill_exact)."""
    out = np.empty(logs.shape, dtype=dtype)
    marks = np.array(exact, dtype=np.uint8)
    _logs.powers(logs, negative.view(np.uint8), marks, out)
    _logs.fill_exact(marks, np.ascontiguousarray(stored, dtype=dtype), out)
    return out


def exact_check(x: np.ndarray, logs: np.ndarray, decoded: np.ndarray, exact: np.ndarray,
                rel_error: float, fills: np.ndarray, plain: bool = False) -> None:
    """Marks exact each element of the flat chunk `x` that its decoded logarithm (`decoded`,
    where `logs` is finite) misses: its value y not within R |x| (or not finite, or zero), or
    equal to the fill value (`fills`: one element, or empty). zdt.kernels._logs.check screens in
    float64 (fl(|y - x|) and fl(R |x|) are each within 2**-53 of the truth, so a margin of
    2**-50 settles an element; below 2**-1000 or on overflow the screen is not trusted); the
    rest is settled here in rational arithmetic. `plain`: no element is odd (zero, subnormal,
    infinite, NaN, the fill value: every logarithm finite, none exact yet)."""
    unsure = _logs.check(x, logs, decoded, exact.view(np.uint8), rel_error, fills, plain)
    if not len(unsure):
        return
    y = values(decoded[unsure], x[unsure] < 0, np.zeros(len(unsure), dtype=bool),
               np.empty(0, x.dtype), x.dtype)
    limit = Fraction(rel_error)
    for i, yi in zip(unsure.tolist(), y.tolist()):
        u, v = Fraction(float(x[i])), Fraction(yi)
        if abs(v - u) > limit * abs(u):
            exact[i] = True


def encode(config: PredictConfig, x: np.ndarray, fill: object) -> bytes:
    """The format-2 relative chunk of `x` (float32 or float64, any shape)."""
    assert config.rel_error is not None
    dtype, R = x.dtype, config.rel_error
    flat = np.ascontiguousarray(x).reshape(-1)
    fills = np.empty(0, dtype=dtype)
    if fill is not None:
        fv = np.asarray(fill, dtype=dtype)
        if np.isfinite(fv) and fv != 0:     # (zeros and infinities come back exactly anyway)
            fills = fv.reshape(1)
    # the logarithms (-inf for zeros, +inf for infinities, NaN for NaN and the fill value:
    # those stored exactly, predicted around) and the signs, in one pass
    logs = np.empty(flat.shape, dtype=np.float64)
    negative = np.empty(flat.shape, dtype=np.uint8)
    largest, n_exact, n_zero, n_odd = _logs.logarithms(flat, logs, negative, fills)
    negative = negative.view(bool)
    exact = np.isnan(logs) if n_exact else np.zeros(flat.shape, dtype=bool)
    b = log_bound(R, dtype, largest)
    # (the logarithms' chunk has a fill value of its own, -inf or NaN: never the codec's `fill`;
    # and it never looks back at the reference mask, which is the values' mask, not theirs)
    inner = replace(config, abs_error=b, rel_error=None, fill=None, mask=None)
    log_fill = int(n_exact > n_zero)
    # (without zeros or NaN logarithms no element is the logarithms' fill value: the chunk is
    # the same without one, and its encoder skips looking for it)
    chunk, decoded = inner.encode_floats(logs.reshape(x.shape),
                                         LOG_FILLS[log_fill] if n_exact or n_zero else None)
    # the decoder's values (from the logarithms as the chunk decodes them, which the encoder
    # knows: no decoding); an element they miss is stored exactly as well (its logarithm
    # stays: the chunk, and so every other element's value, is unchanged), and so is one that
    # would read back as the fill value
    exact_check(flat, logs, decoded, exact, R, fills, plain=not n_odd)
    out = _pack(config, b, log_fill, chunk, logs if n_exact else None, negative, flat, exact)
    if len(out) > flat.nbytes // 2:
        # (a bound too fine for the logarithms' codes: every value stored exactly may be smaller,
        # the logarithms' chunk then all NaN, its fill value)
        chunk = inner.encode(np.full(x.shape, np.nan), LOG_FILLS[1])
        every = _pack(config, b, 1, chunk, np.full(flat.shape, np.nan), negative, flat,
                      np.ones(flat.shape, dtype=bool))
        out = every if len(every) < len(out) else out
    return out


def _pack(config: PredictConfig, b: float, log_fill: int, chunk: bytes, logs: np.ndarray | None,
          negative: np.ndarray, flat: np.ndarray, exact: np.ndarray) -> bytes:
    """The chunk's bytes; `logs` None where no logarithm is NaN."""
    from numcodecs.zstd import Zstd

    def frame(data: bytes) -> bytes:
        return bytes(Zstd(level=config.level).encode(data))

    # (a sign is needed where an element not stored exactly is negative; bool arrays as bytes:
    # negative > exact is negative and not exact, without a gather)
    needed = bool((negative.view(np.uint8) > exact.view(np.uint8)).any())
    signs = frame(np.packbits(negative).tobytes()) if needed else b""
    # (the exact map marks only what the logarithms do not: the elements that missed)
    marked = exact if logs is None else exact & ~np.isnan(logs)
    where = frame(np.packbits(marked).tobytes()) if marked.any() else b""
    stored = flat[exact].astype(flat.dtype.newbyteorder("<")).tobytes()
    head = HEAD.pack(MAGIC, KIND_RELATIVE, flat.dtype.itemsize, log_fill, b,
                     int(np.count_nonzero(exact)), len(chunk))
    return b"".join((head, chunk, LENGTH.pack(len(signs)), signs, LENGTH.pack(len(where)), where,
                     frame(stored) if stored else b""))


def _bitmap(data: Any, at: int, n: int, part: str) -> tuple[np.ndarray | None, int]:
    """A length-prefixed bitmap stream at `at` (None when its length is 0) and where it ends."""
    corrupt = predict.corrupt
    if len(data) < at + LENGTH.size:
        raise corrupt(f"the chunk ends before its {part} stream's length", part)
    (length,) = LENGTH.unpack_from(data, at)
    at += LENGTH.size
    if length > len(data) - at:
        raise corrupt(f"the {part} stream of {length} bytes runs past the chunk's end", part)
    if not length:
        return None, at
    try:
        bits = predict.zstd_exactly(data[at:at + length], (n + 7) // 8)
    except CorruptChunkError as exc:
        raise corrupt(f"the {part} stream: {exc}", part) from None
    return np.unpackbits(bits, count=n).view(bool), at + length


def decode(data: Any, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """The chunk of `shape` and `dtype` (float32 / float64) a format-2 relative chunk holds;
    CorruptChunkError naming the part for a corrupt one."""
    corrupt = predict.corrupt
    n = math.prod(shape)
    if len(data) < HEAD.size:
        raise corrupt(f"a format-2 chunk of {len(data)} bytes is shorter than its "
                      f"{HEAD.size}-byte header", "header")
    magic, kind, size, log_fill, b, n_exact, length = HEAD.unpack_from(data)
    if kind != KIND_RELATIVE:
        raise corrupt(f"unknown format-2 chunk kind {kind} (1: pointwise relative, 2: masked)", "header")
    if size != dtype.itemsize:
        raise corrupt(f"the chunk holds {size}-byte elements, the array {dtype}", "header")
    if log_fill >= len(LOG_FILLS):
        raise corrupt(f"the logarithms' fill field is {log_fill}, not 0 (-inf) or 1 (NaN)",
                      "header")
    if not (math.isfinite(b) and b > 0):
        raise corrupt(f"the logarithms' bound is {b!r}, not a finite number > 0", "header")
    if n_exact > n:
        raise corrupt(f"the chunk claims {n_exact} exact values for {n} elements", "header")
    if length > len(data) - HEAD.size:
        raise corrupt(f"the logarithms' chunk of {length} bytes runs past the chunk's end",
                      "logarithms")
    at = HEAD.size + length
    inner = data[HEAD.size:at]
    if bytes(inner[:4]) == MAGIC and bytes(inner[4:5]) != bytes([predict.MASKED_KIND]):
        # (a format-1 or a masked chunk only: a relative chunk inside would nest without end)
        raise corrupt("the logarithms' chunk is a format-2 chunk of kind "
                      f"{inner[4] if len(inner) > 4 else None}, not a format-1 or a masked "
                      f"chunk", "logarithms")
    logs = predict.PredictConfig(abs_error=b).decode(inner, LOGS, shape,
                                                     LOG_FILLS[log_fill]).reshape(-1)
    negative, at = _bitmap(data, at, n, "signs")
    exact, at = _bitmap(data, at, n, "exact map")
    out = np.empty(n, dtype=dtype)
    if negative is None and exact is None and not n_exact:
        # (no sign, no exact value: the elements alone, the NaN logarithms only counted)
        marks = _logs.powers(logs, None, None, out)
    else:
        if negative is None:
            negative = np.zeros(n, dtype=bool)
        if exact is None:
            exact = np.zeros(n, dtype=bool)
        # the elements but the exact ones, and the exact marks with the NaN logarithms' added
        marks = _logs.powers(logs, negative.view(np.uint8), exact.view(np.uint8), out)
    if marks != n_exact:
        raise corrupt(f"the logarithms and the exact map mark {marks} elements "
                      f"exact, the header counts {n_exact} exact values", "exact map")
    rest = data[at:]
    if not n_exact:
        if len(rest):
            raise corrupt(f"{len(rest)} bytes after the streams of a chunk without exact "
                          f"values", "exact values")
        return out.reshape(shape)
    try:
        payload = predict.zstd_exactly(rest, n_exact * size)
    except CorruptChunkError as exc:
        raise corrupt(f"the exact values: {exc}", "exact values") from None
    stored = payload.view(dtype.newbyteorder("<")).astype(dtype, copy=True)
    _logs.fill_exact(exact.view(np.uint8), stored, out)
    return out.reshape(shape)
