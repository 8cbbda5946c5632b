"""zdt.predict under a pointwise-relative bound R (`rel_error`): every element decodes within
R |x| of its original value, zeros to zeros of the same sign, NaN bit for bit, infinities to
themselves. The spec, byte layout included, is docs/codecs/predict.md ("Pointwise-relative
bounds", format 2).

The scheme of SZ's PW_REL (Liang et al. 2018), written down exactly: the values' base-2
logarithms are coded as a format-1 float64 chunk within an absolute bound `b` just below
log2(1 + R), signs in a bitmap of their own; a decoder computes 2**v by a fixed polynomial in
binary64 arithmetic (`exp2`), so every decoder gives the same bits. What the logarithm or the
polynomial would miss is caught by the encoder, which decodes the chunk and checks every
element against R |x| (exactly, in rational arithmetic where float64 cannot settle it); an
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

if TYPE_CHECKING:
    from zdt.codecs.predict import PredictConfig

MAGIC = predict.FORMAT2_MAGIC    # format 2: a chunk of parts, its kind in byte 4
KIND_RELATIVE = 1
# magic, kind, element size, reserved (0), b (binary64), n_exact, the logarithms' chunk length
HEAD = struct.Struct("<4sBBHdQQ")
LENGTH = struct.Struct("<Q")
LOGS = np.dtype("float64")      # the logarithms' chunk: always float64
ZERO = -math.inf                # the logarithm of a zero: the logarithms' chunk's fill value
# 2**f for |f| <= 1/2: the binary64 values nearest (ln 2)**i / i!, i = 0 .. 13 (Taylor: the
# truncation error is below 2**-58 there)
EXP2 = tuple(float.fromhex(h) for h in (
    "0x1.0000000000000p+0", "0x1.62e42fefa39efp-1", "0x1.ebfbdff82c58fp-3",
    "0x1.c6b08d704a0c0p-5", "0x1.3b2ab6fba4e77p-7", "0x1.5d87fe78a6731p-10",
    "0x1.430912f86c787p-13", "0x1.ffcbfc588b0c7p-17", "0x1.62c0223a5c824p-20",
    "0x1.b5253d395e7c4p-24", "0x1.e4cf5158b8ecap-28", "0x1.e8cac7351bb25p-32",
    "0x1.c3bd650fc2986p-36", "0x1.816193166d0f9p-40"))
SCALE_LIMIT = 1200              # |k| beyond this gives 0 or infinity all the same
_MARGIN = 2.0 ** -50            # the float64 screen of the check (see `misses`)
_TINY = 2.0 ** -1000


# log2 (the encoder's): 1 / (2 i + 1), i = 1 .. 11, and 2 / ln 2
_ATANH = tuple(1.0 / (2 * i + 1) for i in range(1, 12))
_TWO_OVER_LN2 = 2.0 / math.log(2)
_SQRT_HALF = math.sqrt(0.5)


def log2(a: np.ndarray) -> np.ndarray:
    """log2 of positive finite binary64 values, the same bits on every platform (NumPy's log2
    is the platform's or a SIMD library's): a = m 2**e with m in [sqrt(1/2), sqrt(2)) (frexp,
    exact), s = (m - 1) / (m + 1), ln m = 2 s (1 + s**2/3 + ... + s**22/23) (|s| < 0.172: the
    truncation below 2**-60), log2 a = e + ln(m) / ln 2; each operation of binary64, within a
    few units of the last place of the result (`log_bound` allows for it)."""
    m, e = np.frexp(a)                      # (m in [1/2, 1))
    low = m < _SQRT_HALF
    m = np.where(low, 2 * m, m)
    e = np.where(low, e - 1, e).astype(np.float64)
    s = (m - 1) / (m + 1)
    s2 = s * s
    p = np.full(a.shape, _ATANH[-1])
    for c in _ATANH[-2::-1]:
        p = p * s2 + c
    series = s * (p * s2 + 1.0)
    return e + series * _TWO_OVER_LN2


def exp2(v: np.ndarray) -> np.ndarray:
    """2**v for finite binary64 v, as the spec computes it: k = v rounded to an integer (ties
    to even), f = v - k, the polynomial EXP2 in f by Horner's rule (each product and sum
    rounded), times 2**k (rounded once, IEEE scaleB)."""
    k = np.rint(v)
    f = v - k
    p = np.full(v.shape, EXP2[-1])
    for c in EXP2[-2::-1]:
        p = p * f
        p = p + c
    with np.errstate(over="ignore", under="ignore"):
        return np.ldexp(p, np.clip(k, -SCALE_LIMIT, SCALE_LIMIT).astype(np.int32))


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
    -inf, infinity for +inf, negated where `negative`; where `exact`, the stored values in turn."""
    out64 = np.zeros(logs.shape, dtype=np.float64)
    finite = np.isfinite(logs) & ~exact
    out64[finite] = exp2(logs[finite])
    out64[logs == math.inf] = math.inf
    with np.errstate(over="ignore", invalid="ignore"):
        out = out64.astype(dtype)
    np.negative(out, out=out, where=negative)
    out[exact] = stored
    return out


