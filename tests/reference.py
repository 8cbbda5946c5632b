"""A slow, exact, per-element oracle for cast_value, written from the spec text and the rulings
in docs/spec-rulings.md, sharing no code with zdt.

Values are Python ints and Fractions; rounding is done on exact rationals; float formats are
described by NumPy's finfo (precision and exponent range), and float results are built as
exact rationals then converted by NumPy only once they are known to be representable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

ROUNDINGS = ("nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away")


class Failure(Exception):
    """The spec says this element must fail; `reason` is one of nan / inf / out_of_range."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --- exact values ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Value:
    """An element's value: kind 'nan', 'inf' or 'finite'; `neg` is the sign bit."""

    kind: str
    neg: bool
    exact: Fraction = Fraction(0)
    bits: int | None = None      # the source bit pattern (for hex NaN keys)


def value_of(x: np.generic) -> Value:
    dt = np.asarray(x).dtype
    bits = int(np.asarray(x).view(f"u{dt.itemsize}"))
    if dt.kind in "iu":
        v = int(x)
        return Value("finite", v < 0, Fraction(v), bits)
    f = float(x)   # exact for float16/32/64
    neg = math.copysign(1.0, f) < 0
    if math.isnan(f):
        return Value("nan", neg, bits=bits)
    if math.isinf(f):
        return Value("inf", neg, bits=bits)
    return Value("finite", neg, Fraction(f), bits)


def round_to_integer(q: Fraction, mode: str) -> int:
    fl = q.numerator // q.denominator          # floor
    frac = q - fl
    if frac == 0:
        return fl
    if mode == "towards-negative":
        return fl
    if mode == "towards-positive":
        return fl + 1
    if mode == "towards-zero":
        return fl + 1 if q < 0 else fl
    half = Fraction(1, 2)
    if frac < half:
        return fl
    if frac > half:
        return fl + 1
    # an exact tie
    if mode == "nearest-even":
        return fl if fl % 2 == 0 else fl + 1
    assert mode == "nearest-away"
    return fl + 1 if q > 0 else fl


# --- formats -----------------------------------------------------------------------------------

def int_range(dt: np.dtype) -> tuple[int, int]:
    info = np.iinfo(dt)
    return int(info.min), int(info.max)


@dataclass(frozen=True)
class FloatSpec:
    p: int          # significand bits including the implicit one
    emin: int       # exponent of the smallest normal number
    max: Fraction   # largest finite value


def float_spec(dt: np.dtype) -> FloatSpec:
    info = np.finfo(dt)
    return FloatSpec(info.nmant + 1, info.minexp, Fraction(float(info.max)))


def floor_log2(a: Fraction) -> int:
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    return e


def round_to_float(v: Fraction, spec: FloatSpec, mode: str) -> Fraction:
    """Round to the format's precision with an unbounded exponent (subnormal spacing below
    the normal range). The caller checks the finite range afterwards."""
    if v == 0:
        return v
    e = max(floor_log2(abs(v)), spec.emin)
    quantum = Fraction(2) ** (e - spec.p + 1)
    return round_to_integer(v / quantum, mode) * quantum


# --- the procedure of the spec -----------------------------------------------------------------

@dataclass(frozen=True)
class Key:
    kind: str                 # 'value', 'any_nan', 'nan_bits'
    value: Value | None = None
    bits: int | None = None


def key_matches(key: Key, x: Value) -> bool:
    if key.kind == "any_nan":
        return x.kind == "nan"
    if key.kind == "nan_bits":
        return x.kind == "nan" and x.bits == key.bits
    k = key.value
    if k.kind != x.kind:
        return False
    if k.kind == "inf":
        return k.neg == x.neg
    return k.exact == x.exact      # numeric: +0 == -0