def misses(x: np.ndarray, y: np.ndarray, rel_error: float) -> np.ndarray:
    """Where y (finite non-zero x decoded) is not within R |x|, zero for non-zero x, or not
    finite: screened in float64 (fl(|y - x|) and fl(R |x|) are each within 2**-53 of the
    truth, so a margin of 2**-50 settles an element; below 2**-1000 or on overflow the screen
    is not trusted), the rest settled in rational arithmetic."""
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        d = np.abs(y64 - x64)
        t = rel_error * np.abs(x64)
        surely = (d <= t * (1 - _MARGIN)) & (t >= _TINY) & np.isfinite(d)
    bad = ~np.isfinite(y64) | (y64 == 0)
    limit = Fraction(rel_error)
    for i in np.flatnonzero(~surely & ~bad).tolist():
        u, v = Fraction(float(x64[i])), Fraction(float(y64[i]))
        bad[i] = abs(v - u) > limit * abs(u)
    return bad


def encode(config: PredictConfig, x: np.ndarray, fill: object) -> bytes:
    """The format-2 relative chunk of `x` (float32 or float64, any shape)."""
    assert config.rel_error is not None
    dtype, R = x.dtype, config.rel_error
    flat = np.ascontiguousarray(x).reshape(-1)
    x64 = flat.astype(np.float64)
    a = np.abs(x64)
    data_values = np.isfinite(a) & (a != 0)
    logs = np.where(a == 0, ZERO, a)        # (-inf for zeros, +inf for infinities, NaN for NaN)
    logs[data_values] = log2(a[data_values])
    exact = np.isnan(x64)
    fill_value = None
    if fill is not None:
        fv = np.asarray(fill, dtype=dtype)
        if np.isfinite(fv) and fv != 0:     # (zeros and infinities come back exactly anyway)
            fill_value = fv
            exact |= flat.view(f"u{dtype.itemsize}") == fv.view(f"u{dtype.itemsize}")
    logs[exact] = np.nan                    # (predicted around, as every NaN is)
    negative = np.signbit(flat)
    largest = float(np.abs(logs[data_values & ~exact]).max(initial=0.0))
    b = log_bound(R, dtype, largest)
    inner = replace(config, abs_error=b, rel_error=None)
    chunk = inner.encode(logs.reshape(x.shape), ZERO)
    # the decoder's values; an element they miss is stored exactly as well (its logarithm stays:
    # the chunk, and so every other element's value, is unchanged)
    decoded = inner.decode(chunk, LOGS, x.shape, ZERO).reshape(-1)
    y = values(decoded, negative, exact, flat[exact], dtype)
    check = np.flatnonzero(data_values & ~exact)
    exact[check[misses(flat[check], y[check], R)]] = True
    if fill_value is not None:
        exact |= y == fill_value            # (no other element may read back as the fill value)
    out = _pack(config, b, chunk, logs, negative, flat, exact)
    if len(out) > flat.nbytes // 2:
        # (a bound too fine for the logarithms' codes: every value stored exactly may be smaller,
        # the logarithms' chunk then all NaN)
        chunk = inner.encode(np.full(x.shape, np.nan), ZERO)
        every = _pack(config, b, chunk, np.full(flat.shape, np.nan), negative, flat,
                      np.ones(flat.shape, dtype=bool))
        out = every if len(every) < len(out) else out
    return out