def cast_element(x: np.generic, target: np.dtype, rounding: str, out_of_range: str | None,
                 scalar_map: list[tuple[Key, object]] = (), direction: str = "encode") -> object:
    """The target value (a Python int, a Fraction, ('zero', neg), ('inf', neg) or 'nan'),
    or raise Failure. Map outputs are returned as given (already target scalars)."""
    v = value_of(x)
    for key, out in scalar_map:                       # 1. scalar_map, first match wins
        if key_matches(key, v):
            return ("mapped", out)
    target = np.dtype(target)
    if v.kind == "nan":
        if target.kind == "f":
            return "nan"
        raise Failure("nan")
    if v.kind == "inf":
        if target.kind == "f":
            return ("inf", v.neg)
        raise Failure("inf")
    if target.kind in "iu":
        r = round_to_integer(v.exact, rounding)       # 2./3. exact or rounded, then range
        lo, hi = int_range(target)
        if lo <= r <= hi:
            return r
        if out_of_range == "clamp":
            return lo if r < lo else hi
        if out_of_range == "wrap":
            bits = target.itemsize * 8
            w = r % (1 << bits)
            if target.kind == "i" and w >= 1 << (bits - 1):
                w -= 1 << bits
            return w
        raise Failure("out_of_range")
    spec = float_spec(target)
    r = round_to_float(v.exact, spec, rounding)
    if abs(r) > spec.max:
        if out_of_range == "clamp":
            return ("inf", r < 0)
        raise Failure("out_of_range")   # no out_of_range, or 'wrap' into a float (decode)
    if r == 0:
        return ("zero", v.neg)
    return r


def to_numpy(result: object, target: np.dtype) -> np.generic:
    target = np.dtype(target)
    if isinstance(result, tuple) and result[0] == "mapped":
        return result[1]
    if result == "nan":
        return target.type("nan")
    if isinstance(result, tuple) and result[0] == "inf":
        return target.type("-inf" if result[1] else "inf")
    if isinstance(result, tuple) and result[0] == "zero":
        return target.type("-0.0" if result[1] else "0.0")
    if target.kind in "iu":
        return target.type(result)
    # a representable rational: float64 holds every float16/32 value exactly
    f = result.numerator / result.denominator
    assert Fraction(f) == result, "reference produced a non-representable float"
    out = np.array(f, dtype=np.float64).astype(target)
    assert Fraction(float(out)) == result
    return out[()]


def cast_array(arr: np.ndarray, target: np.dtype, rounding: str, out_of_range: str | None,
               scalar_map: list[tuple[Key, np.generic]] = ()) -> np.ndarray | tuple[int, str]:
    """Whole-array reference in C order: the result, or (flat index, reason) of the first
    failing element."""
    flat = np.ascontiguousarray(arr).reshape(-1)
    out = np.empty(flat.shape, dtype=target)
    for i, x in enumerate(flat):
        try:
            out[i] = to_numpy(cast_element(x, target, rounding, out_of_range, scalar_map), target)
        except Failure as e:
            return i, e.reason
    return out.reshape(np.shape(arr))


# --- scalar_map JSON, decoded independently -------------------------------------------------------

def decode_json_scalar(value: object, dtype: np.dtype) -> tuple[Key, np.generic]:
    """(key form, value form) of a fill-value-encoded JSON scalar for `dtype`."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        assert isinstance(value, int) and not isinstance(value, bool)
        v = dtype.type(value)
        return Key("value", value_of(v)), v
    if value == "NaN":
        return Key("any_nan"), dtype.type("nan")
    if value in ("Infinity", "+Infinity", "-Infinity"):
        v = dtype.type("-inf" if value.startswith("-") else "inf")
        return Key("value", value_of(v)), v
    if isinstance(value, str) and value.startswith("0x"):
        bits = int(value, 16)
        v = np.array(bits, dtype=f"u{dtype.itemsize}").view(dtype)[()]
        if np.isnan(v):
            return Key("nan_bits", bits=bits), v
        return Key("value", value_of(v)), v
    v = np.array(value, dtype=np.float64).astype(dtype)[()]
    return Key("value", value_of(v)), v


def compile_map(pairs: list[list[object]], source: np.dtype, target: np.dtype) -> list[tuple[Key, np.generic]]:
    return [(decode_json_scalar(k, source)[0], decode_json_scalar(v, target)[1]) for k, v in pairs]


def same_bits_or_nan(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element-wise: identical bit patterns, or both NaN (payloads need not be kept)."""
    a = np.asarray(a)
    b = np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return np.zeros(np.broadcast(a, b).shape, dtype=bool)
    same = a.view(f"u{a.dtype.itemsize}") == b.view(f"u{b.dtype.itemsize}")
    if a.dtype.kind == "f":
        same |= np.isnan(a) & np.isnan(b)
    return same


# --- scale_offset -------------------------------------------------------------------------------
# Written from the scale_offset spec and docs/spec-rulings.md: integer arithmetic exact and checked at every
# step; floats rounded to nearest-even in the array's type after each operation, with IEEE
# signed-zero rules; a finite input giving a non-finite value is an error. zdt's documented
# choice that a zero offset and a unit scale are identities is followed (so -0.0 survives).

def _ieee_zero_sum_sign(a_neg: bool, b_neg: bool) -> bool:
    """Sign of an exact zero sum a + b under round-to-nearest: negative only if both are."""
    return a_neg and b_neg


def _float_result(v: Fraction, neg_if_zero: bool, spec: FloatSpec) -> tuple:
    r = round_to_float(v, spec, "nearest-even")
    if abs(r) > spec.max:
        return ("inf", r < 0)
    if r == 0:
        return ("zero", neg_if_zero if v == 0 else v < 0)
    return ("num", r)


def _as_value(t: tuple) -> Value:
    if t[0] == "inf":
        return Value("inf", t[1])
    if t[0] == "zero":
        return Value("finite", t[1], Fraction(0))
    return Value("finite", t[1] < 0, t[1])


def scale_offset_element(x: np.generic, offset: np.generic, scale: np.generic,
                         decode: bool) -> np.generic:
    """One element; raise Failure(operation) where the spec says it must fail."""
    dt = np.asarray(x).dtype
    if dt.kind in "iu":
        lo, hi = int_range(dt)
        xi, o, s = int(x), int(offset), int(scale)
        if decode:
            if s != 1:
                if xi % s != 0:
                    raise Failure("division")
                q = xi // s
                if not lo <= q <= hi:
                    raise Failure("division")
            else:
                q = xi
            r = q + o
            if not lo <= r <= hi:
                raise Failure("addition")
            return dt.type(r)
        t = xi - o
        if not lo <= t <= hi:
            raise Failure("subtraction")
        p = t * s
        if not lo <= p <= hi:
            raise Failure("multiplication")
        return dt.type(p)
    spec = float_spec(dt)
    v, ov, sv = value_of(x), value_of(offset), value_of(scale)
    if v.kind == "nan":
        return dt.type("nan")
    if v.kind == "inf":
        # +-inf - finite = +-inf, * nonzero finite keeps or flips the sign; likewise / and +
        neg = v.neg != (sv.neg if sv.kind != "nan" else False)
        return dt.type("-inf" if neg else "inf")

    def op(a: Value, b: Value, kind: str) -> Value:
        if kind == "sub":
            res = a.exact - b.exact
            return _as_value(_float_result(res, _ieee_zero_sum_sign(a.neg, not b.neg), spec))
        if kind == "add":
            res = a.exact + b.exact
            return _as_value(_float_result(res, _ieee_zero_sum_sign(a.neg, b.neg), spec))
        if kind == "mul":
            return _as_value(_float_result(a.exact * b.exact, a.neg != b.neg, spec))
        return _as_value(_float_result(a.exact / b.exact, a.neg != b.neg, spec))

    cur = v
    steps = [("div", sv, "division"), ("add", ov, "addition")] if decode else \
            [("sub", ov, "subtraction"), ("mul", sv, "multiplication")]
    for kind, operand, name in steps:
        if kind in ("sub", "add") and operand.kind == "finite" and operand.exact == 0:
            continue            # zero offset: identity
        if kind in ("mul", "div") and operand.kind == "finite" and operand.exact == 1 and not operand.neg:
            continue            # unit scale: identity
        cur = op(cur, operand, kind)
        if cur.kind == "inf":
            raise Failure(name)
    if cur.exact == 0:
        return dt.type("-0.0" if cur.neg else "0.0")
    return to_numpy(cur.exact, dt)


def scale_offset_array(arr: np.ndarray, offset: np.generic, scale: np.generic,
                       decode: bool) -> np.ndarray | tuple[int, str]:
    flat = np.ascontiguousarray(arr).reshape(-1)
    out = np.empty(flat.shape, dtype=arr.dtype)
    for i, x in enumerate(flat):
        try:
            out[i] = scale_offset_element(x, offset, scale, decode)
        except Failure as e:
            return i, e.reason
    return out.reshape(np.shape(arr))