def _pack(config: PredictConfig, b: float, chunk: bytes, logs: np.ndarray, negative: np.ndarray,
          flat: np.ndarray, exact: np.ndarray) -> bytes:
    from numcodecs.zstd import Zstd

    def frame(data: bytes) -> bytes:
        return bytes(Zstd(level=config.level).encode(data))

    signs = frame(np.packbits(negative).tobytes()) if negative[~exact].any() else b""
    # (the exact map marks only what the logarithms do not: the elements that missed)
    marked = exact & ~np.isnan(logs)
    where = frame(np.packbits(marked).tobytes()) if marked.any() else b""
    stored = flat[exact].astype(flat.dtype.newbyteorder("<")).tobytes()
    head = HEAD.pack(MAGIC, KIND_RELATIVE, flat.dtype.itemsize, 0, b, int(exact.sum()), len(chunk))
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
    return np.unpackbits(bits, count=n).astype(bool), at + length


def decode(data: Any, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """The chunk of `shape` and `dtype` (float32 / float64) a format-2 relative chunk holds;
    CorruptChunkError naming the part for a corrupt one."""
    corrupt = predict.corrupt
    n = math.prod(shape)
    if len(data) < HEAD.size:
        raise corrupt(f"a format-2 chunk of {len(data)} bytes is shorter than its "
                      f"{HEAD.size}-byte header", "header")
    magic, kind, size, reserved, b, n_exact, length = HEAD.unpack_from(data)
    if kind != KIND_RELATIVE:
        raise corrupt(f"unknown format-2 chunk kind {kind} (1: pointwise relative)", "header")
    if size != dtype.itemsize:
        raise corrupt(f"the chunk holds {size}-byte elements, the array {dtype}", "header")
    if reserved:
        raise corrupt(f"the reserved header field is {reserved}, not 0", "header")
    if not (math.isfinite(b) and b > 0):
        raise corrupt(f"the logarithms' bound is {b!r}, not a finite number > 0", "header")
    if n_exact > n:
        raise corrupt(f"the chunk claims {n_exact} exact values for {n} elements", "header")
    if length > len(data) - HEAD.size:
        raise corrupt(f"the logarithms' chunk of {length} bytes runs past the chunk's end",
                      "logarithms")
    at = HEAD.size + length
    logs = predict.PredictConfig(abs_error=b).decode(data[HEAD.size:at], LOGS, shape, ZERO).reshape(-1)
    negative, at = _bitmap(data, at, n, "signs")
    exact, at = _bitmap(data, at, n, "exact map")
    if negative is None:
        negative = np.zeros(n, dtype=bool)
    exact = np.isnan(logs) if exact is None else exact | np.isnan(logs)
    if int(exact.sum()) != n_exact:
        raise corrupt(f"the logarithms and the exact map mark {int(exact.sum())} elements "
                      f"exact, the header counts {n_exact} exact values", "exact map")
    rest = data[at:]
    if n_exact:
        try:
            payload = predict.zstd_exactly(rest, n_exact * size)
        except CorruptChunkError as exc:
            raise corrupt(f"the exact values: {exc}", "exact values") from None
        stored = payload.view(dtype.newbyteorder("<")).astype(dtype, copy=True)
    elif len(rest):
        raise corrupt(f"{len(rest)} bytes after the streams of a chunk without exact values",
                      "exact values")
    else:
        stored = np.empty(0, dtype=dtype)
    return values(logs, negative, exact, stored, dtype).reshape(shape)
